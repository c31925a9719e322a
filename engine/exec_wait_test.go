package engine

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
)

// eventually polls cond until it holds, failing the test after a while.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitParked waits until the store says the run is waiting.
func (te *testEnv) waitParked(r *Run) {
	te.t.Helper()
	eventually(te.t, "the run to be waiting", func() bool {
		sum, err := te.store.Summary(r.ID())
		return err == nil && sum.Status == journal.StatusWaiting
	})
}

func TestWaitTimers(t *testing.T) {
	cases := []struct {
		name     string
		wait     string
		min, max time.Duration
	}{
		{name: "duration", wait: `duration = "50ms"`, min: 50 * time.Millisecond, max: 2 * time.Second},
		{name: "until in the past", wait: `until = "2020-01-01T00:00:00Z"`, max: 500 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t)
			start := time.Now()
			ex := te.apply(`
workflow "w" {}
wait "pause" {
  `+tc.wait+`
}
task "after" {
  uses   = builtin.transform
  inputs = { waited = wait.pause.output }
}
`, StartOptions{})
			took := time.Since(start)
			if took < tc.min || took >= tc.max {
				t.Fatalf("took %s, want [%s, %s)", took, tc.min, tc.max)
			}
			wantRun(t, ex, "succeeded")
			w := wantNode(t, ex, "wait.pause", "succeeded")
			wantJSON(t, "wait output", w.Output, `{}`)
			wantJSON(t, "after", wantNode(t, ex, "task.after", "succeeded").Output, `{"waited": {}}`)
		})
	}
}

const approvalWorkflow = `
workflow "w" {}
task "before" {
  uses   = builtin.transform
  inputs = { x = 1 }
}
wait "approve" {
  depends_on = [task.before]
  approval {
    message = "ship ${task.before.output.x}?"
  }
}
task "after" {
  uses   = builtin.transform
  inputs = { answer = wait.approve.output }
}
output "answer" { value = wait.approve.output }
`

func TestWaitApproval(t *testing.T) {
	cases := []struct {
		name   string
		node   string
		data   string
		reject bool
		run    string
		wait   string
		kind   string
	}{
		{name: "approve", node: "wait.approve", data: `{"by": "ann", "ok": true}`, run: "succeeded", wait: "succeeded"},
		{name: "approve by bare name without data", node: "approve", run: "succeeded", wait: "succeeded"},
		{name: "reject", node: "wait.approve", data: `{"by": "bob"}`, reject: true, run: "failed", wait: "failed", kind: "rejected"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t)
			r := te.start(approvalWorkflow, StartOptions{})
			te.waitParked(r)
			ex, err := te.store.Execution(r.ID())
			if err != nil {
				t.Fatal(err)
			}
			if ex.Status != "waiting" || ex.Nodes["wait.approve"].Status != "waiting" || ex.Nodes["task.after"].Status != "pending" {
				t.Fatalf("while parked: %s", jsonOf(t, ex))
			}
			// Signalling a node that is not a waiting wait is refused.
			if err := r.Signal(context.Background(), "task.before", nil, false); err == nil {
				t.Fatal("signal to a task accepted")
			}
			var data json.RawMessage
			if tc.data != "" {
				data = json.RawMessage(tc.data)
			}
			if err := r.Signal(context.Background(), tc.node, data, tc.reject); err != nil {
				t.Fatal(err)
			}
			ex = te.wait(r)
			wantRun(t, ex, tc.run)
			w := wantNode(t, ex, "wait.approve", tc.wait)
			if tc.kind != "" {
				wantErr(t, "wait.approve", w, tc.kind)
				wantNode(t, ex, "task.after", "cancelled")
				return
			}
			want := tc.data
			if want == "" {
				want = `{}`
			}
			wantJSON(t, "wait output", w.Output, want)
			wantJSON(t, "after", wantNode(t, ex, "task.after", "succeeded").Output, `{"answer": `+want+`}`)
			wantJSON(t, "outputs", ex.Outputs, `{"answer": `+want+`}`)
			if err := r.Signal(context.Background(), tc.node, nil, false); err == nil {
				t.Fatal("signal after the end accepted")
			}
		})
	}
}

func TestWaitApprovalTimeout(t *testing.T) {
	te := newTestEnv(t)
	start := time.Now()
	r := te.start(`
workflow "w" {}
wait "approve" {
  timeout = "50ms"
  approval {}
}
`, StartOptions{})
	ex := te.wait(r)
	if took := time.Since(start); took < 50*time.Millisecond || took > 2*time.Second {
		t.Fatalf("took %s", took)
	}
	wantRun(t, ex, "failed")
	wantErr(t, "wait.approve", wantNode(t, ex, "wait.approve", "failed"), "timeout")
	if err := r.Signal(context.Background(), "approve", nil, false); err == nil || errors.Is(err, ErrNotWaiting) {
		t.Fatalf("signal after the end: %v", err)
	}
}

