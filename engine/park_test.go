package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/fuscia/fuscia/engine/internal/runtime/builtins"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/lang"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/lang/builtin"
)

// serveEnv is a test env whose engine parks waiting runs, as `fuscia serve` does; ended
// receives every run whose loop ended.
func serveEnv(t *testing.T) (*testEnv, chan *Run) {
	te := newTestEnv(t)
	ended := make(chan *Run, 16)
	runner := builtin.New(builtin.Options{})
	t.Cleanup(runner.Close)
	te.engine = New(Config{
		Store: te.store, Tasks: task.ByKind{lang.UsesBuiltin: builtins.New(runner)},
		Artifacts: artifact.Dir{Root: filepath.Join(te.dir, "artifacts")},
		Getenv:    func(k string) string { return te.env[k] },
		ParkWaits: true,
		OnRunEnd:  func(r *Run) { ended <- r },
	})
	return te, ended
}

func endedRun(t *testing.T, ended chan *Run) *Run {
	t.Helper()
	select {
	case r := <-ended:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no run ended")
		return nil
	}
}

const approvalFlow = `
workflow "w" {}
wait "approve" {
  approval { message = "ok?" }
}
task "after" {
  uses   = builtin.transform
  inputs = { answer = wait.approve.output }
}
output "answer" { value = task.after.output.answer }
`

func TestParkedRunLeavesMemoryAndResumesOnSignal(t *testing.T) {
	te, ended := serveEnv(t)
	r := te.start(approvalFlow, StartOptions{})
	if got := endedRun(t, ended); got != r {
		t.Fatalf("another run ended")
	}
	if r.Detached() != DetachedParked || !r.Due().IsZero() {
		t.Fatalf("detached %q due %v; want parked with no deadline", r.Detached(), r.Due())
	}
	if te.engine.Active(r.ID()) != nil {
		t.Fatal("a parked run is still active in the engine")
	}
	sum, _ := te.store.Summary(r.ID())
	if sum.Status != journal.StatusWaiting {
		t.Fatalf("status %s, want waiting", sum.Status)
	}
	// A signal for a parked run is journaled; it applies on resume.
	if _, err := te.engine.Signal(context.Background(), r.ID(), "nope", nil, false); !errors.Is(err, ErrInvalidSignal) {
		t.Fatalf("signal of an unknown node: %v, want ErrInvalidSignal", err)
	}
	if _, err := te.engine.Signal(context.Background(), r.ID(), "after", nil, false); !errors.Is(err, ErrInvalidSignal) {
		t.Fatalf("signal of a task: %v, want ErrInvalidSignal", err)
	}
	queued, err := te.engine.Signal(context.Background(), r.ID(), "wait.approve", json.RawMessage(`{"by":"ana"}`), false)
	if err != nil || !queued {
		t.Fatalf("signal: queued %v, %v", queued, err)
	}
	if _, err := te.engine.Signal(context.Background(), r.ID(), "approve", nil, false); !errors.Is(err, ErrNotWaiting) {
		t.Fatalf("second signal: %v, want ErrNotWaiting", err)
	}
	ex := te.resume(r.ID())
	wantRun(t, ex, journal.StatusSucceeded)
	wantJSON(t, "outputs", ex.Outputs, `{"answer":{"by":"ana"}}`)
}

func TestParkedRunKeepsItsDeadline(t *testing.T) {
	te, ended := serveEnv(t)
	start := time.Now()
	r := te.start(`
workflow "w" {}
wait "pause" { duration = "1200ms" }
task "after" {
  uses   = builtin.transform
  inputs = { waited = wait.pause.output }
}
`, StartOptions{})
	endedRun(t, ended)
	if r.Detached() != DetachedParked {
		t.Fatalf("detached %q, want parked", r.Detached())
	}
	if d := r.Due().Sub(start); d < 1100*time.Millisecond || d > 3*time.Second {
		t.Fatalf("due %s after the start, want about 1.2s", d)
	}
	time.Sleep(time.Until(r.Due()) + 50*time.Millisecond)
	began := time.Now()
	ex := te.resume(r.ID())
	wantRun(t, ex, journal.StatusSucceeded)
	within(t, "a due wait after resume", time.Since(began), 2*time.Second)
}

const twoSleeps = `
workflow "w" {}
task "short" {
  uses   = builtin.sleep
  inputs = { duration = "100ms" }
}
task "long" {
  uses   = builtin.sleep
  inputs = { duration = "%s" }
  retry { attempts = 1 }
}
task "after" {
  uses   = builtin.transform
  inputs = { a = task.short.output, b = task.long.output }
}
`

