package fsctest

import "testing"

// TestWaitCancelledWhileJournaled: a wait that the run's failure cancels while its waiting is
// being journaled ends cancelled in the record, not waiting.
func TestWaitCancelledWhileJournaled(t *testing.T) {
	const n = 300
	runAll(t, n, repeatRuns(n, "cancelled", `
  mock "wait.approve" { timeout = true }
  expect_failures = [task.boom]
  assert {
    condition     = node.wait.approve.status == "cancelled"
    error_message = "the wait is cancelled by the failure, got ${node.wait.approve.status}"
  }
`))
}
