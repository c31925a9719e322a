package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schema"
)

// remote stands in for a dispatcher whose attempts run on other machines (the cluster's
// coordinator, which the engine's tests cannot import). Registered in task.ByKind for builtin
// tasks, it answers the calls of builtin.http with answer and hands every other builtin to the
// real builtins runtime. It records the http calls it gets.
type remote struct {
	inner task.Dispatcher
	// answer is the result of the nth (1-based) http call of the remote.
	answer func(ctx context.Context, n int, call task.Call) outcome.Result

	mu    sync.Mutex
	n     int         // http calls so far
	calls []task.Call // since the last taken
}

// reattaching is remote as a task.Reattacher: the attempts of builtin.http outlive the process.
type reattaching struct{ *remote }

func (d reattaching) Reattaches(b task.Binding) bool {
	rb, ok := b.(remoteBinding)
	return ok && rb.http
}

type remoteBinding struct {
	inner task.Binding
	http  bool
}

func (d *remote) Bind(ctx context.Context, block task.Block) (task.Binding, *outcome.Error) {
	b, err := d.inner.Bind(ctx, block)
	if err != nil {
		return nil, err
	}
	return remoteBinding{inner: b, http: block.Uses.Name == "http"}, nil
}

func (d *remote) InputSchema(b task.Binding, name string) *schema.Schema {
	return d.inner.InputSchema(b.(remoteBinding).inner, name)
}

func (d *remote) Call(ctx context.Context, b task.Binding, call task.Call) outcome.Result {
	rb := b.(remoteBinding)
	if !rb.http {
		return d.inner.Call(ctx, rb.inner, call)
	}
	d.mu.Lock()
	d.calls = append(d.calls, call)
	d.n++
	n := d.n
	d.mu.Unlock()
	return d.answer(ctx, n, call)
}

func (d *remote) Trigger(ctx context.Context, b task.Binding, call task.TriggerCall) task.TriggerResult {
	return d.inner.Trigger(ctx, b.(remoteBinding).inner, call)
}

// taken returns the http calls received so far and forgets them.
func (d *remote) taken() []task.Call {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.calls
	d.calls = nil
	return c
}

// withRemote puts a remote in front of the env's builtins, a Reattacher when reattaches. Call
// it between runs only: the engine reads its dispatchers while a run binds.
func (te *testEnv) withRemote(reattaches bool, answer func(ctx context.Context, n int, call task.Call) outcome.Result) *remote {
	te.t.Helper()
	kinds := te.engine.cfg.Tasks.(task.ByKind)
	inner := kinds[lang.UsesBuiltin]
	if r, ok := inner.(*remote); ok {
		inner = r.inner
	} else if r, ok := inner.(reattaching); ok {
		inner = r.inner
	}
	d := &remote{inner: inner, answer: answer}
	kinds[lang.UsesBuiltin] = d
	if reattaches {
		kinds[lang.UsesBuiltin] = reattaching{d}
	}
	return d
}

// answerJSON is a success whose output is the JSON of v.
func answerJSON(v any) outcome.Result {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return outcome.OK(b)
}

// history is the journal of one node as "type attempt" items, e.g.
// "attempt_started 1, attempt_interrupted 1, node_finished 1".
func history(entries []journal.Entry, node string) string {
	var items []string
	for _, e := range entries {
		if e.Node == node {
			items = append(items, fmt.Sprintf("%s %d", e.Type, e.Attempt))
		}
	}
	return strings.Join(items, ", ")
}

// callsString shows calls as "attempt/seq" items, an "r" marking a re-attached one.
func callsString(calls []task.Call) string {
	var items []string
	for _, c := range calls {
		s := fmt.Sprintf("%d/%d", c.Attempt, c.Seq)
		if c.Reattach {
			s += "r"
		}
		items = append(items, s)
	}
	return strings.Join(items, " ")
}

func entryOf(t *testing.T, entries []journal.Entry, typ journal.EntryType, node string) journal.Entry {
	t.Helper()
	for _, e := range entries {
		if e.Type == typ && e.Node == node {
			return e
		}
	}
	t.Fatalf("no %s entry of %s", typ, node)
	return journal.Entry{}
}

const remoteTask = `
workflow "w" {}
task "a" {
  uses   = builtin.http
  inputs = { url = "https://example.invalid/a" }
  %s
}
task "b" {
  uses   = builtin.transform
  inputs = { a = task.a.output }
}
output "a" { value = task.b.output.a }
`

