package serve

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/engine/journal"
)

// routesSource is a workflow with a webhook of each kind of route: the default method, another
// method, an HMAC-signed one, and two manual triggers.
const routesSource = `workflow "routes" {}

secret "key" { file = %q }

trigger "webhook" "post" { path = "/hooks/post" }

trigger "webhook" "put" {
  method = "PUT"
  path   = "/hooks/put"
}

trigger "webhook" "signed" {
  path = "/hooks/signed"
  auth {
    hmac_sha256 {
      secret = secret.key
      header = "X-Sig"
    }
  }
}

trigger "manual" "first" {}
trigger "manual" "second" {}

task "echo" {
  uses   = builtin.transform
  inputs = { type = trigger.type, name = trigger.name, payload = trigger.payload }
}

output "trigger" { value = "${task.echo.output.type}.${task.echo.output.name}" }
output "payload" { value = task.echo.output.payload }
`

// nosecretSource signs its webhook with a secret whose file does not exist; it has no manual
// trigger.
const nosecretSource = `workflow "nosecret" {}

secret "gone" { file = %q }

trigger "webhook" "get" {
  method = "GET"
  path   = "/hooks/get"
  auth {
    hmac_sha256 { secret = secret.gone }
  }
}

task "x" {
  uses   = builtin.transform
  inputs = { x = 1 }
}
`

func sign(secret, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return hex.EncodeToString(mac.Sum(nil))
}

