package outcome_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/internal/outcome"
)

// allKinds is every kind the package declares; a new kind must be added here and to retried.
var allKinds = []outcome.Kind{
	outcome.Retryable, outcome.Fatal, outcome.Validation, outcome.Timeout, outcome.Cancelled,
	outcome.SandboxViolation, outcome.DataLimitExceeded, outcome.PluginCrashed, outcome.Rejected,
}

// retried is the documented set of kinds that earn another attempt (docs/engine.md).
var retried = map[outcome.Kind]bool{outcome.Retryable: true, outcome.Timeout: true, outcome.PluginCrashed: true}

func TestKindRetried(t *testing.T) {
	for _, k := range allKinds {
		if got := k.Retried(); got != retried[k] {
			t.Errorf("%s.Retried() = %v, want %v", k, got, retried[k])
		}
	}
	for _, k := range []outcome.Kind{"", "RETRYABLE", "retry", "unknown"} {
		if k.Retried() {
			t.Errorf("%q.Retried() = true; an unknown kind must not be retried", k)
		}
	}
}

// retryPolicy is a retry block as the engine builds it, with the delay before each next attempt
// written out by hand: delays[i] is the wait after a failed attempt i+1.
type retryPolicy struct {
	name   string
	policy outcome.Policy
	delays []time.Duration
}

var retryPolicies = []retryPolicy{
	{
		name:   "default, one attempt",
		policy: outcome.Policy{Attempts: 1, Backoff: "exponential", InitialDelay: time.Second, MaxDelay: time.Minute},
	},
	{
		name:   "exponential, no cap reached",
		policy: outcome.Policy{Attempts: 4, Backoff: "exponential", InitialDelay: time.Second, MaxDelay: time.Minute},
		delays: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
	},
	{
		name:   "exponential, capped by max_delay",
		policy: outcome.Policy{Attempts: 6, Backoff: "exponential", InitialDelay: 500 * time.Millisecond, MaxDelay: 3 * time.Second},
		delays: []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second},
	},
	{
		name:   "exponential, max_delay equal to initial_delay",
		policy: outcome.Policy{Attempts: 3, Backoff: "exponential", InitialDelay: 2 * time.Second, MaxDelay: 2 * time.Second},
		delays: []time.Duration{2 * time.Second, 2 * time.Second},
	},
	{
		name:   "exponential without max_delay doubles without a cap",
		policy: outcome.Policy{Attempts: 5, Backoff: "exponential", InitialDelay: time.Second},
		delays: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second},
	},
	{
		name:   "backoff left empty is exponential",
		policy: outcome.Policy{Attempts: 3, InitialDelay: 100 * time.Millisecond, MaxDelay: time.Minute},
		delays: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond},
	},
	{
		name:   "fixed ignores max_delay",
		policy: outcome.Policy{Attempts: 3, Backoff: "fixed", InitialDelay: 5 * time.Second, MaxDelay: time.Second},
		delays: []time.Duration{5 * time.Second, 5 * time.Second},
	},
	{
		name:   "zero initial_delay retries at once",
		policy: outcome.Policy{Attempts: 3, Backoff: "exponential", InitialDelay: 0, MaxDelay: time.Minute},
		delays: []time.Duration{0, 0},
	},
}

// TestDecideKindPolicyAttempt walks every error kind × retry policy × attempt number (1, 2, the
// last and beyond the last) and checks whether the attempt is retried and after how long.
func TestDecideKindPolicyAttempt(t *testing.T) {
	for _, rp := range retryPolicies {
		last := rp.policy.Attempts
		attempts := []int{1, 2, last, last + 1}
		for _, k := range allKinds {
			for _, attempt := range attempts {
				t.Run(fmt.Sprintf("%s/%s/attempt %d", rp.name, k, attempt), func(t *testing.T) {
					res := outcome.Fail(k, "attempt %d failed", attempt)
					d := outcome.Decide(res, rp.policy, attempt, 0)
					if d.Err == nil || d.Err.Kind != k || d.Err.Message != fmt.Sprintf("attempt %d failed", attempt) {
						t.Fatalf("Decide().Err = %+v; want kind %s and the task's message", d.Err, k)
					}
					wantRetry := retried[k] && attempt < last
					if !wantRetry {
						if d.Verdict != outcome.Failed {
							t.Fatalf("verdict = %v, want Failed", d.Verdict)
						}
						if d.Delay != 0 {
							t.Errorf("a failed node has delay %s, want 0", d.Delay)
						}
						return
					}
					if d.Verdict != outcome.Retry {
						t.Fatalf("verdict = %v, want Retry", d.Verdict)
					}
					if want := rp.delays[attempt-1]; d.Delay != want {
						t.Errorf("delay = %s, want %s", d.Delay, want)
					}
				})
			}
		}
	}
}

