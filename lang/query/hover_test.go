package query

import (
	"fmt"
	"strings"
	"testing"
)

func TestHover(t *testing.T) {
	src, _ := fixture(t, "orders.fsc.hcl")
	d := NewDoc("orders.fsc.hcl", src)
	tests := []struct{ name, needle string }{
		{"block type of a node", `ta|sk "fetch"`},
		{"node label", `task "fe|tch"`},
		{"node running a component task", `task "cha|rge"`},
		{"attribute name", `time|out = "10s"`},
		{"retry attribute", `back|off  = "fixed"`},
		{"builtin output field", `task.fetch.output.bo|dy)`},
		{"node in a reference", `length(task.fe|tch.output`},
		{"root word", `length(ta|sk.fetch`},
		{"variable", `${var.sh|op}/orders`},
		{"variable field", `var.limits.ro|ws`},
		{"secret", `secret.to|ken`},
		{"function", `len|gth(`},
		{"component block in uses", `component.str|ipe.charge`},
		{"component task in uses", `component.stripe.cha|rge`},
		{"plugin task output", `plugin.sh.ex|ec`},
		{"builtin", `builtin.ht|tp
  timeout = "10s"`},
		{"input key from the schema", `u|rl     = "${var.shop}/orders"`},
		{"branch edge", `switch.tier.b|ig]`},
		{"each", `each.val|ue]`},
		{"keyed join field", `join.done.output.charge.sta|tus}?`},
		{"wait with plan facts", `wait "appr|ove"`},
		{"trigger type", `trigger "web|hook"`},
		{"trigger", `"incom|ing"`},
		{"loop", `loop "sh|ip"`},
		{"loop body node", `task "lab|el"`},
		{"switch case label", `case "b|ig"`},
		{"workflow", `workflow "ord|ers"`},
		{"output", `output "char|ged"`},
		{"component block label", `component "str|ipe"`},
		{"component output field", `task.charge.output.i|d`},
	}
	var b strings.Builder
	for _, tt := range tests {
		off := at(t, src, tt.needle)
		h := Hover(d, off, testEnv)
		fmt.Fprintf(&b, "## %s\n\n", tt.name)
		if h == nil {
			t.Errorf("%s: no hover at %q", tt.name, tt.needle)
			b.WriteString("(none)\n\n")
			continue
		}
		fmt.Fprintf(&b, "range: %s\n\n%s\n\n", describe(src, h.Range), h.Markdown)
	}
	golden(t, "hover.md", b.String())
}

func TestHoverNothing(t *testing.T) {
	src, _ := fixture(t, "orders.fsc.hcl")
	d := NewDoc("orders.fsc.hcl", src)
	for _, needle := range []string{
		`"task.fe|tch is quoted"`, // a string that merely contains a reference
		`# task.fe|tch in a comment`,
		`"https://shop.exa|mple.com"`,
	} {
		if h := Hover(d, at(t, src, needle), testEnv); h != nil {
			t.Errorf("hover at %q: got %q, want none", needle, h.Markdown)
		}
	}
}
