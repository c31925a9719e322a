package lang

import (
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
