package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/internal/runtime/builtins"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
)

// restart stops ts's server at once (its attempts are interrupted, as a shutdown's grace
// ending does) and returns a new server and engine on the same open store and directory, as
// the next `fuscia serve` would be. The store stays ts's to close.
func (ts *testServer) restart() *testServer {
	ts.t.Helper()
	t := ts.t
	ts.http.Close()
	over, cancel := context.WithCancel(context.Background())
	cancel()
	ts.srv.Stop(over)
	ts.srv.eng.Wait()

	srv := New(Config{Paths: []string{ts.dir}, ReloadInterval: time.Hour,
		Load: func(_ context.Context, file string, _ []byte) (*engine.Program, error) { return loadProgram(file) }})
	runner := builtin.New(builtin.Options{})
	eng := engine.New(engine.Config{
		Store: ts.st, Tasks: task.ByKind{lang.UsesBuiltin: builtins.New(runner)},
		Artifacts: artifact.Dir{Root: filepath.Join(t.TempDir(), "artifacts")},
		ParkWaits: true, OnRunEnd: srv.RunEnded,
	})
	srv.Attach(eng, ts.st)
	next := &testServer{t: t, dir: ts.dir, srv: srv, st: ts.st, http: httptest.NewServer(srv.Handler())}
	t.Cleanup(func() {
		next.http.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Stop(ctx)
		eng.Wait()
		runner.Close()
	})
	return next
}

// TestRestartResumesUnfinished: the next serve resumes, at Start, the runs the last one left
// unfinished — an interrupted one runs its task again, a parked one parks again — and a resumed
// run holds its place under max_concurrent_runs: a new trigger is skipped while it runs.
func TestRestartResumesUnfinished(t *testing.T) {
	dir := t.TempDir()
	writeWorkflow(t, filepath.Join(dir, "nap.fsc.hcl"), napSource(1, "skip"))
	writeWorkflow(t, filepath.Join(dir, "long.fsc.hcl"), pauseSource("long", "1h"))
	first := newTestServer(t, dir, nil)
	first.startServing()
	napping := first.postJSON("/hooks/nap", `{"d": "1h"}`).startedID(t, "a long run")
	eventually(t, "the task runs", func() bool { return first.nodeStatus(napping, "task.nap") == journal.StatusRunning })
	parked := first.postJSON("/hooks/long", `{}`).startedID(t, "a waiting run")
	eventually(t, "the waiting run parks", func() bool { return first.srv.parked.len() == 1 })

	next := first.restart()
	next.cancelAtEnd()
	for _, id := range []string{napping, parked} {
		if sum, err := next.st.Summary(id); err != nil || journal.Finished(sum.Status) {
			t.Fatalf("run %s after the stop: %v %v, want unfinished", id, sum.Status, err)
		}
	}
	if next.srv.eng.Active(napping) != nil {
		t.Fatal("the new engine runs the run before Start")
	}
	next.startServing()
	eventually(t, "the interrupted run runs its task again", func() bool {
		ex, err := next.st.Execution(napping)
		if err != nil {
			return false
		}
		n := ex.Nodes["task.nap"]
		return next.srv.eng.Active(napping) != nil && n != nil && n.Status == journal.StatusRunning && n.Attempts >= 2
	})
	eventually(t, "the waiting run parks again", func() bool {
		return next.srv.parked.len() == 1 && next.srv.eng.Active(parked) == nil
	})
	if s := next.nodeStatus(parked, "wait.w"); s != journal.StatusWaiting {
		t.Errorf("the parked run's wait is %q, want waiting", s)
	}
	// The resumed run holds the only slot.
	if r := next.postJSON("/hooks/nap", `{"d": "1ms"}`); r.code != http.StatusConflict {
		t.Errorf("a trigger while the resumed run holds the slot: %d %s, want 409", r.code, r.raw)
	}
	next.cancelRun(napping)
	eventually(t, "the slot is free", func() bool { r, _ := next.gateState("nap"); return r == 0 })
	next.waitSucceeded(next.postJSON("/hooks/nap", `{"d": "1ms"}`).startedID(t, "a run once the slot is free"))
}
