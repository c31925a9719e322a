package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
)

func TestMaxDuration(t *testing.T) {
	te := newTestEnv(t)
	start := time.Now()
	ex := te.apply(`
workflow "md" {
  max_duration = "100ms"
}
task "nap" {
  uses   = builtin.sleep
  inputs = { duration = "5s" }
}
task "after" {
  uses   = builtin.transform
  inputs = { x = task.nap.output }
}
wait "park" {
  approval {}
}
`, StartOptions{})
	took := time.Since(start)
	if took < 100*time.Millisecond {
		t.Fatalf("ended after %s, before max_duration", took)
	}
	within(t, "the run", took, 2*time.Second)
	wantRun(t, ex, "timed_out")
	wantErr(t, "run", &journal.NodeView{Error: ex.Error}, "timeout", "max_duration")
	wantErr(t, "task.nap", wantNode(t, ex, "task.nap", "cancelled"), "cancelled")
	wantNode(t, ex, "task.after", "cancelled")
	wantNode(t, ex, "wait.park", "cancelled")
	if sum, err := te.store.Summary(ex.ID); err != nil || sum.Status != "timed_out" || sum.FinishedAt == nil {
		t.Fatalf("summary %s %v", jsonOf(t, sum), err)
	}
}

func TestCancel(t *testing.T) {
	const src = `
workflow "c" {}
task "nap" {
  uses   = builtin.sleep
  inputs = { duration = "5s" }
}
task "after" {
  uses   = builtin.transform
  inputs = { x = task.nap.output }
}
loop "l" {
  for_each = [1, 2, 3]
  task "inner" {
    uses   = builtin.sleep
    inputs = { duration = "5s" }
  }
}
`
	cases := []struct {
		name   string
		cancel func(te *testEnv, r *Run, stop context.CancelFunc)
	}{
		{name: "Run.Cancel", cancel: func(_ *testEnv, r *Run, _ context.CancelFunc) { r.Cancel() }},
		{name: "Engine.Cancel", cancel: func(te *testEnv, r *Run, _ context.CancelFunc) {
			if err := te.engine.Cancel(context.Background(), r.ID()); err != nil {
				te.t.Fatal(err)
			}
		}},
		{name: "the Start context", cancel: func(_ *testEnv, _ *Run, stop context.CancelFunc) { stop() }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t)
			prog := te.program(te.write("wf.fsc.hcl", src))
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			r, err := te.engine.Start(ctx, prog, StartOptions{})
			if err != nil {
				t.Fatal(err)
			}
			eventually(t, "the sleeps to start", func() bool {
				ex, err := te.store.Execution(r.ID())
				return err == nil && ex.Nodes["task.nap"].Status == "running" && ex.Nodes["loop.l"].Status == "running"
			})
			start := time.Now()
			tc.cancel(te, r, stop)
			ex := te.wait(r)
			within(t, "cancel", time.Since(start), time.Second)
			wantRun(t, ex, "cancelled")
			wantErr(t, "run", &journal.NodeView{Error: ex.Error}, "cancelled")
			wantNode(t, ex, "task.nap", "cancelled")
			wantNode(t, ex, "task.after", "cancelled")
			l := wantNode(t, ex, "loop.l", "cancelled")
			for i, it := range l.Iterations {
				if it.Status != "cancelled" || it.Nodes["task.inner"].Status != "cancelled" {
					t.Fatalf("iteration %d: %s", i, jsonOf(t, it))
				}
			}
		})
	}
}

func TestCancelParked(t *testing.T) {
	te := newTestEnv(t)
	r := te.start(approvalWorkflow, StartOptions{})
	te.waitParked(r)
	r.Cancel()
	ex := te.wait(r)
	wantRun(t, ex, "cancelled")
	wantNode(t, ex, "task.before", "succeeded")
	wantNode(t, ex, "wait.approve", "cancelled")
	wantNode(t, ex, "task.after", "cancelled")
}

func TestCancelUnfinishedInStore(t *testing.T) {
	te := newTestEnv(t)
	ex := te.apply(`workflow "x" {}
task "a" {
  uses = builtin.transform
}
`, StartOptions{})
	if err := te.engine.Cancel(context.Background(), ex.ID); err == nil || !strings.Contains(err.Error(), "already ended") {
		t.Fatalf("cancel of a finished run: %v", err)
	}
	if err := te.engine.Cancel(context.Background(), "nope"); err == nil {
		t.Fatal("cancel of an unknown run")
	}
}

