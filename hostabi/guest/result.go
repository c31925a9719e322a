package guest

import (
	"encoding/json"
	"time"
)

// Result is what a task handler answers when it did not fail. Make one with Success, Skip,
// Branch or Continue; the zero Result is a success with an empty output.
type Result struct {
	typ      string // "" means success
	output   any
	reason   string
	selected string
	state    any
	progress float64
	delay    time.Duration
}

// Success is a finished task with output, which becomes the node's output. output is encoded
// with encoding/json; nil is sent as {}.
func Success(output any) Result { return Result{typ: "success", output: output} }

// Skip says the task had nothing to do; the node is skipped, with reason.
func Skip(reason string) Result { return Result{typ: "skip", reason: reason} }

// Branch finishes the task and selects the branch edges labelled selected
// (task.NAME.branch.SELECTED); output as for Success.
func Branch(selected string, output any) Result {
	return Result{typ: "branch", selected: selected, output: output}
}

// Continue asks the engine to call the task again after delay, in the same attempt, with state
// as the request's state (Context.State). output is the node's output so far, progress how far
// the work is, between 0 and 1 (clamped).
func Continue(state any, output any, progress float64, delay time.Duration) Result {
	return Result{typ: "continue", state: state, output: output, progress: progress, delay: delay}
}

// response is every response of docs/reference/abi-v1.md in one struct; each type fills its own fields.
type response struct {
	Type string `json:"type"`

	// success, branch, continue
	Output   json.RawMessage `json:"output,omitempty"`
	Reason   string          `json:"reason,omitempty"`   // skip
	Selected string          `json:"selected,omitempty"` // branch
	State    json.RawMessage `json:"state,omitempty"`    // continue
	Progress *float64        `json:"progress,omitempty"` // continue
	DelayMS  int64           `json:"delay_ms,omitempty"` // continue

	// error
	Kind          string          `json:"kind,omitempty"`
	Message       string          `json:"message,omitempty"`
	BackoffHintMS int64           `json:"backoff_hint_ms,omitempty"`
	PartialOutput json.RawMessage `json:"partial_output,omitempty"`

	Payload json.RawMessage `json:"payload,omitempty"` // completed
}

// response encodes r; an output or state that cannot be encoded is a fatal error.
func (r Result) response() response {
	switch r.typ {
	case "skip":
		return response{Type: "skip", Reason: r.reason}
	case "continue":
		out, err := marshalOutput(r.output)
		if err != nil {
			return fatalResponse("encode output: " + err.Error())
		}
		state, err := marshalJSON(r.state)
		if err != nil {
			return fatalResponse("encode continue state: " + err.Error())
		}
		p := min(max(r.progress, 0), 1)
		if p != p { // NaN
			p = 0
		}
		return response{Type: "continue", Output: out, State: state, Progress: &p,
			DelayMS: max(r.delay, 0).Milliseconds()}
	case "branch":
		out, err := marshalOutput(r.output)
		if err != nil {
			return fatalResponse("encode output: " + err.Error())
		}
		return response{Type: "branch", Selected: r.selected, Output: out}
	default:
		out, err := marshalOutput(r.output)
		if err != nil {
			return fatalResponse("encode output: " + err.Error())
		}
		return response{Type: "success", Output: out}
	}
}

// TriggerResult is what a trigger handler answers when it did not fail. Make one with Completed
// or Pending; the zero TriggerResult is Pending.
type TriggerResult struct {
	completed bool
	payload   any
}

// Completed starts a run with payload as trigger.payload. payload is encoded with
// encoding/json; nil is sent as {}.
func Completed(payload any) TriggerResult { return TriggerResult{completed: true, payload: payload} }

// Pending says there is nothing to start yet (a poll found nothing new).
func Pending() TriggerResult { return TriggerResult{} }

func (r TriggerResult) response() response {
	if !r.completed {
		return response{Type: "pending"}
	}
	p, err := marshalOutput(r.payload)
	if err != nil {
		return fatalResponse("encode payload: " + err.Error())
	}
	return response{Type: "completed", Payload: p}
}

func fatalResponse(msg string) response {
	return response{Type: "error", Kind: string(KindFatal), Message: msg}
}

func validationResponse(msg string) response {
	return response{Type: "error", Kind: string(KindValidation), Message: msg}
}
