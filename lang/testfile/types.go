package testfile

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// File is one decoded test file (*.fsctest.hcl): file-level variables and mocks, and the run
// blocks, in source order.
type File struct {
	// Path is the file's name as given to Decode.
	Path string
	// Variables are the file's `variables` block, evaluated (functions only, no references).
	Variables map[string]cty.Value
	// VariableRanges locate each of Variables (the attribute's name), for diagnostics.
	VariableRanges map[string]hcl.Range
	// Mocks are the file-level mocks: every run of the file uses them, after its own.
	Mocks Mocks
	Runs  []*Run
}

// Mocks are the mock blocks of one scope (the file, or one run).
type Mocks struct {
	// Nodes are the `mock "task.NAME"` and `mock "wait.NAME"` blocks, in source order.
	Nodes []*NodeMock
	// Components and Plugins are the `mock_component "LOCAL"` and `mock_plugin "LOCAL"` blocks:
	// every task of that component or plugin block of the workflow, by task name.
	Components []*GroupMock
	Plugins    []*GroupMock
	// HTTP are the `mock_http` blocks, in source order: the first that matches a request wins.
	HTTP []*HTTPMock
}

// NodeMock is a `mock "ADDR"` block: a task's results per attempt, or a wait's answer.
type NodeMock struct {
	// Kind is "task" or "wait"; Name the node's name; Addr their join ("task.charge").
	Kind, Name, Addr string
	DeclRange        hcl.Range
	// Results (tasks): one per attempt, the last repeating for every later attempt; never
	// empty for a task mock. A block with `output` or `error` directly is one Result.
	Results []*Result
	// Wait (waits): how the wait ends.
	Wait *WaitMock
}

// Result is what one attempt of a mocked task answers: Output, or Error.
type Result struct {
	// Output is the task's output. It may refer to `input` (the call's input), `attempt` (the
	// attempt number, from 1) and `var.NAME`; it is evaluated at the call.
	Output hcl.Expression
	// Error is an object expression {kind = "…", message = "…"}; kind is one of the failure kinds
	// (retryable, fatal, timeout, validation, …). Same scope as Output.
	Error     hcl.Expression
	DeclRange hcl.Range
}

// WaitMock is how a mocked wait ends: resolved with Data (the default), rejected (Reject, with
// Data if given) or timed out (Timeout: its deadline passes on the virtual clock).
type WaitMock struct {
	Data    hcl.Expression // nil: no data
	Reject  bool
	Timeout bool
}

// GroupMock is a `mock_component` or `mock_plugin` block: results by task name.
type GroupMock struct {
	// Name is the local name of the workflow's `component` or `plugin` block.
	Name      string
	DeclRange hcl.Range
	Tasks     map[string]*TaskMock
}

// TaskMock is a `task "NAME"` block inside a GroupMock.
type TaskMock struct {
	Name      string
	DeclRange hcl.Range
	Results   []*Result
}

// HTTPMock is a `mock_http` block: the answer to builtin.http requests whose method and URL
// match.
type HTTPMock struct {
	// URL is a glob: `*` matches any run of characters, `/` included.
	URL string
	// Method is the HTTP method in upper case; "" matches any.
	Method string
	// Status is the response status (default 200).
	Status int
	// Headers (an object of strings), Body (a string) and JSON (any value, encoded as the body
	// with content-type application/json) may refer to `input` ({method, url, headers, body}),
	// `var.NAME` and functions. At most one of Body and JSON is set; nil when absent.
	Headers, Body, JSON hcl.Expression
	DeclRange           hcl.Range
}

// Run is a `run "NAME"` block: one run of a workflow with mocks, and what must hold after it.
type Run struct {
	Name      string
	DeclRange hcl.Range
	// Workflow is the workflow file, joined with the test file's directory; by default the test
	// file's name with .fsctest.hcl replaced by .fsc.hcl.
	Workflow      string
	WorkflowRange hcl.Range
	// Trigger is the trigger's name; "" means the workflow's manual trigger.
	Trigger string
	// TriggerRange locates the trigger attribute's value, or the run block when it is absent.
	TriggerRange hcl.Range
	// Variables are the file's variables overlaid with the run's `variables` attribute.
	Variables map[string]cty.Value
	// VariableRanges locate each of Variables: the key in the run's `variables`, or the
	// attribute of the file's variables block it came from.
	VariableRanges map[string]hcl.Range
	// Payload is the trigger payload; cty.NilVal when absent.
	Payload cty.Value
	// Mocks are the run's own mocks (they take precedence over the file's).
	Mocks Mocks
	// ExpectStatus is the run status the run must end with: "succeeded" by default, "failed"
	// by default when ExpectFailures is set.
	ExpectStatus      string
	ExpectStatusRange hcl.Range
	// ExpectFailures are the nodes that must end failed.
	ExpectFailures []Expected
	Asserts        []*Assert
}

// Expected is one entry of expect_failures: a node address and where it was written.
type Expected struct {
	Addr  string
	Range hcl.Range
}

// Assert is an `assert` block: Condition must be true after the run; ErrorMessage (a string
// expression, may be nil) says why it matters.
type Assert struct {
	Condition    hcl.Expression
	ErrorMessage hcl.Expression
	DeclRange    hcl.Range
}
