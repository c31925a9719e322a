package serve

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/internal/runtime/builtins"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
	"github.com/fuscia/fuscia/lang/schema"
)

// Poll triggers and webhooks with `uses`: serve's side of them (dedup, a lost run, pending,
// errors, the payload a trigger shapes) against a plugin runtime played by scriptedTriggers at
// the task.Dispatcher seam. The store, the engine and HTTP are real; the plugin's own side is
// tested through real plugin processes in cmd/fuscia's end-to-end tests.

// scriptedTriggers is the plugin runtime of these tests: each invocation of a trigger answers
// the next of its script, then "pending" for ever. It records the events it was given.
type scriptedTriggers struct {
	mu     sync.Mutex
	script map[string][]task.TriggerResult // by the `uses` name
	calls  map[string]int
	events []task.TriggerCall
}

func (s *scriptedTriggers) Bind(_ context.Context, b task.Block) (task.Binding, *outcome.Error) {
	return b.Uses.Local, nil
}

func (s *scriptedTriggers) InputSchema(task.Binding, string) *schema.Schema { return nil }

func (s *scriptedTriggers) Call(context.Context, task.Binding, task.Call) outcome.Result {
	return outcome.Fail(outcome.Fatal, "no tasks here")
}

func (s *scriptedTriggers) Trigger(ctx context.Context, _ task.Binding, call task.TriggerCall) task.TriggerResult {
	s.mu.Lock()
	s.events = append(s.events, call)
	n := s.calls[call.Name]
	s.calls[call.Name]++
	res := task.TriggerResult{Type: "pending"}
	if script := s.script[call.Name]; n < len(script) {
		call.Log("info", fmt.Sprintf("answer %d", n+1))
		res = script[n]
	}
	s.mu.Unlock()
	if res.Type == answerNever {
		<-ctx.Done()
		return task.TriggerFailed(outcome.Cancelled, "the call ended: "+ctx.Err().Error())
	}
	return res
}

// answerNever is a scripted answer that never comes: the call waits for its context.
const answerNever = "never"

func (s *scriptedTriggers) count(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[name]
}

func completed(payload string) task.TriggerResult {
	return task.TriggerResult{Type: "completed", Payload: json.RawMessage(payload)}
}

// loadUninstalled is serve's Load for workflows whose plugin is not installed: a missing plugin
// is a warning, and the plan locks nothing for it.
func loadUninstalled(_ context.Context, file string, _ []byte) (*engine.Program, error) {
	return snapshot(file, hcl.DiagWarning)
}

// newTriggerServer serves dir with plugin triggers answered by s.
func newTriggerServer(t *testing.T, dir string, s *scriptedTriggers) *testServer {
	t.Helper()
	ts := newTestServer(t, dir, loadUninstalled)
	runner := builtin.New(builtin.Options{})
	eng := engine.New(engine.Config{
		Store: ts.st, Tasks: task.ByKind{lang.UsesBuiltin: builtins.New(runner), lang.UsesPlugin: s},
		Artifacts: artifact.Dir{Root: filepath.Join(t.TempDir(), "artifacts")},
		ParkWaits: true, OnRunEnd: ts.srv.RunEnded,
	})
	// This engine replaces the one newTestServer attached; Stop drains it.
	ts.srv.Attach(eng, ts.st)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), unitDeadline)
		defer cancel()
		ts.srv.Stop(ctx) // the poller first, then this engine's runs
		eng.Wait()
		runner.Close()
	})
	return ts
}

const pollSource = `workflow "polled" {}

plugin "feed" { source = "feed" }

trigger "poll" "rows" {
  interval  = "100ms"
  uses      = plugin.feed.new_rows
  dedup_key = event.id
}

task "echo" {
  uses   = builtin.transform
  inputs = { id = trigger.payload.id }
}

output "id" { value = task.echo.output.id }
`

// dedupKeyOf is the KV key under which a poll records the event whose dedup_key is key.
func dedupKeyOf(key string) string {
	sum := sha256.Sum256([]byte(key))
	return dedupPrefix + hex.EncodeToString(sum[:])
}

