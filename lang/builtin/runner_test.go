package builtin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/internal/outcome"
)

// run runs a builtin with input marshalled to JSON.
func run(t testing.TB, ctx context.Context, r *Runner, name string, input any) outcome.Result {
	t.Helper()
	b, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	return r.Run(ctx, Request{Name: name, Input: b, TaskID: "t1", Attempt: 1})
}

// wantFailure checks that res is an error of kind k whose message holds every part.
func wantFailure(t *testing.T, res outcome.Result, k outcome.Kind, parts ...string) {
	t.Helper()
	if res.Type != outcome.Failure || res.Kind != k {
		t.Fatalf("got %s %s %q; want an error of kind %s", res.Type, res.Kind, res.Message, k)
	}
	for _, p := range parts {
		if !strings.Contains(res.Message, p) {
			t.Errorf("message %q does not contain %q", res.Message, p)
		}
	}
}

func TestTransform(t *testing.T) {
	t.Parallel()
	r := New(Options{})
	defer r.Close()
	for _, in := range []string{`{}`, `{"a":[1,2,{"b":null}],"n":12345678901234567890}`} {
		for _, name := range []string{"transform", "builtin.transform"} {
			res := r.Run(context.Background(), Request{Name: name, Input: json.RawMessage(in)})
			if res.Type != outcome.Success || string(res.Output) != in {
				t.Errorf("%s(%s) = %+v; want success with the input", name, in, res)
			}
		}
	}
}

func TestSleep(t *testing.T) {
	t.Parallel()
	r := New(Options{})
	defer r.Close()
	tests := []struct {
		name     string
		duration string
		ctx      func() (context.Context, context.CancelFunc)
		wantType outcome.Type
		wantKind outcome.Kind
		want     string // output or message part
	}{
		{"normal", "15ms", noCtx, outcome.Success, "", `{"slept":"15ms"}`},
		{"zero", "0s", noCtx, outcome.Success, "", `{"slept":"0s"}`},
		{"cancelled", "10s", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(20*time.Millisecond, cancel)
			return ctx, cancel
		}, outcome.Failure, outcome.Cancelled, "builtin.sleep: cancelled after"},
		{"deadline", "10s", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 20*time.Millisecond)
		}, outcome.Failure, outcome.Timeout, "of the 10s sleep (timeout)"},
		{"invalid", "soon", noCtx, outcome.Failure, outcome.Validation, "invalid duration"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := tc.ctx()
			defer cancel()
			start := time.Now()
			res := run(t, ctx, r, "sleep", map[string]any{"duration": tc.duration})
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("took %s; cancellation must end the sleep at once", took)
			}
			if res.Type != tc.wantType || res.Kind != tc.wantKind {
				t.Fatalf("got %+v; want %s %s", res, tc.wantType, tc.wantKind)
			}
			if res.Type == outcome.Success {
				if string(res.Output) != tc.want {
					t.Errorf("output %s; want %s", res.Output, tc.want)
				}
			} else if !strings.Contains(res.Message, tc.want) {
				t.Errorf("message %q does not contain %q", res.Message, tc.want)
			}
		})
	}
}

func noCtx() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}

func TestFail(t *testing.T) {
	t.Parallel()
	r := New(Options{})
	defer r.Close()
	tests := []struct {
		input    map[string]any
		wantKind outcome.Kind
		wantMsg  string
	}{
		{map[string]any{"message": "boom"}, outcome.Fatal, "boom"},
		{map[string]any{"message": "boom", "kind": "fatal"}, outcome.Fatal, "boom"},
		{map[string]any{"message": "try again", "kind": "retryable"}, outcome.Retryable, "try again"},
		{map[string]any{"message": ""}, outcome.Fatal, "builtin.fail (no message given)"},
		{map[string]any{"message": "x", "kind": "timeout"}, outcome.Validation, `builtin.fail: kind must be fatal or retryable; got "timeout"`},
	}
	for _, tc := range tests {
		res := run(t, context.Background(), r, "fail", tc.input)
		if res.Type != outcome.Failure || res.Kind != tc.wantKind || res.Message != tc.wantMsg {
			t.Errorf("fail(%v) = %+v; want %s %q", tc.input, res, tc.wantKind, tc.wantMsg)
		}
		if err := res.Check(); err != nil && tc.wantKind != outcome.Validation {
			t.Errorf("fail(%v): result does not check: %v", tc.input, err)
		}
	}
}

func TestRunRefuses(t *testing.T) {
	t.Parallel()
	r := New(Options{})
	defer r.Close()
	res := run(t, context.Background(), r, "shell", map[string]any{})
	wantFailure(t, res, outcome.Fatal, `unknown builtin "shell"`)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res = run(t, ctx, r, "transform", map[string]any{})
	wantFailure(t, res, outcome.Cancelled, "not started")

	res = r.Run(context.Background(), Request{Name: "sleep", Input: json.RawMessage(`{"duration": 5}`)})
	wantFailure(t, res, outcome.Validation, "builtin.sleep: invalid input")
}

func BenchmarkTransform(b *testing.B) {
	r := New(Options{})
	defer r.Close()
	req := Request{Name: "transform", Input: json.RawMessage(`{"user":{"id":42,"name":"ada"},"tags":["a","b"]}`)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := r.Run(ctx, req); res.Type != outcome.Success {
			b.Fatal(res)
		}
	}
}
