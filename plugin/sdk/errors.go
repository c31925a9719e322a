package sdk

import (
	"time"

	"github.com/fuscia/fuscia/internal/taskresult"
)

// The error model is the one the Wasm guest SDK (hostabi/guest) shares: both re-export
// internal/taskresult, so that a kind means the same in a plugin and in a component.

// ErrorKind classifies a failed handler, as the protocol's error response does.
type ErrorKind = taskresult.ErrorKind

// Error kinds a handler may answer with.
const (
	// KindRetryable: the attempt failed but another one may succeed; the workflow's retry
	// block decides.
	KindRetryable = taskresult.KindRetryable
	// KindFatal: trying again will not help; the node fails.
	KindFatal = taskresult.KindFatal
	// KindValidation: the input (or a webhook's request) is wrong; the node fails, a webhook
	// answers 4xx.
	KindValidation = taskresult.KindValidation
)

// Error is an error with a kind: Kind, Message and BackoffHint (which asks the engine to wait
// at least this long before the next attempt; zero leaves the workflow's backoff alone).
// Retryable, Fatal and Validation return one; a handler may also return an *Error it built
// itself, or wrap one: the outermost message is sent, with the kind of the first *Error in the
// chain.
type Error = taskresult.Error

// Retryable returns a retryable error. backoff is a hint for the delay before the next
// attempt; zero for none.
func Retryable(msg string, backoff time.Duration) error { return taskresult.Retryable(msg, backoff) }

// Fatal returns a fatal error: the node fails without another attempt. The message is
// fmt.Sprintf(format, args...), or format as is when there are no args.
func Fatal(format string, args ...any) error { return taskresult.Fatal(format, args...) }

// Validation returns a validation error: the input is wrong.
func Validation(format string, args ...any) error { return taskresult.Validation(format, args...) }

// WithPartialOutput attaches output to err as its partial output: what the handler produced
// before it failed. The kind and message stay those of err. It returns nil when err is nil.
func WithPartialOutput(err error, output any) error {
	return taskresult.WithPartialOutput(err, output)
}

// sprintf is fmt.Sprintf, except that a format without arguments is taken as is, so that a
// message with a literal % survives.
func sprintf(format string, args ...any) string { return taskresult.Format(format, args...) }
