// Package outcome is the result model every task shares: builtins now, Wasm components and plugins
// later. A task returns a Result; the engine alone decides what a Result means for the graph
// (Decide), so that the three kinds of tasks cannot disagree about retries or skips.
//
// The JSON form of Result is the wire form of docs/reference/abi-v1.md: `{"type": "success", "output": …}`,
// `{"type": "error", "kind": "retryable", "message": …, "backoff_hint_ms": …}` and so on.
package outcome

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"time"
)

// Type is what a task answered.
type Type string

// Result types of docs/reference/abi-v1.md.
const (
	Success  Type = "success"
	Skip     Type = "skip"
	Branch   Type = "branch"
	Continue Type = "continue"
	Failure  Type = "error"
)

// Kind classifies an error. Tasks produce Retryable, Fatal and Validation; the engine produces
// the others.
type Kind string

// Error kinds of docs/reference/language.md and docs/reference/cli.md.
const (
	Retryable         Kind = "retryable"
	Fatal             Kind = "fatal"
	Validation        Kind = "validation"
	Timeout           Kind = "timeout"
	Cancelled         Kind = "cancelled"
	SandboxViolation  Kind = "sandbox_violation"
	DataLimitExceeded Kind = "data_limit_exceeded"
	PluginCrashed     Kind = "plugin_crashed"
	// Rejected is a wait whose approval was rejected.
	Rejected Kind = "rejected"
	// AttemptInterrupted is an attempt cut short by something other than its task: a crash,
	// a shutdown, or (in a cluster) the death of the worker running it. It is not a failure of
	// the node: the next attempt runs and the interrupted one does not count against retries.
	AttemptInterrupted Kind = "attempt_interrupted"
	// WorkerLost is an attempt whose workers kept dying: it was delivered -max-deliver times.
	WorkerLost Kind = "worker_lost"
	// PluginMissing is an attempt whose worker does not have the plugin binary the plan
	// locked; another worker of the pool may have it, so it is retried.
	PluginMissing Kind = "plugin_missing"
)

// Retried reports whether an attempt that failed with k may be tried again: retryable and
// timeout (docs/reference/language.md), and plugin_crashed, which docs/reference/plugin-protocol.md calls retryable (the next attempt
// runs on a restarted plugin process), and plugin_missing (docs/cluster.md: another worker of
// the pool may have the plugin).
func (k Kind) Retried() bool {
	return k == Retryable || k == Timeout || k == PluginCrashed || k == PluginMissing
}

