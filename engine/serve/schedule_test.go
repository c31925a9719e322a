package serve

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schedule"
)

// tickSource fires at the top of every hour, skipping an occurrence while a run is going.
const tickSource = `workflow "tick" {
  max_concurrent_runs = 1
  on_overlap          = "skip"
}

trigger "schedule" "hourly" { cron = "0 * * * *" }

task "at" {
  uses   = builtin.transform
  inputs = { at = trigger.payload.scheduled_at }
}

output "at" { value = task.at.output.at }
`

// clock is a schedule clock the test sets.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// scheduleFixture is a server with the tick workflow's program, not started: the tests call
// runSchedule themselves, with a context already ended, so that it does what it does at start
// (catch up, start a lost run) and returns instead of waiting for the next occurrence.
type scheduleFixture struct {
	*testServer
	l     *loaded
	trig  *lang.Trigger
	sch   *schedule.Schedule
	clock *clock
	scope string
}

func newScheduleFixture(t *testing.T) *scheduleFixture {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "tick.fsc.hcl")
	writeWorkflow(t, file, tickSource)
	ts := newTestServer(t, dir, nil)
	c := &clock{}
	ts.srv.cfg.Now = c.Now
	prog, err := loadProgram(file)
	if err != nil {
		t.Fatal(err)
	}
	trig := prog.Workflow.Triggers[0]
	sch, err := schedule.Parse(trig.Cron, trig.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	return &scheduleFixture{testServer: ts, l: &loaded{file: file, prog: prog}, trig: trig, sch: sch, clock: c,
		scope: journal.TriggerScope("tick", "hourly")}
}

// at is 2030-01-01 at hh:mm:ss UTC.
func at(hh, mm, ss int) time.Time { return time.Date(2030, 1, 1, hh, mm, ss, 0, time.UTC) }

// runAt runs the schedule's start at clock time now and returns.
func (f *scheduleFixture) runAt(now time.Time) {
	f.clock.mu.Lock()
	f.clock.now = now
	f.clock.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f.srv.runSchedule(ctx, f.l, f.trig, f.sch)
}

func (f *scheduleFixture) record(fr firing) {
	f.t.Helper()
	if err := f.srv.writeFiring(f.scope, lastFiredKey, fr); err != nil {
		f.t.Fatal(err)
	}
}

func (f *scheduleFixture) recorded() firing {
	f.t.Helper()
	fr, ok, err := f.srv.readFiring(f.scope, lastFiredKey)
	if err != nil || !ok {
		f.t.Fatalf("no firing recorded: %v", err)
	}
	return fr
}

// waitRun waits for the one run of tick to succeed and returns it.
func (f *scheduleFixture) waitRun() *journal.Execution {
	f.t.Helper()
	runs := f.runsOf("tick")
	if len(runs) != 1 {
		f.t.Fatalf("%d runs of tick, want 1", len(runs))
	}
	f.waitSucceeded(runs[0].ID)
	ex, err := f.st.Execution(runs[0].ID)
	if err != nil {
		f.t.Fatal(err)
	}
	return ex
}

// TestScheduleFirstStart: a schedule served for the first time records now as its start and
// fires nothing: what fell due before it existed is not missed.
func TestScheduleFirstStart(t *testing.T) {
	f := newScheduleFixture(t)
	f.runAt(at(10, 0, 20))
	if got := f.recorded(); got != (firing{At: at(10, 0, 20).Format(time.RFC3339Nano)}) {
		t.Errorf("recorded %+v, want the start time and no run", got)
	}
	if n := len(f.runsOf("tick")); n != 0 {
		t.Errorf("%d runs at the first start, want none", n)
	}
}

