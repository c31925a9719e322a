package sdk

import (
	"errors"
	"fmt"
	"time"
)

// ErrorKind classifies a failed handler, as the protocol's error response does.
type ErrorKind string

// Error kinds a handler may answer with.
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
	// BackoffHint asks the engine to wait at least this long before the next attempt; zero
	// leaves the workflow's backoff alone.
	BackoffHint time.Duration
}

func (e *Error) Error() string { return e.Message }

// Retryable returns a retryable error. backoff is a hint for the delay before the next
// attempt; zero for none.
func Retryable(msg string, backoff time.Duration) error {
	return &Error{Kind: KindRetryable, Message: msg, BackoffHint: max(backoff, 0)}
}

// Fatal returns a fatal error: the node fails without another attempt. The message is
// fmt.Sprintf(format, args...), or format as is when there are no args.
func Fatal(format string, args ...any) error {
	return &Error{Kind: KindFatal, Message: sprintf(format, args...)}
}

// Validation returns a validation error: the input is wrong.
func Validation(format string, args ...any) error {
	return &Error{Kind: KindValidation, Message: sprintf(format, args...)}
}

// WithPartialOutput attaches output to err as its partial output: what the handler produced
// before it failed. The kind and message stay those of err. It returns nil when err is nil.
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

// classified is an error as the protocol sends it.
type classified struct {
	kind          ErrorKind
	message       string
	backoffHint   time.Duration
	partialOutput []byte // nil when none
}

// classify reads err as the guest SDK does: the kind of the first *Error in the chain,
// retryable otherwise; the outermost message; the partial output of the first
// WithPartialOutput in the chain.
func classify(err error) classified {
	c := classified{kind: KindRetryable, message: err.Error()}
	var e *Error
	if errors.As(err, &e) {
		if e.Kind != "" {
			c.kind = e.Kind
		}
		c.backoffHint = max(e.BackoffHint, 0)
	}
	if c.message == "" {
		c.message = "error without a message"
	}
	var p *partialOutputError
	if errors.As(err, &p) {
		out, merr := marshalOutput(p.output)
		if merr != nil {
			c.message += " (and its partial output could not be encoded: " + merr.Error() + ")"
		} else {
			c.partialOutput = out
		}
	}
	return c
}

// sprintf is fmt.Sprintf, except that a format without arguments is taken as is, so that a
// message with a literal % survives.
func sprintf(format string, args ...any) string {
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}
