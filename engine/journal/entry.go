package journal

import (
	"encoding/json"
	"time"

	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang/addrs"
)

// EntryType names a state change of a run.
type EntryType string

// The entries of a run's journal, in the order they usually appear. Every node is made of
// instances: a plain node has one (Index empty); a `for_each` task has one per item (Index [i])
// besides its aggregate (Index empty); a loop has one per iteration (Index [i]) besides the loop
// itself; a node in a loop body has one per iteration (Index [i]), and a `for_each` task in a
// body one per iteration and item (Index [i, j]).
const (
	// RunStarted opens the journal: Run holds the workflow, trigger, plan digest and inputs.
	RunStarted EntryType = "run_started"
	// NodeStarted: a non-task instance began (switch, join, loop, loop iteration, wait, call,
	// a for_each aggregate). ChildID is set for a call.
	NodeStarted EntryType = "node_started"
	// AttemptStarted: attempt Attempt of a task instance began, with TaskID and Input.
	AttemptStarted EntryType = "attempt_started"
	// AttemptContinued: the attempt answered `continue`; State is what the next call gets.
	AttemptContinued EntryType = "attempt_continued"
	// AttemptFailed: the attempt failed and the node will be retried at RetryAt (Error says why).
	// An attempt that ends its instance is recorded by NodeFinished alone.
	AttemptFailed EntryType = "attempt_failed"
	// AttemptInterrupted: a shutdown cut the attempt short (its result was not waited for), or
	// its dispatcher answered kind attempt_interrupted (Error says why; the next attempt runs at
	// once). It runs again with the next attempt number and does not count against
	// retry.attempts. Not written on a shutdown for an attempt that a task.Reattacher runs
	// elsewhere: that one stays in flight, for resume to re-attach to.
	AttemptInterrupted EntryType = "attempt_interrupted"
	// NodeWaiting: a wait instance is parked until Deadline (zero for approval/callback without
	// timeout); WaitKind says which kind.
	NodeWaiting EntryType = "node_waiting"
	// WaitResolved: a signal answered a wait (Output is its data; Rejected when it was rejected;
	// AnsweredBy who answered).
	WaitResolved EntryType = "wait_resolved"
	// NodeFinished: an instance reached its final status (succeeded, completed_with_errors,
	// failed, skipped, cancelled) with Output, Error, Reason, Selected.
	NodeFinished EntryType = "node_finished"
	// RunStatus: the run's status changed without finishing (waiting ↔ running, or
	// interrupted-then-resumed); Status holds the new one.
	RunStatus EntryType = "run_status"
	// RunFinished closes the journal: Status, Outputs, Error.
	RunFinished EntryType = "run_finished"
)