// TestScheduleCatchUp: at start, the latest occurrence missed within MissedWindow fires once —
// with the payload of that occurrence — and is recorded with its run; one older than the
// window, or already fired, does not.
func TestScheduleCatchUp(t *testing.T) {
	t.Run("missed within the window", func(t *testing.T) {
		f := newScheduleFixture(t)
		f.record(firing{At: at(8, 0, 0).Format(time.RFC3339Nano), ExecutionID: "01OLD"})
		f.runAt(at(11, 0, 30)) // 9:00, 10:00 and 11:00 were missed; only 11:00 is within 1m
		ex := f.waitRun()
		var payload map[string]string
		if err := json.Unmarshal(ex.Trigger.Payload, &payload); err != nil {
			t.Fatal(err)
		}
		if ex.Trigger.Type != "schedule" || ex.Trigger.Name != "hourly" || payload["scheduled_at"] != "2030-01-01T11:00:00Z" ||
			payload["fired_at"] != at(11, 0, 30).Format(time.RFC3339Nano) || string(ex.Outputs) != `{"at":"2030-01-01T11:00:00Z"}` {
			t.Errorf("the caught-up run: trigger %s.%s payload %s outputs %s", ex.Trigger.Type, ex.Trigger.Name, ex.Trigger.Payload, ex.Outputs)
		}
		if got := f.recorded(); got != (firing{At: at(11, 0, 0).Format(time.RFC3339Nano), ExecutionID: ex.ID}) {
			t.Errorf("recorded %+v, want 11:00 confirmed with run %s", got, ex.ID)
		}
		// A restart a moment later does not fire 11:00 again.
		f.runAt(at(11, 0, 50))
		if n := len(f.runsOf("tick")); n != 1 {
			t.Errorf("%d runs after a restart, want 1", n)
		}
	})
	t.Run("older than the window", func(t *testing.T) {
		f := newScheduleFixture(t)
		last := firing{At: at(10, 0, 0).Format(time.RFC3339Nano), ExecutionID: "01OLD"}
		f.record(last)
		f.runAt(at(11, 5, 0))
		if n := len(f.runsOf("tick")); n != 0 {
			t.Errorf("%d runs for an occurrence 5m old (window 1m), want none", n)
		}
		if got := f.recorded(); got != last {
			t.Errorf("recorded %+v, want it unchanged", got)
		}
	})
	t.Run("a wider window", func(t *testing.T) {
		f := newScheduleFixture(t)
		f.srv.cfg.MissedWindow = 10 * time.Minute
		f.record(firing{At: at(10, 0, 0).Format(time.RFC3339Nano)})
		f.runAt(at(11, 5, 0))
		if ex := f.waitRun(); !strings.Contains(string(ex.Outputs), "11:00:00Z") {
			t.Errorf("the caught-up run: %s", ex.Outputs)
		}
	})
	t.Run("a record from before firings had ids", func(t *testing.T) {
		f := newScheduleFixture(t)
		if err := f.st.KVSet(f.scope, lastFiredKey, []byte(at(10, 0, 0).Format(time.RFC3339))); err != nil {
			t.Fatal(err)
		}
		f.runAt(at(11, 0, 10))
		if ex := f.waitRun(); !strings.Contains(string(ex.Outputs), "11:00:00Z") {
			t.Errorf("the caught-up run: %s", ex.Outputs)
		}
	})
}

// TestScheduleLostRun: an occurrence recorded as fired whose run never started (a crash in
// between) starts at the next start under the id recorded — within MissedWindow; a pending
// firing whose run exists starts nothing.
func TestScheduleLostRun(t *testing.T) {
	t.Run("within the window", func(t *testing.T) {
		f := newScheduleFixture(t)
		logs := f.logTo()
		id := engine.NewExecutionID()
		f.record(firing{At: at(11, 0, 0).Format(time.RFC3339Nano), ExecutionID: id, Pending: true})
		f.runAt(at(11, 0, 20))
		ex := f.waitRun()
		if ex.ID != id || !strings.Contains(string(ex.Outputs), "11:00:00Z") {
			t.Errorf("the lost run started as %s with %s, want %s for 11:00", ex.ID, ex.Outputs, id)
		}
		if got := f.recorded(); got.Pending || got.ExecutionID != id {
			t.Errorf("recorded %+v, want confirmed", got)
		}
		if !strings.Contains(logs.String(), "starting the run of an occurrence fired before a crash but never started") {
			t.Errorf("the lost run is not logged:\n%s", logs)
		}
	})
	t.Run("older than the window", func(t *testing.T) {
		f := newScheduleFixture(t)
		logs := f.logTo()
		id := engine.NewExecutionID()
		f.record(firing{At: at(11, 0, 0).Format(time.RFC3339Nano), ExecutionID: id, Pending: true})
		f.runAt(at(11, 30, 0))
		if _, err := f.st.Summary(id); !errors.Is(err, journal.ErrNotFound) {
			t.Errorf("the lost run older than the window: %v, want not started", err)
		}
		if !strings.Contains(logs.String(), "older than the missed-run window: not started") {
			t.Errorf("the skipped lost run is not logged:\n%s", logs)
		}
	})
	t.Run("started after all", func(t *testing.T) {
		f := newScheduleFixture(t)
		logs := f.logTo()
		id := engine.NewExecutionID()
		f.record(firing{At: at(11, 0, 0).Format(time.RFC3339Nano), ExecutionID: id, Pending: true})
		if _, err := f.srv.start(f.l, journal.Trigger{Type: lang.TriggerSchedule, Name: "hourly", Payload: json.RawMessage(`{"scheduled_at":"2030-01-01T11:00:00Z"}`)}, id); err != nil {
			t.Fatal(err)
		}
		f.waitSucceeded(id)
		f.runAt(at(11, 0, 20))
		if n := len(f.runsOf("tick")); n != 1 {
			t.Errorf("%d runs, want the one that started", n)
		}
		if strings.Contains(logs.String(), "never started") {
			t.Errorf("a started run is taken for lost:\n%s", logs)
		}
	})
}

