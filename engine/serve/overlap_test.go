package serve

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/engine/journal"
)

// napSource is a workflow whose run sleeps for the duration its trigger's payload names (a
// webhook's JSON body, or a manual start's payload), under max_concurrent_runs = limit and
// on_overlap = overlap.
func napSource(limit int, overlap string) string {
	return fmt.Sprintf(`workflow "nap" {
  max_concurrent_runs = %d
  on_overlap          = %q
}

trigger "webhook" "in" { path = "/hooks/nap" }
trigger "manual" "go" {}

task "nap" {
  uses   = builtin.sleep
  inputs = { duration = trigger.type == "webhook" ? trigger.payload.body.d : trigger.payload.d }
}
`, limit, overlap)
}

func newNapServer(t *testing.T, limit int, overlap string) *testServer {
	t.Helper()
	dir := t.TempDir()
	writeWorkflow(t, filepath.Join(dir, "nap.fsc.hcl"), napSource(limit, overlap))
	ts := newTestServer(t, dir, nil)
	ts.cancelAtEnd()
	ts.startServing()
	return ts
}

// gateState is the gate of workflow name: runs holding a slot, runs queued.
func (ts *testServer) gateState(name string) (running, queued int) {
	g := ts.srv.gateOf(name)
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.running, len(g.queue)
}

// TestOverlapSkip: with on_overlap = "skip", a trigger that finds max_concurrent_runs runs
// going is answered 409 and starts nothing, webhook and API alike; once a run ends, the next
// trigger starts.
func TestOverlapSkip(t *testing.T) {
	ts := newNapServer(t, 2, "skip")
	first := ts.postJSON("/hooks/nap", `{"d": "1h"}`).startedID(t, "first run")
	second := ts.api(http.MethodPost, "/v1/workflows/nap/runs", `{"payload": {"d": "1h"}}`).startedID(t, "second run")

	for _, r := range []reply{
		ts.postJSON("/hooks/nap", `{"d": "1ms"}`),
		ts.api(http.MethodPost, "/v1/workflows/nap/runs", `{"payload": {"d": "1ms"}}`),
	} {
		reason, _ := r.body["reason"].(string)
		if r.code != http.StatusConflict || r.body["skipped"] != true ||
			!strings.Contains(reason, `nap already has 2 run(s) going (max_concurrent_runs = 2, on_overlap = "skip")`) {
			t.Errorf("a third run: %d %s, want 409 skipped naming the limit", r.code, r.raw)
		}
	}
	if n := len(ts.runsOf("nap")); n != 2 {
		t.Fatalf("%d runs after two skipped triggers, want 2", n)
	}
	if running, queued := ts.gateState("nap"); running != 2 || queued != 0 {
		t.Errorf("gate: %d running, %d queued; want 2 and 0", running, queued)
	}

	ts.cancelRun(first)
	eventually(t, "the cancelled run gives its slot back", func() bool { r, _ := ts.gateState("nap"); return r == 1 })
	third := ts.postJSON("/hooks/nap", `{"d": "1ms"}`).startedID(t, "a run once a slot is free")
	ts.waitSucceeded(third)
	ts.cancelRun(second)
	eventually(t, "every slot is given back", func() bool { r, q := ts.gateState("nap"); return r == 0 && q == 0 })
}

// TestOverlapQueue: with on_overlap = "queue", a trigger over the limit starts a run that is
// answered 202 "queued", journaled at once, and runs nothing until a slot frees; queued runs go
// in the order they came.
func TestOverlapQueue(t *testing.T) {
	ts := newNapServer(t, 1, "queue")
	first := ts.postJSON("/hooks/nap", `{"d": "1h"}`)
	if first.body["queued"] != nil {
		t.Errorf("the first run is answered %s, want no queued", first.raw)
	}
	long := first.startedID(t, "first run")
	eventually(t, "the first run sleeps", func() bool { return ts.nodeStatus(long, "task.nap") == journal.StatusRunning })

	var queued []string
	for i := 0; i < 2; i++ {
		r := ts.postJSON("/hooks/nap", `{"d": "1ms"}`)
		if r.body["queued"] != true {
			t.Fatalf("run %d over the limit: %s, want queued", i+2, r.raw)
		}
		queued = append(queued, r.startedID(t, "queued run"))
	}
	if running, q := ts.gateState("nap"); running != 1 || q != 2 {
		t.Fatalf("gate: %d running, %d queued; want 1 and 2", running, q)
	}
	// Journaled, and held before any node: the slot is the first run's.
	for _, id := range queued {
		if sum, err := ts.st.Summary(id); err != nil || journal.Finished(sum.Status) {
			t.Errorf("queued run %s: %v %v, want journaled and unfinished", id, sum.Status, err)
		}
		if s := ts.nodeStatus(id, "task.nap"); s == journal.StatusRunning || s == journal.StatusSucceeded {
			t.Errorf("queued run %s has its task %s while the slot is taken", id, s)
		}
	}
	if depth := ts.srv.queueDepths()["nap"]; depth != 2 {
		t.Errorf("queue depth metric %d, want 2", depth)
	}

	ts.cancelRun(long)
	for _, id := range queued {
		ts.waitSucceeded(id)
	}
	a, _ := ts.st.Summary(queued[0])
	b, _ := ts.st.Summary(queued[1])
	ea, _ := ts.st.Execution(queued[0])
	eb, _ := ts.st.Execution(queued[1])
	if sa, sb := ea.Nodes["task.nap"].StartedAt, eb.Nodes["task.nap"].StartedAt; sa == nil || sb == nil || sb.Before(*sa) {
		t.Errorf("queued runs %s (started %v) and %s (started %v) did not run in order", a.ID, sa, b.ID, sb)
	}
	eventually(t, "every slot is given back", func() bool { r, q := ts.gateState("nap"); return r == 0 && q == 0 })
}