// TestPolicyDelay checks the delay schedule on its own, further than attempts reach in Decide.
func TestPolicyDelay(t *testing.T) {
	for _, rp := range retryPolicies {
		for i, want := range rp.delays {
			if got := rp.policy.Delay(i + 1); got != want {
				t.Errorf("%s: Delay(%d) = %s, want %s", rp.name, i+1, got, want)
			}
		}
	}
	// Far beyond any cap, exponential backoff stays at max_delay (no overflow to a negative
	// or tiny duration).
	p := outcome.Policy{Attempts: 1000, Backoff: "exponential", InitialDelay: time.Second, MaxDelay: time.Hour}
	if got, want := p.Delay(12), 2048*time.Second; got != want {
		t.Errorf("Delay(12) = %s, want %s (2^11 s, still under the cap)", got, want)
	}
	for _, attempt := range []int{13, 14, 64, 100, 999} {
		if got := p.Delay(attempt); got != time.Hour {
			t.Errorf("Delay(%d) = %s, want the cap %s", attempt, got, time.Hour)
		}
	}
	// Attempt 0 (never passed by the engine) is the initial delay, not less.
	if got := p.Delay(0); got != time.Second {
		t.Errorf("Delay(0) = %s, want %s", got, time.Second)
	}
}

// TestDecideJitter checks that the jitter factor scales the delay, and that a delay drawn with the
// engine's jitter (a factor in [0.8, 1.2]) stays within ±20% of the schedule.
func TestDecideJitter(t *testing.T) {
	base := outcome.Policy{Attempts: 5, Backoff: "exponential", InitialDelay: time.Second, MaxDelay: 3 * time.Second}
	schedule := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second}
	for _, factor := range []float64{0.8, 1, 1.2} {
		p := base
		p.Jitter = func() float64 { return factor }
		for i, want := range schedule {
			d := outcome.Decide(outcome.Fail(outcome.Retryable, "x"), p, i+1, 0)
			if d.Verdict != outcome.Retry {
				t.Fatalf("factor %g attempt %d: verdict %v, want Retry", factor, i+1, d.Verdict)
			}
			if exact := time.Duration(float64(want) * factor); d.Delay != exact {
				t.Errorf("factor %g attempt %d: delay %s, want %s", factor, i+1, d.Delay, exact)
			}
		}
	}

	calls := 0
	p := base
	p.Jitter = func() float64 {
		calls++
		// A deterministic walk over the whole range, ends included.
		return 0.8 + 0.4*float64(calls%11)/10
	}
	for n := 0; n < 50; n++ {
		for i, want := range schedule {
			d := outcome.Decide(outcome.Fail(outcome.Timeout, "x"), p, i+1, 0)
			lo, hi := want*8/10, want*12/10
			if d.Delay < lo || d.Delay > hi {
				t.Fatalf("attempt %d: jittered delay %s outside [%s, %s]", i+1, d.Delay, lo, hi)
			}
		}
	}
	if calls != 50*len(schedule) {
		t.Errorf("jitter drawn %d times, want once per retry (%d)", calls, 50*len(schedule))
	}

	// A failure that is not retried draws no jitter.
	calls = 0
	outcome.Decide(outcome.Fail(outcome.Fatal, "x"), p, 1, 0)
	outcome.Decide(outcome.Fail(outcome.Retryable, "x"), p, 5, 0)
	if calls != 0 {
		t.Errorf("jitter drawn %d times for failures that are not retried", calls)
	}
}

// TestDecideBackoffHint: a task's backoff_hint_ms replaces the computed delay only when longer.
func TestDecideBackoffHint(t *testing.T) {
	p := outcome.Policy{Attempts: 3, Backoff: "exponential", InitialDelay: time.Second, MaxDelay: time.Minute}
	for _, c := range []struct {
		hintMs  int64
		attempt int
		want    time.Duration
	}{
		{0, 1, time.Second},
		{500, 1, time.Second},
		{1000, 1, time.Second},
		{1500, 1, 1500 * time.Millisecond},
		{1500, 2, 2 * time.Second},
		{90_000, 2, 90 * time.Second}, // a hint may exceed max_delay
	} {
		res := outcome.Fail(outcome.Retryable, "busy")
		res.BackoffHintMs = c.hintMs
		d := outcome.Decide(res, p, c.attempt, 0)
		if d.Verdict != outcome.Retry || d.Delay != c.want {
			t.Errorf("hint %dms attempt %d: %v after %s, want Retry after %s", c.hintMs, c.attempt, d.Verdict, d.Delay, c.want)
		}
	}
	// A hint does not turn the last attempt, or a fatal error, into a retry.
	res := outcome.Fail(outcome.Retryable, "busy")
	res.BackoffHintMs = 10
	if d := outcome.Decide(res, p, 3, 0); d.Verdict != outcome.Failed {
		t.Errorf("last attempt with a hint: verdict %v, want Failed", d.Verdict)
	}
	res.Kind = outcome.Fatal
	if d := outcome.Decide(res, p, 1, 0); d.Verdict != outcome.Failed {
		t.Errorf("fatal with a hint: verdict %v, want Failed", d.Verdict)
	}
}