// Error is a failed attempt or node: docs/reference/cli.md's `"error": {"kind", "message"}`.
type Error struct {
	Kind    Kind   `json:"kind"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return string(e.Kind) + ": " + e.Message }

// Errorf makes an Error of kind k.
func Errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// Result is one attempt's answer.
type Result struct {
	Type Type `json:"type"`
	// Output is the task's output (success, branch, continue) or its partial output (error).
	Output json.RawMessage `json:"output,omitempty"`
	// Reason says why a task skipped itself.
	Reason string `json:"reason,omitempty"`
	// Selected is the branch key of a branch result.
	Selected string `json:"selected,omitempty"`
	// State, Progress and DelayMs belong to a continue result: the engine calls again with State
	// after DelayMs.
	State    json.RawMessage `json:"state,omitempty"`
	Progress float64         `json:"progress,omitempty"`
	DelayMs  int64           `json:"delay_ms,omitempty"`
	// Kind, Message and BackoffHintMs belong to an error result.
	Kind          Kind   `json:"kind,omitempty"`
	Message       string `json:"message,omitempty"`
	BackoffHintMs int64  `json:"backoff_hint_ms,omitempty"`
}

// OK is a success result with output.
func OK(output json.RawMessage) Result { return Result{Type: Success, Output: output} }

// Fail is an error result.
func Fail(k Kind, format string, args ...any) Result {
	return Result{Type: Failure, Kind: k, Message: fmt.Sprintf(format, args...)}
}

// FromError turns err into an error result: an *Error keeps its kind, anything else is fatal.
func FromError(err error) Result {
	var e *Error
	if errors.As(err, &e) {
		return Result{Type: Failure, Kind: e.Kind, Message: e.Message}
	}
	return Result{Type: Failure, Kind: Fatal, Message: err.Error()}
}

// Err returns the error of an error result, nil otherwise.
func (r Result) Err() *Error {
	if r.Type != Failure {
		return nil
	}
	return &Error{Kind: r.Kind, Message: r.Message}
}

// Parse decodes and checks a result in wire form, as a component or plugin returns it. A
// malformed result is an error that says what is wrong; the caller reports it as fatal.
func Parse(data []byte) (Result, error) {
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case !json.Valid(data):
			return Result{}, fmt.Errorf("the result is not valid JSON: %v", err)
		case errors.As(err, &te) && te.Field == "":
			return Result{}, fmt.Errorf("the result is a JSON %s, not an object with a \"type\"", te.Value)
		case errors.As(err, &te):
			return Result{}, fmt.Errorf("the result's %q is a JSON %s, not a %s", te.Field, te.Value, jsonKind(te.Type.Kind()))
		}
		return Result{}, fmt.Errorf("the result does not decode: %v", err)
	}
	return r, r.Check()
}

// jsonKind names the JSON type a Go kind decodes from.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8,
		reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "whole number"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	}
	return "object"
}

// Check reports what is wrong with a result a task produced.
func (r Result) Check() error {
	switch r.Type {
	case Success, Continue:
	case Skip:
	case Branch:
		if r.Selected == "" {
			return errors.New(`a "branch" result needs "selected"`)
		}
	case Failure:
		switch r.Kind {
		case Retryable, Fatal, Validation:
		case "":
			return errors.New(`an "error" result needs "kind" (retryable, fatal or validation)`)
		default:
			return fmt.Errorf(`error kind %q is not one a task may return (retryable, fatal or validation)`, r.Kind)
		}
	case "":
		return errors.New(`the result has no "type"`)
	default:
		return fmt.Errorf(`result type %q is not one of success, skip, branch, continue, error`, r.Type)
	}
	// NaN passes both compares, and then no journal entry could hold the result (JSON has no
	// NaN): the run stopped at every resume.
	if r.Progress < 0 || r.Progress > 1 || math.IsNaN(r.Progress) {
		return fmt.Errorf(`"progress" must be between 0 and 1; got %g`, r.Progress)
	}
	if r.DelayMs < 0 || r.BackoffHintMs < 0 {
		return errors.New(`"delay_ms" and "backoff_hint_ms" must not be negative`)
	}
	return nil
}

// Verdict is what the engine does after an attempt.
type Verdict int

// Verdicts of Decide.
const (
	// Done: the node finished successfully (success, branch) or skipped itself (skip).
	Done Verdict = iota
	// Again: call the task again with the continue state, after Delay; not a new attempt.
	Again
	// Retry: schedule the next attempt after Delay.
	Retry
	// Failed: the node failed; its error is final.
	Failed
)

// Decision is Decide's answer.
type Decision struct {
	Verdict Verdict
	Delay   time.Duration
	Err     *Error // for Retry and Failed
}

// Policy is what Decide needs to know of the node.
type Policy struct {
	Attempts      int // total attempts allowed, first included
	Backoff       string
	InitialDelay  time.Duration
	MaxDelay      time.Duration
	MaxIterations int // continue results allowed
	// Jitter returns a factor in [0.8, 1.2]; nil means none (for tests).
	Jitter func() float64
}

// Decide says what a result means for the graph. attempt is 1-based; iterations counts the
// continue results of this attempt so far, this one included.
func Decide(r Result, p Policy, attempt, iterations int) Decision {
	switch r.Type {
	case Success, Branch, Skip:
		return Decision{Verdict: Done}
	case Continue:
		if p.MaxIterations > 0 && iterations >= p.MaxIterations {
			return Decision{Verdict: Failed, Err: Errorf(DataLimitExceeded,
				"the task asked to continue more than %d times (max_iterations)", p.MaxIterations)}
		}
		return Decision{Verdict: Again, Delay: millis(r.DelayMs)}
	}
	e := r.Err()
	if e == nil {
		e = Errorf(Fatal, "malformed result: %v", r.Check())
	}
	if !e.Kind.Retried() || attempt >= p.Attempts {
		return Decision{Verdict: Failed, Err: e}
	}
	delay := p.Delay(attempt)
	if hint := millis(r.BackoffHintMs); hint > delay {
		delay = hint
	}
	return Decision{Verdict: Retry, Delay: delay, Err: e}
}

// millis is ms milliseconds, at most the longest Duration: a delay that overflowed would be
// negative, and the task would be called again at once.
func millis(ms int64) time.Duration {
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return math.MaxInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// Delay is the wait before attempt+1 (docs/engine.md): initial_delay * 2^(attempt-1) capped at
// max_delay for exponential backoff, initial_delay for fixed, with the jitter applied.
func (p Policy) Delay(attempt int) time.Duration {
	d := p.InitialDelay
	if p.Backoff != "fixed" {
		// MaxDelay 0 is no cap; the doubling still stops where a Duration would overflow.
		for i := 1; i < attempt && (p.MaxDelay <= 0 || d < p.MaxDelay) && d > 0 && d <= math.MaxInt64/2; i++ {
			d *= 2
		}
		if p.MaxDelay > 0 && d > p.MaxDelay {
			d = p.MaxDelay
		}
	}
	if p.Jitter != nil {
		d = time.Duration(float64(d) * p.Jitter())
	}
	return d
}
