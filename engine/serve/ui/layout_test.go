package ui

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// TestLayoutScript runs testdata/layout_check.mjs, the checks of the DAG layout the UI draws
// (assets/layout.js: edges left to right, no overlap in a layer, groups kept together, sweeps
// that undo a crossing, a 1,000-node graph), with node. Without node it is skipped: the script
// is plain JavaScript that only a JavaScript engine can run.
func TestLayoutScript(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the layout script is not run (apt-get install nodejs)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "testdata/layout_check.mjs").CombinedOutput()
	if err != nil {
		t.Fatalf("node testdata/layout_check.mjs: %v\n%s", err, out)
	}
}