// TestAttemptInterruptedElsewhereRunsTheNextAttempt: a call answered attempt_interrupted (its
// worker died) is journaled as an interrupted attempt, with the error, and the next attempt
// runs at once; it does not count against retry.attempts, so one allowed attempt suffices.
func TestAttemptInterruptedElsewhereRunsTheNextAttempt(t *testing.T) {
	te := newTestEnv(t)
	d := te.withRemote(false, func(_ context.Context, n int, call task.Call) outcome.Result {
		if n == 1 {
			return outcome.Fail(outcome.AttemptInterrupted, "worker w1 stopped answering")
		}
		return answerJSON(map[string]int{"attempt": call.Attempt})
	})
	var retrying []Event
	ex := te.apply(sprintf(remoteTask, "retry {\n    attempts = 1\n  }"), StartOptions{Observer: func(ev Event) {
		if ev.Type == EventNodeRetrying {
			retrying = append(retrying, ev)
		}
	}})
	wantRun(t, ex, journal.StatusSucceeded)
	wantJSON(t, "outputs", ex.Outputs, `{"a": {"attempt": 2}}`)
	if len(retrying) != 1 || retrying[0].Error == nil || retrying[0].Error.Kind != outcome.AttemptInterrupted || retrying[0].Attempt != 1 {
		t.Fatalf("node_retrying events %+v; want one for attempt 1, of kind attempt_interrupted", retrying)
	}
	if a := wantNode(t, ex, "task.a", journal.StatusSucceeded); a.Attempts != 2 || a.Error != nil {
		t.Fatalf("task.a: attempts %d, error %v; want 2 attempts and no error", a.Attempts, a.Error)
	}
	entries := te.entries(ex.ID)
	if got, want := history(entries, "task.a"), "attempt_started 1, attempt_interrupted 1, attempt_started 2, node_finished 2"; got != want {
		t.Fatalf("journal of task.a: %s\nwant %s", got, want)
	}
	ie := entryOf(t, entries, journal.AttemptInterrupted, "task.a")
	if ie.Error == nil || ie.Error.Kind != outcome.AttemptInterrupted || ie.Error.Message != "worker w1 stopped answering" {
		t.Fatalf("the interrupted entry's error: %+v", ie.Error)
	}
	calls := d.taken()
	if got := callsString(calls); got != "1/1 2/1" {
		t.Fatalf("calls %s, want attempts 1 and 2, each its first call", got)
	}
	if calls[0].TaskID != calls[1].TaskID || calls[0].TaskID != ex.ID+":task.a" {
		t.Fatalf("task ids %q, %q", calls[0].TaskID, calls[1].TaskID)
	}
}

// TestAttemptInterruptedElsewhereIsBoundedByTheDispatcher: the engine runs another attempt for
// every attempt_interrupted answer, without a limit of its own; the dispatcher bounds them
// (the cluster's coordinator answers worker_lost after -max-deliver), and worker_lost is not
// retried whatever the retry block allows.
func TestAttemptInterruptedElsewhereIsBoundedByTheDispatcher(t *testing.T) {
	te := newTestEnv(t)
	const maxDeliver = 5
	d := te.withRemote(false, func(_ context.Context, n int, call task.Call) outcome.Result {
		if n < maxDeliver {
			return outcome.Fail(outcome.AttemptInterrupted, "worker %d stopped answering", n)
		}
		return outcome.Fail(outcome.WorkerLost, "delivered %d times", n)
	})
	ex := te.apply(sprintf(remoteTask, "retry {\n    attempts      = 3\n    initial_delay = \"1ms\"\n  }"), StartOptions{})
	wantRun(t, ex, journal.StatusFailed)
	a := wantNode(t, ex, "task.a", journal.StatusFailed)
	wantErr(t, "task.a", a, string(outcome.WorkerLost), "delivered 5 times")
	if a.Attempts != maxDeliver {
		t.Fatalf("task.a attempts %d, want %d", a.Attempts, maxDeliver)
	}
	if got := callsString(d.taken()); got != "1/1 2/1 3/1 4/1 5/1" {
		t.Fatalf("calls %s", got)
	}
	want := "attempt_started 1, attempt_interrupted 1, attempt_started 2, attempt_interrupted 2, " +
		"attempt_started 3, attempt_interrupted 3, attempt_started 4, attempt_interrupted 4, " +
		"attempt_started 5, node_finished 5"
	if got := history(te.entries(ex.ID), "task.a"); got != want {
		t.Fatalf("journal of task.a: %s\nwant %s", got, want)
	}
	wantNode(t, ex, "task.b", journal.StatusCancelled)
}

