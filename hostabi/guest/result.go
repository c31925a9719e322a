package guest

import (
	"encoding/json"
	"time"

	"github.com/fuscia/fuscia/internal/taskresult"
)

// Result is what a task handler answers when it did not fail. Make one with Success, Skip,
// Branch or Continue; the zero Result is a success with an empty output.
type Result = taskresult.Result

// Success is a finished task with output, which becomes the node's output. output is encoded
// with encoding/json; nil is sent as {}.
func Success(output any) Result { return taskresult.Success(output) }

// Skip says the task had nothing to do; the node is skipped, with reason.
func Skip(reason string) Result { return taskresult.Skip(reason) }

// Branch finishes the task and selects the branch edges labelled selected
// (task.NAME.branch.SELECTED); output as for Success.
func Branch(selected string, output any) Result { return taskresult.Branch(selected, output) }

// Continue asks the engine to call the task again after delay, in the same attempt, with state
// as the request's state (Context.State). output is the node's output so far, progress how far
// the work is, between 0 and 1 (clamped).
func Continue(state any, output any, progress float64, delay time.Duration) Result {
	return taskresult.Continue(state, output, progress, delay)
}

// TriggerResult is what a trigger handler answers when it did not fail. Make one with Completed
// or Pending; the zero TriggerResult is Pending.
type TriggerResult = taskresult.TriggerResult

// Completed starts a run with payload as trigger.payload. payload is encoded with
// encoding/json; nil is sent as {}.
func Completed(payload any) TriggerResult { return taskresult.Completed(payload) }

// Pending says there is nothing to start yet (a poll found nothing new).
func Pending() TriggerResult { return taskresult.Pending() }

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

// wire copies an encoded answer onto the JSON response; progress is written for continue only.
func wire(r taskresult.Response) response {
	w := response{
		Type:          string(r.Type),
		Output:        r.Output,
		Reason:        r.Reason,
		Selected:      r.Selected,
		State:         r.State,
		DelayMS:       r.DelayMs,
		Kind:          string(r.Kind),
		Message:       r.Message,
		BackoffHintMS: r.BackoffHintMs,
		PartialOutput: r.PartialOutput,
		Payload:       r.Payload,
	}
	if r.Type == taskresult.TypeContinue {
		p := r.Progress
		w.Progress = &p
	}
	return w
}

func fatalResponse(msg string) response { return wire(taskresult.Failure(KindFatal, msg)) }

func validationResponse(msg string) response { return wire(taskresult.Failure(KindValidation, msg)) }
