package guest

import (
	"errors"
	"fmt"
	"time"
)

// ErrorKind classifies a failed handler, as docs/reference/abi-v1.md's error response does.
type ErrorKind string

// Error kinds a component may answer with.
const (
	// KindRetryable: the attempt failed but another one may succeed; the workflow's retry
	// block decides.
	KindRetryable ErrorKind = "retryable"
	// KindFatal: trying again will not help; the node fails.
	KindFatal ErrorKind = "fatal"
	// KindValidation: the input (or a webhook's request) is wrong; the node fails, a webhook
	// answers 4xx.
	KindValidation ErrorKind = "validation"
)

// Error is an error with a kind. Retryable, Fatal and Validation return one; a handler may
// also return an *Error it built itself, or wrap one: the outermost message is sent, with the
// kind of the first *Error in the chain.
type Error struct {
	Kind    ErrorKind
	Message string
	// BackoffHint asks the engine to wait at least this long before the next attempt
	// (backoff_hint_ms); zero leaves the workflow's backoff alone.
	BackoffHint time.Duration
}

func (e *Error) Error() string { return e.Message }

// Retryable returns a retryable error. backoff is a hint for the delay before the next
// attempt; zero for none.
func Retryable(msg string, backoff time.Duration) error {
	return &Error{Kind: KindRetryable, Message: msg, BackoffHint: max(backoff, 0)}
}

// Fatal returns a fatal error: the node fails without another attempt.
func Fatal(format string, args ...any) error {
	return &Error{Kind: KindFatal, Message: sprintf(format, args...)}
}

// Validation returns a validation error: the input is wrong.
func Validation(format string, args ...any) error {
	return &Error{Kind: KindValidation, Message: sprintf(format, args...)}
}

// WithPartialOutput attaches output to err as its partial output (partial_output): what the
// handler produced before it failed. The kind and message stay those of err. It returns nil
// when err is nil.
func WithPartialOutput(err error, output any) error {
	if err == nil {
		return nil
	}
	return &partialOutputError{err: err, output: output}
}

type partialOutputError struct {
	err    error
	output any
}

func (e *partialOutputError) Error() string { return e.err.Error() }
func (e *partialOutputError) Unwrap() error { return e.err }

// errorResponse classifies err as docs/reference/abi-v1.md's error response.
func errorResponse(err error) response {
	r := response{Type: "error", Kind: string(KindRetryable), Message: err.Error()}
	var e *Error
	var sandbox *SandboxError
	switch {
	case errors.As(err, &e):
		if e.Kind != "" {
			r.Kind = string(e.Kind)
		}
		r.BackoffHintMS = e.BackoffHint.Milliseconds()
	case errors.As(err, &sandbox):
		r.Kind = string(KindFatal)
	}
	if r.Message == "" {
		r.Message = "error without a message"
	}
	var p *partialOutputError
	if errors.As(err, &p) {
		out, merr := marshalOutput(p.output)
		if merr != nil {
			r.Message += " (and its partial output could not be encoded: " + merr.Error() + ")"
		} else {
			r.PartialOutput = out
		}
	}
	return r
}

// sprintf is fmt.Sprintf, except that a format without arguments is taken as is, so that a
// message with a literal % survives.
func sprintf(format string, args ...any) string {
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}
