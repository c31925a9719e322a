package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
)

// entries reads a run's journal.
func (te *testEnv) entries(id string) []journal.Entry {
	te.t.Helper()
	var out []journal.Entry
	if err := te.store.Entries(id, 0, func(e journal.Entry) error { out = append(out, e); return nil }); err != nil {
		te.t.Fatal(err)
	}
	return out
}

// crashCopy journals, under a fresh run id, the entries of run src up to and including the
// first one for which cut is true: what the journal of a process that died right after
// writing that entry holds. The entries are rewritten for the new id (task ids embed it).
func (te *testEnv) crashCopy(src string, cut func(e journal.Entry) bool) string {
	te.t.Helper()
	return te.crashCopyWith(src, cut, nil)
}

// waitingCopy runs approvalWorkflow until its approval waits and returns the id of a crash copy
// of its journal up to that wait: a waiting run no process runs, as after a crash. The original
// run is cancelled and ended.
func (te *testEnv) waitingCopy() string {
	te.t.Helper()
	r := te.start(approvalWorkflow, StartOptions{})
	te.waitParked(r)
	id := te.crashCopy(r.ID(), func(e journal.Entry) bool { return e.Type == journal.NodeWaiting })
	r.Cancel()
	te.wait(r)
	return id
}

// crashCopyWith is crashCopy, with edit applied to each copied entry.
func (te *testEnv) crashCopyWith(src string, cut func(e journal.Entry) bool, edit func(*journal.Entry)) string {
	te.t.Helper()
	id := newID()
	var prefix []journal.Entry
	found := false
	for _, e := range te.entries(src) {
		e.Seq = 0
		e.TaskID = strings.Replace(e.TaskID, src, id, 1)
		if edit != nil {
			edit(&e)
		}
		prefix = append(prefix, e)
		if cut(e) {
			found = true
			break
		}
	}
	if !found {
		te.t.Fatalf("the journal of %s has no entry to cut at", src)
	}
	if err := te.store.Append(context.Background(), id, true, prefix...); err != nil {
		te.t.Fatal(err)
	}
	return id
}

// resume resumes run id and waits for its end.
func (te *testEnv) resume(id string) *journal.Execution {
	te.t.Helper()
	r, err := te.engine.Resume(context.Background(), id, ResumeOptions{})
	if err != nil {
		te.t.Fatal(err)
	}
	return te.wait(r)
}

func is(typ journal.EntryType, node string, index ...int) func(journal.Entry) bool {
	return func(e journal.Entry) bool {
		if e.Type != typ || e.Node != node || len(e.Index) != len(index) {
			return false
		}
		for i := range index {
			if e.Index[i] != index[i] {
				return false
			}
		}
		return true
	}
}

// attemptsOf lists the AttemptStarted entries of an instance.
func attemptsOf(entries []journal.Entry, node string, index ...int) []journal.Entry {
	var out []journal.Entry
	match := is(journal.AttemptStarted, node, index...)
	for _, e := range entries {
		if match(e) {
			out = append(out, e)
		}
	}
	return out
}

