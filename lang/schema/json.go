package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"

	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/internal/bounds"
)

// ToJSON converts a wholly known, unmarked cty value to the Go value encoding/json writes:
// objects and maps become map[string]any, lists, sets and tuples []any, strings string,
// numbers json.Number (exact, never rounded through float64), booleans bool and null nil.
// It fails on unknown or marked values (unmark secrets deliberately, at the point where they
// are sent), on infinite numbers and on capsule values.
func ToJSON(v cty.Value) (any, error) {
	return toJSON(v, cty.Path{})
}

func toJSON(v cty.Value, p cty.Path) (any, error) {
	if v.IsMarked() {
		return nil, p.NewErrorf("value is marked (sensitive); unmark it before encoding")
	}
	if !v.IsKnown() {
		return nil, p.NewErrorf("value is not known yet")
	}
	if v.IsNull() {
		return nil, nil
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return v.AsString(), nil
	case ty == cty.Bool:
		return v.True(), nil
	case ty == cty.Number:
		bf := v.AsBigFloat()
		if bf.IsInf() {
			return nil, p.NewErrorf("infinite number has no JSON form")
		}
		return json.Number(bigText(bf)), nil
	case ty.IsObjectType() || ty.IsMapType():
		out := make(map[string]any, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			x, err := toJSON(ev, p.GetAttr(k.AsString()))
			if err != nil {
				return nil, err
			}
			out[k.AsString()] = x
		}
		return out, nil
	case ty.IsListType() || ty.IsSetType() || ty.IsTupleType():
		out := make([]any, 0, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			x, err := toJSON(ev, p.Index(k))
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	default:
		return nil, p.NewErrorf("%s has no JSON form", ty.FriendlyName())
	}
}

// FromJSON converts a value decoded by encoding/json (with or without UseNumber) to cty:
// objects become cty objects, arrays tuples (their elements may differ in type), numbers
// cty.Number, and null cty.NullVal(cty.DynamicPseudoType). Go integers and float32/float64 are
// accepted too, so values built by hand convert as well.
func FromJSON(x any) (cty.Value, error) {
	switch x := x.(type) {
	case nil:
		return cty.NullVal(cty.DynamicPseudoType), nil
	case bool:
		return cty.BoolVal(x), nil
	case string:
		return cty.StringVal(x), nil
	case json.Number:
		if !bounds.LiteralInRange(string(x)) {
			_, err := bounds.ParseNumber(string(x))
			return cty.NilVal, err
		}
		n, err := cty.ParseNumberVal(string(x))
		if err != nil {
			return cty.NilVal, fmt.Errorf("invalid JSON number %q", string(x))
		}
		return n, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return cty.NilVal, fmt.Errorf("%v is not a JSON number", x)
		}
		return cty.NumberFloatVal(x), nil
	case float32:
		return FromJSON(float64(x))
	case int:
		return cty.NumberIntVal(int64(x)), nil
	case int64:
		return cty.NumberIntVal(x), nil
	case int32:
		return cty.NumberIntVal(int64(x)), nil
	case uint64:
		return cty.NumberVal(new(big.Float).SetUint64(x)), nil
	case map[string]any:
		if len(x) == 0 {
			return cty.EmptyObjectVal, nil
		}
		attrs := make(map[string]cty.Value, len(x))
		// Of several values that do not convert, the first key's is reported, whatever order
		// the map gives: the same document always gets the same message.
		var failedKey string
		var failed error
		for k, e := range x {
			v, err := FromJSON(e)
			if err != nil {
				if failed == nil || k < failedKey {
					failedKey, failed = k, err
				}
				continue
			}
			attrs[k] = v
		}
		if failed != nil {
			return cty.NilVal, fmt.Errorf("%s: %w", failedKey, failed)
		}
		return cty.ObjectVal(attrs), nil
	case []any:
		if len(x) == 0 {
			return cty.EmptyTupleVal, nil
		}
		elems := make([]cty.Value, len(x))
		for i, e := range x {
			v, err := FromJSON(e)
			if err != nil {
				return cty.NilVal, fmt.Errorf("[%d]: %w", i, err)
			}
			elems[i] = v
		}
		return cty.TupleVal(elems), nil
	default:
		return cty.NilVal, fmt.Errorf("%T is not a JSON value", x)
	}
}
