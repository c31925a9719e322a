package fsctest

import (
	"strings"
	"testing"
)

// TestStallNamesTheStuckWait: when a run stops moving, the error names the wait nobody
// answers, not a wait that ended before on its own time.
func TestStallNamesTheStuckWait(t *testing.T) {
	dir := write(t, map[string]string{
		"stuck.fsc.hcl": `
workflow "stuck" {}

wait "cool_off" {
  duration = "1h"
}

wait "approve" {
  after = [wait.cool_off]
  approval {}
}
`,
		"stuck.fsctest.hcl": `
run "forgot_the_approval" {}
`})
	_, got := runTest(t, Options{Paths: []string{dir}})
	r := got["forgot_the_approval"]
	if r == nil || r.Status != Error || len(r.Diags) != 1 {
		t.Fatalf("want one error; got %+v", r)
	}
	if d := r.Diags[0].Detail; !strings.Contains(d, "waits for wait.approve,") || strings.Contains(d, "cool_off") {
		t.Errorf("the error names the wrong wait: %s", d)
	}
}