func TestDecideDoneAndContinue(t *testing.T) {
	p := outcome.Policy{Attempts: 3, InitialDelay: time.Second, MaxDelay: time.Minute, MaxIterations: 3}
	for _, r := range []outcome.Result{
		outcome.OK(json.RawMessage(`{"a":1}`)),
		{Type: outcome.Branch, Selected: "left"},
		{Type: outcome.Skip, Reason: "nothing to do"},
	} {
		for _, attempt := range []int{1, 3, 4} {
			d := outcome.Decide(r, p, attempt, 0)
			if d.Verdict != outcome.Done || d.Err != nil || d.Delay != 0 {
				t.Errorf("%s at attempt %d: %+v, want Done", r.Type, attempt, d)
			}
		}
	}

	cont := outcome.Result{Type: outcome.Continue, State: json.RawMessage(`{"page":2}`), Progress: 0.5, DelayMs: 250}
	for iterations := 1; iterations < 3; iterations++ {
		d := outcome.Decide(cont, p, 1, iterations)
		if d.Verdict != outcome.Again || d.Delay != 250*time.Millisecond || d.Err != nil {
			t.Errorf("continue %d of 3: %+v, want Again after 250ms", iterations, d)
		}
	}
	d := outcome.Decide(cont, p, 1, 3)
	if d.Verdict != outcome.Failed || d.Err == nil || d.Err.Kind != outcome.DataLimitExceeded ||
		!strings.Contains(d.Err.Message, "max_iterations") || !strings.Contains(d.Err.Message, "3") {
		t.Errorf("continue beyond max_iterations: %+v, want Failed data_limit_exceeded naming max_iterations", d)
	}
	// max_iterations 0 is no limit.
	p.MaxIterations = 0
	if d := outcome.Decide(cont, p, 1, 1_000_000); d.Verdict != outcome.Again {
		t.Errorf("continue without max_iterations: %v, want Again", d.Verdict)
	}
	// A delay past what a Duration holds waits the longest Duration: overflowing, it was
	// negative, and the task was called again at once (1,000 times in 5 s).
	huge := cont
	huge.DelayMs = math.MaxInt64 / 1000
	if d := outcome.Decide(huge, p, 1, 1); d.Verdict != outcome.Again || d.Delay != math.MaxInt64 {
		t.Errorf("continue after %d ms: %+v, want Again after the longest Duration", huge.DelayMs, d)
	}
	hinted := outcome.Result{Type: outcome.Failure, Kind: outcome.Retryable, Message: "later", BackoffHintMs: math.MaxInt64}
	if d := outcome.Decide(hinted, outcome.Policy{Attempts: 3, InitialDelay: time.Second}, 1, 0); d.Verdict != outcome.Retry || d.Delay != math.MaxInt64 {
		t.Errorf("a retry hinted %d ms: %+v, want Retry after the longest Duration", hinted.BackoffHintMs, d)
	}
	// A continue is not an attempt: it goes on even past the last attempt number.
	if d := outcome.Decide(cont, p, 99, 1); d.Verdict != outcome.Again {
		t.Errorf("continue at attempt 99 of 3: %v, want Again", d.Verdict)
	}
}

// TestDecideMalformed: a result of no known type fails the node as fatal, never retried.
func TestDecideMalformed(t *testing.T) {
	p := outcome.Policy{Attempts: 5, InitialDelay: time.Second, MaxDelay: time.Minute}
	for _, r := range []outcome.Result{{}, {Type: "maybe"}} {
		d := outcome.Decide(r, p, 1, 0)
		if d.Verdict != outcome.Failed || d.Err == nil || d.Err.Kind != outcome.Fatal ||
			!strings.HasPrefix(d.Err.Message, "malformed result: ") {
			t.Errorf("Decide(%+v) = %+v, want Failed fatal malformed result", r, d)
		}
	}
	// An error result with no kind is not retried either.
	d := outcome.Decide(outcome.Result{Type: outcome.Failure, Message: "?"}, p, 1, 0)
	if d.Verdict != outcome.Failed {
		t.Errorf("error without kind: %v, want Failed", d.Verdict)
	}
}

