package lang

import (
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcltest"
	"github.com/zclconf/go-cty/cty"
)

// TestCallsOnly: every expression of a node is searched for calls — inputs, for_each, when,
// switch cases, nested calls and calls inside templates and for expressions — once, when the
// workflow is linked; and an expression that is not native syntax is never vouched for.
func TestCallsOnly(t *testing.T) {
	const src = `workflow "w" {}

task "plain" {
  uses   = builtin.transform
  inputs = { n = 1 }
}

task "inputs" {
  uses   = builtin.transform
  inputs = { s = upper("x") }
}

task "nested" {
  uses   = builtin.transform
  inputs = { s = join(",", [for v in ["a"] : "${lower(v)}!"]) }
}

task "items" {
  uses     = builtin.transform
  for_each = range(upper("3") == "3" ? 2 : 1)
  inputs   = { i = each.value }
}

task "cond" {
  uses   = builtin.transform
  when   = length(upper("a")) > 0
  inputs = {}
}

switch "route" {
  case "big" {
    when = length([upper("a")]) > 0
  }
  default "small" {}
}
`
	p := NewParser()
	p.Sources = map[string][]byte{"calls.fsc.hcl": []byte(src)}
	w, diags := p.Load("calls.fsc.hcl", Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	noUpper := func(name string) bool { return name != "upper" }
	tests := []struct {
		addr string
		want bool // CallsOnly(noUpper)
	}{
		{"task.plain", true},
		{"task.inputs", false},
		{"task.nested", true},
		{"task.items", false},
		{"task.cond", false},
		{"switch.route", false},
	}
	for _, tt := range tests {
		n := w.Node(nodeAddr(t, tt.addr))
		if n == nil {
			t.Fatalf("no node %s", tt.addr)
		}
		if !n.callsKnown {
			t.Errorf("%s: its calls were not noted when the workflow was linked", tt.addr)
		}
		if got := n.CallsOnly(noUpper); got != tt.want {
			t.Errorf("%s: CallsOnly(not upper) = %v, want %v", tt.addr, got, tt.want)
		}
		if !n.CallsOnly(func(string) bool { return true }) {
			t.Errorf("%s: CallsOnly(anything) = false", tt.addr)
		}
	}
	if !w.Node(nodeAddr(t, "task.nested")).CallsOnly(func(name string) bool { return name == "join" || name == "lower" }) {
		t.Error("task.nested: the calls inside the for expression and the template were not accepted")
	}
	if w.Node(nodeAddr(t, "task.nested")).CallsOnly(func(name string) bool { return name == "join" }) {
		t.Error("task.nested: lower() inside a template inside a for expression was not found")
	}

	// An expression of another syntax (JSON, or one built by a program) cannot be searched.
	foreign := &Node{exprs: []hcl.Expression{hcltest.MockExprLiteral(cty.StringVal("x"))}}
	if foreign.CallsOnly(func(string) bool { return true }) {
		t.Error("a node with a non-native expression: CallsOnly = true, want false")
	}
}

func nodeAddr(t *testing.T, s string) Addr {
	t.Helper()
	a, ok := ParseAddr(s)
	if !ok {
		t.Fatalf("ParseAddr(%q) failed", s)
	}
	return a
}
