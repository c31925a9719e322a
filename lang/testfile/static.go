package testfile

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
)

// staticEval evaluates what a test file fixes before any run: variables, payloads and the
// settings of runs and mock_http blocks. Such expressions may use literal values and the
// language's functions, nothing else: a test's inputs do not depend on the workflow.
type staticEval struct {
	ctx   *hcl.EvalContext
	diags hcl.Diagnostics
}

func newStaticEval(fns map[string]function.Function) *staticEval {
	return &staticEval{ctx: &hcl.EvalContext{Functions: fns}}
}

func (s *staticEval) add(d ...*hcl.Diagnostic) { s.diags = append(s.diags, d...) }

// value evaluates expr, the value of what (e.g. `"payload"`); ok is false when it refers to
// anything, fails, or is null or unknown (a diagnostic was added).
func (s *staticEval) value(expr hcl.Expression, what string) (cty.Value, bool) {
	if vars := expr.Variables(); len(vars) > 0 {
		tr := vars[0]
		s.add(errorf(tr.SourceRange(), "Reference not allowed",
			"%s may use only literal values and functions, not references: a test fixes it before the run starts. This refers to %s; write the value itself.",
			upperFirst(what), traversalString(tr)))
		return cty.NilVal, false
	}
	v, diags := expr.Value(s.ctx)
	s.add(diags...)
	if diags.HasErrors() {
		return cty.NilVal, false
	}
	v, _ = v.UnmarkDeep()
	if !v.IsWhollyKnown() {
		// Only impure functions such as timestamp() could give an unknown value here; hcl
		// calls them for real, so this is a safeguard.
		s.add(errorf(expr.Range(), "Value not known",
			"%s must be known when the test file is read.", upperFirst(what)))
		return cty.NilVal, false
	}
	if v.IsNull() {
		s.add(errorf(expr.Range(), "Invalid value", "%s must not be null.", upperFirst(what)))
		return cty.NilVal, false
	}
	return v, true
}

func (s *staticEval) str(attr *hcl.Attribute, what string) (string, bool) {
	v, ok := s.value(attr.Expr, what)
	if !ok {
		return "", false
	}
	cv, err := convert.Convert(v, cty.String)
	if err != nil {
		s.add(errorf(attr.Expr.Range(), "Invalid value for "+attr.Name,
			"%s must be a string; this expression gives %s.", upperFirst(what), typeName(v.Type())))
		return "", false
	}
	return cv.AsString(), true
}

func (s *staticEval) boolean(attr *hcl.Attribute, what string) (bool, bool) {
	v, ok := s.value(attr.Expr, what)
	if !ok {
		return false, false
	}
	if v.Type() != cty.Bool {
		s.add(errorf(attr.Expr.Range(), "Invalid value for "+attr.Name,
			"%s must be true or false; this expression gives %s.", upperFirst(what), typeName(v.Type())))
		return false, false
	}
	return v.True(), true
}

// integer evaluates attr as a whole number within [lo, hi].
func (s *staticEval) integer(attr *hcl.Attribute, what string, lo, hi int64) (int64, bool) {
	v, ok := s.value(attr.Expr, what)
	if !ok {
		return 0, false
	}
	if v.Type() != cty.Number {
		s.add(errorf(attr.Expr.Range(), "Invalid value for "+attr.Name,
			"%s must be a whole number from %d to %d; this expression gives %s.", upperFirst(what), lo, hi, typeName(v.Type())))
		return 0, false
	}
	bf := v.AsBigFloat()
	n, acc := bf.Int64()
	if acc != big.Exact || n < lo || n > hi {
		s.add(errorf(attr.Expr.Range(), "Invalid value for "+attr.Name,
			"%s must be a whole number from %d to %d; got %s.", upperFirst(what), lo, hi, bf.Text('g', 10)))
		return 0, false
	}
	return n, true
}

// object evaluates expr as an object or map of values, by attribute name.
func (s *staticEval) object(expr hcl.Expression, what string) (map[string]cty.Value, bool) {
	v, ok := s.value(expr, what)
	if !ok {
		return nil, false
	}
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		s.add(errorf(expr.Range(), "Invalid value",
			"%s must be an object such as { name = \"value\" }; this expression gives %s.", upperFirst(what), typeName(v.Type())))
		return nil, false
	}
	return v.AsValueMap(), true
}

// errorf returns an error diagnostic about subject.
func errorf(subject hcl.Range, summary, format string, args ...any) *hcl.Diagnostic {
	r := subject
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: &r}
}

// warnf returns a warning diagnostic about subject.
func warnf(subject hcl.Range, summary, format string, args ...any) *hcl.Diagnostic {
	d := errorf(subject, summary, format, args...)
	d.Severity = hcl.DiagWarning
	return d
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// traversalString renders a reference as written: var.x, node.task.a.output.
func traversalString(tr hcl.Traversal) string {
	var b strings.Builder
	for _, step := range tr {
		switch st := step.(type) {
		case hcl.TraverseRoot:
			b.WriteString(st.Name)
		case hcl.TraverseAttr:
			b.WriteString("." + st.Name)
		case hcl.TraverseIndex:
			b.WriteString("[…]")
		case hcl.TraverseSplat:
			b.WriteString("[*]")
		}
	}
	return b.String()
}

// typeName names a type for messages.
func typeName(t cty.Type) string {
	switch {
	case t == cty.DynamicPseudoType:
		return "a value of unknown type"
	case t.IsObjectType():
		return "an object"
	case t.IsTupleType():
		return "a tuple"
	case t.IsListType():
		return "a list"
	case t.IsMapType():
		return "a map"
	case t.IsSetType():
		return "a set"
	case t == cty.String:
		return "a string"
	case t == cty.Number:
		return "a number"
	case t == cty.Bool:
		return "a bool"
	default:
		return t.FriendlyName()
	}
}
