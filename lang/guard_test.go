package lang

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/lang/funcs"
)

// loadInputs loads a workflow whose one task has the given inputs object body.
func loadInputs(t *testing.T, inputs string) (*Workflow, hcl.Diagnostics) {
	t.Helper()
	src := "workflow \"w\" {}\ntask \"t\" {\n  uses = builtin.transform\n  inputs = {\n" + inputs + "\n  }\n}\n"
	p := NewParser()
	p.Sources = map[string][]byte{"g.fsc.hcl": []byte(src)}
	return p.Load("g.fsc.hcl", Options{})
}

// TestNumbersOutOfRangeRefused: a literal beyond 10^±1000 is an error at its line; arithmetic
// that makes one fails instead of handing go-cty a number it writes out in every digit
// (tostring(1e600000000) ran a plan eight minutes, then out of memory).
func TestNumbersOutOfRangeRefused(t *testing.T) {
	for inputs, want := range map[string]string{
		`x = tostring(1e600000000)`:          "g.fsc.hcl:5,14-25: Number out of range",
		`x = 1e-1001`:                        "Number out of range",
		`x = tostring(1e1000 * 1e1000)`:      "Error during operation: the number is 1e1001 or more in size",
		`x = 1e-600 / 1e600`:                 "less than 1e-1000 in size",
		`x = -"1e600000000"`:                 "Error during operation: the number is 1e1001 or more",
		`x = "1e99999" + 0`:                  "Error during operation",
		`x = 1e1000 - -1e1000 * 9`:           "Error during operation",
		`x = [for v in [1e999] : v * 1e999]`: "Error during operation",
	} {
		_, diags := loadInputs(t, inputs)
		if !diags.HasErrors() || !strings.Contains(diags.Error(), want) {
			t.Errorf("%s: %v; want %q", inputs, diags, want)
		}
	}
	w, diags := loadInputs(t, `a = 1e1000 * 9.99
    b = -1e-1000
    c = 1e999 + 1e999
    d = 10 % 3`)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	in := w.Values[mustParseAddr("task.t")].Inputs
	if got := in.GetAttr("d"); !got.RawEquals(cty.NumberIntVal(1)) {
		t.Errorf("10 %% 3 = %#v", got)
	}
}

// TestForIterationsBounded: nested for expressions count every element they iterate over,
// inner ones each time they run, and one evaluation stops past funcs.MaxIterations with one
// error (not one per element of the enclosing for), where three levels over range(1000) ran
// out of memory.
func TestForIterationsBounded(t *testing.T) {
	for _, inputs := range []string{
		`x = length(flatten([for a in range(1000) : [for b in range(1000) : [for c in range(1000) : c]]]))`,
		`x = [for a in range(400) : length({for b in range(1000) : b => a})]`,
	} {
		_, diags := loadInputs(t, inputs)
		if len(diags) != 1 || !strings.Contains(diags.Error(), fmt.Sprintf("iterated over more than %d elements", funcs.MaxIterations)) {
			t.Errorf("%s: %d diagnostics: %.500s", inputs, len(diags), diags.Error())
		}
	}
	// The count is the whole check's: two expressions of 60,060 each are too many together.
	_, diags := loadInputs(t, `a = length([for a in range(60) : length([for b in range(1000) : b])])
    b = length([for a in range(60) : length([for b in range(1000) : b])])`)
	if len(diags) != 1 || !strings.Contains(diags.Error(), "g.fsc.hcl:6,") {
		t.Errorf("two expressions over the bound together: %v; want one error, on the second", diags)
	}
	// Within the bound, values are what they were.
	w, diags := loadInputs(t, `m = [for a in range(3) : [for b in range(2) : a * b]]
    s = {for k, v in {x = 1, y = 2} : k => v + 1 if v > 1}`)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	in := w.Values[mustParseAddr("task.t")].Inputs
	want := cty.ObjectVal(map[string]cty.Value{"y": cty.NumberIntVal(3)})
	if got := in.GetAttr("s"); !got.RawEquals(want) {
		t.Errorf("s = %#v, want %#v", got, want)
	}
	if got := in.GetAttr("m").Index(cty.NumberIntVal(2)).Index(cty.NumberIntVal(1)); !got.RawEquals(cty.NumberIntVal(2)) {
		t.Errorf("m[2][1] = %#v", got)
	}
}

