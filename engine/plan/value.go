package plan

import (
	"encoding/json"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/lang"
)

// Markers for values that are not shown (docs/reference/cli.md: `{"unknown": true}`, `{"sensitive": true}`).
var (
	unknownJSON   = map[string]bool{"unknown": true}
	sensitiveJSON = map[string]bool{"sensitive": true}
)

// ValueJSON converts a plan-time value to JSON-ready Go values: unknown parts become
// {"unknown": true} and sensitive ones {"sensitive": true}, wherever they are nested.
func ValueJSON(v cty.Value) any {
	return walkJSON(v, "", func(_ string, sensitive bool) any {
		if sensitive {
			return sensitiveJSON
		}
		return unknownJSON
	})
}

// walkJSON converts v to JSON-ready Go values; a sensitive or unknown part (at JSON Pointer
// ptr) becomes what hidden returns.
func walkJSON(v cty.Value, ptr string, hidden func(ptr string, sensitive bool) any) any {
	if v.HasMark(lang.Sensitive) {
		return hidden(ptr, true)
	}
	v, _ = v.Unmark()
	switch {
	case !v.IsKnown():
		return hidden(ptr, false)
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
		i := 0
		for it := v.ElementIterator(); it.Next(); i++ {
			_, e := it.Element()
			out = append(out, walkJSON(e, ptr+"/"+strconv.Itoa(i), hidden))
		}
		return out
	case ty.IsMapType() || ty.IsObjectType():
		out := make(map[string]any, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			key := k.AsString()
			out[key] = walkJSON(e, ptr+"/"+pointerEscaper.Replace(key), hidden)
		}
		return out
	}
	return hidden(ptr, false)
}

// pointerEscaper escapes a key for a JSON Pointer (RFC 6901).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

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

// UnknownJSON encodes a plan-time value as JSON for a plugin: unknown and sensitive parts
// become null (a secret never leaves Fuscia at plan time), and their JSON Pointers are
// returned.
func UnknownJSON(v cty.Value) ([]byte, []string, error) {
	var unknown []string
	b, err := json.Marshal(walkJSON(v, "", func(ptr string, _ bool) any {
		unknown = append(unknown, ptr)
		return nil
	}))
	return b, unknown, err
}