func TestResumeInFlightAttempt(t *testing.T) {
	for _, durability := range []string{"strict", "relaxed"} {
		t.Run(durability, func(t *testing.T) {
			te := newTestEnv(t)
			srvA := countingServer(t, 200)
			srvB := newPathServer(t)
			src := fmt.Sprintf(`
workflow "r" {
  durability = %q
}
task "a" {
  uses   = builtin.http
  inputs = { url = "%s/a" }
}
task "b" {
  uses   = builtin.http
  inputs = { url = "%s/b/${task.a.output.body.n}" }
}
task "c" {
  uses   = builtin.transform
  inputs = { path = task.b.output.body.path, n = task.a.output.body.n }
}
output "path" { value = task.c.output.path }
output "n" { value = task.c.output.n }
`, durability, srvA.URL, srvB.URL)
			ref := te.apply(src, StartOptions{})
			wantRun(t, ref, "succeeded")
			wantJSON(t, "outputs", ref.Outputs, `{"path": "/b/1", "n": 1}`)
			if srvA.n() != 1 {
				t.Fatalf("server A saw %d", srvA.n())
			}

			id := te.crashCopy(ref.ID, is(journal.AttemptStarted, "task.b"))
			crashed := te.entries(id)
			before := attemptsOf(crashed, "task.b")[0]
			if sum, err := te.store.Summary(id); err != nil || sum.Status != "running" {
				t.Fatalf("crashed run summary %v %v", sum.Status, err)
			}

			ex := te.resume(id)
			wantRun(t, ex, "succeeded")
			if srvA.n() != 1 {
				t.Fatalf("task.a ran again: server A saw %d requests", srvA.n())
			}
			wantJSON(t, "outputs", ex.Outputs, string(ref.Outputs))
			b := wantNode(t, ex, "task.b", "succeeded")
			if b.Attempts != 2 {
				t.Fatalf("task.b attempts %d, want 2", b.Attempts)
			}
			entries := te.entries(id)
			bs := attemptsOf(entries, "task.b")
			if len(bs) != 2 || bs[1].Attempt != 2 || bs[1].TaskID != before.TaskID || before.TaskID == "" {
				t.Fatalf("task.b attempts %s", jsonOf(t, bs))
			}
			if as := attemptsOf(entries, "task.a"); len(as) != 1 {
				t.Fatalf("task.a attempts %s", jsonOf(t, as))
			}
			if a := wantNode(t, ex, "task.a", "succeeded"); a.Attempts != 1 {
				t.Fatalf("task.a attempts %d", a.Attempts)
			}
			// A finished run is not resumed again.
			if _, err := te.engine.Resume(context.Background(), id, ResumeOptions{}); !errors.Is(err, ErrFinished) {
				t.Fatalf("resume of a finished run: %v", err)
			}
		})
	}
}

func TestResumeUnknown(t *testing.T) {
	te := newTestEnv(t)
	if _, err := te.engine.Resume(context.Background(), newID(), ResumeOptions{}); err == nil {
		t.Fatal("resume of an unknown run")
	}
}

func TestResumeForEachItems(t *testing.T) {
	te := newTestEnv(t)
	ps := newPathServer(t)
	ref := te.apply(fmt.Sprintf(`
workflow "r" {}
task "items" {
  uses        = builtin.http
  for_each    = ["x", "y", "z"]
  concurrency = 1
  inputs      = { url = "%s/${each.value}" }
}
output "paths" { value = [for o in task.items.output : o.body.path] }
`, ps.URL), StartOptions{})
	wantRun(t, ref, "succeeded")
	wantJSON(t, "outputs", ref.Outputs, `{"paths": ["/x", "/y", "/z"]}`)
	id := te.crashCopy(ref.ID, is(journal.AttemptStarted, "task.items", 1))
	ps.mu.Lock()
	ps.seen = nil
	ps.mu.Unlock()
	ex := te.resume(id)
	wantRun(t, ex, "succeeded")
	wantJSON(t, "outputs", ex.Outputs, string(ref.Outputs))
	if ps.saw("/x") || !ps.saw("/y") || !ps.saw("/z") {
		t.Fatalf("requests after resume: %v", ps.seen)
	}
	n := wantNode(t, ex, "task.items", "succeeded")
	if n.Instances[0].Attempts != 1 || n.Instances[1].Attempts != 2 || n.Instances[2].Attempts != 1 {
		t.Fatalf("instances %s", jsonOf(t, n.Instances))
	}
}

func TestResumeLoop(t *testing.T) {
	te := newTestEnv(t)
	ps := newPathServer(t)
	ref := te.apply(fmt.Sprintf(`
workflow "r" {}
loop "l" {
  for_each = ["x", "y", "z"]
  task "get" {
    uses   = builtin.http
    inputs = { url = "%s/${each.value}" }
  }
  task "shape" {
    uses   = builtin.transform
    inputs = { p = task.get.output.body.path, i = each.index }
  }
  output = task.shape.output
}
output "l" { value = loop.l.output }
`, ps.URL), StartOptions{})
	wantRun(t, ref, "succeeded")
	id := te.crashCopy(ref.ID, is(journal.AttemptStarted, "loop.l/task.get", 1))
	ps.mu.Lock()
	ps.seen = nil
	ps.mu.Unlock()
	ex := te.resume(id)
	wantRun(t, ex, "succeeded")
	wantJSON(t, "outputs", ex.Outputs, string(ref.Outputs))
	if ps.saw("/x") || !ps.saw("/y") || !ps.saw("/z") {
		t.Fatalf("requests after resume: %v", ps.seen)
	}
	l := wantNode(t, ex, "loop.l", "succeeded")
	if len(l.Iterations) != 3 || l.Iterations[1].Nodes["task.get"].Attempts != 2 || l.Iterations[2].Nodes["task.get"].Attempts != 1 {
		t.Fatalf("iterations %s", jsonOf(t, l))
	}
	entries := te.entries(id)
	if got := attemptsOf(entries, "loop.l/task.get", 0); len(got) != 1 {
		t.Fatalf("iteration 0 ran again: %s", jsonOf(t, got))
	}
}

