package funcs

import (
	"strconv"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
)

// makeToFunc is Terraform's version of stdlib.MakeToFunc. stdlib's quotes
// the string it could not convert in its error, which would put a sensitive
// value into logs; this one sees the marks and leaves such values out.
func makeToFunc(wantTy cty.Type) function.Function {
	return function.New(&function.Spec{
		Description: "Converts the given value to " + wantTy.FriendlyNameForConstraint() + ", or raises an error if that conversion is impossible.",
		Params: []function.Parameter{{
			Name: "v",
			// Dynamic, so that the value arrives as given and the errors
			// can speak of an explicit conversion. Marks and unknowns are
			// kept by convert.Convert itself, nested ones included.
			Type:             cty.DynamicPseudoType,
			AllowNull:        true,
			AllowUnknown:     true,
			AllowMarked:      true,
			AllowDynamicType: true,
		}},
		Type: func(args []cty.Value) (cty.Type, error) {
			gotTy := collectionOf(args[0], wantTy).Type()
			if gotTy.Equals(wantTy) {
				return wantTy, nil
			}
			// Unsafe conversions (string to number, say) can fail only on
			// the value, which Impl reports.
			if convert.GetConversionUnsafe(gotTy, wantTy) != nil {
				return wantTy, nil
			}
			switch {
			case gotTy.IsTupleType() && wantTy.IsTupleType():
				return cty.NilType, function.NewArgErrorf(0, "incompatible tuple type for conversion: %s", convert.MismatchMessage(gotTy, wantTy))
			case gotTy.IsObjectType() && wantTy.IsObjectType():
				return cty.NilType, function.NewArgErrorf(0, "incompatible object type for conversion: %s", convert.MismatchMessage(gotTy, wantTy))
			}
			return cty.NilType, function.NewArgErrorf(0, "cannot convert %s to %s", gotTy.FriendlyName(), wantTy.FriendlyNameForConstraint())
		},
		Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
			ret, err := convert.Convert(collectionOf(args[0], wantTy), retType)
			if err == nil {
				return ret, nil
			}
			v, _ := args[0].UnmarkDeep()
			gotTy := v.Type()
			switch {
			case args[0].ContainsMarked():
				return cty.NilVal, function.NewArgErrorf(0, "cannot convert this sensitive %s to %s", gotTy.FriendlyName(), wantTy.FriendlyNameForConstraint())
			case gotTy == cty.String && wantTy == cty.Bool:
				return cty.NilVal, function.NewArgErrorf(0, `cannot convert %s to bool; only the strings "true" or "false" are allowed`, strconv.Quote(v.AsString()))
			case gotTy == cty.String && wantTy == cty.Number:
				return cty.NilVal, function.NewArgErrorf(0, `cannot convert %s to number; given string must be a decimal representation of a number`, strconv.Quote(v.AsString()))
			}
			return cty.NilVal, function.NewArgErrorf(0, "cannot convert %s to %s: %s", gotTy.FriendlyName(), wantTy.FriendlyNameForConstraint(), err)
		},
	})
}

// collectionOf is v made a list or a set, when that is what want is and v is a tuple of one
// element type (uniformTuple): go-cty's conversion of the tuple itself compares every pair of
// element types.
func collectionOf(v cty.Value, want cty.Type) cty.Value {
	if !want.IsListType() && !want.IsSetType() {
		return v
	}
	return uniformTuple(v, want.IsSetType())
}