// TestForIterationsPerEvaluation: outside a check (the engine evaluates a node's expressions
// with the shared table, one evaluation at a time), each evaluation has a count of its own.
func TestForIterationsPerEvaluation(t *testing.T) {
	src := `workflow "w" {}
variable "n" {
  type    = number
  default = 1
}
task "t" {
  uses   = builtin.transform
  inputs = { x = length([for a in range(var.n) : length([for b in range(1000) : b])]) }
}
`
	p := NewParser()
	p.Sources = map[string][]byte{"e.fsc.hcl": []byte(src)}
	w, diags := p.Load("e.fsc.hcl", Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	expr := w.Node(mustParseAddr("task.t")).Task.Inputs
	eval := func(n int64) hcl.Diagnostics {
		_, diags := expr.Value(w.EvalContext(expr, Scope{
			Vars:      cty.ObjectVal(map[string]cty.Value{"n": cty.NumberIntVal(n)}),
			Functions: funcs.Shared(),
		}))
		return diags
	}
	// 60,060 elements each: together past the bound, each alone within it.
	for i := range 2 {
		if diags := eval(60); diags.HasErrors() {
			t.Fatalf("evaluation %d of 60,060 elements: %s", i+1, diags.Error())
		}
	}
	if diags := eval(200); !diags.HasErrors() || !strings.Contains(diags.Error(), "iterated over more than 100000") {
		t.Errorf("an evaluation of 200,200 elements: %v", diags)
	}
}

// TestVariablesOutOfRange: a -var, a variable file or a given value with a number beyond
// 10^±1000 is refused as it is set (1e6000000 in a -var made tostring run a minute).
func TestVariablesOutOfRange(t *testing.T) {
	src := []byte("workflow \"w\" {}\nvariable \"n\" {\n  type = list(number)\n}\n")
	varFile := filepath.Join(t.TempDir(), "v.fsvars.hcl") // the stat before the read
	if err := os.WriteFile(varFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, in := range []VarInputs{
		{Flags: []string{`n=[1, 1e6000000]`}},
		{Flags: []string{`n=["-1e-1001"]`}},
		{Files: []string{varFile}},
		{Values: map[string]cty.Value{"n": cty.ListVal([]cty.Value{cty.MustParseNumberVal("1e1001")})}},
	} {
		p := NewParser()
		p.Sources = map[string][]byte{"w.fsc.hcl": src, varFile: []byte("n = [\"1e2000\"]\n")}
		_, diags := p.Load("w.fsc.hcl", Options{Vars: in, Planning: true})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), "out of range") {
			t.Errorf("%+v: %v; want out of range", in, diags)
		}
	}
}

// TestCountsOnlyWhereForIs: in a file with a for expression, an attribute without one is
// evaluated without a count (a child context and a function made at every evaluation, 1.5 µs
// and 13 allocations); one with a for, and any expression Load did not see whole, with one.
func TestCountsOnlyWhereForIs(t *testing.T) {
	src := `workflow "w" {}
task "a" {
  uses   = builtin.transform
  inputs = { x = [for v in range(3) : v] }
}
task "b" {
  uses   = builtin.transform
  inputs = { y = 1 }
}
`
	p := NewParser()
	p.Sources = map[string][]byte{"c.fsc.hcl": []byte(src)}
	w, diags := p.Load("c.fsc.hcl", Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	a, b := w.Node(mustParseAddr("task.a")).Task.Inputs, w.Node(mustParseAddr("task.b")).Task.Inputs
	if !w.counts(a) || w.counts(b) {
		t.Errorf("counts(a's inputs) = %t, counts(b's inputs) = %t; want true, false", w.counts(a), w.counts(b))
	}
	part := a.(*hclsyntax.ObjectConsExpr).Items[0].ValueExpr
	if !w.counts(part) {
		t.Error("a part of an attribute's expression is evaluated without a count")
	}
	p = NewParser()
	p.Sources = map[string][]byte{"c.fsc.hcl": []byte(strings.ReplaceAll(src, "[for v in range(3) : v]", "[0, 1, 2]"))}
	if w, _ = p.Load("c.fsc.hcl", Options{}); w.counts(w.Node(mustParseAddr("task.a")).Task.Inputs) || w.counts(part) {
		t.Error("a file without a for expression: counted")
	}
}