func TestResumeRetryScheduled(t *testing.T) {
	te := newTestEnv(t)
	srv := countingServer(t, 503, 200)
	ref := te.apply(fmt.Sprintf(`
workflow "r" {}
task "a" {
  uses   = builtin.http
  inputs = { url = "%s" }
  retry {
    attempts      = 2
    initial_delay = "200ms"
    backoff       = "fixed"
  }
}
`, srv.URL), StartOptions{})
	wantRun(t, ref, "succeeded")
	// The crashed journal: attempt 1 failed, attempt 2 is due in 150ms.
	retryAt := time.Now().Add(150 * time.Millisecond).UTC()
	id := te.crashCopyWith(ref.ID, is(journal.AttemptFailed, "task.a"), func(e *journal.Entry) {
		if e.Type == journal.AttemptFailed {
			e.RetryAt = retryAt
		}
	})
	// The server answers 200 from now on (its third request): the resumed attempt is
	// attempt 2, the last one allowed, and starts at the journaled time.
	ex := te.resume(id)
	wantRun(t, ex, "succeeded")
	a := wantNode(t, ex, "task.a", "succeeded")
	if a.Attempts != 2 || a.FinishedAt.Before(retryAt) || srv.n() != 3 {
		t.Fatalf("attempts %d, finished %s, retry was due at %s, requests %d", a.Attempts, a.FinishedAt, retryAt, srv.n())
	}
	if as := attemptsOf(te.entries(id), "task.a"); len(as) != 2 || as[1].Attempt != 2 {
		t.Fatalf("attempts %s", jsonOf(t, as))
	}
}

func TestResumeWaitKeepsItsDeadline(t *testing.T) {
	te := newTestEnv(t)
	r := te.start(`
workflow "r" {}
wait "w" {
  duration = "2s"
}
task "after" {
  uses   = builtin.transform
  inputs = { w = wait.w.output }
}
`, StartOptions{})
	te.waitParked(r)
	var deadline time.Time
	id := te.crashCopy(r.ID(), func(e journal.Entry) bool {
		deadline = e.Deadline
		return e.Type == journal.NodeWaiting
	})
	r.Cancel()
	te.wait(r)
	// Resume 0.8 s before the deadline: kept, the wait ends about then; restarted, it would
	// take its whole 2 s. The margin between the two absorbs a loaded CI machine.
	time.Sleep(time.Until(deadline.Add(-800 * time.Millisecond)))
	start := time.Now()
	ex := te.resume(id)
	end := time.Now()
	wantRun(t, ex, "succeeded")
	wantNode(t, ex, "wait.w", "succeeded")
	wantNode(t, ex, "task.after", "succeeded")
	if end.Before(deadline) {
		t.Fatalf("the wait ended at %s, before its deadline %s", end, deadline)
	}
	if end.Sub(start) >= 1500*time.Millisecond {
		t.Fatalf("the resumed wait took %s: it restarted its duration instead of keeping its deadline %s", end.Sub(start), deadline)
	}
}

