package query

import (
	"fmt"
	"strings"
	"testing"
)

func TestScanBlocks(t *testing.T) {
	tests := []struct {
		name, src string
		want      string // top blocks as TYPE[labels](body types), end offsets checked apart
	}{
		{"formatted", "workflow \"w\" {}\n\ntask \"a\" {\n  uses = builtin.http\n}\n", `workflow[w] task[a]`},
		{"one line", `task "a" { uses = builtin.http } task "b" {}`, `task[a]`},
		{"loop body", "loop \"l\" {\n  for_each = [1]\n  task \"x\" {\n    uses = builtin.transform\n  }\n  switch \"s\" {\n    case \"k\" { when = true }\n  }\n}\n", `loop[l](task[x] switch[s])`},
		{"braces in strings and comments", "task \"a\" {\n  inputs = { s = \"}}}{\" } # }}}\n  // {\n  /* } */\n}\ntask \"b\" {}\n", `task[a] task[b]`},
		{"interpolation with a nested string", "task \"a\" {\n  inputs = { s = \"${upper(\"}\")}\" }\n}\ntask \"b\" {}\n", `task[a] task[b]`},
		{"heredoc", "task \"a\" {\n  inputs = { s = <<EOT\ntask \"fake\" {\n}\nEOT\n  }\n}\ntask \"b\" {}\n", `task[a] task[b]`},
		{"indented heredoc", "task \"a\" {\n  inputs = { s = <<-EOT\n    }}}\n    EOT\n  }\n}\ntask \"b\" {}\n", `task[a] task[b]`},
		{"open brace while typing", "task \"a\" {\n  inputs = {\n    url = task.\n}\n\ntask \"b\" {\n  uses = builtin.http\n}\n", `task[a] task[b]`},
		{"open bracket while typing", "task \"a\" {\n  after = [task.\n}\n\ntask \"b\" {}\n", `task[a] task[b]`},
		{"trigger labels", "trigger \"webhook\" \"in\" {\n  path = \"/x\"\n}\n", `trigger[webhook in]`},
		{"an attribute is not a header", "task \"a\" {\n  inputs = {\n    x = 1\n  }\n}\n", `task[a]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tops := scanBlocks([]byte(tt.src))
			var parts []string
			for _, tb := range tops {
				parts = append(parts, describeBlock(tb))
				if tb.end <= tb.start || tb.end > len(tt.src) {
					t.Errorf("%s: end %d outside (%d, %d]", tb.typ, tb.end, tb.start, len(tt.src))
				}
			}
			if got := strings.Join(parts, " "); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func describeBlock(tb textBlock) string {
	var labels []string
	for _, l := range tb.labels {
		labels = append(labels, l.text)
	}
	s := fmt.Sprintf("%s[%s]", tb.typ, strings.Join(labels, " "))
	var body []string
	for _, b := range tb.body {
		if isNodeKind(b.typ) {
			body = append(body, describeBlock(b))
		}
	}
	if len(body) > 0 {
		s += "(" + strings.Join(body, " ") + ")"
	}
	return s
}

// TestBlockEnds checks that a block's span ends after its closing brace, so that parsing the
// span alone gives the block.
func TestBlockEnds(t *testing.T) {
	src, _ := fixture(t, "orders.fsc.hcl")
	for _, tb := range scanBlocks(src) {
		if src[tb.end-1] != '}' {
			t.Errorf("%s %v ends at %q", tb.typ, tb.labels, src[tb.end-5:tb.end])
		}
	}
	a := newLightAnalysis("orders.fsc.hcl", src)
	full := newAnalysis("orders.fsc.hcl", src)
	if len(a.decls) != len(full.decls) {
		t.Fatalf("the text shows %d declarations, the syntax tree %d", len(a.decls), len(full.decls))
	}
	for i, d := range a.decls {
		f := full.decls[i]
		if d.name != f.name || d.space != f.space || d.nameRange != f.nameRange || (d.loop == nil) != (f.loop == nil) {
			t.Errorf("declaration %d: text %s %s %v, tree %s %s %v", i, d.space, d.name, d.nameRange, f.space, f.name, f.nameRange)
		}
		b := a.blockOf(d)
		if b == nil || b.Range() != f.block.Range() {
			t.Errorf("%s %s: the span parses to %v, the tree has %v", d.space, d.name, b, f.block.Range())
		}
		if a.nodeDetail(d) != full.nodeDetail(f) && d.space == spaceNode {
			t.Errorf("%s: detail %q from the text, %q from the tree", d.name, a.nodeDetail(d), full.nodeDetail(f))
		}
	}
}