// TestCallPoolAndSeq: a call names its task's pool ("default" without `pool`), and Seq
// numbers the calls of one attempt across `continue` answers.
func TestCallPoolAndSeq(t *testing.T) {
	te := newTestEnv(t)
	d := te.withRemote(false, func(_ context.Context, _ int, call task.Call) outcome.Result {
		if call.Node == "task.a" && call.Seq < 3 {
			return outcome.Result{Type: outcome.Continue, State: json.RawMessage(sprintf(`{"step":%d}`, call.Seq))}
		}
		return answerJSON(map[string]any{"seq": call.Seq, "state": call.State})
	})
	ex := te.apply(`
workflow "w" {}
task "a" {
  uses   = builtin.http
  pool   = "gpu"
  inputs = { url = "https://example.invalid/a" }
}
task "c" {
  uses   = builtin.http
  inputs = { url = "https://example.invalid/c" }
}
`, StartOptions{})
	wantRun(t, ex, journal.StatusSucceeded)
	a := wantNode(t, ex, "task.a", journal.StatusSucceeded)
	wantJSON(t, "task.a output", a.Output, `{"seq": 3, "state": {"step": 2}}`)
	got := map[string][]string{}
	for _, c := range d.taken() {
		got[c.Node] = append(got[c.Node], sprintf("%s %d/%d", c.Pool, c.Attempt, c.Seq))
	}
	if s := strings.Join(got["task.a"], ", "); s != "gpu 1/1, gpu 1/2, gpu 1/3" {
		t.Errorf("task.a calls: %s", s)
	}
	if s := strings.Join(got["task.c"], ", "); s != "default 1/1" {
		t.Errorf("task.c calls: %s", s)
	}
}

