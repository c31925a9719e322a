package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	ctyjson "github.com/zclconf/go-cty/cty/json"

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
				// Iterations that never started keep their body nodes pending.
				if inner := it.Nodes["task.inner"].Status; it.Status != "cancelled" || (inner != "cancelled" && (i == 0 || inner != "pending")) {
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

func TestDataLimits(t *testing.T) {
	cases := []struct {
		name   string
		data   string
		uses   string
		status string
		kind   string
	}{
		{name: "transform over max_node_output fails", data: `max_node_output = "64"`, uses: "transform", status: "failed", kind: "data_limit_exceeded"},
		{name: "http over max_node_output fails", data: `max_node_output = "64"`, uses: "http", status: "failed", kind: "data_limit_exceeded"},
		{name: "transform spilled", data: "max_node_output = \"64\"\n    on_exceed = \"spill\"", uses: "transform", status: "succeeded"},
		{name: "http spilled", data: "max_node_output = \"64\"\n    on_exceed = \"spill\"", uses: "http", status: "succeeded"},
		{name: "max_total", data: `max_total = "100"`, uses: "transform", status: "failed", kind: "data_limit_exceeded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t)
			ps := newPathServer(t)
			inputs := `{ text = "${join("", [for i in range(20) : "abcdefgh"])}" }`
			if tc.uses == "http" {
				inputs = fmt.Sprintf(`{ url = "%s/${join("", [for i in range(20) : "abcdefgh"])}" }`, ps.URL)
			}
			ex := te.apply(fmt.Sprintf(`
workflow "d" {
  data {
    %s
  }
}
task "big" {
  uses   = builtin.%s
  inputs = %s
}
task "next" {
  uses   = builtin.transform
  inputs = { got = task.big.output }
}
`, tc.data, tc.uses, inputs), StartOptions{})
			big := wantNode(t, ex, "task.big", tc.status)
			if tc.kind != "" {
				wantErr(t, "task.big", big, tc.kind)
				return
			}
			next := wantNode(t, ex, "task.next", "succeeded")
			for what, out := range map[string]string{"task.big": string(big.Output), "task.next": string(next.Output)} {
				if !strings.Contains(out, `"artifact_id":"sha256:`) || strings.Contains(out, "abcdefgh") {
					t.Fatalf("%s output %s: want the artifact reference", what, out)
				}
			}
		})
	}
}

func TestTimeoutIsRetried(t *testing.T) {
	te := newTestEnv(t)
	ex := te.apply(`
workflow "t" {}
task "slow" {
  uses    = builtin.sleep
  timeout = "30ms"
  inputs  = { duration = "5s" }
  retry {
    attempts      = 2
    initial_delay = "5ms"
  }
}
`, StartOptions{})
	wantRun(t, ex, "failed")
	n := wantNode(t, ex, "task.slow", "failed")
	wantErr(t, "task.slow", n, "timeout", "30ms")
	if n.Attempts != 2 {
		t.Fatalf("attempts %d, want 2", n.Attempts)
	}
}

func TestCancelInterruptedRunInStore(t *testing.T) {
	te := newTestEnv(t)
	id := te.waitingCopy()
	if err := te.engine.Cancel(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	ex, err := te.store.Execution(id)
	if err != nil {
		t.Fatal(err)
	}
	wantRun(t, ex, "cancelled")
	if _, err := te.engine.Resume(context.Background(), id, ResumeOptions{}); err == nil {
		t.Fatal("a cancelled run was resumed")
	}
}

func TestJournalFailureEndsTheRun(t *testing.T) {
	te := newTestEnv(t)
	r := te.start(`
workflow "j" {}
task "nap" {
  uses   = builtin.sleep
  inputs = { duration = "50ms" }
}
task "after" {
  uses   = builtin.transform
  inputs = { x = task.nap.output }
}
`, StartOptions{})
	eventually(t, "the sleep to start", func() bool {
		ex, err := te.store.Execution(r.ID())
		return err == nil && ex.Nodes["task.nap"].Status == "running"
	})
	if err := te.store.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the run did not end after its journal failed")
	}
	if _, err := r.Result(); err == nil || !strings.Contains(err.Error(), "journal") {
		t.Fatalf("result error %v", err)
	}
}