// TestScheduleSkipsOverlap: an occurrence that finds the workflow's runs at max_concurrent_runs
// with on_overlap = "skip" starts nothing and is recorded as skipped (no run to look for after a
// restart).
func TestScheduleSkipsOverlap(t *testing.T) {
	f := newScheduleFixture(t)
	g := f.srv.gateOf("tick")
	g.setLimit(1)
	tk, _, ok := g.enter(false) // a run holds the only slot
	if !ok {
		t.Fatal("the gate refused the first place")
	}
	f.record(firing{At: at(10, 0, 0).Format(time.RFC3339Nano)})
	f.runAt(at(11, 0, 30))
	if n := len(f.runsOf("tick")); n != 0 {
		t.Errorf("%d runs while the slot is taken, want none", n)
	}
	if got := f.recorded(); got != (firing{At: at(11, 0, 0).Format(time.RFC3339Nano), Skipped: true}) {
		t.Errorf("recorded %+v, want 11:00 skipped", got)
	}
	tk.wait(context.Background())()
	// The skipped occurrence is not fired again at the next start.
	f.runAt(at(11, 0, 40))
	if n := len(f.runsOf("tick")); n != 0 {
		t.Errorf("%d runs after a restart, want none: the occurrence was skipped", n)
	}
}

// TestScheduleFiresOnTime: served through Start, a schedule fires its next occurrence when the
// clock reaches it, records it and starts its run; Stop ends the schedule's goroutine.
func TestScheduleFiresOnTime(t *testing.T) {
	dir := t.TempDir()
	writeWorkflow(t, filepath.Join(dir, "tick.fsc.hcl"), tickSource)
	ts := newTestServer(t, dir, nil)
	// The schedule's clock runs with the real one, 300ms before 11:00.
	offset := at(11, 0, 0).Add(-300 * time.Millisecond).Sub(time.Now())
	ts.srv.cfg.Now = func() time.Time { return time.Now().Add(offset) }
	scope := journal.TriggerScope("tick", "hourly")
	if err := ts.srv.writeFiring(scope, lastFiredKey, firing{At: at(10, 0, 0).Format(time.RFC3339Nano)}); err != nil {
		t.Fatal(err)
	}
	ts.startServing()
	var runs []journal.Summary
	eventually(t, "the 11:00 occurrence starts a run", func() bool { runs = ts.runsOf("tick"); return len(runs) == 1 })
	ts.waitSucceeded(runs[0].ID)
	ex, err := ts.st.Execution(runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(ex.Outputs) != `{"at":"2030-01-01T11:00:00Z"}` {
		t.Errorf("the run of 11:00 has outputs %s", ex.Outputs)
	}
	eventually(t, "the firing is confirmed", func() bool {
		f, ok, err := ts.srv.readFiring(scope, lastFiredKey)
		return err == nil && ok && f == firing{At: at(11, 0, 0).Format(time.RFC3339Nano), ExecutionID: runs[0].ID}
	})
	ctx, cancel := context.WithTimeout(context.Background(), unitDeadline)
	defer cancel()
	ts.srv.Stop(ctx) // returns once the schedule's goroutine ended
	ts.srv.mu.Lock()
	l := ts.srv.workflows["tick"]
	ts.srv.mu.Unlock()
	l.wg.Wait()
}
