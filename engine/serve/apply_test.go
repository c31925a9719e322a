package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/journal"
)

// unixAPI serves ts's handler on a unix socket too, as engine/local serves the owner's API, and
// returns a client that dials it.
func (ts *testServer) unixAPI() (*http.Client, string) {
	ts.t.Helper()
	dir, err := os.MkdirTemp("", "fsc-apply") // short: a socket path is at most 108 bytes
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "api.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		ts.t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(ts.srv.Handler())
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	ts.t.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
	}}
	ts.t.Cleanup(client.CloseIdleConnections)
	return client, "http://fuscia"
}

// applyBody is the body `fuscia apply` sends for the workflow in file.
func applyBody(t *testing.T, file, payload string) []byte {
	t.Helper()
	prog, err := loadProgram(file)
	if err != nil {
		t.Fatal(err)
	}
	req := ApplyRequest{Plan: prog.Plan}
	if payload != "" {
		req.Payload = json.RawMessage(payload)
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func postApply(t *testing.T, ctx context.Context, client *http.Client, base string, body []byte) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/apply", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readEvents reads an NDJSON event stream to its end.
func readEvents(t *testing.T, resp *http.Response) []engine.Event {
	t.Helper()
	defer resp.Body.Close()
	var evs []engine.Event
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev engine.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("an event line that is not JSON: %v\n%s", err, sc.Bytes())
		}
		evs = append(evs, ev)
	}
	return evs
}

// TestApplyRouting: POST /v1/apply runs a plan only for a client on the unix socket (403 on the
// TCP listener, admin token or not); a body or plan it cannot read is 400; a plan runs and its
// events stream as NDJSON to execution_finished.
func TestApplyRouting(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "nap.fsc.hcl")
	writeWorkflow(t, file, napSource(1, "queue"))
	ts := newTestServer(t, dir, nil)
	ts.cancelAtEnd()
	ts.startServing()
	body := applyBody(t, file, `{"d": "1ms"}`)

	if r := ts.send(http.MethodPost, "/v1/apply", string(body), map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": "application/json"}); r.code != http.StatusForbidden || r.body["code"] != "forbidden" {
		t.Errorf("apply on TCP: %d %s, want 403 forbidden", r.code, r.raw)
	}
	client, base := ts.unixAPI()
	for _, c := range []struct{ name, body, want string }{
		{"not JSON", `{"plan":`, "the body is not"},
		{"not a plan", `{"plan": "` + "cGxhaW4gdGV4dA==" + `"}`, "plan"},
	} {
		resp := postApply(t, context.Background(), client, base, []byte(c.body))
		var answer map[string]string
		_ = json.NewDecoder(resp.Body).Decode(&answer)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || answer["code"] != "invalid" || !strings.Contains(answer["error"], c.want) {
			t.Errorf("%s: %d %v, want 400 invalid", c.name, resp.StatusCode, answer)
		}
	}

	resp := postApply(t, context.Background(), client, base, body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("apply: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	evs := readEvents(t, resp)
	if len(evs) < 3 {
		t.Fatalf("%d events, want at least the start, the node and the end", len(evs))
	}
	last := evs[len(evs)-1]
	if last.Type != engine.EventExecutionFinished || last.Status != journal.StatusSucceeded || last.Workflow != "nap" {
		t.Errorf("the last event is %s %s of %s, want execution_finished succeeded", last.Type, last.Status, last.Workflow)
	}
	var sawNode bool
	for _, ev := range evs {
		if ev.ExecutionID != last.ExecutionID {
			t.Errorf("an event of another run: %+v", ev)
		}
		sawNode = sawNode || ev.Type == engine.EventNodeFinished && ev.Node == "task.nap"
	}
	if !sawNode {
		t.Error("no node_finished of task.nap in the stream")
	}
	// The run is a run of serve's store like any other, under the workflow's gate.
	if sum, err := ts.st.Summary(last.ExecutionID); err != nil || sum.Status != journal.StatusSucceeded {
		t.Errorf("the applied run in the store: %v %v", sum.Status, err)
	}
}

// TestApplyClientGoesAway: a CLI that goes away before its run ends (Ctrl-C) cancels the run.
func TestApplyClientGoesAway(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "nap.fsc.hcl")
	writeWorkflow(t, file, napSource(1, "queue"))
	ts := newTestServer(t, dir, nil)
	ts.cancelAtEnd()
	ts.startServing()
	client, base := ts.unixAPI()
	ctx, cancel := context.WithCancel(context.Background())
	resp := postApply(t, ctx, client, base, applyBody(t, file, `{"d": "1h"}`))
	sc := bufio.NewScanner(resp.Body)
	var id string
	for id == "" && sc.Scan() {
		var ev engine.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err == nil {
			id = ev.ExecutionID
		}
	}
	if id == "" {
		t.Fatal("no event named the run")
	}
	eventually(t, "the task runs", func() bool { return ts.nodeStatus(id, "task.nap") == journal.StatusRunning })
	cancel()
	resp.Body.Close()
	ts.waitStatus(id, journal.StatusCancelled)
}

// TestApplyParkedRun: a run that parks at a wait reports nothing while parked, and its stream
// ends with execution_finished, from the journal, once it finished.
func TestApplyParkedRun(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "short.fsc.hcl")
	writeWorkflow(t, file, pauseSource("short", "3s"))
	ts := newTestServer(t, dir, nil)
	ts.startServing()
	client, base := ts.unixAPI()
	resp := postApply(t, context.Background(), client, base, applyBody(t, file, ""))
	evs := readEvents(t, resp)
	last := evs[len(evs)-1]
	if last.Type != engine.EventExecutionFinished || last.Status != journal.StatusSucceeded || last.Execution == nil ||
		string(last.Execution.Outputs) != `{"done":true}` {
		t.Fatalf("the last event: %s %s %+v, want execution_finished succeeded with the execution", last.Type, last.Status, last.Execution)
	}
	var waiting, finished int
	for _, ev := range evs {
		if ev.Type == engine.EventNodeWaiting && ev.Node == "wait.w" {
			waiting++
		}
		if ev.Type == engine.EventExecutionFinished {
			finished++
		}
	}
	if waiting != 1 || finished != 1 {
		t.Errorf("%d node_waiting of wait.w and %d execution_finished in the stream, want 1 and 1", waiting, finished)
	}
}
