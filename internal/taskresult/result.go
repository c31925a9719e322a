package taskresult

import "time"

// Type is what a handler answered, as both wires name it.
type Type string

// Response types. A task answers success, skip, branch, continue or error; a trigger
// completed, pending or error.
const (
	TypeSuccess   Type = "success"
	TypeSkip      Type = "skip"
	TypeBranch    Type = "branch"
	TypeContinue  Type = "continue"
	TypeError     Type = "error"
	TypeCompleted Type = "completed"
	TypePending   Type = "pending"
)

// Result is what a task handler answers when it did not fail. Make one with Success, Skip,
// Branch or Continue; the zero Result is a success with an empty output.
type Result struct {
	typ      Type // "" means success
	output   any
	reason   string
	selected string
	state    any
	progress float64
	delay    time.Duration
}

// Success is a finished task with output, which becomes the node's output. output is encoded
// with encoding/json; nil, and a nil pointer or map, are sent as {}.
func Success(output any) Result { return Result{typ: TypeSuccess, output: output} }

// Skip says the task had nothing to do; the node is skipped, with reason.
func Skip(reason string) Result { return Result{typ: TypeSkip, reason: reason} }

// Branch finishes the task and selects the branch edges labelled selected
// (task.NAME.branch.SELECTED); output as for Success.
func Branch(selected string, output any) Result {
	return Result{typ: TypeBranch, selected: selected, output: output}
}

// Continue asks the engine to call the task again after delay, in the same attempt, with state
// as the next call's state. output is the node's output so far, progress how far the work is,
// between 0 and 1 (clamped; NaN is 0). A negative delay is zero.
func Continue(state, output any, progress float64, delay time.Duration) Result {
	return Result{typ: TypeContinue, state: state, output: output, progress: progress, delay: delay}
}

// TriggerResult is what a trigger handler answers when it did not fail. Make one with Completed
// or Pending; the zero TriggerResult is Pending.
type TriggerResult struct {
	completed bool
	payload   any
}

// Completed starts a run with payload as trigger.payload. payload is encoded with
// encoding/json; nil, and a nil pointer or map, are sent as {}.
func Completed(payload any) TriggerResult { return TriggerResult{completed: true, payload: payload} }

// Pending says there is nothing to start yet (a poll found nothing new).
func Pending() TriggerResult { return TriggerResult{} }
