package lang

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
		// Infinities have no JSON form: plan -json and apply failed with a bare encoder error.
		`x = 1 / 0`:      "Operation failed; Error during operation: the result is infinite",
		`x = -1 / 0`:     "the result is infinite",
		`x = log(0, 2)`:  "the result is infinite",
		`x = pow(0, -1)`: "the result is infinite",
		`x = 5 % 0`:      "the remainder of a division by zero",
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
		// One error for each for expression that met the bound, not one for every element
		// of an enclosing one.
		_, diags := loadInputs(t, inputs)
		if len(diags) == 0 || len(diags) > 3 {
			t.Errorf("%s: %d diagnostics: %.500s", inputs, len(diags), diags.Error())
		}
		for _, d := range diags {
			if !strings.Contains(d.Detail, fmt.Sprintf("iterated over more than %d elements", funcs.MaxIterations)) {
				t.Errorf("%s: %s: %s", inputs, d.Summary, d.Detail)
			}
		}
	}
	// try and can see the same error in both their passes: try's second argument, can's false.
	w, diags := loadInputs(t, `x = try([for a in range(1000) : [for b in range(1000) : b]], 0)
    y = can([for a in range(1000) : [for b in range(1000) : b]])`)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if in := w.Values[mustParseAddr("task.t")].Inputs; !in.GetAttr("x").RawEquals(cty.Zero) || !in.GetAttr("y").RawEquals(cty.False) {
		t.Errorf("try and can over too many iterations: %#v", in)
	}
	// The count is the whole check's: two expressions of 60,060 each are too many together.
	_, diags = loadInputs(t, `a = length([for a in range(60) : length([for b in range(1000) : b])])
    b = length([for a in range(60) : length([for b in range(1000) : b])])`)
	if len(diags) != 1 || !strings.Contains(diags.Error(), "g.fsc.hcl:6,") {
		t.Errorf("two expressions over the bound together: %v; want one error, on the second", diags)
	}
	// Within the bound, values are what they were.
	w, diags = loadInputs(t, `m = [for a in range(3) : [for b in range(2) : a * b]]
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

// TestForElementBytesBounded: the elements and keys for expressions make count their bytes
// against funcs.MaxElementBytes (64 MiB), a value counted each time an element holds it; past
// it the evaluation fails with one error per for expression, where a few short elements
// repeating a long string made gigabytes. Within it, values are what they were.
func TestForElementBytesBounded(t *testing.T) {
	for _, inputs := range []string{
		`x = length([for i in range(100) : format("%01000000d", i)])`,
		`x = length({for i in range(100) : format("%01000000d", i) => i})`,
		`x = length([for s in [format("%01000000d", 1)] : [for i in range(70) : s]])`,
		`x = length([for s in [format("%01000000d", 1)] : [for i in range(70) : {v = [s]}]])`,
	} {
		_, diags := loadInputs(t, inputs)
		if len(diags) == 0 || len(diags) > 2 {
			t.Errorf("%s: %d diagnostics: %.500s", inputs, len(diags), diags.Error())
		}
		for _, d := range diags {
			if !strings.Contains(d.Detail, "made more than 64 MiB of elements in this evaluation") {
				t.Errorf("%s: %s: %s", inputs, d.Summary, d.Detail)
			}
		}
	}
	w, diags := loadInputs(t, `x = length([for i in range(60) : format("%01000000d", i)])
    y = {for i in range(2) : "k${i}" => [i]}`)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	in := w.Values[mustParseAddr("task.t")].Inputs
	want := cty.ObjectVal(map[string]cty.Value{
		"k0": cty.TupleVal([]cty.Value{cty.NumberIntVal(0)}), "k1": cty.TupleVal([]cty.Value{cty.NumberIntVal(1)}),
	})
	if !in.GetAttr("x").RawEquals(cty.NumberIntVal(60)) || !in.GetAttr("y").RawEquals(want) {
		t.Errorf("within the bound: x = %#v, y = %#v", in.GetAttr("x"), in.GetAttr("y"))
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

// TestTemplatesBounded: a template, or a template's for directive, making more than 16 MiB is
// an error (the vendored hclsyntax, MaxTemplateLength), where "${x}${x}…" over a long x asked
// for gigabytes in one expression.
func TestTemplatesBounded(t *testing.T) {
	for _, inputs := range []string{
		`x = length("${format("%09000000d", 0)}-${format("%09000000d", 0)}")`,
		`x = length("%{for i in range(3)}${format("%07000000d", i)}%{endfor}")`,
	} {
		_, diags := loadInputs(t, inputs)
		if !diags.HasErrors() || !strings.Contains(diags.Error(), "Template too long") {
			t.Errorf("%s: %v; want Template too long", inputs, diags)
		}
	}
	w, diags := loadInputs(t, `x = length("${format("%08000000d", 0)}-${format("%08000000d", 0)}")`)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if got := w.Values[mustParseAddr("task.t")].Inputs.GetAttr("x"); !got.RawEquals(cty.NumberIntVal(16000001)) {
		t.Errorf("a template of 16,000,001 bytes: length %#v", got)
	}
}

// TestExpressionDepthAndTryNesting: a chain of operators past MaxExpressionDepth is an error,
// cut where it passes (half a million "+1" overflowed the evaluation's stack), and so is a try
// or can inside MaxTryNesting others (each level doubles the work: 25 took 84 s).
func TestExpressionDepthAndTryNesting(t *testing.T) {
	_, diags := loadInputs(t, "x = 1"+strings.Repeat("+1", 200000))
	if len(diags) != 1 || diags[0].Summary != "Expression too complex" {
		t.Errorf("200,000 additions: %v", diags)
	}
	_, diags = loadInputs(t, "x = true"+strings.Repeat(" ? 1 : true", 5000))
	if len(diags) != 1 || diags[0].Summary != "Expression too complex" {
		t.Errorf("5,000 nested conditionals: %v", diags)
	}
	w, diags := loadInputs(t, "x = 1"+strings.Repeat("+1", MaxExpressionDepth-10))
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if got := w.Values[mustParseAddr("task.t")].Inputs.GetAttr("x"); !got.RawEquals(cty.NumberIntVal(MaxExpressionDepth - 9)) {
		t.Errorf("%d additions = %#v", MaxExpressionDepth-10, got)
	}

	nest := func(n int) string {
		return strings.Repeat("try(", n) + `upper("a")` + strings.Repeat(")", n)
	}
	_, diags = loadInputs(t, "x = "+nest(25))
	if len(diags) != 1 || diags[0].Summary != "Too many nested try and can calls" {
		t.Errorf("25 nested try calls: %v", diags)
	}
	_, diags = loadInputs(t, "x = can("+nest(MaxTryNesting)+")")
	if !diags.HasErrors() || diags[0].Summary != "Too many nested try and can calls" {
		t.Errorf("a can around %d try calls: %v", MaxTryNesting, diags)
	}
	w, diags = loadInputs(t, "x = "+nest(MaxTryNesting)+"\n    y = try(1, 2) + try(3, 4)")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if got := w.Values[mustParseAddr("task.t")].Inputs.GetAttr("x"); !got.RawEquals(cty.StringVal("A")) {
		t.Errorf("%d nested try calls = %#v", MaxTryNesting, got)
	}
}

// TestLongNumberTextRefused: an operand, a comparison's or a function's argument converted from
// a string of more than 4,096 bytes to a number is refused before go-cty reads it (quadratic:
// four million digits took 27 s).
func TestLongNumberTextRefused(t *testing.T) {
	long := `replace(format("%05000d", 0), "0", "7")`
	for _, expr := range []string{long + " + 0", long + " > 1", "-" + long, "abs(" + long + ")"} {
		_, diags := loadInputs(t, "x = "+expr)
		if !diags.HasErrors() || !strings.Contains(diags.Error(), "a number is read from 4096 bytes of text at most") {
			t.Errorf("%s: %v", expr, diags)
		}
	}
	w, diags := loadInputs(t, `x = replace(format("%04000d", 0), "0", "7") > 1`)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if got := w.Values[mustParseAddr("task.t")].Inputs.GetAttr("x"); !got.RawEquals(cty.True) {
		t.Errorf("4,000 digits > 1 = %#v", got)
	}
}

// TestCalledWorkflowLoadedOnce: a file called from many places is loaded and checked once,
// where ten calls a level, four levels deep, were ten thousand loads of the leaf (27 s).
func TestCalledWorkflowLoadedOnce(t *testing.T) {
	dir := t.TempDir()
	p := NewParser()
	p.Sources = map[string][]byte{}
	path := func(i int) string { return filepath.Join(dir, fmt.Sprintf("l%d.fsc.hcl", i)) }
	const levels = 5
	for i := 0; i < levels; i++ {
		var b strings.Builder
		b.WriteString("workflow \"w\" {}\n")
		for j := range 10 {
			fmt.Fprintf(&b, "call \"c%d\" {\n  workflow = \"./l%d.fsc.hcl\"\n}\n", j, i+1)
		}
		p.Sources[path(i)] = []byte(b.String())
	}
	p.Sources[path(levels)] = []byte(`workflow "leaf" {}
task "t" {
  uses   = builtin.transform
  inputs = { x = length([for a in range(1000) : a]) }
}
output "x" { value = task.t.output.x }
`)
	w, diags := p.Load(path(0), Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	for level := 0; level < levels; level++ {
		first := w.Calls["c0"]
		for j := 1; j < 10; j++ {
			if w.Calls[fmt.Sprintf("c%d", j)] != first {
				t.Fatalf("level %d: call c%d runs another load of the same file than c0", level, j)
			}
		}
		w = first
	}
	if w.Name != "leaf" {
		t.Errorf("the chain ends at %q", w.Name)
	}
}

// TestVariableTooDeep: a -var value nested past the parser's recursion is refused before it is
// parsed (it overflowed the stack: a fatal error no recover catches).
func TestVariableTooDeep(t *testing.T) {
	p := NewParser()
	p.Sources = map[string][]byte{"w.fsc.hcl": []byte("workflow \"w\" {}\nvariable \"n\" {\n  type = list(number)\n}\n")}
	_, diags := p.Load("w.fsc.hcl", Options{Vars: VarInputs{Flags: []string{"n=" + strings.Repeat("[", 70000)}}, Planning: true})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "levels deep") {
		t.Fatalf("a -var nested 70,000 deep: %v; want it refused as too deep", diags)
	}
}

// TestCallMustNameWorkflowFile: a call's workflow names a .fsc.hcl file; any other file (whose
// lines a diagnostic would show, /proc/self/environ say) is refused before it is read.
func TestCallMustNameWorkflowFile(t *testing.T) {
	p := NewParser()
	p.Sources = map[string][]byte{"w.fsc.hcl": []byte("workflow \"w\" {}\ncall \"c\" {\n  workflow = \"/proc/self/environ\"\n}\n")}
	_, diags := p.Load("w.fsc.hcl", Options{})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "is not one") || strings.Contains(diags.Error(), "PATH=") {
		t.Fatalf("a call of /proc/self/environ: %v; want it refused without its content", diags)
	}
}

// BenchmarkForElements: what a for expression costs an element, with its collection counted
// and each element's size charged (funcs.IterationsName, funcs.ElementName).
func BenchmarkForElements(b *testing.B) {
	src := "workflow \"w\" {}\ntask \"t\" {\n  uses   = builtin.transform\n  inputs = { x = [for i in range(1000) : \"item-${i}\"] }\n}\n"
	p := NewParser()
	p.Sources = map[string][]byte{"b.fsc.hcl": []byte(src)}
	w, diags := p.Load("b.fsc.hcl", Options{})
	if diags.HasErrors() {
		b.Fatal(diags.Error())
	}
	expr := w.Node(mustParseAddr("task.t")).Task.Inputs
	b.ReportAllocs()
	for b.Loop() {
		if _, diags := expr.Value(w.EvalContext(expr, Scope{Functions: funcs.Shared()})); diags.HasErrors() {
			b.Fatal(diags.Error())
		}
	}
}

// TestTriggerKnownAtPlan: trigger.type and trigger.name are known at plan only when every run
// comes through one manual trigger (declared or implicit): apply and the API start a workflow
// whose only trigger is a schedule as a manual run, so plan showed "schedule" and a `when`
// true for a run that apply then skipped.
func TestTriggerKnownAtPlan(t *testing.T) {
	for _, tc := range []struct {
		triggers string
		want     cty.Value
	}{
		{``, cty.StringVal("manual")},
		{`trigger "manual" "start" {}`, cty.StringVal("manual")},
		{`trigger "schedule" "nightly" { cron = "@daily" }`, cty.UnknownVal(cty.String)},
		{`trigger "webhook" "in" { path = "/in" }`, cty.UnknownVal(cty.String)},
	} {
		src := "workflow \"w\" {}\n" + tc.triggers + "\ntask \"t\" {\n  uses   = builtin.transform\n  inputs = { ty = trigger.type }\n}\n"
		p := NewParser()
		p.Sources = map[string][]byte{"t.fsc.hcl": []byte(src)}
		w, diags := p.Load("t.fsc.hcl", Options{})
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		got := w.Values[mustParseAddr("task.t")].Inputs.GetAttr("ty")
		if !got.RawEquals(tc.want) && !(got.IsKnown() == tc.want.IsKnown() && !got.IsKnown()) {
			t.Errorf("%q: trigger.type at plan = %#v, want %#v", tc.triggers, got, tc.want)
		}
	}
}

// TestLongListVariable: a list(number) variable given a list of 100,000 numbers (the for_each
// bound) converts in well under a second, where go-cty's conversion of the tuple compared its
// elements' types pair by pair (20,000 took 7 s); elements that do not convert still fail
// with go-cty's error, and list(any) keeps its meaning.
func TestLongListVariable(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range 100_000 {
		fmt.Fprintf(&b, "%d,", i)
	}
	b.WriteString("]")
	src := []byte("workflow \"w\" {}\nvariable \"n\" {\n  type = list(number)\n}\nvariable \"s\" {\n  type = set(string)\n}\nvariable \"a\" {\n  type = list(any)\n}\n")
	p := NewParser()
	p.Sources = map[string][]byte{"w.fsc.hcl": src}
	start := time.Now()
	w, diags := p.Load("w.fsc.hcl", Options{Planning: true, Vars: VarInputs{Flags: []string{"n=" + b.String(), `s=["b", "a", "b"]`, `a=[1, "x"]`}}})
	// About 4 s under -race; the pairwise conversion took 7 s for 20,000 numbers, so minutes
	// for these. The bound tells the two apart on a machine however busy.
	if took := time.Since(start); took > time.Minute {
		t.Errorf("loading with a list of 100,000 numbers took %s", took)
	}
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	vals := w.VarValues()
	if n := vals.GetAttr("n"); !n.Type().Equals(cty.List(cty.Number)) || n.LengthInt() != 100_000 || !n.Index(cty.NumberIntVal(99_999)).RawEquals(cty.NumberIntVal(99_999)) {
		t.Errorf("n = %s of %d", n.Type().FriendlyName(), n.LengthInt())
	}
	if s := vals.GetAttr("s"); !s.RawEquals(cty.SetVal([]cty.Value{cty.StringVal("a"), cty.StringVal("b")})) {
		t.Errorf("s = %#v", s)
	}
	if a := vals.GetAttr("a"); !a.Type().Equals(cty.List(cty.String)) {
		t.Errorf("a = %#v; want go-cty's list of strings", a)
	}
	_, diags = p.Load("w.fsc.hcl", Options{Planning: true, Vars: VarInputs{Flags: []string{`n=[1, "x"]`, `s=[]`, `a=[]`}}})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "a number is required") {
		t.Errorf("n = [1, \"x\"]: %v; want go-cty's conversion error", diags)
	}
}

// TestVariableFileLiteralOnly: a variable file's value that calls a function or reads a
// variable is refused with what to write instead (hcl's own detail says only what is wrong).
func TestVariableFileLiteralOnly(t *testing.T) {
	varFile := filepath.Join(t.TempDir(), "v.fsvars.hcl")
	if err := os.WriteFile(varFile, nil, 0o600); err != nil { // the stat before the read
		t.Fatal(err)
	}
	for _, line := range []string{`x = upper("a")`, `x = var.y`} {
		p := NewParser()
		p.Sources = map[string][]byte{"w.fsc.hcl": []byte("workflow \"w\" {}\nvariable \"x\" {\n  type = string\n}\n"), varFile: []byte(line + "\n")}
		_, diags := p.Load("w.fsc.hcl", Options{Planning: true, Vars: VarInputs{Files: []string{varFile}}})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), "A value in a variable file is a literal value") {
			t.Errorf("%s: %v; want the literal-value advice", line, diags)
		}
	}
}
