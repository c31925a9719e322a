package funcs

import (
	"errors"
	"math"
	"strings"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/fuscia/fuscia/internal/bounds"
)

// adapt returns f with these repairs, or f itself when it needs none.
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
//
// Third, with boundResult, a number f returns must be within bounds.CheckNumber's range: f
// takes numbers its parameters converted from strings, which may be as large as they are short.
//
// Fourth, an error of a call with a sensitive argument does not quote it (hideSensitive): a
// function whose errors quote its arguments (quotesArguments) is adapted for that alone. The
// others are left as they are: wrapping a call costs about half a microsecond.
func adapt(f function.Function, check func(args []cty.Value) error, boundResult, quotesArguments bool) function.Function {
	params := f.Params()
	varParam := f.VarParam()
	if check == nil && !boundResult && !quotesArguments && !takesCollection(params, varParam) && !dropsUnknownMarks(params, varParam) {
		return f
	}
	// Every argument reaches Impl as given, so that it can see the marks.
	outer := func(p function.Parameter) function.Parameter {
		p.AllowMarked, p.AllowUnknown, p.AllowDynamicType = true, true, true
		if p.Type.IsListType() || p.Type.IsSetType() {
			// Taken as given and made a list here (uniformTuples): go-cty's own conversion of
			// a tuple unifies its element types pair by pair.
			p.Type = cty.DynamicPseudoType
		}
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
	checked := func(args []cty.Value) error {
		if check == nil {
			return nil
		}
		plain := make([]cty.Value, len(args))
		for i, a := range args {
			plain[i], _ = a.UnmarkDeep()
		}
		return check(plain)
	}
	return function.New(&function.Spec{
		Description: f.Description(),
		Params:      outerParams,
		VarParam:    outerVarParam,
		// Checked here too: some functions do their work to find their type (jsondecode
		// decodes the document).
		Type: func(args []cty.Value) (cty.Type, error) {
			args, err := convertCollections(args, params, varParam)
			if err != nil {
				return cty.NilType, err
			}
			if err := checked(args); err != nil {
				return cty.NilType, hideSensitive(err, args)
			}
			ty, err := f.ReturnTypeForValues(args)
			return ty, hideSensitive(err, args)
		},
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			args, err := convertCollections(args, params, varParam)
			if err != nil {
				return cty.NilVal, err
			}
			if err := checked(args); err != nil {
				return cty.NilVal, hideSensitive(err, args)
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
				return cty.NilVal, hideSensitive(err, args)
			}
			if boundResult {
				if err := bounds.CheckNumber(ret); err != nil {
					return cty.NilVal, err
				}
			}
			return ret.WithMarks(lost...), nil
		},
	})
}

// hideSensitive is err, unless an argument holds a sensitive value: a function's message may
// quote part of its argument (jsondecode's "invalid character 's' looking for beginning of
// value"), and the scrubber of log lines and journal entries only finds a secret's whole
// value. The only marks Fuscia puts on values say "sensitive".
func hideSensitive(err error, args []cty.Value) error {
	if err == nil {
		return nil
	}
	for i, a := range args {
		if a.ContainsMarked() {
			return function.NewArgErrorf(i, "this argument is sensitive, so the function's error is not shown: it could quote part of the value")
		}
	}
	return err
}

// takesCollection reports whether a parameter is a list or a set.
func takesCollection(params []function.Parameter, varParam *function.Parameter) bool {
	for _, p := range params {
		if p.Type.IsListType() || p.Type.IsSetType() {
			return true
		}
	}
	return varParam != nil && (varParam.Type.IsListType() || varParam.Type.IsSetType())
}