func TestRunningWhileRetrying(t *testing.T) {
	te := newTestEnv(t)
	srv := countingServer(t, 503, 200)
	r := te.start(fmt.Sprintf(`
workflow "w" {}
wait "approve" {
  approval {}
}
task "a" {
  uses   = builtin.http
  inputs = { url = "%s" }
  retry {
    attempts      = 2
    initial_delay = "300ms"
    backoff       = "fixed"
  }
}
`, srv.URL), StartOptions{})
	eventually(t, "the first attempt", func() bool { return srv.n() == 1 })
	time.Sleep(50 * time.Millisecond)
	if sum, err := te.store.Summary(r.ID()); err != nil || sum.Status != "running" {
		t.Fatalf("while a retry is due the run is %s (%v), want running", sum.Status, err)
	}
	te.waitParked(r)
	if srv.n() != 2 {
		t.Fatalf("parked before the retry: %d requests", srv.n())
	}
	if err := r.Signal(context.Background(), "approve", nil, false); err != nil {
		t.Fatal(err)
	}
	wantRun(t, te.wait(r), "succeeded")
}

func TestJournalFailureWhileWaiting(t *testing.T) {
	for _, durability := range []string{"strict", "relaxed"} {
		t.Run(durability, func(t *testing.T) {
			te := newTestEnv(t)
			r := te.start(fmt.Sprintf(`
workflow "j" {
  durability = %q
}
wait "w" {
  duration = "60ms"
}
switch "s" {
  case "a" { when = wait.w.output == {} }
}
task "after" {
  uses  = builtin.transform
  after = [switch.s.a]
}
`, durability), StartOptions{})
			te.waitParked(r)
			if err := te.store.Close(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-r.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("the run did not end after its journal failed")
			}
			if _, err := r.Result(); err == nil {
				t.Fatal("no error from a run whose journal failed")
			}
		})
	}
}

// TestStartWithID: a run starts under a caller's id, once; an id the store has or a malformed
// one starts nothing.
func TestStartWithID(t *testing.T) {
	te := newTestEnv(t)
	src := `
workflow "w" {}
task "a" {
  uses   = builtin.transform
  inputs = { x = 1 }
}
`
	id := NewExecutionID()
	ex := te.apply(src, StartOptions{ID: id})
	if ex.ID != id {
		t.Fatalf("execution id = %s, want %s", ex.ID, id)
	}
	wantRun(t, ex, "succeeded")
	prog := te.program(te.write("wf.fsc.hcl", src))
	if _, err := te.engine.Start(context.Background(), prog, StartOptions{ID: id}); !errors.Is(err, ErrExecutionExists) {
		t.Errorf("a second Start with id %s = %v, want ErrExecutionExists", id, err)
	}
	if got := te.entries(id); len(got) != 4 {
		t.Errorf("the refused Start touched the journal of %s: %d entries", id, len(got))
	}
	if _, err := te.engine.Start(context.Background(), prog, StartOptions{ID: "not/an-id"}); err == nil || !strings.Contains(err.Error(), "not/an-id") {
		t.Errorf("Start with a malformed id = %v, want an error naming it", err)
	}
}

// TestNullPayload: a null payload is no payload: trigger.payload is {} (docs/reference/language.md).
func TestNullPayload(t *testing.T) {
	te := newTestEnv(t)
	ex := te.apply(`
workflow "w" {}
task "a" {
  uses   = builtin.transform
  inputs = { p = trigger.payload }
}
`, StartOptions{Trigger: journal.Trigger{Type: "manual", Name: "default", Payload: []byte(" null ")}})
	wantRun(t, ex, "succeeded")
	wantJSON(t, "trigger payload", ex.Trigger.Payload, `{}`)
	wantJSON(t, "task.a output", ex.Nodes["task.a"].Output, `{"p": {}}`)
}

