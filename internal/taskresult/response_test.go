package taskresult

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"
)

// unencodable cannot be written as JSON.
var unencodable = map[string]any{"c": make(chan int)}

func TestEncode(t *testing.T) {
	tests := []struct {
		name string
		r    Result
		want Response
	}{
		{"zero result is success", Result{}, Response{Type: TypeSuccess, Output: raw(`{}`)}},
		{"success", Success(map[string]int{"n": 1}), Response{Type: TypeSuccess, Output: raw(`{"n":1}`)}},
		{"nil output", Success(nil), Response{Type: TypeSuccess, Output: raw(`{}`)}},
		{"nil map output", Success(map[string]any(nil)), Response{Type: TypeSuccess, Output: raw(`{}`)}},
		{"nil pointer output", Success((*struct{ A int })(nil)), Response{Type: TypeSuccess, Output: raw(`{}`)}},
		{"array output", Success([]int{1}), Response{Type: TypeSuccess, Output: raw(`[1]`)}},
		{"skip", Skip("nothing"), Response{Type: TypeSkip, Reason: "nothing"}},
		{"branch", Branch("high", nil), Response{Type: TypeBranch, Selected: "high", Output: raw(`{}`)}},
		{"continue", Continue(2, []int{1}, 0.5, 1500*time.Millisecond),
			Response{Type: TypeContinue, Output: raw(`[1]`), State: raw(`2`), Progress: 0.5, DelayMs: 1500}},
		{"continue clamps above", Continue(nil, nil, 1.5, -time.Second),
			Response{Type: TypeContinue, Output: raw(`{}`), State: raw(`null`), Progress: 1}},
		{"continue clamps below", Continue(nil, nil, -0.5, 0),
			Response{Type: TypeContinue, Output: raw(`{}`), State: raw(`null`), Progress: 0}},
		{"continue NaN progress", Continue(nil, nil, math.NaN(), 0),
			Response{Type: TypeContinue, Output: raw(`{}`), State: raw(`null`), Progress: 0}},
		{"unencodable output", Success(unencodable),
			Response{Type: TypeError, Kind: KindFatal, Message: "encode output: unsupported type: chan int"}},
		{"unencodable branch output", Branch("x", unencodable),
			Response{Type: TypeError, Kind: KindFatal, Message: "encode output: unsupported type: chan int"}},
		{"unencodable continue output", Continue(nil, unencodable, 0, 0),
			Response{Type: TypeError, Kind: KindFatal, Message: "encode output: unsupported type: chan int"}},
		{"unencodable continue state", Continue(unencodable, nil, 0, 0),
			Response{Type: TypeError, Kind: KindFatal, Message: "encode continue state: unsupported type: chan int"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Encode(tt.r); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Encode = %+v\nwant     %+v", got, tt.want)
			}
		})
	}
}

func TestEncodeTrigger(t *testing.T) {
	tests := []struct {
		name string
		r    TriggerResult
		want Response
	}{
		{"zero result is pending", TriggerResult{}, Response{Type: TypePending}},
		{"pending", Pending(), Response{Type: TypePending}},
		{"completed", Completed(map[string]string{"a": "b"}), Response{Type: TypeCompleted, Payload: raw(`{"a":"b"}`)}},
		{"nil payload", Completed(nil), Response{Type: TypeCompleted, Payload: raw(`{}`)}},
		{"unencodable payload", Completed(unencodable),
			Response{Type: TypeError, Kind: KindFatal, Message: "encode payload: unsupported type: chan int"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EncodeTrigger(tt.r); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("EncodeTrigger = %+v\nwant            %+v", got, tt.want)
			}
		})
	}
}

// sandboxError stands for an SDK's own error type, which Classify does not know.
type sandboxError struct{}

func (sandboxError) Error() string { return "refused" }

