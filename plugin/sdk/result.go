package sdk

import (
	"time"

	"github.com/fuscia/fuscia/internal/taskresult"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
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
// as the next call's Call.State. output is the node's output so far, progress how far the work
// is, between 0 and 1 (clamped).
func Continue(state, output any, progress float64, delay time.Duration) Result {
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

// response is r as the protocol's ExecuteResponse.
func response(r Result) *pluginv1.ExecuteResponse { return executeResponse(taskresult.Encode(r)) }

// triggerResponse is r as the protocol's HandleTriggerResponse.
func triggerResponse(r TriggerResult) *pluginv1.HandleTriggerResponse {
	return handleTriggerResponse(taskresult.EncodeTrigger(r))
}

// errorResponse is err as a task's error response.
func errorResponse(err error) *pluginv1.ExecuteResponse {
	return executeResponse(taskresult.Classify(err, KindRetryable))
}

// triggerErrorResponse is err as a trigger's error response, which has no backoff hint or
// partial output.
func triggerErrorResponse(err error) *pluginv1.HandleTriggerResponse {
	return handleTriggerResponse(taskresult.Classify(err, KindRetryable))
}

func fatalResponse(msg string) *pluginv1.ExecuteResponse {
	return executeResponse(taskresult.Failure(KindFatal, msg))
}

// executeResponse copies a task's encoded answer onto the protocol's message; an error's
// partial output travels in Output.
func executeResponse(r taskresult.Response) *pluginv1.ExecuteResponse {
	switch r.Type {
	case taskresult.TypeSkip:
		return &pluginv1.ExecuteResponse{Type: pluginv1.ExecuteResponse_TYPE_SKIP, Reason: r.Reason}
	case taskresult.TypeContinue:
		return &pluginv1.ExecuteResponse{Type: pluginv1.ExecuteResponse_TYPE_CONTINUE, Output: r.Output,
			State: r.State, Progress: r.Progress, DelayMs: r.DelayMs}
	case taskresult.TypeBranch:
		return &pluginv1.ExecuteResponse{Type: pluginv1.ExecuteResponse_TYPE_BRANCH, Selected: r.Selected, Output: r.Output}
	case taskresult.TypeError:
		return &pluginv1.ExecuteResponse{
			Type:          pluginv1.ExecuteResponse_TYPE_ERROR,
			ErrorKind:     string(r.Kind),
			Message:       r.Message,
			BackoffHintMs: r.BackoffHintMs,
			Output:        r.PartialOutput,
		}
	default:
		return &pluginv1.ExecuteResponse{Type: pluginv1.ExecuteResponse_TYPE_SUCCESS, Output: r.Output}
	}
}

// handleTriggerResponse copies a trigger's encoded answer onto the protocol's message.
func handleTriggerResponse(r taskresult.Response) *pluginv1.HandleTriggerResponse {
	switch r.Type {
	case taskresult.TypeCompleted:
		return &pluginv1.HandleTriggerResponse{Type: pluginv1.HandleTriggerResponse_TYPE_COMPLETED, Payload: r.Payload}
	case taskresult.TypeError:
		return &pluginv1.HandleTriggerResponse{Type: pluginv1.HandleTriggerResponse_TYPE_ERROR,
			ErrorKind: string(r.Kind), Message: r.Message}
	default:
		return &pluginv1.HandleTriggerResponse{Type: pluginv1.HandleTriggerResponse_TYPE_PENDING}
	}
}

// marshalOutput encodes an output or payload: nil, and a nil pointer or map, are {}.
func marshalOutput(v any) ([]byte, error) { return taskresult.MarshalOutput(v) }
