package main

import (
	"strings"
	"testing"
)

// TestChecksStopPastTheirHeapLimit: validate and plan of a file whose expressions build
// gigabytes (distinct 4 MB strings, a thousand of them: every function's own bound holds) stop
// with an error past FUSCIA_MAX_CHECK_HEAP instead of taking the machine's memory; a workflow
// that needs little is checked as before under the same limit.
func TestChecksStopPastTheirHeapLimit(t *testing.T) {
	h := newHarness(t)
	h.env = []string{"FUSCIA_MAX_CHECK_HEAP=64MiB"}
	h.write("big.fsc.hcl", `workflow "w" {}
task "t" {
  uses = builtin.transform
  inputs = {
    x = length([for a in range(1024) : "${join("", [for i in range(4) : format("%01000000d", a)])}"])
  }
}
`)
	h.write("big.fsctest.hcl", "run \"r\" {}\n") // runs big.fsc.hcl
	for _, args := range [][]string{{"validate", "big.fsc.hcl"}, {"plan", "big.fsc.hcl"}, {"test", "big.fsctest.hcl"}} {
		cmd := args[0]
		r := h.run(args...)
		if r.code != exitFailed || !strings.Contains(r.stderr, "Error: Workflow expressions use too much memory") || !strings.Contains(r.stderr, "more than the limit of 64 MiB") {
			t.Errorf("%s of a file that builds gigabytes:\n%s", cmd, r)
		}
	}
	h.write("small.fsc.hcl", `workflow "w" {}
task "t" {
  uses   = builtin.transform
  inputs = { x = length([for a in range(100) : "${a}"]) }
}
`)
	if r := h.run("validate", "small.fsc.hcl"); r.code != exitOK {
		t.Errorf("validate under the same limit:\n%s", r)
	}
}
