package funcs

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// lengthFunc is Terraform's length: unlike stdlib's it also counts the
// characters of a string and the elements of tuples and objects.
var lengthFunc = function.New(&function.Spec{
	Description: "Returns the number of elements of a list, set, tuple, map or object, or the number of characters of a string.",
	Params: []function.Parameter{{
		Name: "value",
		Type: cty.DynamicPseudoType,
		// A tuple's or object's length is part of its type, so it is known
		// even when the value is not. Marks are handled below so that only
		// the value's own marks, not those of its elements, mark the count.
		AllowUnknown:     true,
		AllowDynamicType: true,
		AllowMarked:      true,
	}},
	Type: func(args []cty.Value) (cty.Type, error) {
		ty := args[0].Type()
		switch {
		case ty == cty.String, ty == cty.DynamicPseudoType,
			ty.IsListType(), ty.IsSetType(), ty.IsMapType(),
			ty.IsTupleType(), ty.IsObjectType():
			return cty.Number, nil
		}
		return cty.NilType, function.NewArgErrorf(0, "argument must be a string, a collection type, or a structural type, not %s", ty.FriendlyName())
	},
	RefineResult: refineNotNull,
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		v, marks := args[0].Unmark()
		ty := v.Type()
		var n cty.Value
		switch {
		case ty == cty.DynamicPseudoType:
			n = cty.UnknownVal(cty.Number)
		case ty.IsTupleType():
			n = cty.NumberIntVal(int64(len(ty.TupleElementTypes())))
		case ty.IsObjectType():
			n = cty.NumberIntVal(int64(len(ty.AttributeTypes())))
		case ty == cty.String:
			// Strlen counts grapheme clusters, as Terraform does, so that
			// "é" written with a combining accent still counts as one.
			var err error
			if n, err = stdlib.Strlen(v); err != nil {
				return cty.NilVal, err
			}
		default:
			n = v.Length()
		}
		return n.WithMarks(marks), nil
	},
})

// coalesceFunc is Terraform's coalesce, which unlike stdlib's also skips
// empty strings, because Terraform configurations use "" as "not set".
var coalesceFunc = function.New(&function.Spec{
	Description: "Returns the first of its arguments that is neither null nor an empty string.",
	VarParam: &function.Parameter{
		Name: "vals",
		Type: cty.DynamicPseudoType,
		// An unknown argument after the one chosen does not matter, so
		// unknowns are looked at here rather than making the whole result
		// unknown.
		AllowUnknown:     true,
		AllowDynamicType: true,
		AllowNull:        true,
	},
	Type: func(args []cty.Value) (cty.Type, error) {
		if len(args) == 0 {
			return cty.NilType, errors.New("at least one argument is required")
		}
		types := make([]cty.Type, len(args))
		for i, v := range args {
			types[i] = v.Type()
		}
		ty, _ := convert.UnifyUnsafe(types)
		if ty == cty.NilType {
			return cty.NilType, errors.New("all arguments must have the same type")
		}
		return ty, nil
	},
	RefineResult: refineNotNull,
	Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
		for _, v := range args {
			// The Type function has already checked that this succeeds.
			v, _ = convert.Convert(v, retType)
			if !v.IsKnown() {
				return cty.UnknownVal(retType), nil
			}
			if v.IsNull() {
				continue
			}
			// Checked on the value's type rather than retType, which is
			// dynamic when any argument is an untyped null.
			if v.Type() == cty.String && v.AsString() == "" {
				continue
			}
			return v, nil
		}
		return cty.NilVal, errors.New("no non-null, non-empty-string arguments")
	},
})

