package plan

import (
	"encoding/json"
	"math/big"
	"sort"
	"strconv"

	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/lang"
)

// Markers for values that are not shown (cli.md: `{"unknown": true}`, `{"sensitive": true}`).
var (
	unknownJSON   = map[string]bool{"unknown": true}
	sensitiveJSON = map[string]bool{"sensitive": true}
)

// ValueJSON converts a plan-time value to JSON-ready Go values: unknown parts become
// {"unknown": true} and sensitive ones {"sensitive": true}, wherever they are nested.
func ValueJSON(v cty.Value) any {
	if v.HasMark(lang.Sensitive) {
		return sensitiveJSON
	}
	v, _ = v.Unmark()
	switch {
	case !v.IsKnown():
		return unknownJSON
	case v.IsNull():
		return nil
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return v.AsString()
	case ty == cty.Number:
		return json.Number(formatNumber(v))
	case ty == cty.Bool:
		return v.True()
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		out := make([]any, 0, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			out = append(out, ValueJSON(e))
		}
		return out
	case ty.IsMapType() || ty.IsObjectType():
		out := make(map[string]any, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			out[k.AsString()] = ValueJSON(e)
		}
		return out
	}
	return unknownJSON
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// formatNumber writes a cty number for JSON. big.Float.Text is slow (it rounds to the shortest
// decimal), so exact integers and float64 values take strconv's fast paths.
func formatNumber(v cty.Value) string {
	bf := v.AsBigFloat()
	if i, acc := bf.Int64(); acc == big.Exact {
		return strconv.FormatInt(i, 10)
	}
	if f, acc := bf.Float64(); acc == big.Exact {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return bf.Text('g', -1)
}