func TestDrainLetsAttemptsFinishAndStartsNothingNew(t *testing.T) {
	te, ended := serveEnv(t)
	r := te.start(sprintf(twoSleeps, "300ms"), StartOptions{})
	time.Sleep(50 * time.Millisecond)
	te.engine.Drain(context.Background()) // no deadline: the attempts finish
	endedRun(t, ended)
	if r.Detached() != DetachedInterrupted {
		t.Fatalf("detached %q, want interrupted", r.Detached())
	}
	ex, err := te.store.Execution(r.ID())
	if err != nil {
		t.Fatal(err)
	}
	wantNode(t, ex, "task.short", journal.StatusSucceeded)
	wantNode(t, ex, "task.long", journal.StatusSucceeded)
	wantNode(t, ex, "task.after", journal.StatusPending)
	if _, err := te.engine.Start(context.Background(), te.program(te.write("x.fsc.hcl", approvalFlow)), StartOptions{}); !errors.Is(err, ErrDraining) {
		t.Fatalf("start while draining: %v, want ErrDraining", err)
	}
}

func TestDrainInterruptsAfterGraceAndResumeDoesNotCountIt(t *testing.T) {
	te, ended := serveEnv(t)
	r := te.start(sprintf(twoSleeps, "20s"), StartOptions{})
	time.Sleep(200 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	began := time.Now()
	te.engine.Drain(ctx)
	within(t, "drain with a short grace", time.Since(began), 3*time.Second)
	endedRun(t, ended)
	ex, err := te.store.Execution(r.ID())
	if err != nil {
		t.Fatal(err)
	}
	if ex.Status != journal.StatusInterrupted {
		t.Fatalf("status %s, want interrupted (resumable)", ex.Status)
	}
	wantNode(t, ex, "task.short", journal.StatusSucceeded)
	wantNode(t, ex, "task.long", journal.StatusPending)
	var interrupted int
	_ = te.store.Entries(r.ID(), 0, func(e journal.Entry) error {
		if e.Type == journal.AttemptInterrupted && e.Node == "task.long" {
			interrupted++
		}
		if e.Type == journal.NodeFinished && e.Node == "task.long" {
			t.Errorf("the interrupted attempt was journaled as finished: %+v", e)
		}
		return nil
	})
	if interrupted != 1 {
		t.Fatalf("%d attempt_interrupted entries, want 1", interrupted)
	}
}

func TestAdmitQueuesAndCancelEndsAQueuedRun(t *testing.T) {
	te, _ := serveEnv(t)
	gate := make(chan struct{})
	admitted := make(chan struct{}, 1)
	r := te.start(sprintf(twoSleeps, "10ms"), StartOptions{Admit: func(ctx context.Context) func() {
		select {
		case <-gate:
		case <-ctx.Done():
		}
		admitted <- struct{}{}
		return func() {}
	}})
	time.Sleep(50 * time.Millisecond)
	if sum, _ := te.store.Summary(r.ID()); sum.Status != journal.StatusRunning {
		t.Fatalf("a queued run is %s, want running", sum.Status)
	}
	ex, _ := te.store.Execution(r.ID())
	wantNode(t, ex, "task.short", journal.StatusPending)
	r.Cancel()
	<-admitted
	ex = te.wait(r)
	wantRun(t, ex, journal.StatusCancelled)
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// TestAdmittedIsReleasedOnceTheRunEnds: a run started with a slot already granted
// (StartOptions.Admitted) goes on at once and gives the slot back exactly once, after its loop
// has ended.
func TestAdmittedIsReleasedOnceTheRunEnds(t *testing.T) {
	te, _ := serveEnv(t)
	var released atomic.Int32
	var statusAtRelease atomic.Value
	id := make(chan string, 1) // the run's id, once Start has returned it
	r := te.start(sprintf(twoSleeps, "10ms"), StartOptions{Admitted: func() {
		runID := <-id
		id <- runID
		if sum, err := te.store.Summary(runID); err == nil {
			statusAtRelease.Store(sum.Status)
		}
		released.Add(1)
	}})
	id <- r.ID()
	ex := te.wait(r)
	wantRun(t, ex, journal.StatusSucceeded)
	te.engine.Wait()
	if n := released.Load(); n != 1 {
		t.Fatalf("the slot was released %d times, want 1", n)
	}
	if st, _ := statusAtRelease.Load().(string); st != journal.StatusSucceeded {
		t.Fatalf("the slot was released while the run was %q, want it released after the run ended", st)
	}
}
