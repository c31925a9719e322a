package execcore

import (
	"errors"
	"fmt"
)

// Kind classifies an error from an exec task's core, so that main.go can map it onto the
// SDK's error kinds without the core importing the SDK.
type Kind int

const (
	// Retryable is the kind of every error that is not an *Error: a transient failure (fork
	// failed, connection refused, connection lost) or the attempt's own context ending. The
	// workflow's retry block decides.
	Retryable Kind = iota
	// Fatal: trying again will not help (non-zero exit, the task's own timeout, a missing
	// program, a refused host key).
	Fatal
	// Invalid: the input is wrong.
	Invalid
)

// Error is an error with a Kind. Path is a JSON Pointer into the input for Invalid errors.
type Error struct {
	Kind Kind
	Path string
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Fatalf returns a Fatal error.
func Fatalf(format string, args ...any) error {
	return &Error{Kind: Fatal, Err: fmt.Errorf(format, args...)}
}

// AsFatal marks err as Fatal, keeping its message and chain.
func AsFatal(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: Fatal, Err: err}
}

// Invalidf returns an Invalid error about the input at path.
func Invalidf(path, format string, args ...any) error {
	return &Error{Kind: Invalid, Path: path, Err: fmt.Errorf(format, args...)}
}

// KindOf returns the kind of the first *Error in err's chain, or Retryable.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Retryable
}