func TestResumeApproval(t *testing.T) {
	te := newTestEnv(t)
	id := te.waitingCopy()

	rr, err := te.engine.Resume(context.Background(), id, ResumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	te.waitParked(rr)
	if err := rr.Signal(context.Background(), "wait.approve", json.RawMessage(`{"ok": true}`), false); err != nil {
		t.Fatal(err)
	}
	ex := te.wait(rr)
	wantRun(t, ex, "succeeded")
	wantJSON(t, "outputs", ex.Outputs, `{"answer": {"ok": true}}`)
	if as := attemptsOf(te.entries(id), "task.before"); len(as) != 1 {
		t.Fatalf("task.before ran again: %s", jsonOf(t, as))
	}
}

func TestResumeResolvedApproval(t *testing.T) {
	te := newTestEnv(t)
	r := te.start(approvalWorkflow, StartOptions{})
	te.waitParked(r)
	if err := r.Signal(context.Background(), "wait.approve", json.RawMessage(`{"by": "ann"}`), false); err != nil {
		t.Fatal(err)
	}
	ref := te.wait(r)
	wantRun(t, ref, "succeeded")
	// The process died right after it journaled the answer.
	id := te.crashCopy(ref.ID, func(e journal.Entry) bool { return e.Type == journal.WaitResolved })
	ex := te.resume(id)
	wantRun(t, ex, "succeeded")
	wantJSON(t, "outputs", ex.Outputs, `{"answer": {"by": "ann"}}`)
}

func TestResumeCall(t *testing.T) {
	te := newTestEnv(t)
	te.write("child.fsc.hcl", childOK)
	ref := te.apply(callParent("propagate"), StartOptions{})
	wantRun(t, ref, "succeeded")
	childID := node(t, ref, "call.c").ChildID
	// The parent died after its child was linked (and the child finished on its own).
	id := te.crashCopy(ref.ID, func(e journal.Entry) bool { return e.Type == journal.NodeStarted && e.ChildID != "" })
	ex := te.resume(id)
	wantRun(t, ex, "succeeded")
	wantJSON(t, "outputs", ex.Outputs, string(ref.Outputs))
	if c := node(t, ex, "call.c"); c.ChildID != childID {
		t.Fatalf("child %s, want %s", c.ChildID, childID)
	}
}

func TestResumeInterruptedAttemptDoesNotCount(t *testing.T) {
	te := newTestEnv(t)
	srv := countingServer(t, 503)
	ref := te.apply(fmt.Sprintf(`
workflow "r" {}
task "b" {
  uses   = builtin.http
  inputs = { url = "%s" }
  retry {
    attempts      = 2
    initial_delay = "5ms"
  }
}
`, srv.URL), StartOptions{})
	wantRun(t, ref, "failed")
	if n := wantNode(t, ref, "task.b", "failed"); n.Attempts != 2 || srv.n() != 2 {
		t.Fatalf("reference run: attempts %d, requests %d", n.Attempts, srv.n())
	}
	// The process died during attempt 1: after resume two real attempts are still allowed.
	id := te.crashCopy(ref.ID, is(journal.AttemptStarted, "task.b"))
	ex := te.resume(id)
	wantRun(t, ex, "failed")
	b := wantNode(t, ex, "task.b", "failed")
	wantErr(t, "task.b", b, "retryable", "503")
	if b.Attempts != 3 || srv.n() != 4 {
		t.Fatalf("after resume: attempts %d (want 3), requests %d (want 4)", b.Attempts, srv.n())
	}
}

func TestResumeRecomputesSecretTransforms(t *testing.T) {
	te := newTestEnv(t)
	te.env["TOK"] = secretValue
	g := gaugeServer(t, time.Millisecond)
	ref := te.apply(fmt.Sprintf(`
workflow "r" {}
secret "tok" { env = "TOK" }
task "shape" {
  uses   = builtin.transform
  inputs = { auth = "Bearer ${secret.tok}" }
}
task "call" {
  uses   = builtin.http
  inputs = {
    url     = "%s/x"
    headers = { Authorization = task.shape.output.auth }
  }
}
`, g.URL), StartOptions{})
	wantRun(t, ref, "succeeded")
	id := te.crashCopy(ref.ID, is(journal.AttemptStarted, "task.call"))
	ex := te.resume(id)
	wantRun(t, ex, "succeeded")
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.headers) != 2 || g.headers[1].Get("Authorization") != "Bearer "+secretValue {
		t.Fatalf("the resumed attempt sent Authorization %q", g.headers[len(g.headers)-1].Get("Authorization"))
	}
}
