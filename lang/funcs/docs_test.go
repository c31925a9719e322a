package funcs

import (
	"bytes"
	"strings"
	"testing"
	"unicode"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// TestDocsCoverEveryFunction checks that the documentation table has exactly one row for
// every function of the table, so that a function cannot be added without its documentation.
func TestDocsCoverEveryFunction(t *testing.T) {
	documented := map[string]int{}
	for _, g := range docGroups {
		for _, d := range g.docs {
			documented[d.name]++
		}
	}
	for _, name := range Names() {
		if documented[name] == 0 {
			t.Errorf("function %s has no row in docGroups (docs.go): add its summary, result type, example and result", name)
		}
	}
	table := Table()
	for name, n := range documented {
		if _, ok := table[name]; !ok {
			t.Errorf("docGroups documents %s, which is not in the function table", name)
		}
		if n > 1 {
			t.Errorf("docGroups documents %s %d times", name, n)
		}
	}
	if got, want := len(Docs()), len(Names()); got != want {
		t.Errorf("Docs() has %d entries; want one per function, %d", got, want)
	}
}

// TestDocsComplete checks that every row has what the reference shows: a one-line summary that
// is a sentence, a result type it can check, and an example that calls the function.
func TestDocsComplete(t *testing.T) {
	for _, d := range Docs() {
		if d.Category == "" {
			t.Errorf("%s: no category", d.Name)
		}
		s := d.Summary
		if s == "" || strings.Contains(s, "\n") || !unicode.IsUpper([]rune(s)[0]) || !strings.HasSuffix(s, ".") {
			t.Errorf("%s: summary %q is not one line starting with a capital and ending with a period", d.Name, s)
		}
		if _, err := parseReturns(d.Returns); err != nil {
			t.Errorf("%s: result type %q: %v", d.Name, d.Returns, err)
		}
		if d.Result == "" {
			t.Errorf("%s: no example result", d.Name)
		}
		if strings.Contains(d.Example+d.Result, "`") {
			t.Errorf("%s: the example and its result cannot contain a backquote: the page quotes them in backquotes", d.Name)
		}
		called := false
		for _, name := range calledNames(t, d.Example) {
			called = called || name == d.Name
		}
		if !called {
			t.Errorf("%s: example %q does not call %s", d.Name, d.Example, d.Name)
		}
		for _, p := range append(append([]Param(nil), d.Params...), derefParam(d.VarParam)...) {
			if p.Name == "" || p.Type == "" {
				t.Errorf("%s: parameter %+v has no name or type", d.Name, p)
			}
		}
	}
}

func derefParam(p *Param) []Param {
	if p == nil {
		return nil
	}
	return []Param{*p}
}

// TestDocExamples evaluates every example with the real function table and checks that it
// gives the documented result, with a type the documented result type allows.
func TestDocExamples(t *testing.T) {
	for _, d := range Docs() {
		t.Run(d.Name, func(t *testing.T) {
			got, diags := evalExpr(t, d.Example, nil)
			if diags.HasErrors() {
				t.Fatalf("example %s fails: %s", d.Example, diags.Error())
			}
			wantExpr, pdiags := hclsyntax.ParseExpression([]byte(d.Result), "result.hcl", hcl.InitialPos)
			if pdiags.HasErrors() {
				t.Fatalf("documented result %s is not an HCL value: %s", d.Result, pdiags.Error())
			}
			want, vdiags := wantExpr.Value(nil)
			if vdiags.HasErrors() {
				t.Fatalf("documented result %s is not a literal value: %s", d.Result, vdiags.Error())
			}
			// Compared as JSON, where a list and a tuple, or a map and an object, are the same:
			// the result as written is a tuple or an object literal.
			if gj, wj := jsonOf(t, got), jsonOf(t, want); !bytes.Equal(gj, wj) {
				t.Errorf("%s = %s; the reference says %s (JSON %s)", d.Example, gj, d.Result, wj)
			}
			alts, err := parseReturns(d.Returns)
			if err != nil {
				t.Fatal(err)
			}
			ok := false
			for _, alt := range alts {
				ok = ok || conforms(got.Type(), alt)
			}
			if !ok {
				t.Errorf("%s has type %s, which the documented result type %q does not allow", d.Example, got.Type().FriendlyName(), d.Returns)
			}
		})
	}
}

func jsonOf(t *testing.T, v cty.Value) []byte {
	t.Helper()
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		t.Fatalf("JSON of %#v: %v", v, err)
	}
	return b
}

// parseReturns parses a documented result type: type constraints joined with " or ".
func parseReturns(s string) ([]cty.Type, error) {
	var out []cty.Type
	for _, alt := range strings.Split(s, " or ") {
		expr, diags := hclsyntax.ParseExpression([]byte(alt), "returns.hcl", hcl.InitialPos)
		if diags.HasErrors() {
			return nil, diags
		}
		ty, diags := typeexpr.TypeConstraint(expr)
		if diags.HasErrors() {
			return nil, diags
		}
		out = append(out, ty)
	}
	return out, nil
}

// conforms reports whether a value of type got is what the reference calls want: list(T) is a
// list or tuple of T, map(T) a map or object of T, any is anything.
func conforms(got, want cty.Type) bool {
	switch {
	case want == cty.DynamicPseudoType:
		return true
	case want.IsPrimitiveType():
		return got.Equals(want)
	case want.IsListType():
		if got.IsListType() {
			return conforms(got.ElementType(), want.ElementType())
		}
		if got.IsTupleType() {
			for _, ety := range got.TupleElementTypes() {
				if !conforms(ety, want.ElementType()) {
					return false
				}
			}
			return true
		}
	case want.IsSetType():
		return got.IsSetType() && conforms(got.ElementType(), want.ElementType())
	case want.IsMapType():
		if got.IsMapType() {
			return conforms(got.ElementType(), want.ElementType())
		}
		if got.IsObjectType() {
			for _, aty := range got.AttributeTypes() {
				if !conforms(aty, want.ElementType()) {
					return false
				}
			}
			return true
		}
	}
	return false
}

// TestConforms pins the reading of result types that TestDocExamples relies on.
func TestConforms(t *testing.T) {
	cases := []struct {
		got  cty.Type
		want string
		ok   bool
	}{
		{cty.String, "string", true},
		{cty.Number, "string", false},
		{cty.Tuple([]cty.Type{cty.String, cty.String}), "list(string)", true},
		{cty.Tuple([]cty.Type{cty.String, cty.Number}), "list(string)", false},
		{cty.List(cty.String), "set(string)", false},
		{cty.Set(cty.String), "set(any)", true},
		{cty.Object(map[string]cty.Type{"a": cty.Number}), "map(number)", true},
		{cty.Object(map[string]cty.Type{"a": cty.Number}), "list(any)", false},
		{cty.List(cty.Object(map[string]cty.Type{"a": cty.String})), "list(map(string))", true},
		{cty.Bool, "any", true},
	}
	for _, c := range cases {
		tys, err := parseReturns(c.want)
		if err != nil {
			t.Fatal(err)
		}
		if got := conforms(c.got, tys[0]); got != c.ok {
			t.Errorf("conforms(%s, %s) = %v; want %v", c.got.FriendlyName(), c.want, got, c.ok)
		}
	}
}