// TestPollDedup: each event a poll completes with starts one run, with the event as its
// payload; an event seen before (by dedup_key) starts none; pending and failed polls start none
// and the poller goes on.
func TestPollDedup(t *testing.T) {
	dir := t.TempDir()
	writeWorkflow(t, filepath.Join(dir, "polled.fsc.hcl"), pollSource)
	s := &scriptedTriggers{calls: map[string]int{}, script: map[string][]task.TriggerResult{"new_rows": {
		completed(`{"id": "a"}`),
		completed(`{"id": "a", "again": true}`),
		{Type: "pending"},
		task.TriggerFailed(outcome.Retryable, "the feed is down"),
		completed(`{"id": "b"}`),
		completed(`{"no_id": true}`),
	}}}
	ts := newTriggerServer(t, dir, s)
	logs := ts.logTo()
	ts.startServing()
	// Polls are sequential: once the one after the script began, every answer was acted on.
	eventually(t, "the poller works through its script", func() bool { return s.count("new_rows") > 6 })
	runs := ts.runsOf("polled")
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2 (events a and b)", len(runs))
	}
	var ids []string
	for _, r := range runs {
		ts.waitSucceeded(r.ID)
		ex, err := ts.st.Execution(r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ex.Trigger.Type != "poll" || ex.Trigger.Name != "rows" {
			t.Errorf("run %s: trigger %s.%s", r.ID, ex.Trigger.Type, ex.Trigger.Name)
		}
		var out struct{ ID string }
		_ = json.Unmarshal(ex.Outputs, &out)
		ids = append(ids, out.ID)
		// The event is recorded, confirmed, with its run.
		f, ok, err := ts.srv.readFiring(journal.TriggerScope("polled", "rows"), dedupKeyOf(out.ID))
		if err != nil || !ok || f.Pending || f.ExecutionID != r.ID {
			t.Errorf("event %s recorded as %+v (%v %v), want confirmed with run %s", out.ID, f, ok, err, r.ID)
		}
	}
	if fmt.Sprint(ids) != "[b a]" { // newest first
		t.Errorf("runs for events %v, want [b a]", ids)
	}
	for _, want := range []string{"the poll trigger failed", "the feed is down", "no run started: the event's dedup_key cannot be evaluated", `"msg":"answer 1"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, logs)
		}
	}
	// Every call was a poll event of this workflow's trigger.
	s.mu.Lock()
	for _, e := range s.events {
		if e.Event.Type != "poll" || e.Workflow != "polled" || e.Trigger != "rows" {
			t.Errorf("invoked with %+v", e)
		}
	}
	s.mu.Unlock()
}

// TestPollLostRun: an event recorded before a crash whose run never started starts, under the
// id recorded, when the poll sees it again; one whose run exists is not started twice.
func TestPollLostRun(t *testing.T) {
	dir := t.TempDir()
	writeWorkflow(t, filepath.Join(dir, "polled.fsc.hcl"), pollSource)
	s := &scriptedTriggers{calls: map[string]int{}, script: map[string][]task.TriggerResult{"new_rows": {
		completed(`{"id": "lost"}`),
		completed(`{"id": "lost"}`),
	}}}
	ts := newTriggerServer(t, dir, s)
	lost := engine.NewExecutionID()
	scope := journal.TriggerScope("polled", "rows")
	if err := ts.srv.writeFiring(scope, dedupKeyOf("lost"), firing{ExecutionID: lost, Pending: true}); err != nil {
		t.Fatal(err)
	}
	ts.startServing()
	eventually(t, "the poller works through its script", func() bool { return s.count("new_rows") > 2 })
	runs := ts.runsOf("polled")
	if len(runs) != 1 || runs[0].ID != lost {
		t.Fatalf("runs %+v, want the one lost run under %s", runs, lost)
	}
	ts.waitSucceeded(lost)
	if f, _, _ := ts.srv.readFiring(scope, dedupKeyOf("lost")); f.Pending || f.ExecutionID != lost {
		t.Errorf("recorded %+v, want confirmed", f)
	}
}

// TestPollSkipped: an event that finds the workflow at max_concurrent_runs with on_overlap =
// "skip" starts nothing and stays seen; the same event later starts nothing either.
func TestPollSkipped(t *testing.T) {
	dir := t.TempDir()
	writeWorkflow(t, filepath.Join(dir, "polled.fsc.hcl"), strings.Replace(pollSource, `workflow "polled" {}`,
		"workflow \"polled\" {\n  max_concurrent_runs = 1\n  on_overlap          = \"skip\"\n}", 1))
	s := &scriptedTriggers{calls: map[string]int{}, script: map[string][]task.TriggerResult{"new_rows": {
		completed(`{"id": "x"}`),
		completed(`{"id": "x"}`),
	}}}
	ts := newTriggerServer(t, dir, s)
	g := ts.srv.gateOf("polled")
	g.setLimit(1)
	tk, _, _ := g.enter(false) // a run holds the slot
	ts.startServing()
	eventually(t, "the first event is skipped", func() bool { return s.count("new_rows") > 1 })
	tk.wait(context.Background())()
	eventually(t, "the poller works through its script", func() bool { return s.count("new_rows") > 2 })
	if n := len(ts.runsOf("polled")); n != 0 {
		t.Errorf("%d runs, want none: the event was skipped, then seen", n)
	}
	if f, ok, _ := ts.srv.readFiring(journal.TriggerScope("polled", "rows"), dedupKeyOf("x")); !ok || !f.Skipped || f.ExecutionID != "" {
		t.Errorf("recorded %+v, want skipped", f)
	}
}

const validatedHookSource = `workflow "validated" {}

plugin "gate" { source = "gate" }

trigger "webhook" "in" {
  path = "/hooks/validated"
  uses = plugin.gate.check
}

task "echo" {
  uses   = builtin.transform
  inputs = { payload = trigger.payload }
}

output "payload" { value = task.echo.output.payload }
`

// TestWebhookTriggerUses: a webhook with `uses` hands the request to its trigger first: a
// completed answer's payload replaces the request's, an empty one keeps it; pending answers 200
// without a run; a validation error is 422, another error 500; neither starts a run.
func TestWebhookTriggerUses(t *testing.T) {
	dir := t.TempDir()
	writeWorkflow(t, filepath.Join(dir, "validated.fsc.hcl"), validatedHookSource)
	s := &scriptedTriggers{calls: map[string]int{}, script: map[string][]task.TriggerResult{"check": {
		completed(`{"shaped": true}`),
		{Type: "completed"},
		{Type: "pending"},
		task.TriggerFailed(outcome.Validation, "the signature is stale"),
		task.TriggerFailed(outcome.Fatal, "the gate broke"),
	}}}
	ts := newTriggerServer(t, dir, s)
	ts.startServing()

	body := "{\"n\": 1}\n"
	outputs := func(r reply) string {
		t.Helper()
		ex, err := ts.st.Execution(r.startedID(t, "POST /hooks/validated"))
		if err != nil {
			t.Fatal(err)
		}
		ts.waitSucceeded(ex.ID)
		ex, _ = ts.st.Execution(ex.ID)
		return string(ex.Outputs)
	}
	if got := outputs(ts.postJSON("/hooks/validated?x=1", body)); got != `{"payload":{"shaped":true}}` {
		t.Errorf("the trigger's payload: outputs %s", got)
	}
	if got := outputs(ts.postJSON("/hooks/validated", body)); !strings.Contains(got, `"body":{"n":1}`) || !strings.Contains(got, `"path":"/hooks/validated"`) {
		t.Errorf("an empty completed payload keeps the request's: outputs %s", got)
	}
	r := ts.postJSON("/hooks/validated", body)
	if r.code != http.StatusOK || r.body["started"] != false || !strings.Contains(fmt.Sprint(r.body["reason"]), "pending") {
		t.Errorf("pending: %d %s, want 200 started false", r.code, r.raw)
	}
	if r := ts.postJSON("/hooks/validated", body); r.code != http.StatusUnprocessableEntity || r.body["error"] != "the signature is stale" {
		t.Errorf("a validation error: %d %s, want 422 with its message", r.code, r.raw)
	}
	// Another error's message stays in the log: it may say what the component was refused.
	if r := ts.postJSON("/hooks/validated", body); r.code != http.StatusInternalServerError || strings.Contains(r.raw, "the gate broke") ||
		!strings.Contains(fmt.Sprint(r.body["error"]), "the webhook's trigger failed; no run was started (an internal error; the server's log has its details under ref=") {
		t.Errorf("a fatal error: %d %s, want 500 without its message, pointing at the log", r.code, r.raw)
	}
	if n := len(ts.runsOf("validated")); n != 2 {
		t.Errorf("%d runs, want 2", n)
	}

	// The trigger saw the request as sent.
	s.mu.Lock()
	defer s.mu.Unlock()
	first := s.events[0]
	req := first.Event.Request
	if first.Event.Type != "webhook" || req == nil || req.Method != "POST" || req.Path != "/hooks/validated" ||
		req.Query["x"] != "1" || req.Headers["Content-Type"] != "application/json" || req.Headers["Host"] == "" {
		t.Fatalf("the trigger was invoked with %+v %+v", first.Event, req)
	}
	if b, err := base64.StdEncoding.DecodeString(req.BodyBase64); err != nil || string(b) != body {
		t.Errorf("the trigger got body %q (%v), want %q", b, err, body)
	}
}

// TestWebhookTriggerTimeout: a webhook's `uses` trigger that never answers is given up after
// the bound, the request answered 504 and no run started. Before, nothing bounded the call:
// the request waited for as long as its sender did.
func TestWebhookTriggerTimeout(t *testing.T) {
	dir := t.TempDir()
	writeWorkflow(t, filepath.Join(dir, "validated.fsc.hcl"), validatedHookSource)
	s := &scriptedTriggers{calls: map[string]int{}, script: map[string][]task.TriggerResult{"check": {{Type: answerNever}}}}
	ts := newTriggerServer(t, dir, s)
	ts.srv.cfg.WebhookTriggerTimeout = 200 * time.Millisecond
	ts.startServing()
	r := ts.postJSON("/hooks/validated", "{}")
	if r.code != http.StatusGatewayTimeout || !strings.Contains(fmt.Sprint(r.body["error"]), "did not answer within 200ms") {
		t.Errorf("a trigger that never answers: %d %s, want 504 naming the bound", r.code, r.raw)
	}
	if n := len(ts.runsOf("validated")); n != 0 {
		t.Errorf("%d runs, want none", n)
	}
}
