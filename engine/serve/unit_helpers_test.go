package serve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/syncbuf"
)

// Helpers of the unit tests of routing, overlap, reload and schedules, on top of readiness_test.go's
// testServer (a real store, a real engine, the Handler on a real HTTP listener).

// unitDeadline bounds every wait for a condition: generous, for -race on a loaded machine.
const unitDeadline = 30 * time.Second

// eventually polls cond until it holds, failing the test with what after unitDeadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(unitDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", unitDeadline, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// reply is an HTTP answer: status, headers and the body, raw and as a JSON object.
type reply struct {
	code   int
	header http.Header
	raw    string
	body   map[string]any
}

// send makes a request to the test server's listener. hdr may be nil; an "Authorization" of ""
// in it means none. A body that is not a JSON object leaves reply.body nil.
func (ts *testServer) send(method, path, body string, hdr map[string]string) reply {
	ts.t.Helper()
	req, err := http.NewRequest(method, ts.http.URL+path, strings.NewReader(body))
	if err != nil {
		ts.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := ts.http.Client().Do(req)
	if err != nil {
		ts.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	r := reply{code: resp.StatusCode, header: resp.Header, raw: string(b)}
	_ = json.Unmarshal(b, &r.body)
	return r
}

// api calls serve's API with the admin token and a JSON body.
func (ts *testServer) api(method, path, body string) reply {
	ts.t.Helper()
	return ts.send(method, path, body, map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": "application/json"})
}

// postJSON posts a JSON body to a webhook.
func (ts *testServer) postJSON(path, body string) reply {
	ts.t.Helper()
	return ts.send(http.MethodPost, path, body, map[string]string{"Content-Type": "application/json"})
}

// startedID wants a 202 with an execution id and returns it.
func (r reply) startedID(t *testing.T, what string) string {
	t.Helper()
	id, _ := r.body["execution_id"].(string)
	if r.code != http.StatusAccepted || id == "" {
		t.Fatalf("%s: %d %s, want 202 with an execution id", what, r.code, r.raw)
	}
	return id
}

// startServing serves the API and starts the server.
func (ts *testServer) startServing() {
	ts.t.Helper()
	ts.serveAPI()
	if _, err := ts.srv.Start(context.Background()); err != nil {
		ts.t.Fatalf("Start: %v", err)
	}
}

// logTo sends the server's log to a buffer the test reads.
func (ts *testServer) logTo() *syncbuf.Buffer {
	logs := &syncbuf.Buffer{}
	ts.srv.SetLogger(slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	return logs
}

// waitStatus polls the store until run id has status, failing if it ends otherwise.
func (ts *testServer) waitStatus(id, status string) {
	ts.t.Helper()
	deadline := time.Now().Add(unitDeadline)
	for {
		sum, err := ts.st.Summary(id)
		if err == nil && sum.Status == status {
			return
		}
		if err == nil && journal.Finished(sum.Status) {
			ts.t.Fatalf("run %s ended %s, want %s", id, sum.Status, status)
		}
		if time.Now().After(deadline) {
			ts.t.Fatalf("run %s is not %s within %s (%s, %v)", id, status, unitDeadline, sum.Status, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// nodeStatus is the status of node in run id ("" when the run or node is not journaled yet).
func (ts *testServer) nodeStatus(id, node string) string {
	ex, err := ts.st.Execution(id)
	if err != nil {
		return ""
	}
	if n := ex.Nodes[node]; n != nil {
		return n.Status
	}
	return ""
}

// cancelRun cancels run id and waits until the journal says so.
func (ts *testServer) cancelRun(id string) {
	ts.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), unitDeadline)
	defer cancel()
	if err := ts.srv.eng.Cancel(ctx, id); err != nil {
		ts.t.Fatalf("cancel %s: %v", id, err)
	}
	ts.waitStatus(id, journal.StatusCancelled)
}

// cancelAtEnd cancels, when the test ends and before the server stops, every run of the store
// still going, so that Stop does not wait out the drain grace for an hour-long sleep.
func (ts *testServer) cancelAtEnd() {
	ts.t.Cleanup(func() {
		runs, err := ts.st.Unfinished()
		if err != nil {
			ts.t.Errorf("list the unfinished runs: %v", err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), unitDeadline)
		defer cancel()
		for _, sum := range runs {
			if err := ts.srv.eng.Cancel(ctx, sum.ID); err != nil && !errors.Is(err, engine.ErrDraining) {
				ts.t.Logf("cancel %s at the end: %v", sum.ID, err)
			}
		}
	})
}

// runsOf lists the runs of workflow in the store.
func (ts *testServer) runsOf(workflow string) []journal.Summary {
	ts.t.Helper()
	runs, err := ts.st.List(journal.Filter{Workflow: workflow})
	if err != nil {
		ts.t.Fatal(err)
	}
	return runs
}

// servedFile is the file whose workflow version serves the webhook path ("" for none).
func (ts *testServer) servedFile(path string) string {
	ts.srv.mu.Lock()
	defer ts.srv.mu.Unlock()
	if h := ts.srv.hooks[path]; h != nil {
		return h.l.file
	}
	return ""
}

// writeIn writes a workflow file in the test server's directory and returns its path.
func (ts *testServer) writeIn(name, src string) string {
	ts.t.Helper()
	path := filepath.Join(ts.dir, name)
	writeWorkflow(ts.t, path, src)
	return path
}
