package lang

import (
	"slices"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// TestReferencesKeptByLink: the references link found are the ones References and the checker
// read, expression by expression, and an expression that cannot be a map key (one holding a
// cty.Value, as a task without inputs gets) is walked, not looked up.
func TestReferencesKeptByLink(t *testing.T) {
	const src = `workflow "w" {}

variable "base" {
  type    = number
  default = 1
}

task "a" {
  uses = builtin.transform
}

task "b" {
  uses   = builtin.transform
  when   = task.a.output.ok
  inputs = { n = task.a.output.n + var.base }
}

loop "l" {
  for_each = [1, 2]
  output   = task.c.output
  task "c" {
    uses   = builtin.transform
    inputs = { v = each.value }
  }
}

output "n" { value = task.b.output.n }
`
	p := NewParser()
	p.Sources = map[string][]byte{"refs.fsc.hcl": []byte(src)}
	w, diags := p.Load("refs.fsc.hcl", Options{Planning: true})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	var got, want []string
	w.References(func(from *Node, tr hcl.Traversal) {
		got = append(got, string(hclwriteTraversal(tr)))
	})
	for _, n := range w.Nodes {
		exprs := n.exprs
		if n.Loop != nil && n.Loop.Output != nil {
			exprs = append(exprs[:len(exprs):len(exprs)], n.Loop.Output)
		}
		for _, expr := range exprs {
			if _, ok := w.refs[expr]; !ok {
				t.Errorf("%s: link kept no references for the expression at %s", n.Addr, expr.Range())
			}
			for _, tr := range expr.Variables() {
				want = append(want, string(hclwriteTraversal(tr)))
			}
		}
	}
	for _, o := range w.Outputs {
		for _, tr := range o.Value.Variables() {
			want = append(want, string(hclwriteTraversal(tr)))
		}
	}
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("References = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("References = %q, want %q", got, want)
		}
	}
	static := hcl.StaticExpr(cty.EmptyObjectVal, hcl.Range{})
	if cacheable(static) {
		t.Fatal("a static expression (a cty.Value) counted as a map key")
	}
	if trs := w.variables(static); len(trs) != 0 {
		t.Fatalf("variables(static) = %v", trs)
	}
	if !cacheable(&hclsyntax.LiteralValueExpr{}) {
		t.Fatal("a syntax node did not count as a map key")
	}
	if v := w.Values[nodeAddr(t, "task.a")]; v == nil || !v.Inputs.Type().IsObjectType() {
		t.Fatalf("task.a (no inputs) checked to %#v", v)
	}
}

// hclwriteTraversal renders a traversal as its root and attribute names, enough to compare.
func hclwriteTraversal(tr hcl.Traversal) []byte {
	out := []byte(tr.RootName())
	for _, step := range tr[1:] {
		if a, ok := step.(hcl.TraverseAttr); ok {
			out = append(out, '.')
			out = append(out, a.Name...)
		}
	}
	return out
}

// TestPayloadReads: link keeps the paths of trigger.payload that the nodes and outputs read,
// each cut at its first step that is not a name; an expression the workflow does not hold that
// reads more gets the whole trigger from the scope, one that reads a held path the pruned one.
func TestPayloadReads(t *testing.T) {
	const src = `workflow "w" {}

task "a" {
  uses   = builtin.transform
  when   = trigger.payload.body.ok
  inputs = { id = trigger.payload.body.id, h = trigger.payload["headers"]["X-A"], i = trigger.payload.list[0].n }
}

output "o" {
  value = "${trigger.payload.query.q}-${trigger.name}"
}
`
	p := NewParser()
	p.Sources = map[string][]byte{"p.fsc.hcl": []byte(src)}
	w, diags := p.Load("p.fsc.hcl", Options{Planning: true})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	reads := w.PayloadReads()
	for _, path := range [][]string{{"body", "ok"}, {"body", "id"}, {"headers", "X-A"}, {"list"}, {"list", "0"}, {"query", "q"}} {
		if !reads.Covers(slices.Values(path)) {
			t.Errorf("PayloadReads does not cover %q", path)
		}
	}
	for _, path := range [][]string{{}, {"body"}, {"body", "other"}, {"headers"}, {"method"}, {"query"}} {
		if reads.Covers(slices.Values(path)) {
			t.Errorf("PayloadReads covers %q, which nothing reads whole", path)
		}
	}

	whole := cty.ObjectVal(map[string]cty.Value{
		"name": cty.StringVal("default"), "type": cty.StringVal("manual"),
		"payload": cty.ObjectVal(map[string]cty.Value{
			"method": cty.StringVal("POST"),
			"query":  cty.ObjectVal(map[string]cty.Value{"q": cty.StringVal("x")}),
		}),
	})
	pruned := cty.ObjectVal(map[string]cty.Value{
		"name": cty.StringVal("default"), "type": cty.StringVal("manual"),
		"payload": reads.Prune(whole.GetAttr("payload")),
	})
	for _, tc := range []struct {
		src       string
		want      cty.Value
		wholeRead bool
	}{
		{`trigger.payload.query.q`, cty.StringVal("x"), false},
		{`trigger.type`, cty.StringVal("manual"), false},
		{`trigger.payload.method`, cty.StringVal("POST"), true},
		{`"${trigger.payload.query.q}${trigger.payload.method}"`, cty.StringVal("xPOST"), true},
		{`"${trigger.payload.method}${trigger.payload.query.q}"`, cty.StringVal("POSTx"), true},
		{`length(trigger.payload)`, cty.NumberIntVal(2), true},
	} {
		expr, diags := hclsyntax.ParseExpression([]byte(tc.src), "x.hcl", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		called := false
		ctx := w.EvalContext(expr, Scope{Trigger: pruned, TriggerPaths: reads, WholeTrigger: func() cty.Value {
			called = true
			return whole
		}})
		got, diags := expr.Value(ctx)
		if diags.HasErrors() || !got.RawEquals(tc.want) {
			t.Errorf("%s = %#v (%s), want %#v", tc.src, got, diags.Error(), tc.want)
		}
		if called != tc.wholeRead {
			t.Errorf("%s: the whole trigger built = %v, want %v", tc.src, called, tc.wholeRead)
		}
	}
}
