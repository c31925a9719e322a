package query

import "testing"

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
