package query

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

func TestCursorAt(t *testing.T) {
	tests := []struct {
		name, src string // | marks the cursor
		want      string
	}{
		{"top level", "workflow \"w\" {}\n|", "body [] prefix=\"\""},
		{"in a block", "task \"a\" {\n  ti|", "body [task a] prefix=\"ti\""},
		{"nested block", "task \"a\" {\n  retry {\n    |", "body [task a|retry] prefix=\"\""},
		{"after a closed block", "task \"a\" {\n  retry {}\n}\ntask \"b\" {\n  |", "body [task b] prefix=\"\""},
		{"expression", "task \"a\" {\n  when = var.x|", "expr [task a] attr=when root=var path=[] prefix=\"x\""},
		{"deep reference", "task \"a\" {\n  when = task.b.output.items[0].na|", "expr [task a] attr=when root=task path=[b output items []] prefix=\"na\""},
		{"object key", "task \"a\" {\n  inputs = {\n    url = \"x\"\n    he|", "key [task a] attr=inputs keys=[] prefix=\"he\""},
		{"nested object key", "task \"a\" {\n  inputs = {\n    headers = {\n      |", "key [task a] attr=inputs keys=[headers] prefix=\"\""},
		{"object value", "task \"a\" {\n  inputs = { url = task.|", "expr [task a] attr=inputs root=task path=[] prefix=\"\""},
		{"interpolation", "task \"a\" {\n  inputs = { url = \"${var.|", "expr [task a] attr=inputs root=var path=[] prefix=\"\""},
		{"first label", "trigger \"we|", "label [trigger] label=0 prefix=\"we\""},
		{"second label", "trigger \"webhook\" \"|", "label [trigger webhook] label=1 prefix=\"\""},
		{"in a string", "task \"a\" {\n  pool = \"gp|", "none"},
		{"in a comment", "task \"a\" {\n  # task.|", "none"},
		{"in a block comment", "task \"a\" {\n  /* task.|", "none"},
		{"after a comment", "task \"a\" {\n  # note\n  when = task.|", "expr [task a] attr=when root=task path=[] prefix=\"\""},
		{"in a heredoc", "task \"a\" {\n  inputs = { s = <<EOT\n  task.|", "none"},
		{"after a heredoc", "task \"a\" {\n  inputs = { s = <<EOT\n{\nEOT\n  }\n  when = task.|", "expr [task a] attr=when root=task path=[] prefix=\"\""},
		{"after an unclosed quote", "task \"a\" {\n  pool = \"gpu\n  when = task.|", "expr [task a] attr=when root=task path=[] prefix=\"\""},
		{"bracket left open in an object", "task \"a\" {\n  inputs = { a = [1, 2 }\n  when = task.|", "expr [task a] attr=when root=task path=[] prefix=\"\""},
		{"after a number", "task \"a\" {\n  when = 1.|", "none"},
		{"function argument", "task \"a\" {\n  when = length(task.|", "expr [task a] attr=when root=task path=[] prefix=\"\""},
		{"after a label word", "task \"a\" {\n  retry x|", "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			off := strings.Index(tt.src, "|")
			src := []byte(tt.src[:off] + tt.src[off+1:])
			c := cursorAt(src, "x.fsc.hcl", 0, off, hcl.InitialPos)
			if got := describeCursor(c); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if c.kind != ctxNone && (c.start > off || string(src[c.start:off]) != c.prefix) {
				t.Errorf("start %d does not begin the prefix %q", c.start, c.prefix)
			}
		})
	}
}

func describeCursor(c cursor) string {
	var blocks []string
	for _, b := range c.blocks {
		blocks = append(blocks, strings.TrimSpace(b.typ+" "+strings.Join(b.labels, " ")))
	}
	bs := "[" + strings.Join(blocks, "|") + "]"
	switch c.kind {
	case ctxBody:
		return fmt.Sprintf("body %s prefix=%q", bs, c.prefix)
	case ctxLabel:
		return fmt.Sprintf("label %s label=%d prefix=%q", bs, c.label, c.prefix)
	case ctxObjectKey:
		return fmt.Sprintf("key %s attr=%s keys=%v prefix=%q", bs, c.attr, c.keys, c.prefix)
	case ctxExpr:
		var path []string
		for _, s := range c.path {
			switch {
			case s.index && s.name == "":
				path = append(path, "[]")
			case s.index:
				path = append(path, "["+s.name+"]")
			default:
				path = append(path, s.name)
			}
		}
		return fmt.Sprintf("expr %s attr=%s root=%s path=%v prefix=%q", bs, c.attr, c.root, path, c.prefix)
	}
	return "none"
}