// TestOverlapQueuedRunCancelled: a queued run cancelled before its turn ends cancelled and takes
// no slot: the run after it gets the slot when the running one ends.
func TestOverlapQueuedRunCancelled(t *testing.T) {
	ts := newNapServer(t, 1, "queue")
	long := ts.postJSON("/hooks/nap", `{"d": "1h"}`).startedID(t, "first run")
	waiting := ts.postJSON("/hooks/nap", `{"d": "1h"}`).startedID(t, "queued run")
	next := ts.postJSON("/hooks/nap", `{"d": "1ms"}`).startedID(t, "second queued run")
	ts.cancelRun(waiting)
	eventually(t, "the cancelled run leaves the queue", func() bool { _, q := ts.gateState("nap"); return q == 1 })
	if s := ts.nodeStatus(waiting, "task.nap"); s == journal.StatusRunning || s == journal.StatusSucceeded {
		t.Errorf("the cancelled queued run's task is %s", s)
	}
	ts.cancelRun(long)
	ts.waitSucceeded(next)
	eventually(t, "every slot is given back", func() bool { r, q := ts.gateState("nap"); return r == 0 && q == 0 })
}

// TestOverlapStartFailureFreesSlot: a trigger whose run cannot start (its secret cannot be read)
// is answered 500 naming why, and gives its place at the gate back: the next trigger is not
// skipped.
func TestOverlapStartFailureFreesSlot(t *testing.T) {
	dir := t.TempDir()
	writeWorkflow(t, filepath.Join(dir, "broken.fsc.hcl"), fmt.Sprintf(`workflow "broken" {
  max_concurrent_runs = 1
  on_overlap          = "skip"
}

secret "key" { file = %q }

trigger "webhook" "in" { path = "/hooks/broken" }

task "t" {
  uses   = builtin.transform
  inputs = { x = 1 }
}
`, filepath.Join(dir, "missing-secret")))
	ts := newTestServer(t, dir, nil)
	logs := ts.logTo()
	ts.startServing()
	for i := 0; i < 3; i++ {
		r := ts.postJSON("/hooks/broken", `{}`)
		// The caller is told that the server failed and under which reference its log has
		// the details; not the details (a secret's name, a file's path).
		msg := fmt.Sprint(r.body["error"])
		if r.code != http.StatusInternalServerError || !strings.Contains(msg, "the webhook could not start a run") || strings.Contains(msg, "missing-secret") {
			t.Fatalf("request %d: %d %s, want 500 without the details", i+1, r.code, r.raw)
		}
		_, ref, _ := strings.Cut(msg, "ref=")
		ref = strings.TrimSuffix(ref, ")")
		if len(ref) != 12 || !strings.Contains(logs.String(), ref) {
			t.Fatalf("request %d: the reference %q of %q is not in the log:\n%s", i+1, ref, msg, logs)
		}
	}
	if running, queued := ts.gateState("broken"); running != 0 || queued != 0 {
		t.Errorf("gate after failed starts: %d running, %d queued; want none", running, queued)
	}
	if n := len(ts.runsOf("broken")); n != 0 {
		t.Errorf("%d runs journaled, want none", n)
	}
	if !strings.Contains(logs.String(), "webhook could not start a run") || !strings.Contains(logs.String(), `secret \"key\": cannot read`) {
		t.Errorf("the failure is not logged:\n%s", logs)
	}
	// The file is fixed: the secret exists; the next trigger starts.
	if err := os.WriteFile(filepath.Join(dir, "missing-secret"), []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts.waitSucceeded(ts.postJSON("/hooks/broken", `{}`).startedID(t, "after the fix"))
}

// TestOverlapReloadRaisesLimit: raising max_concurrent_runs in the file lets the queued runs go
// at the reload, without waiting for a running one to end.
func TestOverlapReloadRaisesLimit(t *testing.T) {
	ts := newNapServer(t, 1, "queue")
	long := ts.postJSON("/hooks/nap", `{"d": "1h"}`).startedID(t, "first run")
	queued := ts.postJSON("/hooks/nap", `{"d": "1ms"}`)
	if queued.body["queued"] != true {
		t.Fatalf("second run: %s, want queued", queued.raw)
	}
	id := queued.startedID(t, "queued run")
	writeWorkflow(t, filepath.Join(ts.dir, "nap.fsc.hcl"), napSource(2, "queue")+"\n# raised\n")
	ts.srv.look()
	ts.waitSucceeded(id)
	if sum, _ := ts.st.Summary(long); journal.Finished(sum.Status) {
		t.Fatalf("the first run ended (%s) before the queued one ran", sum.Status)
	}
	// Lowered again: a run over the new limit queues again.
	writeWorkflow(t, filepath.Join(ts.dir, "nap.fsc.hcl"), napSource(1, "queue"))
	ts.srv.look()
	if r := ts.postJSON("/hooks/nap", `{"d": "1ms"}`); r.body["queued"] != true {
		t.Errorf("a run over the lowered limit: %s, want queued", r.raw)
	}
	ts.cancelRun(long)
}
