package main

import (
	"strings"
	"testing"
)

// bigOutputWorkflow's task outputs ~1.05 MB: over the 1 MiB value-log file of a small store,
// well under the default one.
const bigOutputWorkflow = `workflow "big" {}

task "pad" {
  uses   = builtin.transform
  inputs = { text = format("%01100000d", 7) }
}

output "size" { value = length(task.pad.output.text) }
`

// TestTestStoreSetting: FUSCIA_TEST_STORE=small opens the store with small files (the crash
// matrix's; their 1 MiB value-log file is also the largest value), and any other value is
// refused with an error naming the variable, without the advice about a damaged store.
// (FUSCIA_TEST_STORE=lossy and FUSCIA_TEST_CRASH are the durability crash tests', in
// crash_elision_e2e_test.go.)
func TestTestStoreSetting(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("big.fsc.hcl", bigOutputWorkflow)
	r := h.run("apply", "big.fsc.hcl")
	wantCode(t, r, 0)

	small := newHarness(t)
	small.env = []string{"FUSCIA_TEST_STORE=small"}
	small.write("big.fsc.hcl", bigOutputWorkflow)
	r = small.run("apply", "big.fsc.hcl")
	wantCode(t, r, 1)
	wantContains(t, "apply's stderr with a small store", r.stderr, "at most 1048576")

	bad := newHarness(t)
	bad.env = []string{"FUSCIA_TEST_STORE=tiny"}
	bad.write("big.fsc.hcl", bigOutputWorkflow)
	r = bad.run("apply", "big.fsc.hcl")
	wantCode(t, r, 1)
	wantContains(t, "apply's stderr", r.stderr, `FUSCIA_TEST_STORE: "tiny"`, "the values are small and lossy")
	if strings.Contains(r.stderr, "aside") {
		t.Errorf("an invalid FUSCIA_TEST_STORE gets the advice about a damaged store:\n%s", r)
	}
}
