package taskresult

import (
	"fmt"
	"time"
)

// ErrorKind classifies a failed handler, as both wires' error responses do.
type ErrorKind string

// Error kinds a handler may answer with. The engine has more (timeout, cancelled, …), which a
// handler cannot produce.
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
	// (backoff_hint_ms on the wire); zero, or a negative hint, leaves the workflow's backoff
	// alone.
	BackoffHint time.Duration
}

func (e *Error) Error() string { return e.Message }

// Retryable returns a retryable error. backoff is a hint for the delay before the next
// attempt; zero for none.
func Retryable(msg string, backoff time.Duration) error {
	return &Error{Kind: KindRetryable, Message: msg, BackoffHint: max(backoff, 0)}
}

// Fatal returns a fatal error: the node fails without another attempt. The message is
// Format(format, args...).
func Fatal(format string, args ...any) error {
	return &Error{Kind: KindFatal, Message: Format(format, args...)}
}

// Validation returns a validation error: the input is wrong. The message is
// Format(format, args...).
func Validation(format string, args ...any) error {
	return &Error{Kind: KindValidation, Message: Format(format, args...)}
}

// WithPartialOutput attaches output to err as its partial output: what the handler produced
// before it failed. The kind and message stay those of err. It returns nil when err is nil.
func WithPartialOutput(err error, output any) error {
	if err == nil {
		return nil
	}
	return &partialOutputError{err: err, output: output}
}

// partialOutputError is what WithPartialOutput returns; Classify finds it in the chain.
type partialOutputError struct {
	err    error
	output any
}

func (e *partialOutputError) Error() string { return e.err.Error() }
func (e *partialOutputError) Unwrap() error { return e.err }

// Format is fmt.Sprintf, except that a format without arguments is taken as is, so that a
// message with a literal % survives.
func Format(format string, args ...any) string {
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}