// Entry is one state change. Seq and Time are set by Store.Append when zero.
type Entry struct {
	Seq  uint64    `json:"seq"`
	Type EntryType `json:"type"`
	Time time.Time `json:"time"`

	// Node is the node's address (`task.fetch`, `loop.notify/task.send`); Index the instance.
	Node  string `json:"node,omitempty"`
	Index []int  `json:"index,omitempty"`
	// Key is each.key of the innermost iteration (a number for lists, a string for maps).
	Key json.RawMessage `json:"key,omitempty"`

	Attempt int    `json:"attempt,omitempty"`
	TaskID  string `json:"task_id,omitempty"`
	// Input is the task's input (AttemptStarted), for display: its sensitive parts as
	// {"sensitive": true}, {"truncated": true, "bytes": n} when over 64 KiB. Entries written
	// before it was journaled have none.
	Input json.RawMessage `json:"input,omitempty"`

	Status   string          `json:"status,omitempty"`
	Output   json.RawMessage `json:"output,omitempty"`
	Error    *outcome.Error  `json:"error,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	Selected string          `json:"selected,omitempty"`

	State    json.RawMessage `json:"state,omitempty"`
	Progress float64         `json:"progress,omitempty"`
	RetryAt  time.Time       `json:"retry_at,omitzero"`
	Deadline time.Time       `json:"deadline,omitzero"`
	WaitKind string          `json:"wait_kind,omitempty"`
	Rejected bool            `json:"rejected,omitempty"`
	// AnsweredBy is who answered a wait (WaitResolved): the name of the API token the signal
	// came with, or "local" for the owner's socket and the store opened directly. Empty in
	// entries written before it was recorded.
	AnsweredBy string `json:"answered_by,omitempty"`
	// Total is the number of items or iterations of a for_each aggregate or loop (NodeStarted).
	Total int `json:"total,omitempty"`
	// ChildID is the execution id of a call's child run.
	ChildID string `json:"child_execution_id,omitempty"`

	Run     *RunInfo        `json:"run,omitempty"`
	Outputs json.RawMessage `json:"outputs,omitempty"` // RunFinished: the workflow's outputs object
}

// Instance returns the address of the instance the entry is about (Node and Index). It is an
// error for a run's own entries (no Node) and for a Node that is not a node address.
func (e *Entry) Instance() (addrs.Instance, error) { return addrs.NewInstance(e.Node, e.Index) }

// RunInfo is what RunStarted records about a run.
type RunInfo struct {
	Workflow string `json:"workflow"`
	File     string `json:"file"`
	// PlanDigest names the plan blob (Store.PutPlan) the run executes; resume reloads it.
	PlanDigest string  `json:"plan_digest"`
	Trigger    Trigger `json:"trigger"`
	// Vars are the variable values, sensitive ones redacted.
	Vars        json.RawMessage `json:"vars,omitempty"`
	Durability  string          `json:"durability"`
	Parallelism int             `json:"parallelism,omitempty"`
	Parent      string          `json:"parent_execution_id,omitempty"`
	ParentNode  string          `json:"parent_node,omitempty"`
	// Nodes are the top-level node addresses in stage order; Bodies the local addresses of each
	// loop's body (by loop address), so that a reader lists nodes that never started as pending.
	Nodes  []string            `json:"nodes"`
	Bodies map[string][]string `json:"bodies,omitempty"`
}

// Trigger says what started a run.
type Trigger struct {
	Type    string          `json:"type"`
	Name    string          `json:"name"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// Run statuses (docs/reference/language.md). A run is interrupted when the process running it ended before
// it did: a crash, a kill, or a shutdown that stopped waiting for it. Only one process opens a
// store at a time (Badger's directory lock), so no run is live when it opens the store: the
// owner moves every run it finds running to interrupted (Store.InterruptRunning). Resume moves
// it back to running. A waiting run stays waiting: its waits hold, and signal or resume
// continue it.
const (
	StatusRunning             = "running"
	StatusWaiting             = "waiting"
	StatusInterrupted         = "interrupted"
	StatusSucceeded           = "succeeded"
	StatusFailed              = "failed"
	StatusCompletedWithErrors = "completed_with_errors"
	StatusCancelled           = "cancelled"
	StatusTimedOut            = "timed_out"
	// Node-only statuses.
	StatusPending = "pending"
	StatusSkipped = "skipped"
)

// UnfinishedStatuses are the run statuses that are not final, in the order a reader lists
// them: running, waiting, interrupted.
func UnfinishedStatuses() []string {
	return []string{StatusRunning, StatusWaiting, StatusInterrupted}
}

// Finished reports whether a run status is final.
func Finished(status string) bool {
	switch status {
	case StatusSucceeded, StatusFailed, StatusCompletedWithErrors, StatusCancelled, StatusTimedOut:
		return true
	}
	return false
}

// Summary is a run's record in the list index: `executions list -json`'s element.
type Summary struct {
	ID         string     `json:"execution_id"`
	Workflow   string     `json:"workflow"`
	Status     string     `json:"status"`
	Trigger    TriggerRef `json:"trigger"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	Parent     *string    `json:"parent_execution_id"`
}

// TriggerRef names a trigger without its payload.
type TriggerRef struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// LogLine is one line a node wrote.
type LogLine struct {
	Seq     uint64    `json:"seq"`
	Time    time.Time `json:"time"`
	Node    string    `json:"node"`
	Index   []int     `json:"index,omitempty"`
	Attempt int       `json:"attempt,omitempty"`
	Level   string    `json:"level"` // debug, info, warn, error
	Message string    `json:"message"`
}

// Instance returns the address of the instance that wrote the line (Node and Index); an error
// when Node is not a node address.
func (l *LogLine) Instance() (addrs.Instance, error) { return addrs.NewInstance(l.Node, l.Index) }

// Execution is one run as `show -json` prints it (docs/reference/cli.md), rebuilt from its journal.
type Execution struct {
	ID         string               `json:"execution_id"`
	Workflow   string               `json:"workflow"`
	Status     string               `json:"status"`
	Trigger    Trigger              `json:"trigger"`
	StartedAt  time.Time            `json:"started_at"`
	FinishedAt *time.Time           `json:"finished_at"`
	Parent     *string              `json:"parent_execution_id"`
	Error      *outcome.Error       `json:"error,omitempty"`
	Outputs    json.RawMessage      `json:"outputs"`
	Nodes      map[string]*NodeView `json:"nodes"`
}

// NodeView is one node of an Execution.
type NodeView struct {
	Status     string           `json:"status"`
	Attempts   int              `json:"attempts,omitempty"`
	Output     json.RawMessage  `json:"output,omitempty"`
	Error      *outcome.Error   `json:"error,omitempty"`
	Reason     string           `json:"reason,omitempty"`
	StartedAt  *time.Time       `json:"started_at,omitempty"`
	FinishedAt *time.Time       `json:"finished_at,omitempty"`
	Deadline   *time.Time       `json:"deadline,omitempty"` // a waiting wait
	ChildID    string           `json:"child_execution_id,omitempty"`
	Instances  []*InstanceView  `json:"instances,omitempty"`  // a for_each task's items
	Iterations []*IterationView `json:"iterations,omitempty"` // a loop's iterations
	// AnsweredBy is who answered an approval or callback wait (Entry.AnsweredBy).
	AnsweredBy string `json:"answered_by,omitempty"`
}

// InstanceView is one item of a for_each task.
type InstanceView struct {
	Key        json.RawMessage `json:"key"`
	Status     string          `json:"status"`
	Attempts   int             `json:"attempts,omitempty"`
	Output     json.RawMessage `json:"output,omitempty"`
	Error      *outcome.Error  `json:"error,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	StartedAt  *time.Time      `json:"started_at,omitempty"`
	FinishedAt *time.Time      `json:"finished_at,omitempty"`
}

// IterationView is one iteration of a loop, with its body's nodes by local address (`task.send`).
type IterationView struct {
	Key        json.RawMessage      `json:"key"`
	Status     string               `json:"status"`
	Output     json.RawMessage      `json:"output,omitempty"`
	Error      *outcome.Error       `json:"error,omitempty"`
	StartedAt  *time.Time           `json:"started_at,omitempty"`
	FinishedAt *time.Time           `json:"finished_at,omitempty"`
	Nodes      map[string]*NodeView `json:"nodes"`
}
