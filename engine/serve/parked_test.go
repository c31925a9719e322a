package serve

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/engine/journal"
)

// pauseSource is workflow name, whose run started at /hooks/NAME waits for duration, then
// finishes.
func pauseSource(name, duration string) string {
	return fmt.Sprintf(`workflow %q {}

trigger "webhook" "in" { path = "/hooks/%s" }

wait "w" { duration = %q }

task "after" {
  uses   = builtin.transform
  after  = [wait.w]
  inputs = { done = true }
}

output "done" { value = task.after.output.done }
`, name, name, duration)
}

func newPauseServer(t *testing.T) *testServer {
	t.Helper()
	dir := t.TempDir()
	// 3s: over the engine's minimum for parking (1s).
	writeWorkflow(t, filepath.Join(dir, "short.fsc.hcl"), pauseSource("short", "3s"))
	writeWorkflow(t, filepath.Join(dir, "long.fsc.hcl"), pauseSource("long", "1h"))
	ts := newTestServer(t, dir, nil)
	ts.cancelAtEnd()
	ts.startServing()
	return ts
}

// parkedCount is the health answer's parked_runs.
func (ts *testServer) parkedCount() int {
	ts.t.Helper()
	h := ts.send(http.MethodGet, "/v1/health", "", nil)
	n, _ := h.body["parked_runs"].(float64)
	return int(n)
}

// TestParkedRunResumesWhenDue: a run whose only work left is a wait leaves memory (parked, as
// the health answer counts it) and is resumed by serve when the wait is due; a ?wait=true
// request waits through the park for the end.
func TestParkedRunResumesWhenDue(t *testing.T) {
	ts := newPauseServer(t)
	id := ts.postJSON("/hooks/short", `{}`).startedID(t, "a pausing run")
	eventually(t, "the run parks", func() bool { return ts.srv.parked.len() == 1 && ts.srv.eng.Active(id) == nil })
	if n := ts.parkedCount(); n > 1 {
		t.Errorf("health counts %d parked runs, want at most 1", n)
	}
	ts.waitSucceeded(id)
	eventually(t, "the resumed run leaves the wait index", func() bool { return ts.srv.parked.len() == 0 })
	if n := ts.parkedCount(); n != 0 {
		t.Errorf("health counts %d parked runs after the end, want 0", n)
	}

	r := ts.postJSON("/hooks/short?wait=true", `{}`)
	if r.code != http.StatusOK || r.body["status"] != journal.StatusSucceeded {
		t.Errorf("?wait=true through a park: %d %s, want 200 succeeded", r.code, r.raw)
	}
}

// TestResumeParkedRun: POST /v1/executions/{id}/resume continues a parked run at once; one
// whose wait is not over parks again. A signal for a run no process runs resumes it the same
// way; one for a finished run does nothing.
func TestResumeParkedRun(t *testing.T) {
	ts := newPauseServer(t)
	logs := ts.logTo()
	id := ts.postJSON("/hooks/long", `{}`).startedID(t, "a pausing run")
	eventually(t, "the run parks", func() bool { return ts.srv.parked.len() == 1 && ts.srv.eng.Active(id) == nil })
	if n := ts.parkedCount(); n != 1 {
		t.Errorf("health counts %d parked runs, want 1", n)
	}

	r := ts.api(http.MethodPost, "/v1/executions/"+id[:len(id)-2]+"/resume", "")
	if r.code != http.StatusAccepted || r.body["execution_id"] != id || r.body["status"] != journal.StatusRunning {
		t.Fatalf("resume by an id prefix: %d %s, want 202 running with the full id", r.code, r.raw)
	}
	if !strings.Contains(logs.String(), `"msg":"run resumed"`) {
		t.Errorf("the resume is not logged:\n%s", logs)
	}
	// The hour is not over: the run parks again, still waiting.
	eventually(t, "the resumed run parks again", func() bool { return ts.srv.parked.len() == 1 && ts.srv.eng.Active(id) == nil })
	if s := ts.nodeStatus(id, "wait.w"); s != journal.StatusWaiting {
		t.Errorf("the wait is %q after the resume, want waiting", s)
	}

	ts.srv.Signaled(id)
	eventually(t, "the signalled run parks again", func() bool {
		return strings.Count(logs.String(), `"msg":"run resumed"`) == 2 && ts.srv.parked.len() == 1 && ts.srv.eng.Active(id) == nil
	})

	ts.cancelRun(id)
	eventually(t, "the cancelled run leaves the wait index", func() bool { return ts.srv.parked.len() == 0 })
	ts.srv.Signaled(id) // finished: nothing to do, nothing to complain about
	if strings.Contains(logs.String(), "could not be resumed") {
		t.Errorf("a signal for a finished run is logged as an error:\n%s", logs)
	}
	if r := ts.api(http.MethodPost, fmt.Sprintf("/v1/executions/%s/resume", id), ""); r.code != http.StatusConflict || r.body["status"] != journal.StatusCancelled {
		t.Errorf("resume a cancelled run: %d %s, want 409 with its status", r.code, r.raw)
	}
}
