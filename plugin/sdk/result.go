package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"time"

	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// Result is what a task handler answers when it did not fail. Make one with Success, Skip,
// Branch or Continue; the zero Result is a success with an empty output.
type Result struct {
	typ      pluginv1.ExecuteResponse_Type // 0 means success
	output   any
	reason   string
	selected string
	state    any
	progress float64
	delay    time.Duration
}

// Success is a finished task with output, which becomes the node's output. output is encoded
// with encoding/json; nil is sent as {}.
func Success(output any) Result {
	return Result{typ: pluginv1.ExecuteResponse_TYPE_SUCCESS, output: output}
}

// Skip says the task had nothing to do; the node is skipped, with reason.
func Skip(reason string) Result {
	return Result{typ: pluginv1.ExecuteResponse_TYPE_SKIP, reason: reason}
}

// Branch finishes the task and selects the branch edges labelled selected
// (task.NAME.branch.SELECTED); output as for Success.
func Branch(selected string, output any) Result {
	return Result{typ: pluginv1.ExecuteResponse_TYPE_BRANCH, selected: selected, output: output}
}

// Continue asks the engine to call the task again after delay, in the same attempt, with state
// as the next call's Call.State. output is the node's output so far, progress how far the work
// is, between 0 and 1 (clamped).
func Continue(state, output any, progress float64, delay time.Duration) Result {
	return Result{typ: pluginv1.ExecuteResponse_TYPE_CONTINUE, state: state, output: output, progress: progress, delay: delay}
}

// response encodes r; an output or state that cannot be encoded is a fatal error.
func (r Result) response() *pluginv1.ExecuteResponse {
	switch r.typ {
	case pluginv1.ExecuteResponse_TYPE_SKIP:
		return &pluginv1.ExecuteResponse{Type: r.typ, Reason: r.reason}
	case pluginv1.ExecuteResponse_TYPE_CONTINUE:
		out, err := marshalOutput(r.output)
		if err != nil {
			return fatalResponse("encode output: " + err.Error())
		}
		state, err := marshalJSON(r.state)
		if err != nil {
			return fatalResponse("encode continue state: " + err.Error())
		}
		p := r.progress
		if math.IsNaN(p) {
			p = 0
		}
		return &pluginv1.ExecuteResponse{Type: r.typ, Output: out, State: state,
			Progress: min(max(p, 0), 1), DelayMs: max(r.delay, 0).Milliseconds()}
	case pluginv1.ExecuteResponse_TYPE_BRANCH:
		out, err := marshalOutput(r.output)
		if err != nil {
			return fatalResponse("encode output: " + err.Error())
		}
		return &pluginv1.ExecuteResponse{Type: r.typ, Selected: r.selected, Output: out}
	default:
		out, err := marshalOutput(r.output)
		if err != nil {
			return fatalResponse("encode output: " + err.Error())
		}
		return &pluginv1.ExecuteResponse{Type: pluginv1.ExecuteResponse_TYPE_SUCCESS, Output: out}
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

func (r TriggerResult) response() *pluginv1.HandleTriggerResponse {
	if !r.completed {
		return &pluginv1.HandleTriggerResponse{Type: pluginv1.HandleTriggerResponse_TYPE_PENDING}
	}
	p, err := marshalOutput(r.payload)
	if err != nil {
		return triggerErrorResponse(&Error{Kind: KindFatal, Message: "encode payload: " + err.Error()})
	}
	return &pluginv1.HandleTriggerResponse{Type: pluginv1.HandleTriggerResponse_TYPE_COMPLETED, Payload: p}
}

// errorResponse is err as a task's error response.
func errorResponse(err error) *pluginv1.ExecuteResponse {
	c := classify(err)
	return &pluginv1.ExecuteResponse{
		Type:          pluginv1.ExecuteResponse_TYPE_ERROR,
		ErrorKind:     string(c.kind),
		Message:       c.message,
		BackoffHintMs: c.backoffHint.Milliseconds(),
		Output:        c.partialOutput,
	}
}

// triggerErrorResponse is err as a trigger's error response, which has no backoff hint or
// partial output.
func triggerErrorResponse(err error) *pluginv1.HandleTriggerResponse {
	c := classify(err)
	return &pluginv1.HandleTriggerResponse{
		Type:      pluginv1.HandleTriggerResponse_TYPE_ERROR,
		ErrorKind: string(c.kind),
		Message:   c.message,
	}
}

func fatalResponse(msg string) *pluginv1.ExecuteResponse {
	return errorResponse(&Error{Kind: KindFatal, Message: msg})
}

// marshalOutput encodes an output or payload: nil, and a nil pointer or map, are {}.
func marshalOutput(v any) ([]byte, error) {
	if v == nil {
		return []byte("{}"), nil
	}
	b, err := marshalJSON(v)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(b, []byte("null")) {
		return []byte("{}"), nil
	}
	return b, nil
}

// marshalJSON is json.Marshal without the "json: " prefix, which means nothing to a workflow
// author.
func marshalJSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	return b, nil
}