func TestErrorfAndError(t *testing.T) {
	e := outcome.Errorf(outcome.Validation, "field %q must be %d or more", "n", 3)
	if e.Kind != outcome.Validation || e.Message != `field "n" must be 3 or more` {
		t.Fatalf("Errorf = %+v", e)
	}
	if got, want := e.Error(), `validation: field "n" must be 3 or more`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	// No arguments: the format is the message, with no %!(EXTRA…) noise.
	if e := outcome.Errorf(outcome.Fatal, "plain"); e.Message != "plain" {
		t.Errorf("Errorf without args: %q", e.Message)
	}
	var err error = e
	var target *outcome.Error
	if !errors.As(fmt.Errorf("wrapped: %w", err), &target) || target != e {
		t.Errorf("errors.As does not find the *Error through a wrap")
	}
}

func TestFailOKAndErr(t *testing.T) {
	r := outcome.Fail(outcome.Retryable, "%d of %d", 1, 2)
	if r.Type != outcome.Failure || r.Kind != outcome.Retryable || r.Message != "1 of 2" {
		t.Fatalf("Fail = %+v", r)
	}
	if e := r.Err(); e == nil || *e != (outcome.Error{Kind: outcome.Retryable, Message: "1 of 2"}) {
		t.Errorf("Fail(...).Err() = %+v", e)
	}
	if err := r.Check(); err != nil {
		t.Errorf("Fail(retryable) does not pass Check: %v", err)
	}

	ok := outcome.OK(json.RawMessage(`[1,2]`))
	if ok.Type != outcome.Success || string(ok.Output) != `[1,2]` {
		t.Fatalf("OK = %+v", ok)
	}
	for _, r := range []outcome.Result{ok, {Type: outcome.Skip}, {Type: outcome.Branch, Selected: "a"}, {Type: outcome.Continue}, {}} {
		if e := r.Err(); e != nil {
			t.Errorf("%q result has Err() = %+v, want nil", r.Type, e)
		}
	}
}

func TestFromError(t *testing.T) {
	for _, c := range []struct {
		err  error
		kind outcome.Kind
		msg  string
	}{
		{outcome.Errorf(outcome.Timeout, "too slow"), outcome.Timeout, "too slow"},
		{fmt.Errorf("call: %w", outcome.Errorf(outcome.SandboxViolation, "no")), outcome.SandboxViolation, "no"},
		{errors.New("disk full"), outcome.Fatal, "disk full"},
		{fmt.Errorf("open: %w", errors.New("denied")), outcome.Fatal, "open: denied"},
	} {
		r := outcome.FromError(c.err)
		if r.Type != outcome.Failure || r.Kind != c.kind || r.Message != c.msg {
			t.Errorf("FromError(%v) = %+v, want %s %q", c.err, r, c.kind, c.msg)
		}
	}
}

// TestResultWireForm: the JSON of each result type is the ABI's wire form, and Parse reads it back
// to the same Result.
func TestResultWireForm(t *testing.T) {
	for _, c := range []struct {
		r    outcome.Result
		wire string
	}{
		{outcome.OK(json.RawMessage(`{"n":1}`)), `{"type":"success","output":{"n":1}}`},
		{outcome.Result{Type: outcome.Success}, `{"type":"success"}`},
		{outcome.Result{Type: outcome.Skip, Reason: "empty"}, `{"type":"skip","reason":"empty"}`},
		{outcome.Result{Type: outcome.Branch, Selected: "b", Output: json.RawMessage(`true`)}, `{"type":"branch","output":true,"selected":"b"}`},
		{
			outcome.Result{Type: outcome.Continue, State: json.RawMessage(`{"cursor":"x"}`), Progress: 0.25, DelayMs: 1000},
			`{"type":"continue","state":{"cursor":"x"},"progress":0.25,"delay_ms":1000}`,
		},
		{
			outcome.Result{Type: outcome.Failure, Kind: outcome.Retryable, Message: "503", BackoffHintMs: 2000, Output: json.RawMessage(`{"partial":1}`)},
			`{"type":"error","output":{"partial":1},"kind":"retryable","message":"503","backoff_hint_ms":2000}`,
		},
		{outcome.Fail(outcome.Validation, "bad"), `{"type":"error","kind":"validation","message":"bad"}`},
		{outcome.Fail(outcome.Fatal, "x"), `{"type":"error","kind":"fatal","message":"x"}`},
	} {
		b, err := json.Marshal(c.r)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.wire {
			t.Errorf("Marshal(%+v) = %s, want %s", c.r, b, c.wire)
		}
		back, err := outcome.Parse(b)
		if err != nil {
			t.Errorf("Parse(%s): %v", b, err)
			continue
		}
		if !reflect.DeepEqual(back, c.r) {
			t.Errorf("round trip of %s = %+v, want %+v", b, back, c.r)
		}
	}
}

