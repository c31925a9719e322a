package testfile

import (
	"slices"

	"github.com/fuscia/fuscia/internal/outcome"
)

// errorKinds are the kinds a mocked task may fail with: what a task itself returns (retryable,
// fatal, validation) and what the host reports about an attempt that a test may want to
// simulate (timeout, plugin_crashed, sandbox_violation, data_limit_exceeded). The kinds that
// describe the engine rather than the task (cancelled, rejected, attempt_interrupted,
// worker_lost, plugin_missing) are left out: a mock cannot cause them.
var errorKinds = []outcome.Kind{
	outcome.Retryable, outcome.Fatal, outcome.Validation, outcome.Timeout,
	outcome.PluginCrashed, outcome.SandboxViolation, outcome.DataLimitExceeded,
}

// ErrorKinds returns the error kinds a mock's `error = { kind = … }` may name, in the order
// messages list them.
func ErrorKinds() []outcome.Kind { return slices.Clone(errorKinds) }

// runStatuses are the final statuses of a run (engine/journal's; a test in this package keeps
// the copies equal). This package stays below the journal in the layers, so it keeps a copy
// instead of importing it.
var runStatuses = []string{"succeeded", "failed", "completed_with_errors", "cancelled", "timed_out"}

// RunStatuses returns the statuses `expect_status` may name.
func RunStatuses() []string { return slices.Clone(runStatuses) }

// Defaults of expect_status.
const (
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)