func TestOutputs(t *testing.T) {
	te := newTestEnv(t)
	ex := te.apply(`
workflow "o" {}
variable "name" {
  type    = string
  default = "fuscia"
}
task "a" {
  uses   = builtin.transform
  inputs = { v = "hi ${var.name}", list = [1, 2] }
}
task "skipped" {
  uses   = builtin.transform
  when   = false
  inputs = { v = 1 }
}
output "greeting" { value = task.a.output.v }
output "count" { value = length(task.a.output.list) }
output "from_skipped" { value = task.skipped.output.v }
output "whole_skipped" { value = task.skipped.output }
output "hidden" {
  value     = task.a.output.v
  sensitive = true
}
`, StartOptions{})
	wantRun(t, ex, "succeeded")
	wantJSON(t, "outputs", ex.Outputs, `{"greeting": "hi fuscia", "count": 2, "from_skipped": null, "whole_skipped": null, "hidden": {"sensitive": true}}`)
}

func TestDurabilityRelaxed(t *testing.T) {
	for _, durability := range []string{"strict", "relaxed"} {
		t.Run(durability, func(t *testing.T) {
			te := newTestEnv(t)
			srv := countingServer(t, 503, 200)
			ex := te.apply(fmt.Sprintf(`
workflow "d" {
  durability = %q
}
task "a" {
  uses   = builtin.http
  inputs = { url = "%s" }
  retry {
    attempts      = 2
    initial_delay = "5ms"
  }
}
task "items" {
  uses     = builtin.transform
  for_each = [1, 2, 3]
  inputs   = { v = each.value + task.a.output.body.n }
}
switch "s" {
  case "yes" { when = task.a.output.status == 200 }
}
task "yes" {
  uses   = builtin.transform
  after  = [switch.s.yes]
  inputs = { items = task.items.output }
}
loop "l" {
  for_each = [1, 2]
  task "t" {
    uses   = builtin.transform
    inputs = { v = each.value * 10 }
  }
}
join "j" {
  after = [task.yes, loop.l]
}
wait "w" {
  duration = "10ms"
}
output "items" { value = task.yes.output.items }
`, durability, srv.URL), StartOptions{})
			wantRun(t, ex, "succeeded")
			wantJSON(t, "outputs", ex.Outputs, `{"items": [{"v": 3}, {"v": 4}, {"v": 5}]}`)
			if n := wantNode(t, ex, "task.a", "succeeded"); n.Attempts != 2 {
				t.Fatalf("attempts %d", n.Attempts)
			}
			wantNode(t, ex, "join.j", "succeeded")
			wantNode(t, ex, "wait.w", "succeeded")
			var entries []journal.Entry
			if err := te.store.Entries(ex.ID, 0, func(e journal.Entry) error { entries = append(entries, e); return nil }); err != nil {
				t.Fatal(err)
			}
			if entries[0].Run == nil || entries[0].Run.Durability != durability || entries[len(entries)-1].Type != journal.RunFinished {
				t.Fatalf("journal: first %s, last %s", jsonOf(t, entries[0]), jsonOf(t, entries[len(entries)-1]))
			}
			for i := 1; i < len(entries); i++ {
				if entries[i].Seq <= entries[i-1].Seq {
					t.Fatalf("entries out of order at %d", i)
				}
			}
		})
	}
}

func TestEvents(t *testing.T) {
	te := newTestEnv(t)
	var events []Event
	ex := te.apply(`
workflow "e" {}
task "a" {
  uses   = builtin.transform
  inputs = { v = 1 }
}
task "items" {
  uses     = builtin.transform
  for_each = [1, 2]
  inputs   = { v = each.value + task.a.output.v }
}
`, StartOptions{Observer: func(ev Event) { events = append(events, ev) }})
	wantRun(t, ex, "succeeded")
	if len(events) < 4 || events[0].Type != EventExecutionStarted || events[len(events)-1].Type != EventExecutionFinished {
		t.Fatalf("events %s", jsonOf(t, events))
	}
	last := events[len(events)-1]
	if last.Status != "succeeded" || last.Execution == nil || last.Execution.Status != "succeeded" {
		t.Fatalf("last event %s", jsonOf(t, last))
	}
	finished := map[string]bool{}
	for _, ev := range events {
		if ev.Type == EventNodeFinished && len(ev.Index) == 0 {
			finished[ev.Node] = true
		}
	}
	if !finished["task.a"] || !finished["task.items"] {
		t.Fatalf("node_finished events: %v", finished)
	}
}