// lookupFunc is Terraform's lookup: stdlib's requires the default, and
// Terraform's reports the missing key when there is none.
var lookupFunc = function.New(&function.Spec{
	Description: "Returns the element with the given key from a map or object, or the default if there is none.",
	// Marks and unknowns are handled here, as Terraform does, so that the
	// result carries the marks of the chosen element (and of the map and
	// key) but not those of its siblings, and a default that is not used
	// neither marks nor hides the result.
	Params: []function.Parameter{
		{
			Name:             "inputMap",
			Type:             cty.DynamicPseudoType,
			AllowUnknown:     true,
			AllowDynamicType: true,
			AllowMarked:      true,
		},
		{
			Name:         "key",
			Type:         cty.String,
			AllowUnknown: true,
			AllowMarked:  true,
		},
	},
	VarParam: &function.Parameter{
		Name:             "default",
		Type:             cty.DynamicPseudoType,
		AllowUnknown:     true,
		AllowDynamicType: true,
		AllowNull:        true,
		AllowMarked:      true,
	},
	Type: func(args []cty.Value) (cty.Type, error) {
		if len(args) > 3 {
			return cty.NilType, fmt.Errorf("lookup() takes two or three arguments, got %d", len(args))
		}
		ty := args[0].Type()
		switch {
		case ty == cty.DynamicPseudoType:
			return cty.DynamicPseudoType, nil
		case ty.IsObjectType():
			key, keyMarks := args[1].Unmark()
			if !key.IsKnown() {
				return cty.DynamicPseudoType, nil
			}
			k := key.AsString()
			switch {
			case ty.HasAttribute(k):
				return ty.AttributeType(k), nil
			case len(args) == 3:
				return args[2].Type(), nil
			}
			return cty.NilType, function.NewArgErrorf(0, "the given object has no attribute %s", quoteUnlessMarked(k, keyMarks))
		case ty.IsMapType():
			if len(args) == 3 {
				if _, err := convert.Convert(args[2], ty.ElementType()); err != nil {
					return cty.NilType, function.NewArgErrorf(2, "the default value must have the same type as the map elements")
				}
			}
			return ty.ElementType(), nil
		}
		return cty.NilType, function.NewArgErrorf(0, "lookup() requires a map or object as the first argument, not %s", ty.FriendlyName())
	},
	Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
		m, mapMarks := args[0].Unmark()
		key, keyMarks := args[1].Unmark()
		var def cty.Value
		hasDefault := len(args) == 3
		if hasDefault {
			// The default keeps its own marks: they belong on the result
			// only if it is used.
			def = args[2]
		}
		if !m.IsKnown() || !key.IsKnown() {
			// Any element might be chosen, or the default, so the result
			// carries all of their marks.
			_, elemMarks := m.UnmarkDeep()
			ret := cty.UnknownVal(retType).WithMarks(mapMarks, keyMarks, elemMarks)
			if hasDefault {
				_, defMarks := def.UnmarkDeep()
				ret = ret.WithMarks(defMarks)
			}
			return ret, nil
		}
		k := key.AsString()
		if m.Type().IsObjectType() {
			if m.Type().HasAttribute(k) {
				return m.GetAttr(k).WithMarks(mapMarks, keyMarks), nil
			}
		} else if m.HasIndex(cty.StringVal(k)).True() {
			return m.Index(cty.StringVal(k)).WithMarks(mapMarks, keyMarks), nil
		}
		if !hasDefault {
			return cty.NilVal, fmt.Errorf("lookup failed to find key %s", quoteUnlessMarked(k, keyMarks))
		}
		def, err := convert.Convert(def, retType)
		if err != nil {
			return cty.NilVal, function.NewArgError(2, err)
		}
		return def.WithMarks(mapMarks, keyMarks), nil
	},
})

// hashSet is the set of hashKey of list's elements; ok is false when one has none.
func hashSet(list cty.Value) (set map[string]bool, ok bool) {
	set = make(map[string]bool, list.LengthInt())
	for it := list.ElementIterator(); it.Next(); {
		_, el := it.Element()
		k, ok := hashKey(el)
		if !ok {
			return nil, false
		}
		set[k] = true
	}
	return set, true
}

// quoteUnlessMarked keeps a marked (sensitive) string out of error messages,
// which are shown and logged where the value itself would be redacted.
func quoteUnlessMarked(s string, marks cty.ValueMarks) string {
	if len(marks) > 0 {
		return "(sensitive value)"
	}
	return fmt.Sprintf("%q", s)
}

// indexFunc is Terraform's index, which finds a value in a list; stdlib's
// function of that name is the [] operator instead.
var indexFunc = function.New(&function.Spec{
	Description: "Returns the index of the first element of a list or tuple that equals the given value.",
	Params: []function.Parameter{
		{Name: "list", Type: cty.DynamicPseudoType},
		{Name: "value", Type: cty.DynamicPseudoType},
	},
	Type: func(args []cty.Value) (cty.Type, error) {
		ty := args[0].Type()
		if !ty.IsListType() && !ty.IsTupleType() {
			return cty.NilType, function.NewArgErrorf(0, "argument must be a list or tuple, not %s", ty.FriendlyName())
		}
		return cty.Number, nil
	},
	RefineResult: refineNotNull,
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		if args[0].LengthInt() == 0 {
			return cty.NilVal, function.NewArgErrorf(0, "cannot search an empty list")
		}
		for it := args[0].ElementIterator(); it.Next(); {
			i, v := it.Element()
			eq, err := stdlib.Equal(v, args[1])
			if err != nil {
				return cty.NilVal, err
			}
			if !eq.IsKnown() {
				// An unknown element might be the match, so a later known
				// match could be the wrong answer.
				return cty.UnknownVal(cty.Number), nil
			}
			if eq.True() {
				return i, nil
			}
		}
		return cty.NilVal, errors.New("item not found")
	},
})