func TestWaitStatusFollowsTheRun(t *testing.T) {
	te := newTestEnv(t)
	r := te.start(`
workflow "w" {}
wait "approve" {
  approval {}
}
task "busy" {
  uses   = builtin.sleep
  inputs = { duration = "150ms" }
}
`, StartOptions{})
	// While busy sleeps the run is running, though a wait is parked.
	time.Sleep(40 * time.Millisecond)
	if sum, err := te.store.Summary(r.ID()); err != nil || sum.Status != "running" {
		t.Fatalf("while a task runs: %v %v", sum.Status, err)
	}
	te.waitParked(r)
	if err := r.Signal(context.Background(), "wait.approve", json.RawMessage(`"yes"`), false); err != nil {
		t.Fatal(err)
	}
	ex := te.wait(r)
	wantRun(t, ex, "succeeded")
	wantJSON(t, "wait output", node(t, ex, "wait.approve").Output, `"yes"`)
}

func TestWaitEndsWithoutItsTimer(t *testing.T) {
	t.Run("approval answered before its timeout", func(t *testing.T) {
		te := newTestEnv(t)
		r := te.start(`
workflow "w" {}
wait "approve" {
  timeout = "30s"
  approval {}
}
`, StartOptions{})
		te.waitParked(r)
		if err := r.Signal(context.Background(), "approve", nil, false); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		// The bounds only need to tell "ended" from "waited for the 30s timer"; they are loose
		// so that a loaded CI machine does not fail them.
		select {
		case <-r.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the run waits for the timeout of an answered approval")
		}
		within(t, "the end", time.Since(start), 10*time.Second)
		wantRun(t, te.wait(r), "succeeded")
	})
	t.Run("duration cancelled by a join", func(t *testing.T) {
		te := newTestEnv(t)
		start := time.Now()
		ex := te.apply(`
workflow "w" {}
wait "long" {
  duration = "30s"
}
task "quick" {
  uses = builtin.transform
}
join "j" {
  after    = [wait.long, task.quick]
  strategy = "m_of_n"
  m        = 1
}
`, StartOptions{})
		within(t, "the run", time.Since(start), 10*time.Second) // well below the 30s timer
		wantRun(t, ex, "succeeded")
		wantNode(t, ex, "wait.long", "cancelled")
	})
}

// TestSignalToARunThatLeavesTwice holds Engine.Signal at the interleaving that once answered
// 500 in serve: the active run leaves before it takes the signal, a resumed run is active by
// the time Signal looks again, and that one too leaves first (another answer resolved the
// wait). Signal must then answer from the journal — here the run has finished — and not hand
// the second run's errRunGone to its caller. Two stand-in runs, registered by hand, take the
// places of the resumed and leaving ones so that the order is fixed, not raced.
func TestSignalToARunThatLeavesTwice(t *testing.T) {
	te := newTestEnv(t)
	ex := te.apply(`
workflow "w" {}
wait "approve" {
  approval {}
  timeout = "1ms"
}
`, StartOptions{})
	id := ex.ID
	e := te.engine
	standIn := func() *Run {
		return &Run{id: id, inbox: make(chan func()), done: make(chan struct{})}
	}
	first, second := standIn(), standIn()
	register := func(r *Run) {
		e.mu.Lock()
		defer e.mu.Unlock()
		if r == nil {
			delete(e.runs, id)
			return
		}
		e.runs[id] = r
	}
	register(first)
	t.Cleanup(func() { register(nil) })

	// Each stand-in leaves when the signal is posted to it, without running it, as a loop that
	// has just ended does; the first is replaced by the second as it leaves, as a resume does.
	leaves := make(chan error, 1)
	go func() {
		<-first.inbox
		register(second)
		close(first.done)
		<-second.inbox
		register(nil)
		close(second.done)
		leaves <- nil
	}()
	queued, err := e.Signal(context.Background(), id, "approve", nil, false)
	if errors.Is(err, errRunGone) {
		t.Fatalf("Signal handed a leaving run's error to its caller: %v", err)
	}
	if !errors.Is(err, ErrFinished) || !queued {
		t.Fatalf("Signal = (queued %v, %v), want the journal's answer: %v", queued, err, ErrFinished)
	}
	select {
	case <-leaves:
	case <-time.After(5 * time.Second):
		t.Fatal("the signal was not posted to both stand-in runs")
	}
}

// TestRunWaitingFollowsItsWait: the journal says the run is waiting only after it says which
// wait it waits for. The node_waiting entry is durable and goes to the journal from another
// goroutine; a run status journaled from the loop meanwhile came first, and a reader between
// the two (a crash, `fuscia status`) saw a waiting run with no waiting node.
func TestRunWaitingFollowsItsWait(t *testing.T) {
	te := newTestEnv(t)
	r := te.start(approvalWorkflow, StartOptions{})
	te.waitParked(r)
	if err := r.Signal(context.Background(), "wait.approve", nil, false); err != nil {
		t.Fatal(err)
	}
	wantRun(t, te.wait(r), "succeeded")
	nodeWaiting, runWaiting := -1, -1
	entries := te.entries(r.ID())
	for i, e := range entries {
		switch {
		case nodeWaiting < 0 && e.Type == journal.NodeWaiting && e.Node == "wait.approve":
			nodeWaiting = i
		case runWaiting < 0 && e.Type == journal.RunStatus && e.Status == journal.StatusWaiting:
			runWaiting = i
		}
	}
	if nodeWaiting < 0 || runWaiting < nodeWaiting {
		t.Fatalf("node_waiting at %d, the run's waiting status at %d: %s", nodeWaiting, runWaiting, jsonOf(t, entries))
	}
}