// convertCollections converts the arguments of list and set parameters to the parameters'
// types, as hcl does for the other parameters (the outer function takes them as they come).
// A tuple whose elements all have one type is made a list (or a set) of them first, marks
// kept: go-cty converts a tuple by unifying its element types, which compares every pair even
// when they are all the same (tolist of a 20,000-element for expression took 15 s, 10,000
// took 4 s); a list's conversion is cheap.
func convertCollections(args []cty.Value, params []function.Parameter, varParam *function.Parameter) ([]cty.Value, error) {
	var out []cty.Value
	for i, a := range args {
		p := varParam
		if i < len(params) {
			p = &params[i]
		}
		if p == nil || !(p.Type.IsListType() || p.Type.IsSetType()) {
			continue
		}
		if out == nil {
			out = append([]cty.Value(nil), args...)
		}
		v, err := convert.Convert(uniformTuple(a, p.Type.IsSetType()), p.Type)
		if err != nil {
			return nil, function.NewArgError(i, err)
		}
		out[i] = v
	}
	if out == nil {
		return args, nil
	}
	return out, nil
}

// uniformTuple returns a, a tuple of two or more elements of one type, as a list (or a set)
// of them with a's marks; anything else as it is.
func uniformTuple(a cty.Value, set bool) cty.Value {
	if !a.Type().IsTupleType() {
		return a
	}
	plain, marks := a.Unmark()
	if !plain.IsKnown() || plain.IsNull() || plain.LengthInt() < 2 {
		return a
	}
	elems := plain.AsValueSlice()
	first := elems[0].Type()
	if first == cty.DynamicPseudoType {
		return a
	}
	for _, el := range elems[1:] {
		if !el.Type().Equals(first) {
			return a
		}
	}
	if set {
		return cty.SetVal(elems).WithMarks(marks)
	}
	return cty.ListVal(elems).WithMarks(marks)
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

// The checks below also bound what a short expression can make a function build: a workflow
// file is input, and the runtime dies of a stack overflow or an allocation it cannot make,
// with no error to report.

// maxBuiltString bounds the strings indent and format build: far more than a setting or an
// input needs, far less than a machine has.
const maxBuiltString = 16 << 20

// checkIndent rejects a negative indent, which strings.Repeat panics on, and one that would
// make a string of more than maxBuiltString bytes.
func checkIndent(args []cty.Value) error {
	n := args[0]
	if !n.IsKnown() || n.IsNull() || n.Type() != cty.Number {
		return nil
	}
	if n.LessThan(cty.Zero).True() {
		return function.NewArgErrorf(0, "the number of spaces must not be negative")
	}
	lines := 1
	if s := args[1]; s.IsKnown() && !s.IsNull() && s.Type() == cty.String {
		lines += strings.Count(s.AsString(), "\n")
	}
	if n.GreaterThan(cty.NumberIntVal(int64(maxBuiltString / lines))).True() {
		return function.NewArgErrorf(0, "%d lines indented by that many spaces would be more than %d MiB", lines, maxBuiltString>>20)
	}
	return nil
}

// hasNumberVerb reports whether the format has a verb that reads its argument as a number.
func hasNumberVerb(format string) bool {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		for i < len(format) && strings.IndexByte("+-# 0123456789.[]*", format[i]) >= 0 {
			i++
		}
		if i < len(format) && strings.IndexByte("dfFeEgGboxX", format[i]) >= 0 {
			return true
		}
	}
	return false
}

// checkFormat rejects a format that would make a string of more than maxBuiltString bytes (a
// width, a precision, or arguments used by many verbs), or that reads a number from a string
// out of range.
func checkFormat(args []cty.Value) error { return checkFormatTimes(args, 1) }

// checkFormatList is checkFormat for formatlist, which formats once per element of its lists.
func checkFormatList(args []cty.Value) error {
	n := 1
	for _, a := range args[1:] {
		if a.IsKnown() && !a.IsNull() && isSequence(a.Type()) {
			n = max(n, a.LengthInt())
		}
	}
	return checkFormatTimes(args, n)
}

// checkFormatTimes is checkFormat for a format used times times.
func checkFormatTimes(args []cty.Value, times int) error {
	if err := checkFormatNumbers(args); err != nil {
		return err
	}
	if err := checkFormatArgs(args, times); err != nil {
		return err
	}
	return checkFormatSize(args, times)
}

