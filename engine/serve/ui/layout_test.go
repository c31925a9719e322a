package ui

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// TestLayoutScript runs testdata/layout_check.mjs, the checks of the DAG layout the UI draws
// (assets/layout.js: edges left to right, no overlap in a layer, groups kept together, sweeps
// that undo a crossing, a 1,000-node graph), with node.
func TestLayoutScript(t *testing.T) { runNodeScript(t, "testdata/layout_check.mjs") }

// TestFormatScript runs testdata/format_check.mjs, the checks of the UI's text helpers
// (assets/format.js: control characters shown, plurals), with node; skipped without it.
func TestFormatScript(t *testing.T) { runNodeScript(t, "testdata/format_check.mjs") }

// runNodeScript runs a check script with node; it is skipped without node: the scripts are
// plain JavaScript that only a JavaScript engine can run.
func runNodeScript(t *testing.T, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: " + script + " is not run (apt-get install nodejs)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, script).CombinedOutput()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, out)
	}
}
