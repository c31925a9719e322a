package fsctest

import (
	"time"

	"github.com/hashicorp/hcl/v2"
)

// Status is a run block's outcome.
type Status string

const (
	// Pass: the run ended as expected and every assertion held.
	Pass Status = "pass"
	// Fail: the run ended otherwise than expected or an assertion did not hold.
	Fail Status = "fail"
	// Error: the run could not be carried out (its workflow does not load, a call nobody
	// mocked, a wait nobody answers).
	Error Status = "error"
	// Skip: -run excluded it.
	Skip Status = "skip"
)

// Report is the outcome of a whole `fuscia test`.
type Report struct {
	Files []*FileReport
	// Counts of run blocks by status.
	Passed, Failed, Errored, Skipped int
	Elapsed                          time.Duration
	// Sources are the parsed files (test files and workflows) by name, for rendering
	// diagnostics and failures with their source lines.
	Sources map[string]*hcl.File
}

// OK reports whether the test passed as a whole: no failed or errored run and no error
// diagnostic in a file.
func (r *Report) OK() bool {
	if r.Failed > 0 || r.Errored > 0 {
		return false
	}
	for _, f := range r.Files {
		if f.Diags.HasErrors() {
			return false
		}
	}
	return true
}

// FileReport is one test file: its diagnostics (a file with errors runs nothing) and its runs.
type FileReport struct {
	Path  string
	Diags hcl.Diagnostics
	Runs  []*RunReport
}

// RunReport is the outcome of one run block.
type RunReport struct {
	File  string
	Name  string
	Range hcl.Range
	// Workflow is the workflow file the run ran.
	Workflow string
	Status   Status
	// Elapsed is the wall time the run took; Virtual the time its virtual clock moved.
	Elapsed, Virtual time.Duration
	// RunStatus is the status the workflow run ended with ("" when it did not run).
	RunStatus string
	// Failures say why a run failed (Status Fail), in the order found.
	Failures []Failure
	// Diags say why a run could not be carried out (Status Error).
	Diags hcl.Diagnostics
	// Nodes are the top-level nodes of the run, in address order, for -v.
	Nodes []NodeLine
}

// Failure is one expectation that did not hold.
type Failure struct {
	// Summary is a short title: "Assertion failed", "Unexpected run status", "Expected
	// failure did not happen".
	Summary string
	// Detail is the assert's error_message, or a sentence saying what was expected and seen.
	Detail string
	// Expr is the source text of the failing condition (asserts only).
	Expr  string
	Range hcl.Range
	// Values are the values of the references in Expr, in source order.
	Values []ExprValue
}

// ExprValue is one reference of a failed condition and its value, rendered like HCL.
type ExprValue struct {
	Expr  string
	Value string
}

// NodeLine is one node of a run as -v shows it.
type NodeLine struct {
	Addr     string
	Status   string
	Attempts int
	// Error is the node's error message when it failed.
	Error string
}
