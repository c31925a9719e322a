package funcs

import (
	"errors"
	"math"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// adapt returns f with two repairs, or f itself when it needs neither.
//
// First, go-cty's function machinery returns an unknown result early when an
// argument is unknown (or of unknown type) and its parameter does not accept
// that, but then it reapplies only the marks of the parameters that do not
// handle marks themselves. So stdlib functions that handle marks themselves
// (concat, merge, element, zipmap, abs, …) drop the marks of an unknown
// argument, and a secret that is not known yet at plan time would lose its
// sensitivity. The adapted function takes those marks off before calling f
// and puts them on the result.
//
// Second, check, when not nil, runs first on the arguments (deeply
// unmarked), to turn the inputs on which f would panic into errors.
func adapt(f function.Function, check func(args []cty.Value) error) function.Function {
	params := f.Params()
	varParam := f.VarParam()
	if check == nil && !dropsUnknownMarks(params, varParam) {
		return f
	}
	// Every argument reaches Impl as given, so that it can see the marks.
	outer := func(p function.Parameter) function.Parameter {
		p.AllowMarked, p.AllowUnknown, p.AllowDynamicType = true, true, true
		return p
	}
	outerParams := make([]function.Parameter, len(params))
	for i, p := range params {
		outerParams[i] = outer(p)
	}
	var outerVarParam *function.Parameter
	if varParam != nil {
		p := outer(*varParam)
		outerVarParam = &p
	}
	return function.New(&function.Spec{
		Description: f.Description(),
		Params:      outerParams,
		VarParam:    outerVarParam,
		Type:        f.ReturnTypeForValues,
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if check != nil {
				plain := make([]cty.Value, len(args))
				for i, a := range args {
					plain[i], _ = a.UnmarkDeep()
				}
				if err := check(plain); err != nil {
					return cty.NilVal, err
				}
			}
			args = append([]cty.Value(nil), args...)
			var lost []cty.ValueMarks
			for i, a := range args {
				p := varParam
				if i < len(params) {
					p = &params[i]
				}
				if p.AllowMarked && a.IsMarked() && !p.AllowUnknown &&
					(!a.IsKnown() || a.Type() == cty.DynamicPseudoType && !p.AllowDynamicType) {
					var m cty.ValueMarks
					args[i], m = a.Unmark()
					lost = append(lost, m)
				}
			}
			ret, err := f.Call(args)
			if err != nil {
				return cty.NilVal, err
			}
			return ret.WithMarks(lost...), nil
		},
	})
}

// dropsUnknownMarks reports whether the machinery could drop the marks of an
// unknown argument of these parameters.
func dropsUnknownMarks(params []function.Parameter, varParam *function.Parameter) bool {
	drops := func(p function.Parameter) bool {
		return p.AllowMarked && (!p.AllowUnknown || !p.AllowDynamicType)
	}
	for _, p := range params {
		if drops(p) {
			return true
		}
	}
	return varParam != nil && drops(*varParam)
}

// The checks below reject inputs on which go-cty's stdlib functions panic:
// the machinery would report the panic, stack trace and all, as the error.
// They leave out the values, which may be secret.

// checkIndent rejects a negative indent, which strings.Repeat panics on.
func checkIndent(args []cty.Value) error {
	if n := args[0]; n.IsKnown() && !n.IsNull() && n.Type() == cty.Number && n.LessThan(cty.Zero).True() {
		return function.NewArgErrorf(0, "the number of spaces must not be negative")
	}
	return nil
}

// checkFloatResult rejects arguments for which op, computed in float64 as
// stdlib does, gives NaN, which go-cty cannot represent.
func checkFloatResult(op func(a, b float64) float64, msg string) func(args []cty.Value) error {
	return func(args []cty.Value) error {
		var fs [2]float64
		for i := range fs {
			v := args[i]
			if !v.IsKnown() || v.IsNull() || v.Type() != cty.Number {
				return nil
			}
			fs[i], _ = v.AsBigFloat().Float64()
		}
		if math.IsNaN(op(fs[0], fs[1])) {
			return errors.New(msg)
		}
		return nil
	}
}

var (
	checkLog = checkFloatResult(func(n, base float64) float64 { return math.Log(n) / math.Log(base) },
		"the logarithm is not a real number for these arguments: the number and the base must not be negative, and the base must not be 1 when the number is 1")
	checkPow = checkFloatResult(math.Pow, "a negative number cannot be raised to a fractional power")
)

// checkMerge rejects arguments other than maps and objects, which stdlib's
// merge only notices when a null argument of unknown type came first.
func checkMerge(args []cty.Value) error {
	for i, a := range args {
		ty := a.Type()
		if a.IsNull() || ty == cty.DynamicPseudoType || ty.IsMapType() || ty.IsObjectType() {
			continue
		}
		return function.NewArgErrorf(i, "arguments must be maps or objects, got %s", ty.FriendlyName())
	}
	return nil
}

// checkZipmap rejects null keys, which stdlib's zipmap checks for only when
// the values are a tuple.
func checkZipmap(args []cty.Value) error {
	keys := args[0]
	if !keys.IsKnown() || keys.IsNull() || !keys.CanIterateElements() {
		return nil
	}
	i := 0
	for it := keys.ElementIterator(); it.Next(); i++ {
		if _, k := it.Element(); k.IsNull() {
			return function.NewArgErrorf(0, "keys list has null value at index %d", i)
		}
	}
	return nil
}