// TestResumeReattaches: a run whose process died with an attempt in flight resumes it, with a
// Reattacher, as the same attempt (number and Seq) with Reattach set, without journaling its
// start again; its result is the node's. Without a Reattacher the next attempt runs instead.
func TestResumeReattaches(t *testing.T) {
	te := newTestEnv(t)
	te.withRemote(false, func(context.Context, int, task.Call) outcome.Result {
		return answerJSON(map[string]string{"from": "reference"})
	})
	ref := te.apply(sprintf(remoteTask, `pool = "gpu"`), StartOptions{})
	wantRun(t, ref, journal.StatusSucceeded)
	refTaskID := entryOf(t, te.entries(ref.ID), journal.AttemptStarted, "task.a").TaskID
	crashed := func() string { return te.crashCopy(ref.ID, is(journal.AttemptStarted, "task.a")) }
	report := func(_ context.Context, _ int, call task.Call) outcome.Result {
		return answerJSON(map[string]any{"attempt": call.Attempt, "reattach": call.Reattach})
	}

	t.Run("result of the attempt in flight", func(t *testing.T) {
		id := crashed()
		d := te.withRemote(true, report)
		ex := te.resume(id)
		wantRun(t, ex, journal.StatusSucceeded)
		wantJSON(t, "outputs", ex.Outputs, `{"a": {"attempt": 1, "reattach": true}}`)
		calls := d.taken()
		if got := callsString(calls); got != "1/1r" {
			t.Fatalf("calls %s, want attempt 1 re-attached", got)
		}
		if c := calls[0]; c.Pool != "gpu" || c.TaskID != strings.Replace(refTaskID, ref.ID, id, 1) || c.ExecutionID != id {
			t.Fatalf("the re-attached call: pool %q task id %q execution %q", c.Pool, c.TaskID, c.ExecutionID)
		}
		if got := history(te.entries(id), "task.a"); got != "attempt_started 1, node_finished 1" {
			t.Fatalf("journal of task.a: %s", got)
		}
		if a := wantNode(t, ex, "task.a", journal.StatusSucceeded); a.Attempts != 1 {
			t.Fatalf("task.a attempts %d, want 1", a.Attempts)
		}
	})

	t.Run("the attempt in flight was lost", func(t *testing.T) {
		// One attempt allowed: the lost attempt does not count.
		src := sprintf(remoteTask, "retry {\n    attempts = 1\n  }")
		ref := te.apply(src, StartOptions{})
		wantRun(t, ref, journal.StatusSucceeded)
		id := te.crashCopy(ref.ID, is(journal.AttemptStarted, "task.a"))
		d := te.withRemote(true, func(ctx context.Context, n int, call task.Call) outcome.Result {
			if call.Reattach {
				return outcome.Fail(outcome.AttemptInterrupted, "no result and no message left of it")
			}
			return report(ctx, n, call)
		})
		ex := te.resume(id)
		wantRun(t, ex, journal.StatusSucceeded)
		wantJSON(t, "outputs", ex.Outputs, `{"a": {"attempt": 2, "reattach": false}}`)
		if got := callsString(d.taken()); got != "1/1r 2/1" {
			t.Fatalf("calls %s", got)
		}
		entries := te.entries(id)
		if got, want := history(entries, "task.a"), "attempt_started 1, attempt_interrupted 1, attempt_started 2, node_finished 2"; got != want {
			t.Fatalf("journal of task.a: %s\nwant %s", got, want)
		}
		if e := entryOf(t, entries, journal.AttemptInterrupted, "task.a"); e.Error == nil || e.Error.Kind != outcome.AttemptInterrupted {
			t.Fatalf("the interrupted entry's error: %+v", e.Error)
		}
	})

	t.Run("the re-attached attempt counts", func(t *testing.T) {
		// Two attempts allowed: the re-attached one is the first (it is no longer counted
		// as interrupted), so one more runs, and no third.
		src := sprintf(remoteTask, "retry {\n    attempts      = 2\n    initial_delay = \"1ms\"\n  }")
		te.withRemote(false, func(context.Context, int, task.Call) outcome.Result { return answerJSON("ok") })
		ref := te.apply(src, StartOptions{})
		wantRun(t, ref, journal.StatusSucceeded)
		id := te.crashCopy(ref.ID, is(journal.AttemptStarted, "task.a"))
		d := te.withRemote(true, func(context.Context, int, task.Call) outcome.Result {
			return outcome.Fail(outcome.Retryable, "busy")
		})
		ex := te.resume(id)
		wantRun(t, ex, journal.StatusFailed)
		a := wantNode(t, ex, "task.a", journal.StatusFailed)
		wantErr(t, "task.a", a, string(outcome.Retryable), "busy")
		if got := callsString(d.taken()); got != "1/1r 2/1" {
			t.Fatalf("calls %s, want the re-attached attempt 1 and attempt 2 only", got)
		}
	})

	t.Run("not a Reattacher", func(t *testing.T) {
		id := crashed()
		d := te.withRemote(false, report)
		ex := te.resume(id)
		wantRun(t, ex, journal.StatusSucceeded)
		wantJSON(t, "outputs", ex.Outputs, `{"a": {"attempt": 2, "reattach": false}}`)
		if got := callsString(d.taken()); got != "2/1" {
			t.Fatalf("calls %s, want attempt 2", got)
		}
		if got := history(te.entries(id), "task.a"); got != "attempt_started 1, attempt_started 2, node_finished 2" {
			t.Fatalf("journal of task.a: %s", got)
		}
	})

	t.Run("a block that does not re-attach", func(t *testing.T) {
		// task.b (builtin.transform) runs here: its attempt in flight is run again.
		id := te.crashCopy(ref.ID, is(journal.AttemptStarted, "task.b"))
		d := te.withRemote(true, report)
		ex := te.resume(id)
		wantRun(t, ex, journal.StatusSucceeded)
		wantJSON(t, "outputs", ex.Outputs, `{"a": {"from": "reference"}}`)
		if calls := d.taken(); len(calls) != 0 {
			t.Fatalf("task.a was called again: %s", callsString(calls))
		}
		if got := history(te.entries(id), "task.b"); got != "attempt_started 1, attempt_started 2, node_finished 2" {
			t.Fatalf("journal of task.b: %s", got)
		}
	})
}

// TestResumeReattachesAContinuedAttempt: an attempt in flight after `continue` answers is
// re-attached at its next call: Seq is the journaled continues + 1, with the last state.
func TestResumeReattachesAContinuedAttempt(t *testing.T) {
	te := newTestEnv(t)
	steps := func(_ context.Context, _ int, call task.Call) outcome.Result {
		if call.Seq < 3 {
			return outcome.Result{Type: outcome.Continue, State: json.RawMessage(sprintf(`{"step":%d}`, call.Seq))}
		}
		return answerJSON(map[string]any{"seq": call.Seq, "state": call.State, "reattach": call.Reattach})
	}
	te.withRemote(false, steps)
	ref := te.apply(sprintf(remoteTask, ""), StartOptions{})
	wantRun(t, ref, journal.StatusSucceeded)
	wantJSON(t, "outputs", ref.Outputs, `{"a": {"seq": 3, "state": {"step": 2}, "reattach": false}}`)

	for continues := 1; continues <= 2; continues++ {
		t.Run(sprintf("after %d continues", continues), func(t *testing.T) {
			seen := 0
			id := te.crashCopy(ref.ID, func(e journal.Entry) bool {
				if e.Type == journal.AttemptContinued && e.Node == "task.a" {
					seen++
				}
				return seen == continues
			})
			d := te.withRemote(true, steps)
			ex := te.resume(id)
			wantRun(t, ex, journal.StatusSucceeded)
			calls := d.taken()
			want, last := "1/2r 1/3", "false"
			if continues == 2 {
				want, last = "1/3r", "true"
			}
			wantJSON(t, "outputs", ex.Outputs, `{"a": {"seq": 3, "state": {"step": 2}, "reattach": `+last+`}}`)
			if got := callsString(calls); got != want {
				t.Fatalf("calls %s, want %s", got, want)
			}
			if got := string(calls[0].State); got != sprintf(`{"step":%d}`, continues) {
				t.Fatalf("the re-attached call's state %s", got)
			}
			if as := attemptsOf(te.entries(id), "task.a"); len(as) != 1 {
				t.Fatalf("attempts started: %s", jsonOf(t, as))
			}
		})
	}
}

