package query

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/fuscia/fuscia/lang/testfile"
)

func TestCompleteTestFile(t *testing.T) {
	src, marks := fixture(t, "orders.fsctest.hcl")
	tests := []struct {
		name, mark, typed, want string
	}{
		{"top-level blocks", "test_top", "", "mock mock_component mock_http mock_plugin run variables"},
		{"run body", "run_body", "", "assert expect_failures expect_status mock mock_component mock_http mock_plugin payload trigger variables workflow"},
		{"task mock", "task_mock", "", "attempt error output"},
		{"wait mock", "wait_mock", "", "data reject timeout"},
		{"task of a mock_component", "group_task", "", "attempt error output"},
		{"assert", "assert_body", "", "condition error_message"},
		{"assert roots", "assert_body", "error_message = no", "node"},
		{"http mock", "test_top", "mock_http {\n  me", "method"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, off := typeAt(t, src, marks, tt.mark, tt.typed)
			got := Complete(NewDoc("orders.fsctest.hcl", text), off, nil)
			if l := labels(got); l != tt.want {
				t.Errorf("typed %q at %s: got %q, want %q", tt.typed, tt.mark, l, tt.want)
			}
		})
	}
}

func TestHoverTestFile(t *testing.T) {
	src, _ := fixture(t, "orders.fsctest.hcl")
	d := NewDoc("orders.fsctest.hcl", src)
	tests := []struct{ needle, want string }{
		{`mo|ck "task.charge"`, "Mocks a task of the workflow"},
		{`mo|ck "wait.approve"`, "Mocks a wait of the workflow"},
		{`att|empt { output`, "What one attempt of the mocked task answers"},
		{`cond|ition = output.charged`, "**condition** (bool, required)"},
		{`url  = "https://shop.test/orders"`[:1] + "|" + `rl  = "https://shop.test/orders"`, "A glob over the request URL"},
		{`da|ta = { approved = true }`, "**data** (any, default `{}`)"},
	}
	for _, tt := range tests {
		h := Hover(d, at(t, src, tt.needle), nil)
		if h == nil || !strings.Contains(h.Markdown, tt.want) {
			t.Errorf("hover at %q: got %+v, want it to contain %q", tt.needle, h, tt.want)
		}
	}
}

// TestTestDocs checks the test-file table against lang/testfile's decoder: a file that uses
// every block and attribute the table lists decodes without "Unsupported" errors, the file
// covers the whole table, and an attribute the table does not list is refused in each block
// (so the decoder does check the blocks the file has).
func TestTestDocs(t *testing.T) {
	src, _ := fixture(t, "every.fsctest.hcl")
	_, diags := testfile.Decode("every.fsctest.hcl", src)
	for _, d := range diags {
		if strings.HasPrefix(d.Summary, "Unsupported") {
			t.Errorf("the decoder refuses what the table documents: %s", d.Error())
		}
	}
	// Every entry of the table is used by the file.
	a := newAnalysis("every.fsctest.hcl", src)
	seen := map[string]bool{}
	var walk func(b *hclsyntax.Block, parent string)
	walk = func(b *hclsyntax.Block, parent string) {
		key := testBlockKey(parent, b.Type, b.Labels)
		seen[key] = true
		if _, ok := testBlocks[key]; !ok {
			t.Errorf("the fixture has a block %q the table does not know", key)
		}
		for name := range b.Body.Attributes {
			seen[key+"."+name] = true
		}
		for _, bb := range b.Body.Blocks {
			walk(bb, key)
		}
	}
	for _, b := range a.body.Blocks {
		walk(b, "")
	}
	for key, tb := range testBlocks {
		if key != "" && !seen[key] {
			t.Errorf("the fixture has no %q block", key)
		}
		for name := range tb.attrs {
			if !seen[key+"."+name] {
				t.Errorf("the fixture does not set %s in a %q block", name, key)
			}
		}
	}
	// An attribute the table does not list is refused in each block of the file.
	for _, b := range a.body.Blocks {
		hclsyntax.VisitAll(b, func(n hclsyntax.Node) hcl.Diagnostics {
			bb, ok := n.(*hclsyntax.Block)
			if !ok || bb.Type == "variables" {
				return nil
			}
			at := bb.OpenBraceRange.End.Byte
			at += strings.IndexByte(string(src[at:]), '\n') + 1
			text := string(src[:at]) + "bogus = 1\n" + string(src[at:])
			_, diags := testfile.Decode("every.fsctest.hcl", []byte(text))
			refused := false
			for _, d := range diags {
				refused = refused || d.Summary == "Unsupported argument"
			}
			if !refused {
				t.Errorf("the decoder accepts an undocumented attribute in %s %v", bb.Type, bb.Labels)
			}
			return nil
		})
	}
}