// oneFunc is Terraform's one, for turning an optional single element (a
// list of zero or one) into a value or null.
var oneFunc = function.New(&function.Spec{
	Description: "Returns the only element of a list, set or tuple of one element, or null if it has none.",
	Params: []function.Parameter{
		{Name: "list", Type: cty.DynamicPseudoType},
	},
	Type: func(args []cty.Value) (cty.Type, error) {
		ty := args[0].Type()
		switch {
		case ty.IsListType() || ty.IsSetType():
			return ty.ElementType(), nil
		case ty.IsTupleType():
			switch etys := ty.TupleElementTypes(); len(etys) {
			case 0:
				return cty.DynamicPseudoType, nil
			case 1:
				return etys[0], nil
			}
		}
		return cty.NilType, errOneArg
	},
	Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
		v := args[0]
		if v.Type().IsTupleType() {
			if v.LengthInt() == 0 {
				return cty.NullVal(retType), nil
			}
			return v.Index(cty.Zero), nil
		}
		n := v.Length()
		if !n.IsKnown() {
			// A set with unknown elements may collapse to fewer.
			return cty.UnknownVal(retType), nil
		}
		switch v.LengthInt() {
		case 0:
			return cty.NullVal(retType), nil
		case 1:
			// Iterating works for sets as well as lists.
			it := v.ElementIterator()
			it.Next()
			_, e := it.Element()
			return e, nil
		}
		return cty.NilVal, errOneArg
	},
})

var errOneArg = function.NewArgErrorf(0, "must be a list, set, or tuple value with either zero or one elements")

// sumFunc is Terraform's sum.
var sumFunc = function.New(&function.Spec{
	Description: "Returns the sum of a list, set or tuple of numbers.",
	Params: []function.Parameter{
		{Name: "list", Type: cty.DynamicPseudoType},
	},
	Type: func(args []cty.Value) (cty.Type, error) {
		ty := args[0].Type()
		var etys []cty.Type
		switch {
		case ty.IsListType() || ty.IsSetType():
			etys = []cty.Type{ty.ElementType()}
		case ty.IsTupleType():
			etys = ty.TupleElementTypes()
		default:
			return cty.NilType, function.NewArgErrorf(0, "argument must be list, set, or tuple, not %s", ty.FriendlyName())
		}
		for _, ety := range etys {
			// GetConversionUnsafe has no conversion for types that need none.
			if !ety.Equals(cty.Number) && convert.GetConversionUnsafe(ety, cty.Number) == nil {
				return cty.NilType, errSumArg
			}
		}
		return cty.Number, nil
	},
	RefineResult: refineNotNull,
	Impl: func(args []cty.Value, _ cty.Type) (ret cty.Value, err error) {
		if !args[0].IsWhollyKnown() {
			return cty.UnknownVal(cty.Number), nil
		}
		if args[0].LengthInt() == 0 {
			return cty.NilVal, function.NewArgErrorf(0, "cannot sum an empty list")
		}
		// big.Float panics on adding opposite infinities; report it as an
		// error about the input rather than as a crash.
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(big.ErrNaN); !ok {
					panic(r)
				}
				ret, err = cty.NilVal, function.NewArgErrorf(0, "can't compute sum of opposing infinities")
			}
		}()
		sum := cty.Zero
		for it := args[0].ElementIterator(); it.Next(); {
			_, v := it.Element()
			if v.IsNull() {
				return cty.NilVal, errSumArg
			}
			n, err := convert.Convert(v, cty.Number)
			if err != nil {
				return cty.NilVal, errSumArg
			}
			sum = sum.Add(n)
		}
		return sum, nil
	},
})

var errSumArg = function.NewArgErrorf(0, "argument must be list, set, or tuple of number values")

// allTrueFunc is Terraform's alltrue: null counts as false, and an unknown
// element makes the answer unknown only if no element is false.
var allTrueFunc = function.New(&function.Spec{
	Description: "Returns true if every element of the list is true (or there are none).",
	Params: []function.Parameter{
		{Name: "list", Type: cty.List(cty.Bool)},
	},
	Type:         function.StaticReturnType(cty.Bool),
	RefineResult: refineNotNull,
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		unknown := false
		for it := args[0].ElementIterator(); it.Next(); {
			_, v := it.Element()
			switch {
			case !v.IsKnown():
				unknown = true
			case v.IsNull() || v.False():
				return cty.False, nil
			}
		}
		if unknown {
			return cty.UnknownVal(cty.Bool), nil
		}
		return cty.True, nil
	},
})