// TestShutdownInterruptsWithErrInterrupted: a shutdown's interruption reaches the call as
// task.ErrInterrupted (a remote attempt is left running), a cancellation as something else (a
// remote attempt is stopped); and a Reattacher's attempt left running is re-attached to on
// resume rather than run a second time.
func TestShutdownInterruptsWithErrInterrupted(t *testing.T) {
	type seen struct {
		call  task.Call
		cause error
	}
	blocking := func(started chan<- seen, causes chan<- error) func(context.Context, int, task.Call) outcome.Result {
		return func(ctx context.Context, n int, call task.Call) outcome.Result {
			if n > 1 {
				return answerJSON(map[string]any{"attempt": call.Attempt, "reattach": call.Reattach})
			}
			started <- seen{call: call}
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return outcome.Fail(outcome.Cancelled, "cancelled")
		}
	}
	await := func(t *testing.T, ch <-chan seen) task.Call {
		t.Helper()
		select {
		case s := <-ch:
			return s.call
		case <-time.After(runDeadline):
			t.Fatal("the attempt did not start")
			return task.Call{}
		}
	}
	cause := func(t *testing.T, ch <-chan error) error {
		t.Helper()
		select {
		case err := <-ch:
			return err
		case <-time.After(runDeadline):
			t.Fatal("the call was not interrupted")
			return nil
		}
	}

	t.Run("cancel", func(t *testing.T) {
		te := newTestEnv(t)
		started, causes := make(chan seen, 1), make(chan error, 1)
		te.withRemote(true, blocking(started, causes))
		r := te.start(sprintf(remoteTask, ""), StartOptions{})
		await(t, started)
		r.Cancel()
		if err := cause(t, causes); err == nil || errors.Is(err, task.ErrInterrupted) {
			t.Fatalf("a cancellation's cause: %v; want one that is not task.ErrInterrupted", err)
		}
		ex := te.wait(r)
		wantRun(t, ex, journal.StatusCancelled)
	})

	t.Run("shutdown", func(t *testing.T) {
		te := newTestEnv(t)
		started, causes := make(chan seen, 1), make(chan error, 1)
		d := te.withRemote(true, blocking(started, causes))
		r := te.start(sprintf(remoteTask, "retry {\n    attempts = 1\n  }"), StartOptions{})
		await(t, started)
		grace, cancel := context.WithCancel(context.Background())
		cancel() // no grace: the attempt is interrupted at once
		te.engine.Drain(grace)
		if err := cause(t, causes); !errors.Is(err, task.ErrInterrupted) {
			t.Fatalf("a shutdown's cause: %v; want task.ErrInterrupted", err)
		}
		te.wait(r)
		if r.Detached() != DetachedInterrupted {
			t.Fatalf("detached %q, want interrupted", r.Detached())
		}
		d.taken()
		if got := history(te.entries(r.ID()), "task.a"); got != "attempt_started 1" {
			t.Fatalf("journal of task.a after the shutdown: %s; want its attempt left in flight", got)
		}
		// The next process (a new engine on the store) re-attaches to the attempt left running.
		kinds := te.engine.cfg.Tasks.(task.ByKind)
		te.engine = New(Config{Store: te.store, Tasks: task.ByKind{lang.UsesBuiltin: kinds[lang.UsesBuiltin]}, Artifacts: te.engine.cfg.Artifacts})
		ex := te.resume(r.ID())
		wantRun(t, ex, journal.StatusSucceeded)
		wantJSON(t, "outputs", ex.Outputs, `{"a": {"attempt": 1, "reattach": true}}`)
		if got := callsString(d.taken()); got != "1/1r" {
			t.Fatalf("calls after resume %s, want attempt 1 re-attached", got)
		}
		if as := attemptsOf(te.entries(r.ID()), "task.a"); len(as) != 1 {
			t.Fatalf("attempts started: %s", jsonOf(t, as))
		}
	})
}