// newRoutesServer serves routesSource and nosecretSource, started.
func newRoutesServer(t *testing.T) *testServer {
	t.Helper()
	dir := t.TempDir()
	secrets := t.TempDir()
	keyFile := filepath.Join(secrets, "key")
	if err := os.WriteFile(keyFile, []byte("k3y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeWorkflow(t, filepath.Join(dir, "routes.fsc.hcl"), fmt.Sprintf(routesSource, keyFile))
	writeWorkflow(t, filepath.Join(dir, "nosecret.fsc.hcl"), fmt.Sprintf(nosecretSource, filepath.Join(secrets, "missing")))
	ts := newTestServer(t, dir, nil)
	ts.startServing()
	return ts
}

// TestWebhookRouting: each path answers only its own method (405 with Allow otherwise), an
// unknown path is 404, a signed webhook wants its signature (401), and a webhook whose secret
// cannot be read answers 500 without starting a run. What starts carries its trigger.
func TestWebhookRouting(t *testing.T) {
	ts := newRoutesServer(t)
	body := `{"n":1}`
	jsonType := map[string]string{"Content-Type": "application/json"}
	signed := func(sig string) map[string]string {
		return map[string]string{"Content-Type": "application/json", "X-Sig": sig}
	}
	cases := []struct {
		name, method, path string
		hdr                map[string]string
		code               int
		allow              string // the Allow header of a 405
		errPart            string // part of the "error" of a refusal
		trigger            string // the run's trigger, type.name, of a 202
	}{
		{"default method", "POST", "/hooks/post", jsonType, 202, "", "", "webhook.post"},
		{"wrong method", "GET", "/hooks/post", nil, 405, "POST", "/hooks/post takes POST requests, not GET", ""},
		{"DELETE on a POST hook", "DELETE", "/hooks/post", nil, 405, "POST", "not DELETE", ""},
		{"declared method", "PUT", "/hooks/put", jsonType, 202, "", "", "webhook.put"},
		{"POST on a PUT hook", "POST", "/hooks/put", jsonType, 405, "PUT", "takes PUT requests", ""},
		{"unknown path", "POST", "/hooks/nosuch", jsonType, 404, "", "no webhook at /hooks/nosuch", ""},
		{"trailing slash is another path", "POST", "/hooks/post/", jsonType, 404, "", "no webhook at /hooks/post/", ""},
		{"prefix is another path", "POST", "/hooks", jsonType, 404, "", "no webhook at /hooks", ""},
		{"root", "GET", "/", nil, 404, "", "no webhook at /", ""},
		{"no signature", "POST", "/hooks/signed", jsonType, 401, "", "missing or bad signature in X-Sig", ""},
		{"bad signature", "POST", "/hooks/signed", signed(sign("other", body)), 401, "", "missing or bad signature", ""},
		{"signature of another body", "POST", "/hooks/signed", signed(sign("k3y", `{"n":2}`)), 401, "", "bad signature", ""},
		{"good signature", "POST", "/hooks/signed", signed(sign("k3y", body)), 202, "", "", "webhook.signed"},
		{"good signature, prefixed", "POST", "/hooks/signed", signed("sha256=" + sign("k3y", body)), 202, "", "", "webhook.signed"},
		{"secret not readable", "GET", "/hooks/get", nil, 500, "", "secret is not available", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ts.send(c.method, c.path, body, c.hdr)
			if r.code != c.code {
				t.Fatalf("%s %s: %d %s, want %d", c.method, c.path, r.code, r.raw, c.code)
			}
			if got := r.header.Get("Allow"); got != c.allow {
				t.Errorf("Allow = %q, want %q", got, c.allow)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
			if c.code != http.StatusAccepted {
				if msg, _ := r.body["error"].(string); !strings.Contains(msg, c.errPart) {
					t.Errorf("error %q, want it to contain %q", msg, c.errPart)
				}
				return
			}
			id := r.startedID(t, c.method+" "+c.path)
			ts.waitSucceeded(id)
			ex, err := ts.st.Execution(id)
			if err != nil {
				t.Fatal(err)
			}
			var out struct {
				Trigger string `json:"trigger"`
				Payload struct {
					Method string          `json:"method"`
					Path   string          `json:"path"`
					Body   json.RawMessage `json:"body"`
				} `json:"payload"`
			}
			if err := json.Unmarshal(ex.Outputs, &out); err != nil {
				t.Fatalf("outputs %s: %v", ex.Outputs, err)
			}
			if out.Trigger != c.trigger || out.Payload.Method != c.method || out.Payload.Path != c.path || string(out.Payload.Body) != body {
				t.Errorf("the run saw trigger %s and payload %+v (body %s), want %s %s %s with body %s", out.Trigger, out.Payload, out.Payload.Body, c.trigger, c.method, c.path, body)
			}
		})
	}
	// Two signature headers, a valid one among them, are refused: a proxy in front could check
	// the other one.
	for _, sigs := range [][]string{{sign("k3y", body), "bad"}, {"bad", sign("k3y", body)}, {sign("k3y", body), sign("k3y", body)}} {
		req, err := http.NewRequest(http.MethodPost, ts.http.URL+"/hooks/signed", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		for _, sig := range sigs {
			req.Header.Add("X-Sig", sig)
		}
		resp, err := ts.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(b), "2 X-Sig headers; send one signature") {
			t.Errorf("two signatures %q: %d %s, want 401 naming the two headers", sigs, resp.StatusCode, b)
		}
	}
	// Nothing refused started a run: one run per 202 above.
	if n := len(ts.runsOf("routes")); n != 4 {
		t.Errorf("routes has %d runs, want 4 (one per accepted request)", n)
	}
	if n := len(ts.runsOf("nosecret")); n != 0 {
		t.Errorf("nosecret has %d runs, want none", n)
	}
}

// TestAPIRouting: /v1/ is the API's: a token is wanted there but for the health check, and a
// path under it is never a webhook. The health answer lists the webhooks, and GET /v1/workflows
// the workflows with their triggers.
func TestAPIRouting(t *testing.T) {
	ts := newRoutesServer(t)

	if r := ts.send(http.MethodGet, "/v1/workflows", "", nil); r.code != http.StatusUnauthorized {
		t.Errorf("GET /v1/workflows without a token: %d %s, want 401", r.code, r.raw)
	}
	if r := ts.api(http.MethodPost, "/v1/hooks/post", "{}"); r.code != http.StatusNotFound || strings.Contains(r.raw, "no webhook") {
		t.Errorf("POST /v1/hooks/post: %d %s, want the API's 404", r.code, r.raw)
	}
	if r := ts.send(http.MethodPost, "/v1/workflows/routes/runs", "{}", map[string]string{"Content-Type": "application/json"}); r.code != http.StatusUnauthorized {
		t.Errorf("a run started without a token: %d %s, want 401", r.code, r.raw)
	}
	if n := len(ts.runsOf("routes")); n != 0 {
		t.Fatalf("%d runs after refused requests", n)
	}

	// The health check is public: a load balancer's probe carries no secret.
	h := ts.send(http.MethodGet, "/v1/health", "", nil)
	if h.code != http.StatusOK || h.body["status"] != "ok" || h.body["workflows"] != float64(2) {
		t.Fatalf("health: %d %s, want 200 ok with 2 workflows", h.code, h.raw)
	}
	// Without a token it does not list the webhook paths: an unsigned hook's path is all it
	// takes to start a run. With one, it does.
	if _, listed := h.body["webhooks"]; listed {
		t.Errorf("health without a token lists the webhooks: %s", h.raw)
	}
	h = ts.api(http.MethodGet, "/v1/health", "")
	if got := fmt.Sprint(h.body["webhooks"]); got != "[/hooks/get /hooks/post /hooks/put /hooks/signed]" {
		t.Errorf("health webhooks with a token = %s, want the four paths sorted", got)
	}
	h = ts.send(http.MethodGet, "/v1/health", "", map[string]string{"Authorization": "Bearer fsc_wrong"})
	if _, listed := h.body["webhooks"]; listed || h.code != http.StatusOK {
		t.Errorf("health with a wrong token: %d %s, want 200 without the webhooks", h.code, h.raw)
	}

	wl := ts.api(http.MethodGet, "/v1/workflows", "")
	var list struct {
		Workflows []workflowInfo `json:"workflows"`
	}
	if err := json.Unmarshal([]byte(wl.raw), &list); err != nil || wl.code != http.StatusOK {
		t.Fatalf("GET /v1/workflows: %d %s (%v)", wl.code, wl.raw, err)
	}
	if len(list.Workflows) != 2 || list.Workflows[0].Name != "nosecret" || list.Workflows[1].Name != "routes" {
		t.Fatalf("workflows %+v, want nosecret then routes", list.Workflows)
	}
	if f := list.Workflows[1].File; filepath.Base(f) != "routes.fsc.hcl" || !filepath.IsAbs(f) {
		t.Errorf("routes' file %q, want the absolute path of routes.fsc.hcl", f)
	}
	var triggers []string
	for _, tr := range list.Workflows[1].Triggers {
		triggers = append(triggers, fmt.Sprintf("%s.%s %s %s", tr.Type, tr.Name, tr.Method, tr.Path))
	}
	want := "[webhook.post POST /hooks/post webhook.put PUT /hooks/put webhook.signed POST /hooks/signed manual.first   manual.second  ]"
	if fmt.Sprint(triggers) != want {
		t.Errorf("routes' triggers %v, want %s", triggers, want)
	}
}

// TestManualStartRouting: POST /v1/workflows/{name}/runs starts a manual trigger — the first,
// or the one named — and answers 404 for an unknown workflow or trigger, 400 for a bad body.
func TestManualStartRouting(t *testing.T) {
	ts := newRoutesServer(t)
	cases := []struct {
		name, path, body string
		code             int
		errPart, code2   string // part of the error, and its code
		trigger          string
	}{
		{"first manual trigger", "/v1/workflows/routes/runs", `{"payload": {"a": 1}}`, 202, "", "", "manual.first"},
		{"empty body", "/v1/workflows/routes/runs", ``, 202, "", "", "manual.first"},
		{"named trigger", "/v1/workflows/routes/runs", `{"trigger": "second", "payload": [1]}`, 202, "", "", "manual.second"},
		{"unknown trigger", "/v1/workflows/routes/runs", `{"trigger": "third"}`, 404, `no manual trigger "third"`, "not_found", ""},
		{"a webhook is not a manual trigger", "/v1/workflows/routes/runs", `{"trigger": "post"}`, 404, `no manual trigger "post"`, "not_found", ""},
		{"no manual trigger", "/v1/workflows/nosecret/runs", `{}`, 404, "has no manual trigger; add `trigger \"manual\"", "not_found", ""},
		{"unknown workflow", "/v1/workflows/nosuch/runs", `{}`, 404, `no workflow "nosuch" is loaded`, "not_found", ""},
		{"body not JSON", "/v1/workflows/routes/runs", `{"payload":`, 400, "the body is not a JSON object", "invalid", ""},
		{"body of the wrong shape", "/v1/workflows/routes/runs", `[1,2]`, 400, "the body is not a JSON object", "invalid", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ts.api(http.MethodPost, c.path, c.body)
			if r.code != c.code {
				t.Fatalf("POST %s %s: %d %s, want %d", c.path, c.body, r.code, r.raw, c.code)
			}
			if c.code != http.StatusAccepted {
				msg, _ := r.body["error"].(string)
				if !strings.Contains(msg, c.errPart) || r.body["code"] != c.code2 {
					t.Errorf("answer %s, want code %q and an error containing %q", r.raw, c.code2, c.errPart)
				}
				return
			}
			id := r.startedID(t, "POST "+c.path)
			ts.waitSucceeded(id)
			sum, err := ts.st.Summary(id)
			if err != nil {
				t.Fatal(err)
			}
			if got := sum.Trigger.Type + "." + sum.Trigger.Name; got != c.trigger {
				t.Errorf("the run's trigger is %s, want %s", got, c.trigger)
			}
		})
	}

	// ?wait=true answers the execution once it ended.
	r := ts.api(http.MethodPost, "/v1/workflows/routes/runs?wait=true", `{"trigger": "second", "payload": {"k": "v"}}`)
	var ex journal.Execution
	if err := json.Unmarshal([]byte(r.raw), &ex); err != nil || r.code != http.StatusOK {
		t.Fatalf("a manual start with ?wait=true: %d %s (%v), want 200 with the execution", r.code, r.raw, err)
	}
	if ex.Status != journal.StatusSucceeded || ex.Trigger.Name != "second" || !strings.Contains(string(ex.Outputs), `"k":"v"`) {
		t.Errorf("waited execution: status %s trigger %s outputs %s", ex.Status, ex.Trigger.Name, ex.Outputs)
	}
}

// TestWebhookWait: ?wait=true (or 1) answers 200 with the execution once the run ended; a run
// that outlasts WebhookWait is answered 504 with its id, and goes on.
func TestWebhookWait(t *testing.T) {
	dir := t.TempDir()
	writeWorkflow(t, filepath.Join(dir, "nap.fsc.hcl"), `workflow "nap" {}

trigger "webhook" "in" { path = "/hooks/nap" }

task "nap" {
  uses   = builtin.sleep
  inputs = { duration = trigger.payload.body.d }
}

output "slept" { value = task.nap.output.slept }
`)
	ts := newTestServer(t, dir, nil)
	ts.srv.cfg.WebhookWait = 300 * 1e6 // 300ms: the long run below sleeps an hour
	ts.cancelAtEnd()
	ts.startServing()

	for _, q := range []string{"?wait=true", "?wait=1"} {
		r := ts.postJSON("/hooks/nap"+q, `{"d": "1ms"}`)
		var ex journal.Execution
		if err := json.Unmarshal([]byte(r.raw), &ex); err != nil || r.code != http.StatusOK {
			t.Fatalf("POST %s: %d %s (%v), want 200 with the execution", q, r.code, r.raw, err)
		}
		if ex.Status != journal.StatusSucceeded || string(ex.Outputs) != `{"slept":"1ms"}` {
			t.Errorf("POST %s: execution %s %s, want succeeded with the output", q, ex.Status, ex.Outputs)
		}
	}
	// wait=false or anything else: 202 at once.
	ts.waitSucceeded(ts.postJSON("/hooks/nap?wait=no", `{"d": "1ms"}`).startedID(t, "wait=no"))

	r := ts.postJSON("/hooks/nap?wait=true", `{"d": "1h"}`)
	id, _ := r.body["execution_id"].(string)
	if r.code != http.StatusGatewayTimeout || id == "" || !strings.Contains(fmt.Sprint(r.body["error"]), "did not end within 300ms") {
		t.Fatalf("a run longer than WebhookWait: %d %s, want 504 with its id", r.code, r.raw)
	}
	if sum, err := ts.st.Summary(id); err != nil || journal.Finished(sum.Status) {
		t.Errorf("the run answered 504 is %v (%v), want it still going", sum.Status, err)
	}
	ts.cancelRun(id)
	// No waiter is left behind.
	ts.srv.mu.Lock()
	n := len(ts.srv.waiters)
	ts.srv.mu.Unlock()
	if n != 0 {
		t.Errorf("%d run(s) still have waiters after every request ended", n)
	}
}

// TestResumeRouting: POST /v1/executions/{id}/resume refuses an unknown id (404), a finished
// run (409 "finished" with its status) and a run this process runs (409).
func TestResumeRouting(t *testing.T) {
	dir := t.TempDir()
	writeWorkflow(t, filepath.Join(dir, "nap.fsc.hcl"), `workflow "nap" {}

trigger "webhook" "in" { path = "/hooks/nap" }

task "nap" {
  uses   = builtin.sleep
  inputs = { duration = trigger.payload.body.d }
}
`)
	ts := newTestServer(t, dir, nil)
	ts.cancelAtEnd()
	ts.startServing()

	if r := ts.api(http.MethodPost, "/v1/executions/01NOSUCHRUN/resume", ""); r.code != http.StatusNotFound || r.body["code"] != "not_found" {
		t.Errorf("resume an unknown run: %d %s, want 404 not_found", r.code, r.raw)
	}
	done := ts.postJSON("/hooks/nap", `{"d": "1ms"}`).startedID(t, "short run")
	ts.waitSucceeded(done)
	r := ts.api(http.MethodPost, "/v1/executions/"+done+"/resume", "")
	if r.code != http.StatusConflict || r.body["code"] != "finished" || r.body["status"] != journal.StatusSucceeded {
		t.Errorf("resume a finished run: %d %s, want 409 finished with status succeeded", r.code, r.raw)
	}
	long := ts.postJSON("/hooks/nap", `{"d": "1h"}`).startedID(t, "long run")
	eventually(t, "the long run's task runs", func() bool { return ts.nodeStatus(long, "task.nap") == journal.StatusRunning })
	r = ts.api(http.MethodPost, "/v1/executions/"+long+"/resume", "")
	if r.code != http.StatusConflict || !strings.Contains(fmt.Sprint(r.body["error"]), "already running") {
		t.Errorf("resume a running run: %d %s, want 409 already running", r.code, r.raw)
	}
	ts.cancelRun(long)
}
