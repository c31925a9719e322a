package lang

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/fuscia/fuscia/lang/schema"
)

// staticEval evaluates settings that must be known before a run starts (timeouts, strategies,
// limits). They may use literals, functions and `var`; at validate time a variable without a
// value is unknown, and a setting that depends on it is checked at plan instead.
type staticEval struct {
	ctx   *hcl.EvalContext
	diags hcl.Diagnostics
}

func (s *staticEval) add(d ...*hcl.Diagnostic) { s.diags = appendDiags(s.diags, d...) }

// value evaluates attr; ok is false when it is absent, unknown, or invalid (then a diagnostic was
// added).
func (s *staticEval) value(attr *hcl.Attribute) (cty.Value, bool) {
	if attr == nil {
		return cty.NilVal, false
	}
	if _, foreign := splitRoots(attr.Expr, "var"); len(foreign) > 0 {
		tr := foreign[0]
		s.add(errorf(tr.SourceRange(), "Invalid reference in setting",
			"%q must be known before the run starts, so it can use literals, functions and var.*, but not %s.* references.",
			attr.Name, tr.RootName()))
		return cty.NilVal, false
	}
	v, diags := attr.Expr.Value(s.ctx)
	s.add(diags...)
	if diags.HasErrors() || !v.IsWhollyKnown() {
		return cty.NilVal, false
	}
	// Settings are not secret output; marks anywhere inside would make cty panic on access.
	v, _ = v.UnmarkDeep()
	if v.IsNull() {
		s.add(errorf(attr.Expr.Range(), "Invalid value", "%q must not be null.", attr.Name))
		return cty.NilVal, false
	}
	return v, true
}

func (s *staticEval) convert(attr *hcl.Attribute, ty cty.Type, what string) (cty.Value, bool) {
	v, ok := s.value(attr)
	if !ok {
		return cty.NilVal, false
	}
	cv, err := convert.Convert(v, ty)
	if err != nil {
		s.add(errorf(attr.Expr.Range(), "Invalid value for "+attr.Name,
			"%q must be %s, got %s.", attr.Name, what, typeName(v.Type())))
		return cty.NilVal, false
	}
	return cv, true
}

func (s *staticEval) str(attr *hcl.Attribute) (string, bool) {
	v, ok := s.convert(attr, cty.String, "a string")
	if !ok {
		return "", false
	}
	return v.AsString(), true
}

func (s *staticEval) oneOf(attr *hcl.Attribute, allowed ...string) (string, bool) {
	v, ok := s.str(attr)
	if !ok {
		return "", false
	}
	for _, a := range allowed {
		if v == a {
			return v, true
		}
	}
	s.add(errorf(attr.Expr.Range(), "Invalid value for "+attr.Name,
		"%q must be one of %s; got %q.", attr.Name, quoteList(allowed), v))
	return "", false
}

func (s *staticEval) boolean(attr *hcl.Attribute) (bool, bool) {
	v, ok := s.convert(attr, cty.Bool, "a boolean (true or false)")
	if !ok {
		return false, false
	}
	return v.True(), true
}

func (s *staticEval) integer(attr *hcl.Attribute, min, max int64) (int64, bool) {
	v, ok := s.convert(attr, cty.Number, "a whole number")
	if !ok {
		return 0, false
	}
	bf := v.AsBigFloat()
	i, acc := bf.Int64()
	if !bf.IsInt() || acc != big.Exact {
		s.add(errorf(attr.Expr.Range(), "Invalid value for "+attr.Name,
			"%q must be a whole number; got %s.", attr.Name, bf.Text('g', -1)))
		return 0, false
	}
	if i < min || i > max {
		s.add(errorf(attr.Expr.Range(), "Invalid value for "+attr.Name,
			"%q must be between %d and %d; got %d.", attr.Name, min, max, i))
		return 0, false
	}
	return i, true
}

func (s *staticEval) duration(attr *hcl.Attribute) (time.Duration, bool) {
	str, ok := s.str(attr)
	if !ok {
		return 0, false
	}
	d, err := schema.ParseDuration(str)
	if err != nil {
		s.add(errorf(attr.Expr.Range(), "Invalid duration for "+attr.Name, "%s", Sentence(err.Error())))
		return 0, false
	}
	return d, true
}

func (s *staticEval) positiveDuration(attr *hcl.Attribute) (time.Duration, bool) {
	d, ok := s.duration(attr)
	if ok && d <= 0 {
		s.add(errorf(attr.Expr.Range(), "Invalid duration for "+attr.Name,
			"%q must be longer than zero; got %q.", attr.Name, d.String()))
		return 0, false
	}
	return d, ok
}

func (s *staticEval) size(attr *hcl.Attribute) (int64, bool) {
	v, ok := s.value(attr)
	if !ok {
		return 0, false
	}
	var str string
	switch v.Type() {
	case cty.Number:
		str = v.AsBigFloat().Text('f', -1)
	case cty.String:
		str = v.AsString()
	default:
		s.add(errorf(attr.Expr.Range(), "Invalid size for "+attr.Name,
			"%q must be a size such as \"512KiB\", \"10MiB\" or a number of bytes; got %s.", attr.Name, typeName(v.Type())))
		return 0, false
	}
	n, err := schema.ParseSize(str)
	if err != nil {
		s.add(errorf(attr.Expr.Range(), "Invalid size for "+attr.Name, "%s", Sentence(err.Error())))
		return 0, false
	}
	return n, true
}

func (s *staticEval) strList(attr *hcl.Attribute) ([]string, bool) {
	v, ok := s.convert(attr, cty.List(cty.String), "a list of strings")
	if !ok {
		return nil, false
	}
	out := make([]string, 0, v.LengthInt())
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() {
			s.add(errorf(attr.Expr.Range(), "Invalid value for "+attr.Name, "%q must not contain null.", attr.Name))
			return nil, false
		}
		out = append(out, e.AsString())
	}
	return out, true
}

// typeName describes a cty type in the words users know from Terraform.
func typeName(t cty.Type) string {
	switch {
	case t == cty.DynamicPseudoType:
		return "any value"
	case t.IsPrimitiveType():
		return t.FriendlyName()
	case t.IsObjectType():
		return "object"
	case t.IsTupleType():
		return "tuple"
	default:
		return t.FriendlyName()
	}
}

func quoteList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// Sentence makes an error text a sentence: capitalised, ending with a period.
func Sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "?") && !strings.HasSuffix(s, "!") {
		s += "."
	}
	return s
}