func TestClassify(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		otherwise ErrorKind
		want      Response
	}{
		{"plain error takes otherwise", errors.New("flaky"), KindRetryable,
			Response{Type: TypeError, Kind: KindRetryable, Message: "flaky"}},
		{"plain error takes otherwise, fatal", sandboxError{}, KindFatal,
			Response{Type: TypeError, Kind: KindFatal, Message: "refused"}},
		{"retryable with backoff", Retryable("busy", 2*time.Second), KindFatal,
			Response{Type: TypeError, Kind: KindRetryable, Message: "busy", BackoffHintMs: 2000}},
		{"negative backoff is none", Retryable("busy", -time.Second), KindRetryable,
			Response{Type: TypeError, Kind: KindRetryable, Message: "busy"}},
		{"hand-made negative backoff is none", &Error{Kind: KindRetryable, Message: "busy", BackoffHint: -time.Second}, KindRetryable,
			Response{Type: TypeError, Kind: KindRetryable, Message: "busy"}},
		{"fatal", Fatal("bad %s", "thing"), KindRetryable,
			Response{Type: TypeError, Kind: KindFatal, Message: "bad thing"}},
		{"validation", Validation("%q is not a colour", "blu"), KindRetryable,
			Response{Type: TypeError, Kind: KindValidation, Message: `"blu" is not a colour`}},
		{"an Error without a kind is retryable, whatever otherwise says", &Error{Message: "x"}, KindFatal,
			Response{Type: TypeError, Kind: KindRetryable, Message: "x"}},
		{"wrapped: the first Error's kind, the outer message", fmt.Errorf("load: %w", fmt.Errorf("%w: %w", Validation("inner"), Fatal("other"))), KindRetryable,
			Response{Type: TypeError, Kind: KindValidation, Message: "load: inner: other"}},
		{"empty message", errors.New(""), KindRetryable,
			Response{Type: TypeError, Kind: KindRetryable, Message: "error without a message"}},
		{"partial output", WithPartialOutput(Fatal("half"), map[string]int{"done": 2}), KindRetryable,
			Response{Type: TypeError, Kind: KindFatal, Message: "half", PartialOutput: raw(`{"done":2}`)}},
		{"nil partial output", fmt.Errorf("outer: %w", WithPartialOutput(errors.New("x"), nil)), KindRetryable,
			Response{Type: TypeError, Kind: KindRetryable, Message: "outer: x", PartialOutput: raw(`{}`)}},
		{"unencodable partial output", WithPartialOutput(errors.New("x"), unencodable), KindRetryable,
			Response{Type: TypeError, Kind: KindRetryable,
				Message: "x (and its partial output could not be encoded: unsupported type: chan int)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(tt.err, tt.otherwise); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Classify = %+v\nwant       %+v", got, tt.want)
			}
		})
	}
}

func TestFailure(t *testing.T) {
	want := Response{Type: TypeError, Kind: KindValidation, Message: "no task \"x\""}
	if got := Failure(KindValidation, `no task "x"`); !reflect.DeepEqual(got, want) {
		t.Errorf("Failure = %+v, want %+v", got, want)
	}
}

func TestConstructors(t *testing.T) {
	if WithPartialOutput(nil, 1) != nil {
		t.Error("WithPartialOutput(nil, …) is not nil")
	}
	err := WithPartialOutput(Fatal("x"), 1)
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindFatal || err.Error() != "x" {
		t.Errorf("WithPartialOutput(Fatal(x)) = %v (%#v), want the fatal error x", err, e)
	}
	f := Format // through a variable, so that vet does not flag the literal %
	if got := f("100%"); got != "100%" {
		t.Errorf(`Format("100%%") = %q`, got)
	}
	if got := f("%d%%", 5); got != "5%" {
		t.Errorf(`Format("%%d%%%%", 5) = %q`, got)
	}
	if e, ok := Retryable("m", -time.Second).(*Error); !ok || e.BackoffHint != 0 {
		t.Errorf("Retryable with a negative backoff = %#v, want a hint of 0", e)
	}
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }
