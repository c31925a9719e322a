package taskresult

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
)

// Response is a handler's answer with its payloads encoded, ready to be copied onto a wire.
// Type says which fields are set; the others are zero.
type Response struct {
	Type Type

	// Output is the node's output (success, branch, continue).
	Output json.RawMessage
	// Reason is why a task skipped itself (skip).
	Reason string
	// Selected is the branch key (branch).
	Selected string
	// State, Progress and DelayMs belong to continue: Progress is in [0, 1], DelayMs ≥ 0.
	State    json.RawMessage
	Progress float64
	DelayMs  int64

	// Kind, Message, BackoffHintMs and PartialOutput belong to error. Message is never empty;
	// BackoffHintMs ≥ 0; PartialOutput is nil when the error has none.
	Kind          ErrorKind
	Message       string
	BackoffHintMs int64
	PartialOutput json.RawMessage

	// Payload is the trigger's payload (completed).
	Payload json.RawMessage
}

// Encode encodes a task's result. An output or state that cannot be encoded makes a fatal
// error response, which says which.
func Encode(r Result) Response {
	switch r.typ {
	case TypeSkip:
		return Response{Type: TypeSkip, Reason: r.reason}
	case TypeContinue:
		out, err := MarshalOutput(r.output)
		if err != nil {
			return fatal("encode output: " + err.Error())
		}
		state, err := MarshalJSON(r.state)
		if err != nil {
			return fatal("encode continue state: " + err.Error())
		}
		p := r.progress
		if math.IsNaN(p) {
			p = 0
		}
		return Response{Type: TypeContinue, Output: out, State: state,
			Progress: min(max(p, 0), 1), DelayMs: max(r.delay, 0).Milliseconds()}
	case TypeBranch:
		out, err := MarshalOutput(r.output)
		if err != nil {
			return fatal("encode output: " + err.Error())
		}
		return Response{Type: TypeBranch, Selected: r.selected, Output: out}
	default:
		out, err := MarshalOutput(r.output)
		if err != nil {
			return fatal("encode output: " + err.Error())
		}
		return Response{Type: TypeSuccess, Output: out}
	}
}

// EncodeTrigger encodes a trigger's result. A payload that cannot be encoded makes a fatal
// error response.
func EncodeTrigger(r TriggerResult) Response {
	if !r.completed {
		return Response{Type: TypePending}
	}
	p, err := MarshalOutput(r.payload)
	if err != nil {
		return fatal("encode payload: " + err.Error())
	}
	return Response{Type: TypeCompleted, Payload: p}
}

// Classify reads err, which must not be nil, as an error response: the kind of the first
// *Error in the chain (retryable when that Error has no kind), otherwise when there is none;
// the outermost message ("error without a message" when it is empty); the backoff hint of that
// *Error; the partial output of the first WithPartialOutput in the chain. A partial output that
// cannot be encoded is left out, and the message says so.
func Classify(err error, otherwise ErrorKind) Response {
	r := Response{Type: TypeError, Kind: otherwise, Message: err.Error()}
	var e *Error
	if errors.As(err, &e) {
		r.Kind = KindRetryable
		if e.Kind != "" {
			r.Kind = e.Kind
		}
		r.BackoffHintMs = max(e.BackoffHint, 0).Milliseconds()
	}
	if r.Message == "" {
		r.Message = "error without a message"
	}
	var p *partialOutputError
	if errors.As(err, &p) {
		out, merr := MarshalOutput(p.output)
		if merr != nil {
			r.Message += " (and its partial output could not be encoded: " + merr.Error() + ")"
		} else {
			r.PartialOutput = out
		}
	}
	return r
}

// Failure is the error response of kind with msg, for what goes wrong around a handler (a
// malformed request, an unknown task).
func Failure(kind ErrorKind, msg string) Response {
	return Classify(&Error{Kind: kind, Message: msg}, kind)
}

func fatal(msg string) Response { return Failure(KindFatal, msg) }

// MarshalOutput encodes an output or payload: nil, and anything encoding/json writes as null
// (a nil pointer or map), are {}.
func MarshalOutput(v any) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage("{}"), nil
	}
	b, err := MarshalJSON(v)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(b, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	return b, nil
}

// MarshalJSON is json.Marshal without the "json: " prefix, which means nothing to a workflow
// author.
func MarshalJSON(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	return b, nil
}