func TestErrorWireForm(t *testing.T) {
	for _, k := range allKinds {
		e := outcome.Errorf(k, "message of %s", k)
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`{"kind":%q,"message":"message of %s"}`, k, k)
		if string(b) != want {
			t.Errorf("Marshal(%s) = %s, want %s", k, b, want)
		}
		var back outcome.Error
		if err := json.Unmarshal(b, &back); err != nil || back != *e {
			t.Errorf("round trip of %s = %+v (%v), want %+v", b, back, err, *e)
		}
	}
}

// TestParseRejects: every malformed result is an error that says what is wrong.
func TestParseRejects(t *testing.T) {
	for _, c := range []struct {
		wire, want string
	}{
		{`{"type":`, "not valid JSON"},
		// Valid JSON of another shape is said so, without Go's type names.
		{`[]`, `the result is a JSON array, not an object with a "type"`},
		{`"done"`, `the result is a JSON string, not an object`},
		{`{"type": 1}`, `the result's "type" is a JSON number, not a string`},
		{`{"type": "continue", "delay_ms": 1.5}`, `the result's "delay_ms" is a JSON number 1.5, not a whole number`},
		{`{}`, `no "type"`},
		{`{"type":"done"}`, `result type "done" is not one of`},
		{`{"type":"branch"}`, `needs "selected"`},
		{`{"type":"error","message":"x"}`, `needs "kind"`},
		{`{"type":"error","kind":"timeout","message":"x"}`, `error kind "timeout" is not one a task may return`},
		{`{"type":"error","kind":"plugin_crashed"}`, `error kind "plugin_crashed"`},
		{`{"type":"error","kind":"nonsense"}`, `error kind "nonsense"`},
		{`{"type":"continue","progress":1.5}`, `"progress" must be between 0 and 1; got 1.5`},
		{`{"type":"continue","progress":-0.1}`, `"progress" must be between 0 and 1`},
		{`{"type":"continue","delay_ms":-1}`, `must not be negative`},
		{`{"type":"error","kind":"retryable","backoff_hint_ms":-5}`, `must not be negative`},
	} {
		_, err := outcome.Parse([]byte(c.wire))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%s) = %v, want an error containing %q", c.wire, err, c.want)
		}
	}
	// NaN, which no JSON holds, can come from a plugin's protobuf answer: refused, or no journal
	// entry could record the result and the run stopped at every resume.
	if err := (outcome.Result{Type: outcome.Continue, Progress: math.NaN()}).Check(); err == nil || !strings.Contains(err.Error(), `"progress" must be between 0 and 1; got NaN`) {
		t.Errorf("Check of a NaN progress = %v", err)
	}
	// The kinds a task may return all pass.
	for _, k := range []outcome.Kind{outcome.Retryable, outcome.Fatal, outcome.Validation} {
		if _, err := outcome.Parse([]byte(fmt.Sprintf(`{"type":"error","kind":%q,"message":"m"}`, k))); err != nil {
			t.Errorf("Parse of an error of kind %s: %v", k, err)
		}
	}
	// Unknown fields are ignored (a newer guest may send more).
	if r, err := outcome.Parse([]byte(`{"type":"success","output":1,"extra":true}`)); err != nil || r.Type != outcome.Success {
		t.Errorf("Parse with an unknown field = %+v, %v", r, err)
	}
}

// TestPolicyDelayNoOverflow: without a cap, doubling stops before a Duration overflows.
func TestPolicyDelayNoOverflow(t *testing.T) {
	p := outcome.Policy{Attempts: 200, Backoff: "exponential", InitialDelay: time.Second}
	prev := time.Duration(0)
	for attempt := 1; attempt <= 200; attempt++ {
		d := p.Delay(attempt)
		if d <= 0 || d < prev {
			t.Fatalf("Delay(%d) = %s after %s; want a positive, non-decreasing delay", attempt, d, prev)
		}
		prev = d
	}
}