// TestPayloadReadInParts: a run builds only the parts of its payload that the workflow reads
// (lang.Workflow.PayloadReads), and every way of reading it gives what the whole payload gives:
// attributes, string keys, a number index, a function over an object, a missing attribute
// under try, a loop body and an output; the journal keeps the whole payload.
func TestPayloadReadInParts(t *testing.T) {
	te := newTestEnv(t)
	payload := `{"method":"POST","headers":{"Content-Type":"application/json","X-A":"1"},"query":{"b":"2","a":"1"},` +
		`"body":{"id":42,"items":[{"n":1},{"n":2}],"user":{"name":"ann","roles":["x"]},"unread":{"big":[1,2,3]}}}`
	ex := te.apply(`
workflow "w" {}
task "a" {
  uses   = builtin.transform
  inputs = {
    id      = trigger.payload.body.id
    type    = trigger.payload.headers["Content-Type"]
    first   = trigger.payload.body.items[0].n
    keys    = keys(trigger.payload.query)
    missing = try(trigger.payload.body.nope, "default")
    name    = trigger.payload.body.user.name
    trigger = trigger.name
  }
}
loop "l" {
  for_each = [1, 2]

  task "b" {
    uses   = builtin.transform
    inputs = { m = "${trigger.payload.method}-${each.value}" }
  }
  output = task.b.output.m
}
output "roles" {
  value = trigger.payload.body.user.roles
}
`, StartOptions{Trigger: journal.Trigger{Type: "manual", Name: "default", Payload: []byte(payload)}})
	wantRun(t, ex, "succeeded")
	wantJSON(t, "trigger payload", ex.Trigger.Payload, payload)
	wantJSON(t, "task.a output", ex.Nodes["task.a"].Output,
		`{"id":42,"type":"application/json","first":1,"keys":["a","b"],"missing":"default","name":"ann","trigger":"default"}`)
	wantJSON(t, "loop.l output", ex.Nodes["loop.l"].Output, `["POST-1","POST-2"]`)
	wantJSON(t, "outputs", ex.Outputs, `{"roles":["x"]}`)

	w := te.program(te.write("parts.fsc.hcl", `
workflow "w" {}
task "a" {
  uses   = builtin.transform
  inputs = { id = trigger.payload.body.id, q = trigger.payload.query }
}
`)).Workflow
	r, err := te.engine.newRun(context.Background(), &Program{Workflow: w},
		StartOptions{Trigger: journal.Trigger{Type: "manual", Name: "default", Payload: []byte(payload)}}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer r.release()
	built, err := ctyjson.Marshal(r.trigger, r.trigger.Type())
	if err != nil {
		t.Fatal(err)
	}
	wantJSON(t, "the trigger built", built, `{"name":"default","payload":{"body":{"id":42},"query":{"a":"1","b":"2"}},"type":"manual"}`)
}

// TestCancelARunResumedElsewhereThatDetaches: Cancel finds the run active but detached (parked
// just before), waits for it to leave, and finds it active again when its own Resume is
// refused — resumed by another caller meanwhile — and that run too has detached before it could
// take the cancel. Cancel must go round again and cancel the run, not report success with the
// run still waiting. A stand-in run, registered by hand, plays both active runs, so that the
// order is fixed rather than raced.
func TestCancelARunResumedElsewhereThatDetaches(t *testing.T) {
	te := newTestEnv(t)
	id := te.waitingCopy()

	e := te.engine
	standIn := &Run{id: id, inbox: make(chan func()), done: make(chan struct{}), hasDetached: true}
	register := func(on bool) {
		e.mu.Lock()
		defer e.mu.Unlock()
		if on {
			e.runs[id] = standIn
		} else {
			delete(e.runs, id)
		}
	}
	register(true)
	t.Cleanup(func() { register(false) })
	// asked waits until Cancel has asked the stand-in to cancel (it is polled: the stand-in has
	// no loop to tell), and forgets the request for the next one.
	asked := func(which string) {
		deadline := time.Now().Add(runDeadline)
		for !standIn.cancelRequested.Swap(false) {
			if time.Now().After(deadline) {
				t.Errorf("Cancel did not make its %s request to the active run", which)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	left := make(chan struct{})
	go func() {
		defer close(left)
		// The first cancel finds it detached: it leaves, and stays registered, as a run
		// resumed by another caller at once would be.
		asked("first")
		close(standIn.done)
		// The second finds it detached again; then no process runs it.
		asked("second")
		register(false)
	}()
	if err := e.Cancel(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	<-left
	ex, err := te.store.Execution(id)
	if err != nil {
		t.Fatal(err)
	}
	wantRun(t, ex, "cancelled")
}