// isSequence reports whether ty is a list, a tuple or a set: what formatlist iterates over.
func isSequence(ty cty.Type) bool {
	return ty.IsListType() || ty.IsTupleType() || ty.IsSetType()
}

// checkFormatSize checks the widths and precisions of the format in args[0], each used times
// times.
func checkFormatSize(args []cty.Value, times int) error {
	f := args[0]
	if !f.IsKnown() || f.IsNull() || f.Type() != cty.String {
		return nil
	}
	s := f.AsString()
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		i++
		for i < len(s) && strings.IndexByte("+-# 0", s[i]) >= 0 {
			i++
		}
		if i < len(s) && s[i] == '[' { // an argument index
			for i < len(s) && s[i] != ']' {
				i++
			}
			i++
		}
		for _, part := range []bool{true, false} { // the width, then the precision
			if !part {
				if i >= len(s) || s[i] != '.' {
					break
				}
				i++
			}
			start := i
			for i < len(s) && '0' <= s[i] && s[i] <= '9' {
				i++
			}
			if i-start > 9 || i > start && atoi(s[start:i]) > maxBuiltString/times {
				return function.NewArgErrorf(0, "a width or precision in the format would make more than %d MiB of text", maxBuiltString>>20)
			}
		}
	}
	return nil
}

func atoi(digits string) int {
	n := 0
	for _, c := range digits {
		n = n*10 + int(c-'0')
	}
	return n
}

// checkJSONDecode rejects a document nested more than bounds.MaxJSONDepth deep (go-cty's
// decoder recurses once a level) or with a number beyond bounds' range.
func checkJSONDecode(args []cty.Value) error {
	doc := args[0]
	if !doc.IsKnown() || doc.IsNull() || doc.Type() != cty.String {
		return nil
	}
	if err := bounds.CheckJSON([]byte(doc.AsString())); err != nil {
		return function.NewArgErrorf(0, "the JSON is out of bounds: %s", err)
	}
	return nil
}

// maxNumberText bounds the text tonumber and parseint read as a number: go-cty's parse is
// quadratic in the digits (a million took two seconds here, four million thirty-five), and a
// number within bounds' range needs a few thousand at most, even written in base 2.
const maxNumberText = 4096

// checkNumberText rejects a string argument, at index i, longer than maxNumberText bytes.
func checkNumberText(i int) func(args []cty.Value) error {
	return func(args []cty.Value) error {
		if s := args[i]; s.IsKnown() && !s.IsNull() && s.Type() == cty.String && len(s.AsString()) > maxNumberText {
			return function.NewArgErrorf(i, "the text is %d bytes: a number is read from %d bytes at most", len(s.AsString()), maxNumberText)
		}
		return nil
	}
}

// checkFormatNumbers rejects a string argument that format would read as a number (for %d, %f
// and the like) and that is too long or too large: go-cty converts it, then writes every digit.
func checkFormatNumbers(args []cty.Value) error {
	if f := args[0]; !f.IsKnown() || f.IsNull() || f.Type() != cty.String || !hasNumberVerb(f.AsString()) {
		return nil // nothing is read as a number (a %s of digits stays text)
	}
	for i, a := range args[1:] {
		if !a.IsKnown() || a.IsNull() {
			continue
		}
		vals := []cty.Value{a}
		if isSequence(a.Type()) { // formatlist's lists
			vals = a.AsValueSlice()
		}
		for _, v := range vals {
			if !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
				continue
			}
			text := strings.TrimSpace(v.AsString())
			if strings.Trim(text, "0123456789.+-eEpP") != "" {
				continue // not a number: format reports it if a verb wants one
			}
			if len(text) > maxNumberText {
				return function.NewArgErrorf(i+1, "the text is %d bytes of digits: a number is read from %d bytes at most", len(text), maxNumberText)
			}
			if n, err := cty.ParseNumberVal(text); err == nil {
				if err := bounds.CheckNumber(n); err != nil {
					return function.NewArgErrorf(i+1, "%s", err)
				}
			}
		}
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