// anyTrueFunc is Terraform's anytrue: null counts as false, and an unknown
// element makes the answer unknown only if no element is true.
var anyTrueFunc = function.New(&function.Spec{
	Description: "Returns true if any element of the list is true.",
	Params: []function.Parameter{
		{Name: "list", Type: cty.List(cty.Bool)},
	},
	Type:         function.StaticReturnType(cty.Bool),
	RefineResult: refineNotNull,
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		unknown := false
		for it := args[0].ElementIterator(); it.Next(); {
			_, v := it.Element()
			switch {
			case !v.IsKnown():
				unknown = true
			case !v.IsNull() && v.True():
				return cty.True, nil
			}
		}
		if unknown {
			return cty.UnknownVal(cty.Bool), nil
		}
		return cty.False, nil
	},
})

// transposeFunc is Terraform's transpose.
var transposeFunc = function.New(&function.Spec{
	Description: "Swaps the keys and values of a map of lists of strings.",
	Params: []function.Parameter{
		{Name: "values", Type: cty.Map(cty.List(cty.String))},
	},
	Type:         function.StaticReturnType(cty.Map(cty.List(cty.String))),
	RefineResult: refineNotNull,
	Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
		in := args[0]
		if !in.IsWhollyKnown() {
			return cty.UnknownVal(retType), nil
		}
		// Map iteration is in key order, so each output list is too.
		out := map[string][]cty.Value{}
		for it := in.ElementIterator(); it.Next(); {
			k, list := it.Element()
			if list.IsNull() {
				return cty.NilVal, function.NewArgErrorf(0, "the value for key %q must not be null", k.AsString())
			}
			for it := list.ElementIterator(); it.Next(); {
				_, v := it.Element()
				if v.IsNull() {
					return cty.NilVal, function.NewArgErrorf(0, "the list for key %q must not contain null", k.AsString())
				}
				s := v.AsString()
				out[s] = append(out[s], k)
			}
		}
		if len(out) == 0 {
			return cty.MapValEmpty(cty.List(cty.String)), nil
		}
		m := make(map[string]cty.Value, len(out))
		for s, keys := range out {
			m[s] = cty.ListVal(keys)
		}
		return cty.MapVal(m), nil
	},
})

// matchkeysFunc is Terraform's matchkeys.
var matchkeysFunc = function.New(&function.Spec{
	Description: "Returns the elements of values whose corresponding element of keys is in searchset.",
	Params: []function.Parameter{
		{Name: "values", Type: cty.List(cty.DynamicPseudoType)},
		{Name: "keys", Type: cty.List(cty.DynamicPseudoType)},
		{Name: "searchset", Type: cty.List(cty.DynamicPseudoType)},
	},
	Type: func(args []cty.Value) (cty.Type, error) {
		if ty, _ := convert.UnifyUnsafe([]cty.Type{args[1].Type(), args[2].Type()}); ty == cty.NilType {
			return cty.NilType, errors.New("keys and searchset must be of the same type")
		}
		return args[0].Type(), nil
	},
	RefineResult: refineNotNull,
	Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
		values := args[0]
		ty, _ := convert.UnifyUnsafe([]cty.Type{args[1].Type(), args[2].Type()})
		keys, err := convert.Convert(args[1], ty)
		if err != nil {
			return cty.NilVal, function.NewArgError(1, err)
		}
		search, err := convert.Convert(args[2], ty)
		if err != nil {
			return cty.NilVal, function.NewArgError(2, err)
		}
		if values.LengthInt() != keys.LengthInt() {
			return cty.NilVal, errors.New("length of keys and values should be equal")
		}
		if !keys.IsWhollyKnown() || !search.IsWhollyKnown() {
			return cty.UnknownVal(retType), nil
		}
		var out []cty.Value
		// Strings, numbers and booleans are looked up in a set; anything else is compared
		// pair by pair, within maxPairs (5,000 keys against 5,000 took 35 s).
		if set, ok := hashSet(search); ok {
			for it := keys.ElementIterator(); it.Next(); {
				i, key := it.Element()
				if k, ok := hashKey(key); ok && set[k] {
					out = append(out, values.Index(i))
				} else if !ok {
					set = nil
					break
				}
			}
			if set != nil {
				if len(out) == 0 {
					return cty.ListValEmpty(retType.ElementType()), nil
				}
				return cty.ListVal(out), nil
			}
			out = nil
		}
		if n := keys.LengthInt() * search.LengthInt(); n > maxPairs {
			return cty.NilVal, fmt.Errorf("matchkeys would compare %d pairs of keys that are not strings, numbers or booleans: at most %d", n, maxPairs)
		}
		for it := keys.ElementIterator(); it.Next(); {
			i, key := it.Element()
			for it := search.ElementIterator(); it.Next(); {
				_, s := it.Element()
				eq, err := stdlib.Equal(key, s)
				if err != nil {
					return cty.NilVal, err
				}
				if eq.True() {
					out = append(out, values.Index(i))
					break
				}
			}
		}
		if len(out) == 0 {
			return cty.ListValEmpty(retType.ElementType()), nil
		}
		return cty.ListVal(out), nil
	},
})
