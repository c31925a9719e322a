package query

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

func describeAll(src []byte, rs []hcl.Range) string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = describe(src, r)
	}
	return strings.Join(out, ", ")
}

func TestDefinition(t *testing.T) {
	src, _ := fixture(t, "orders.fsc.hcl")
	d := NewDoc("orders.fsc.hcl", src)
	tests := []struct{ needle, want string }{
		{`length(task.fe|tch.output`, "L43 fetch"},
		{`length(ta|sk.fetch.output`, "L43 fetch"},
		{`length(task.fetch.output.bo|dy`, "L43 fetch"},
		{`[switch.ti|er.big]`, "L59 tier"},
		{`[switch.tier.b|ig]`, "L60 big"},
		{`after = [task.char|ge, task.shape]`, "L64 charge"},
		{`${var.sh|op}/orders`, "L11 shop"},
		{`secret.tok|en`, "L26 token"},
		{`component.stri|pe.charge`, "L30 stripe"},
		{`plugin.s|h.exec`, "L35 sh"},
		{`task.lab|el.output.stdout`, "L86 label"},
		{`task "fe|tch"`, "L43 fetch"},
		{`"task.fe|tch is quoted"`, ""},
		{`# task.fe|tch in a comment`, ""},
		{`builtin.ht|tp
  timeout`, ""},
	}
	for _, tt := range tests {
		got := describeAll(src, Definition(d, at(t, src, tt.needle)))
		if got != tt.want {
			t.Errorf("definition at %q: got %q, want %q", tt.needle, got, tt.want)
		}
	}
}

func TestReferences(t *testing.T) {
	src, _ := fixture(t, "orders.fsc.hcl")
	d := NewDoc("orders.fsc.hcl", src)
	tests := []struct {
		needle      string
		includeDecl bool
		want        string
	}{
		// Not the string "task.fetch is quoted", nor the comment.
		{`task "fe|tch"`, true, "L43 fetch, L60 fetch, L68 fetch, L82 fetch"},
		{`length(task.fe|tch.output`, false, "L60 fetch, L68 fetch, L82 fetch"},
		{`${var.sh|op}/orders`, true, "L11 shop, L48 shop, L94 shop"},
		// A join's keyed output names its branches: join.done.output.charge.
		{`task "cha|rge"`, true, "L64 charge, L73 charge, L78 charge, L103 charge, L108 charge"},
		// A loop's default output names its last body nodes.
		{`task "noti|fy"`, true, "L92 notify, L113 notify"},
		{`task "lab|el"`, true, "L86 label, L94 label"},
		{`switch "ti|er"`, false, "L66 tier"},
		{`component "str|ipe"`, true, "L30 stripe, L65 stripe"},
		{`workflow "ord|ers"`, true, ""},
	}
	for _, tt := range tests {
		got := describeAll(src, References(d, at(t, src, tt.needle), tt.includeDecl))
		if got != tt.want {
			t.Errorf("references at %q: got %q, want %q", tt.needle, got, tt.want)
		}
	}
}
