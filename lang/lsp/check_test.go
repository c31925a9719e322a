package lsp

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	protocol "github.com/tliron/glsp/protocol_3_16"
)

// TestTestFileDiagnostics: a test file gets the diagnostics of decoding it and of checking each
// run against the workflow it tests, read from the workflow's open document when there is one;
// a workflow that cannot be loaded is one error at the run.
func TestTestFileDiagnostics(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "w.fsc.hcl"), validWorkflow)
	test := `run "mocks_a_missing_node" {
  workflow = "w.fsc.hcl"
  mock "task.nope" { output = {} }
}

run "tests_a_missing_file" {
  workflow = "missing.fsc.hcl"
}

run "expects_nonsense" {
  workflow      = "w.fsc.hcl"
  expect_status = "sideways"
}
`
	uri := uriOf(filepath.Join(dir, "w.fsctest.hcl"))
	c, _ := inProcess(t, newServer(t))
	c.initialize()
	c.open(uri, test)
	p, n := c.waitDiagnostics(uri, 0, versionAtLeast(1))
	got := lines(p.Diagnostics)
	if len(got) != 3 || got[0] != 2 || got[1] != 6 || got[2] != 11 {
		t.Fatalf("diagnostics on lines %v; want lines 2, 6 and 11 (from 0):\n%+v", got, p.Diagnostics)
	}
	if s := p.Diagnostics[1].Message; !contains(s, "Cannot load the tested workflow", "missing.fsc.hcl", "no such file") {
		t.Errorf("missing workflow: %q", s)
	}

	// The workflow, open with a task "nope" that is not saved: once it changes, the test
	// file is checked again, and the mock is fine.
	wuri := uriOf(filepath.Join(dir, "w.fsc.hcl"))
	c.open(wuri, validWorkflow)
	c.change(wuri, 2, validWorkflow+"\ntask \"nope\" {\n  uses = builtin.transform\n}\n")
	p, _ = c.waitDiagnostics(uri, n, func(p protocol.PublishDiagnosticsParams) bool { return len(p.Diagnostics) == 2 })
	if got := lines(p.Diagnostics); !slices.Equal(got, []int{6, 11}) {
		t.Fatalf("with the workflow's open text, diagnostics on lines %v; want 6 and 11:\n%+v", got, p.Diagnostics)
	}
}

func lines(diags []protocol.Diagnostic) []int {
	var out []int
	for _, d := range diags {
		out = append(out, int(d.Range.Start.Line))
	}
	return out
}

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
