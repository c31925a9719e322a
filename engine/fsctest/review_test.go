package fsctest

import (
	"fmt"
	"strings"
	"testing"
)

// raceWorkflow fails at once (task.boom) while wait.approve begins waiting: the two race in
// real time at the same virtual instant.
const raceWorkflow = `
workflow "race" {}

task "boom" {
  uses   = builtin.fail
  inputs = { message = "boom" }
}

wait "approve" {
  approval {}
}
`

// repeatRuns is n copies of a run block named name_i.
func repeatRuns(n int, name, body string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "run \"%s_%d\" {\n%s\n}\n", name, i, body)
	}
	return b.String()
}

// runAll runs the test file over the race workflow and checks every run passed.
func runAll(t *testing.T, n int, tests string) {
	t.Helper()
	dir := write(t, map[string]string{"race.fsc.hcl": raceWorkflow, "race.fsctest.hcl": tests})
	rep, got := runTest(t, Options{Paths: []string{dir}, Parallel: 4})
	bad := 0
	for name, r := range got {
		if r.Status != Pass {
			if bad++; bad <= 3 {
				t.Errorf("run %s: %s", name, describe(r))
			}
		}
	}
	if rep.Passed != n {
		t.Errorf("passed %d of %d runs", rep.Passed, n)
	}
}

// TestWaitAnsweredAsTheRunFails: a mocked wait whose run fails at the same virtual instant may
// be answered after the failure cancelled it, or after the run ended. That is no error of the
// test: the run failed as the test expects, every time.
func TestWaitAnsweredAsTheRunFails(t *testing.T) {
	const n = 300
	runAll(t, n, repeatRuns(n, "approved", `
  mock "wait.approve" { data = { ok = true } }
  expect_failures = [task.boom]
`))
}

// TestTimedWaitMockedWithData: a duration wait cannot be answered; its mock is an error that
// says so, on the mock.
func TestTimedWaitMockedWithData(t *testing.T) {
	dir := write(t, map[string]string{
		"timed.fsc.hcl": `
workflow "timed" {}

wait "pause" {
  duration = "1h"
}
`,
		"timed.fsctest.hcl": `
run "answered" {
  mock "wait.pause" { data = { ok = true } }
}
`})
	_, got := runTest(t, Options{Paths: []string{dir}})
	r := got["answered"]
	if r == nil || r.Status != Error || len(r.Diags) != 1 {
		t.Fatalf("want one error; got %+v", r)
	}
	d := r.Diags[0]
	if !strings.Contains(d.Detail, "wait.pause waits for a duration") || d.Subject == nil || d.Subject.Start.Line != 3 {
		t.Errorf("diagnostic: %s at %v", d.Error(), d.Subject)
	}
}

// TestMissingWorkflowIsLocated: a run block whose workflow file does not exist gets an error
// on its workflow attribute, not one without a place.
func TestMissingWorkflowIsLocated(t *testing.T) {
	dir := write(t, map[string]string{
		"gone.fsctest.hcl": `
run "missing" {
  workflow = "nope.fsc.hcl"
}
`})
	_, got := runTest(t, Options{Paths: []string{dir}})
	r := got["missing"]
	if r == nil || r.Status != Error || len(r.Diags) == 0 {
		t.Fatalf("want an error; got %+v", r)
	}
	d := r.Diags[0]
	if !strings.Contains(d.Detail, "nope.fsc.hcl") || d.Subject == nil ||
		!strings.HasSuffix(d.Subject.Filename, "gone.fsctest.hcl") || d.Subject.Start.Line != 3 {
		t.Errorf("diagnostic %q at %v; want it on the workflow attribute (line 3)", d.Error(), d.Subject)
	}
}
