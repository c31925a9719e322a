package query

import (
	"strings"
	"testing"
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
