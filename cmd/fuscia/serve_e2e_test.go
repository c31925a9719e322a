package main

// End-to-end tests of `fuscia serve` (docs/engine.md, "fuscia serve" and "Webhooks"): the real binary
// runs in the background with its own FUSCIA_HOME, the tests talk to it over HTTP (webhooks and
// the API) and through the other commands (signal, show), and stop it with SIGTERM or SIGKILL.

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/syncbuf"
)

// serveDeadline bounds every wait of these tests for something serve does on its own.
const serveDeadline = 20 * time.Second

// serveProc is one `fuscia serve` process.
type serveProc struct {
	t       *testing.T
	cmd     *exec.Cmd
	base    string // http://ADDR of the API and the webhooks
	metrics string // http://ADDR/metrics, when -metrics-listen was given
	stdout  *syncbuf.Buffer
	stderr  *syncbuf.Buffer
	exited  chan struct{}
	code    int // exit code once exited is closed (-1: killed by a signal)
	checked bool
	// h is the harness serve runs in; token an admin API token authorize made (through serve's
	// socket) for the requests to the API, which asks for one on -listen.
	h       *harness
	tokenMu sync.Mutex
	token   string
}

var (
	apiLineRE     = regexp.MustCompile(`(?m)^API and webhooks on (https?://\S+)$`)
	metricsLineRE = regexp.MustCompile(`(?m)^Metrics on (https?://\S+)$`)
	servingLineRE = regexp.MustCompile(`(?m)^Serving \d+ workflow\(s\) from `)
)

var serveClient = &http.Client{Timeout: 30 * time.Second}

// startServe starts `fuscia serve ARGS… -home HOME -listen 127.0.0.1:0` (unless ARGS has a
// -listen) in h.dir with env added to the harness's environment, and returns once it printed
// that it serves its workflows. The process is always stopped and reaped when the test ends.
func startServe(t *testing.T, h *harness, env []string, args ...string) *serveProc {
	t.Helper()
	sp := launchServe(t, h, env, args...)
	sp.waitServing(serveDeadline)
	return sp
}

// launchServe starts serve without waiting for it to serve.
func launchServe(t *testing.T, h *harness, env []string, args ...string) *serveProc {
	t.Helper()
	return launchServeBin(t, h, fusciaBin, env, args...)
}

// launchServeBin is launchServe with the fuscia binary at bin.
func launchServeBin(t *testing.T, h *harness, bin string, env []string, args ...string) *serveProc {
	t.Helper()
	all := append([]string{"serve"}, args...)
	all = append(all, "-home", h.home)
	if !slices.Contains(args, "-listen") {
		all = append(all, "-listen", "127.0.0.1:0")
	}
	if !slices.Contains(args, "-shutdown-grace") {
		all = append(all, "-shutdown-grace", "2s")
	}
	cmd := exec.Command(bin, all...)
	cmd.Dir = h.dir
	cmd.Env = append(append(append(baseEnv(), "FUSCIA_HOME="+h.home), h.env...), env...)
	sp := &serveProc{t: t, cmd: cmd, stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}, exited: make(chan struct{}), h: h}
	cmd.Stdout, cmd.Stderr = sp.stdout, sp.stderr
	cmd.WaitDelay = 5 * time.Second // a plugin child holding the pipes cannot block the reaping
	if err := cmd.Start(); err != nil {
		t.Fatalf("start fuscia serve: %v", err)
	}
	go func() {
		err := cmd.Wait()
		sp.code = 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			sp.code = ee.ExitCode()
		} else if err != nil {
			sp.code = -2
		}
		close(sp.exited)
	}()
	t.Cleanup(sp.cleanup)
	return sp
}

// waitServing waits until serve printed its addresses and that it serves its workflows.
func (sp *serveProc) waitServing(limit time.Duration) {
	sp.t.Helper()
	deadline := time.After(limit)
	for {
		out := sp.stdout.String()
		if servingLineRE.MatchString(out) {
			m := apiLineRE.FindStringSubmatch(out)
			if m == nil {
				sp.t.Fatalf("serve printed no API address:\n%s", sp)
			}
			sp.base = m[1]
			if m := metricsLineRE.FindStringSubmatch(out); m != nil {
				sp.metrics = m[1]
			}
			return
		}
		select {
		case <-sp.exited:
			sp.t.Fatalf("fuscia serve exited (code %d) before serving:\n%s", sp.code, sp)
		case <-deadline:
			sp.t.Fatalf("fuscia serve did not say it serves within %s:\n%s", limit, sp)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (sp *serveProc) String() string {
	return fmt.Sprintf("fuscia %s\n--- stdout:\n%s\n--- stderr:\n%s", strings.Join(sp.cmd.Args[1:], " "), sp.stdout, sp.stderr)
}

func (sp *serveProc) done() bool {
	select {
	case <-sp.exited:
		return true
	default:
		return false
	}
}

// cleanup stops the process if a test left it running: SIGTERM, then SIGKILL after a while.
func (sp *serveProc) cleanup() {
	if !sp.done() {
		_ = sp.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-sp.exited:
		case <-time.After(15 * time.Second):
			sp.t.Errorf("fuscia serve did not stop within 15s of SIGTERM; killing it:\n%s", sp)
			_ = sp.cmd.Process.Kill()
			<-sp.exited
		}
	}
	sp.checkNoCrash()
}

func (sp *serveProc) checkNoCrash() {
	if sp.checked {
		return
	}
	sp.checked = true
	for _, bad := range []string{"panic:", "goroutine ", "fatal error:", "DATA RACE"} {
		if strings.Contains(sp.stdout.String(), bad) || strings.Contains(sp.stderr.String(), bad) {
			sp.t.Errorf("fuscia serve's output contains %q (a crash or a Go stack):\n%s", bad, sp)
			return
		}
	}
}

// stop sends SIGTERM and waits for the exit; it returns the exit code and how long it took.
func (sp *serveProc) stop(limit time.Duration) (int, time.Duration) {
	sp.t.Helper()
	start := time.Now()
	if err := sp.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		sp.t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case <-sp.exited:
	case <-time.After(limit):
		_ = sp.cmd.Process.Kill()
		<-sp.exited
		sp.t.Fatalf("fuscia serve did not exit within %s of SIGTERM (killed):\n%s", limit, sp)
	}
	sp.checkNoCrash()
	return sp.code, time.Since(start)
}

// stopOK stops serve with SIGTERM and checks docs/engine.md's clean exit.
func (sp *serveProc) stopOK() {
	sp.t.Helper()
	code, _ := sp.stop(15 * time.Second)
	if code != 0 {
		sp.t.Fatalf("fuscia serve exited %d after SIGTERM, want 0:\n%s", code, sp)
	}
	wantContains(sp.t, "serve's stdout", sp.stdout.String(), "Shutting down:", "Stopped.")
}

// kill SIGKILLs serve and reaps it.
func (sp *serveProc) kill() {
	sp.t.Helper()
	_ = sp.cmd.Process.Kill()
	select {
	case <-sp.exited:
	case <-time.After(10 * time.Second):
		sp.t.Fatalf("fuscia serve not reaped 10s after SIGKILL")
	}
}

// request sends one request to serve; hdr may set Content-Type and signatures.
func (sp *serveProc) request(method, path string, body io.Reader, hdr http.Header) (int, []byte) {
	sp.t.Helper()
	req, err := http.NewRequest(method, sp.base+path, body)
	if err != nil {
		sp.t.Fatal(err)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	sp.authorize(req)
	resp, err := serveClient.Do(req)
	if err != nil {
		sp.t.Fatalf("%s %s: %v\n%s", method, path, err, sp)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		sp.t.Fatalf("%s %s: read the answer: %v", method, path, err)
	}
	return resp.StatusCode, b
}

// authorize gives req, a request to the API (under /v1/, but the health check), serve's admin
// API token unless it has an Authorization header. The token is made on first use, through
// the socket of the running serve (docs/security.md, "API tokens").
func (sp *serveProc) authorize(req *http.Request) {
	sp.t.Helper()
	if !strings.HasPrefix(req.URL.Path, "/v1/") || req.URL.Path == "/v1/health" || req.Header.Get("Authorization") != "" {
		return
	}
	sp.tokenMu.Lock()
	defer sp.tokenMu.Unlock()
	if sp.token == "" {
		r := sp.h.run("token", "create", fmt.Sprintf("e2e-%d", sp.cmd.Process.Pid), "-scope", "admin", "-json")
		var v struct {
			Token string `json:"token"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &v); r.code != 0 || err != nil || v.Token == "" {
			sp.t.Fatalf("create an API token for the test: %v\n%s\n%s", err, r, sp)
		}
		sp.token = v.Token
	}
	req.Header.Set("Authorization", "Bearer "+sp.token)
}

func (sp *serveProc) get(path string) (int, []byte) {
	sp.t.Helper()
	return sp.request(http.MethodGet, path, nil, nil)
}

func (sp *serveProc) postJSON(path, body string) (int, []byte) {
	sp.t.Helper()
	return sp.request(http.MethodPost, path, strings.NewReader(body), http.Header{"Content-Type": {"application/json"}})
}

// startRun starts a run of workflow through the API and returns its id.
func (sp *serveProc) startRun(workflow, payload string) string {
	sp.t.Helper()
	code, b := sp.postJSON("/v1/workflows/"+workflow+"/runs", `{"payload": `+payload+`}`)
	if code != http.StatusAccepted {
		sp.t.Fatalf("POST /v1/workflows/%s/runs: %d %s, want 202", workflow, code, b)
	}
	return executionID(sp.t, b)
}

func executionID(t *testing.T, b []byte) string {
	t.Helper()
	var v struct {
		ID string `json:"execution_id"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.ID == "" {
		t.Fatalf("no execution_id in %s (%v)", b, err)
	}
	return v.ID
}

// execution is GET /v1/executions/{id}.
func (sp *serveProc) execution(id string) journal.Execution {
	sp.t.Helper()
	code, b := sp.get("/v1/executions/" + id)
	if code != http.StatusOK {
		sp.t.Fatalf("GET /v1/executions/%s: %d %s", id, code, b)
	}
	var ex journal.Execution
	if err := json.Unmarshal(b, &ex); err != nil {
		sp.t.Fatalf("GET /v1/executions/%s: %v\n%s", id, err, b)
	}
	return ex
}

// waitFor polls run id until cond holds, for up to serveDeadline.
func (sp *serveProc) waitFor(id, what string, cond func(journal.Execution) bool) journal.Execution {
	sp.t.Helper()
	deadline := time.Now().Add(serveDeadline)
	for {
		ex := sp.execution(id)
		if cond(ex) {
			return ex
		}
		if time.Now().After(deadline) {
			b, _ := json.MarshalIndent(ex, "", "  ")
			sp.t.Fatalf("run %s: not %s within %s:\n%s\n%s", id, what, serveDeadline, b, sp)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitStatus polls run id until its status is want; a run that ends otherwise fails the test.
func (sp *serveProc) waitStatus(id, want string) journal.Execution {
	sp.t.Helper()
	return sp.waitFor(id, want, func(ex journal.Execution) bool {
		if ex.Status != want && journal.Finished(ex.Status) {
			b, _ := json.MarshalIndent(ex, "", "  ")
			sp.t.Fatalf("run %s ended %s, want %s:\n%s\n%s", id, ex.Status, want, b, sp)
		}
		return ex.Status == want
	})
}

// executions is GET /v1/executions.
func (sp *serveProc) executions(query string) []journal.Summary {
	sp.t.Helper()
	code, b := sp.get("/v1/executions" + query)
	if code != http.StatusOK {
		sp.t.Fatalf("GET /v1/executions%s: %d %s", query, code, b)
	}
	var v struct {
		Executions []journal.Summary `json:"executions"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		sp.t.Fatalf("GET /v1/executions: %v\n%s", err, b)
	}
	return v.Executions
}

// health is GET /v1/health.
func (sp *serveProc) health() map[string]any {
	sp.t.Helper()
	code, b := sp.get("/v1/health")
	if code != http.StatusOK {
		sp.t.Fatalf("GET /v1/health: %d %s", code, b)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		sp.t.Fatalf("GET /v1/health: %v\n%s", err, b)
	}
	return v
}

// waitParked polls the health answer until parked_runs is n.
func (sp *serveProc) waitParked(n int) {
	sp.t.Helper()
	deadline := time.Now().Add(serveDeadline)
	for {
		h := sp.health()
		if got, _ := h["parked_runs"].(float64); int(got) == n {
			return
		}
		if time.Now().After(deadline) {
			sp.t.Fatalf("health parked_runs is not %d within %s: %v", n, serveDeadline, h)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// showJSON is `fuscia show ID -json` (the store read directly when no serve runs).
func showJSON(t *testing.T, h *harness, id string) journal.Execution {
	t.Helper()
	r := h.run("show", id, "-json", "-home", h.home)
	wantCode(t, r, 0)
	var ex journal.Execution
	if err := json.Unmarshal([]byte(r.stdout), &ex); err != nil {
		t.Fatalf("show -json: %v\n%s", err, r)
	}
	return ex
}

func nodeOf(t *testing.T, ex journal.Execution, addr string) *journal.NodeView {
	t.Helper()
	n := ex.Nodes[addr]
	if n == nil {
		b, _ := json.MarshalIndent(ex, "", "  ")
		t.Fatalf("run %s has no node %s:\n%s", ex.ID, addr, b)
	}
	return n
}

func jsonSame(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("%s: not JSON: %v\n%s", what, err, got)
		return
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad expectation %s: %v", what, want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Errorf("%s = %s, want %s", what, gb, wb)
	}
}

func hmacHex(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// ---------------------------------------------------------------------------------------------
// Webhooks

const hookWorkflow = `workflow "hook" {}

secret "key" { env = "HOOK_KEY" }

trigger "webhook" "in" {
  path           = "/hooks/in"
  max_body_bytes = "1KiB"
  auth {
    hmac_sha256 { secret = secret.key }
  }
}

task "echo" {
  uses   = builtin.transform
  inputs = { payload = trigger.payload, type = trigger.type, name = trigger.name }
}

output "payload" { value = task.echo.output.payload }
output "trigger" { value = "${task.echo.output.type}.${task.echo.output.name}" }
`

const slowHookWorkflow = `workflow "slow" {}

trigger "webhook" "slow" { path = "/hooks/slow" }

task "nap" {
  uses   = builtin.sleep
  inputs = { duration = "5s" }
}
`

type hookPayload struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Query   map[string]string `json:"query"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
}

func payloadOutput(t *testing.T, ex journal.Execution) hookPayload {
	t.Helper()
	var out struct {
		Payload hookPayload `json:"payload"`
		Trigger string      `json:"trigger"`
	}
	if err := json.Unmarshal(ex.Outputs, &out); err != nil {
		t.Fatalf("outputs of %s: %v\n%s", ex.ID, err, ex.Outputs)
	}
	if out.Trigger != "webhook.in" {
		t.Errorf("run %s: trigger.type.name = %q, want webhook.in", ex.ID, out.Trigger)
	}
	if ex.Trigger.Type != "webhook" || ex.Trigger.Name != "in" {
		t.Errorf("run %s: trigger = %s.%s, want webhook.in", ex.ID, ex.Trigger.Type, ex.Trigger.Name)
	}
	return out.Payload
}

// TestServeWebhooks: docs/engine.md's table of webhook answers, the payload's shape, and that no run
// starts for a refused request.
func TestServeWebhooks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("flows/hook.fsc.hcl", hookWorkflow)
	h.write("flows/slow.fsc.hcl", slowHookWorkflow)
	h.env = append(h.env, "HOOK_KEY=s3cret")
	sp := startServe(t, h, nil, "flows", "-webhook-wait", "1s")

	var accepted []string
	post := func(path string, body []byte, hdr http.Header) (int, []byte) {
		t.Helper()
		return sp.request(http.MethodPost, path, bytes.NewReader(body), hdr)
	}

	// A good hex signature, a JSON media type with parameters, repeated and lower-case headers.
	body := []byte(`{"order": {"id": 7, "items": ["a", "b"]}}`)
	hdr := http.Header{
		"Content-Type": {"application/json; charset=utf-8"},
		"X-Signature":  {hmacHex("s3cret", body)},
		"X-Multi":      {"v1", "v2"},
		"x-lower-case": {"yes"},
	}
	code, b := post("/hooks/in?source=test&n=1", body, hdr)
	if code != http.StatusAccepted {
		t.Fatalf("good signature: %d %s, want 202\n%s", code, b, sp)
	}
	if got := keys(t, b); !slices.Equal(got, []string{"execution_id"}) {
		t.Errorf("202 answer keys = %v, want [execution_id]: %s", got, b)
	}
	id1 := executionID(t, b)
	accepted = append(accepted, id1)
	ex := sp.waitStatus(id1, "succeeded")
	p := payloadOutput(t, ex)
	if p.Method != "POST" || p.Path != "/hooks/in" {
		t.Errorf("payload method/path = %s %s, want POST /hooks/in", p.Method, p.Path)
	}
	jsonSame(t, "payload.body", p.Body, `{"order": {"id": 7, "items": ["a", "b"]}}`)
	if want := map[string]string{"source": "test", "n": "1"}; !mapsEqual(p.Query, want) {
		t.Errorf("payload.query = %v, want %v", p.Query, want)
	}
	for k, want := range map[string]string{
		"Content-Type": "application/json; charset=utf-8",
		"X-Multi":      "v1, v2",
		"X-Lower-Case": "yes",
		"X-Signature":  hmacHex("s3cret", body),
		"Host":         strings.TrimPrefix(sp.base, "http://"),
	} {
		if got, ok := p.Headers[k]; !ok || got != want {
			t.Errorf("payload.headers[%q] = %q (present %v), want %q; headers: %v", k, got, ok, want, p.Headers)
		}
	}
	for k := range p.Headers {
		if k != http.CanonicalHeaderKey(k) {
			t.Errorf("payload.headers has a non-canonical name %q", k)
		}
	}

	// "sha256=" prefix, and a body that is not JSON: the body is the string.
	text := []byte("hello, plain text")
	code, b = post("/hooks/in", text, http.Header{"Content-Type": {"text/plain"}, "X-Signature": {"sha256=" + hmacHex("s3cret", text)}})
	if code != http.StatusAccepted {
		t.Fatalf("sha256= signature: %d %s, want 202", code, b)
	}
	id2 := executionID(t, b)
	accepted = append(accepted, id2)
	p = payloadOutput(t, sp.waitStatus(id2, "succeeded"))
	jsonSame(t, "payload.body of a text/plain request", p.Body, `"hello, plain text"`)
	if len(p.Query) != 0 {
		t.Errorf("payload.query = %v, want {}", p.Query)
	}

	// Exactly max_body_bytes is accepted.
	exact := bytes.Repeat([]byte("x"), 1024)
	code, b = post("/hooks/in", exact, http.Header{"Content-Type": {"text/plain"}, "X-Signature": {hmacHex("s3cret", exact)}})
	if code != http.StatusAccepted {
		t.Errorf("a body of exactly max_body_bytes (1KiB): %d %s, want 202", code, b)
	} else {
		accepted = append(accepted, executionID(t, b))
	}

	// ?wait=true: 200 with the execution object once the run ended.
	wbody := []byte(`{"wait": true}`)
	code, b = post("/hooks/in?wait=true", wbody, http.Header{"Content-Type": {"application/json"}, "X-Signature": {hmacHex("s3cret", wbody)}})
	if code != http.StatusOK {
		t.Fatalf("?wait=true: %d %s, want 200", code, b)
	}
	var wex journal.Execution
	if err := json.Unmarshal(b, &wex); err != nil {
		t.Fatalf("?wait=true answer: %v\n%s", err, b)
	}
	accepted = append(accepted, wex.ID)
	if wex.ID == "" || wex.Status != "succeeded" || wex.Workflow != "hook" || wex.FinishedAt == nil {
		t.Errorf("?wait=true answer: id %q status %q workflow %q finished_at %v, want a succeeded hook run:\n%s", wex.ID, wex.Status, wex.Workflow, wex.FinishedAt, b)
	}
	jsonSame(t, "?wait=true outputs.payload.body", payloadOutput(t, wex).Body, `{"wait": true}`)
	if n := wex.Nodes["task.echo"]; n == nil || n.Status != "succeeded" {
		t.Errorf("?wait=true answer has no succeeded task.echo node: %s", b)
	}

	// Refused requests: none starts a run.
	big := bytes.Repeat([]byte("y"), 1025)
	refused := []struct {
		name   string
		method string
		path   string
		body   []byte
		chunk  bool
		hdr    http.Header
		want   int
	}{
		{"bad signature", "POST", "/hooks/in", body, false, http.Header{"Content-Type": {"application/json"}, "X-Signature": {hmacHex("wrong", body)}}, 401},
		{"signature of another body", "POST", "/hooks/in", body, false, http.Header{"Content-Type": {"application/json"}, "X-Signature": {"sha256=" + hmacHex("s3cret", text)}}, 401},
		{"signature not hex", "POST", "/hooks/in", body, false, http.Header{"Content-Type": {"application/json"}, "X-Signature": {"sha256=zz"}}, 401},
		{"missing signature", "POST", "/hooks/in", body, false, http.Header{"Content-Type": {"application/json"}}, 401},
		{"wrong method", "GET", "/hooks/in", nil, false, http.Header{"X-Signature": {hmacHex("s3cret", nil)}}, 405},
		{"wrong method PUT", "PUT", "/hooks/in", body, false, http.Header{"X-Signature": {hmacHex("s3cret", body)}}, 405},
		{"body over max_body_bytes", "POST", "/hooks/in", big, false, http.Header{"Content-Type": {"text/plain"}, "X-Signature": {hmacHex("s3cret", big)}}, 413},
		{"chunked body over max_body_bytes", "POST", "/hooks/in", big, true, http.Header{"Content-Type": {"text/plain"}, "X-Signature": {hmacHex("s3cret", big)}}, 413},
		{"unknown path", "POST", "/hooks/nope", body, false, nil, 404},
	}
	for _, c := range refused {
		var r io.Reader
		if c.body != nil {
			r = bytes.NewReader(c.body)
			if c.chunk {
				r = io.MultiReader(r) // unknown length: sent chunked, without Content-Length
			}
		}
		code, b := sp.request(c.method, c.path, r, c.hdr)
		if code != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, code, b, c.want)
		}
		if bytes.Contains(b, []byte("execution_id")) {
			t.Errorf("%s: the refusal names an execution: %s", c.name, b)
		}
	}
	var listed []string
	for _, s := range sp.executions("") {
		listed = append(listed, s.ID)
		if s.Trigger.Type != "webhook" {
			t.Errorf("run %s: trigger type %q, want webhook", s.ID, s.Trigger.Type)
		}
	}
	sort.Strings(listed)
	sort.Strings(accepted)
	if !slices.Equal(listed, accepted) {
		t.Errorf("GET /v1/executions lists %v, want exactly the accepted runs %v (a refused request started a run?)", listed, accepted)
	}

	// -webhook-wait 1s and a run of 5 s: 504 with the execution id; the run goes on.
	start := time.Now()
	code, b = sp.request(http.MethodPost, "/hooks/slow?wait=true", strings.NewReader("{}"), http.Header{"Content-Type": {"application/json"}})
	took := time.Since(start)
	if code != http.StatusGatewayTimeout {
		t.Fatalf("?wait=true on a 5s run with -webhook-wait 1s: %d %s, want 504", code, b)
	}
	if took < 900*time.Millisecond || took > 4*time.Second {
		t.Errorf("the 504 came after %s, want about 1s (-webhook-wait)", took)
	}
	slowID := executionID(t, b)
	if ex := sp.execution(slowID); ex.Status != "running" {
		t.Errorf("after the 504 the run is %s, want running", ex.Status)
	}
	sp.waitStatus(slowID, "succeeded")
	sp.stopOK()
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// ---------------------------------------------------------------------------------------------
// Schedules

const everyMinuteWorkflow = `workflow "minutely" {}

trigger "schedule" "every" { cron = "* * * * *" }

task "echo" {
  uses   = builtin.transform
  inputs = { at = trigger.payload.scheduled_at }
}
`

// scheduledRuns lists the runs with the scheduled_at of their payload (the store read
// directly: serve is stopped).
func scheduledRuns(t *testing.T, h *harness) map[string][]string {
	t.Helper()
	st, err := journal.Open(filepath.Join(h.home, "state"), journal.Options{})
	if err != nil {
		t.Fatalf("open the store: %v", err)
	}
	defer st.Close()
	sums, err := st.List(journal.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, s := range sums {
		ex, err := st.Execution(s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ex.Trigger.Type != "schedule" || ex.Trigger.Name != "every" {
			t.Errorf("run %s: trigger %s.%s, want schedule.every", s.ID, ex.Trigger.Type, ex.Trigger.Name)
		}
		var p struct {
			ScheduledAt string `json:"scheduled_at"`
		}
		if err := json.Unmarshal(ex.Trigger.Payload, &p); err != nil || p.ScheduledAt == "" {
			t.Errorf("run %s: payload without scheduled_at: %s", s.ID, ex.Trigger.Payload)
		}
		out[p.ScheduledAt] = append(out[p.ScheduledAt], s.ID)
	}
	return out
}

// TestServeSchedule: a schedule fires its occurrence once, by the FUSCIA_NOW clock; a restart
// within the same minute does not fire it again; one missed while serve was down fires at start.
func TestServeSchedule(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("minutely.fsc.hcl", everyMinuteWorkflow)
	boundary := time.Date(2026, 3, 1, 10, 1, 0, 0, time.UTC)
	at := boundary.Format(time.RFC3339)

	sp := startServe(t, h, []string{"FUSCIA_NOW=" + boundary.Add(-3*time.Second).Format(time.RFC3339)}, "minutely.fsc.hcl")
	started := time.Now()
	deadline := time.Now().Add(12 * time.Second)
	var id string
	for id == "" {
		for _, s := range sp.executions("") {
			ex := sp.execution(s.ID)
			var p struct {
				ScheduledAt string `json:"scheduled_at"`
			}
			_ = json.Unmarshal(ex.Trigger.Payload, &p)
			if p.ScheduledAt == at {
				id = s.ID
			}
		}
		if id == "" {
			if time.Now().After(deadline) {
				t.Fatalf("no run for the occurrence %s within 12s:\n%v\n%s", at, sp.executions(""), sp)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if took := time.Since(started); took < time.Second {
		t.Errorf("the occurrence %s fired %s after a start at %s: before the clock reached it", at, took, boundary.Add(-3*time.Second).Format(time.RFC3339))
	}
	ex := sp.waitStatus(id, "succeeded")
	if ex.Trigger.Type != "schedule" || ex.Trigger.Name != "every" {
		t.Errorf("trigger = %s.%s, want schedule.every", ex.Trigger.Type, ex.Trigger.Name)
	}
	jsonSame(t, "task.echo output", nodeOf(t, ex, "task.echo").Output, `{"at": "`+at+`"}`)
	time.Sleep(500 * time.Millisecond)
	sp.stopOK()

	runs := scheduledRuns(t, h)
	if n := len(runs[at]); n != 1 {
		t.Errorf("%d runs for the occurrence %s, want 1: %v", n, at, runs)
	}
	for sched, ids := range runs {
		if sched != at {
			t.Errorf("a run for the occurrence %s (%v) although serve first started at %s, after it, and had never served the schedule before: the 1-minute catch-up fired an occurrence from before the trigger existed",
				sched, ids, boundary.Add(-3*time.Second).Format(time.RFC3339))
		}
	}

	// Restarted within the same minute: the occurrence is not fired again.
	sp = startServe(t, h, []string{"FUSCIA_NOW=" + boundary.Add(10*time.Second).Format(time.RFC3339)}, "minutely.fsc.hcl")
	time.Sleep(2500 * time.Millisecond)
	sp.stopOK()
	if again := scheduledRuns(t, h); len(again[at]) != 1 || len(again) != len(runs) {
		t.Errorf("after a restart within the minute of %s the runs are %v, want still %v", at, again, runs)
	}

	// Restarted after 10:02:00 passed while serve was down: it fires once at start.
	next := boundary.Add(time.Minute).Format(time.RFC3339)
	sp = startServe(t, h, []string{"FUSCIA_NOW=" + boundary.Add(70*time.Second).Format(time.RFC3339)}, "minutely.fsc.hcl")
	total := 0
	for _, ids := range runs {
		total += len(ids)
	}
	deadline = time.Now().Add(10 * time.Second)
	for len(sp.executions("")) < total+1 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	sp.stopOK()
	final := scheduledRuns(t, h)
	if len(final[next]) != 1 || len(final[at]) != 1 {
		t.Errorf("after a restart at %s (the %s occurrence missed while down) the runs are %v, want one each for %s and %s",
			boundary.Add(70*time.Second).Format(time.RFC3339), next, final, at, next)
	}
}

// ---------------------------------------------------------------------------------------------
// Poll triggers

const pollWorkflow = `workflow "ticks" {}

plugin "greeter" {
  source  = "greeter"
  version = "0.1.0"
}

trigger "poll" "tick" {
  interval  = "200ms"
  uses      = plugin.greeter.tick
  dedup_key = floor(event.n / 3)
}

task "echo" {
  uses   = builtin.transform
  inputs = { n = trigger.payload.n }
}
`

// pollState reads, with serve stopped, the greeter's tick counter (its trigger KV) and the n
// of every run's payload, by execution id.
func pollState(t *testing.T, h *harness) (int, map[string]int) {
	t.Helper()
	st, err := journal.Open(filepath.Join(h.home, "state"), journal.Options{})
	if err != nil {
		t.Fatalf("open the store: %v", err)
	}
	defer st.Close()
	v, ok, err := st.KVGet(journal.TriggerScope("ticks", "tick"), "n")
	if err != nil || !ok {
		t.Fatalf("the greeter's tick counter is not in the trigger's KV (found %v, %v)", ok, err)
	}
	var polls int
	if _, err := fmt.Sscan(string(v), &polls); err != nil {
		t.Fatalf("tick counter %q: %v", v, err)
	}
	sums, err := st.List(journal.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]int{}
	for _, s := range sums {
		ex, err := st.Execution(s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ex.Trigger.Type != "poll" || ex.Trigger.Name != "tick" {
			t.Errorf("run %s: trigger %s.%s, want poll.tick", s.ID, ex.Trigger.Type, ex.Trigger.Name)
		}
		var p struct {
			N *int `json:"n"`
		}
		if err := json.Unmarshal(ex.Trigger.Payload, &p); err != nil || p.N == nil {
			t.Errorf("run %s: payload without n: %s", s.ID, ex.Trigger.Payload)
			continue
		}
		runs[s.ID] = *p.N
	}
	return polls, runs
}

// checkDedup checks the runs of the polls 1..polls against dedup_key = floor(n / 3): one run per
// key, none twice. The key of the very last poll may lack its run only when that poll was its
// key's first (the shutdown cut it short: at most once, never twice).
func checkDedup(t *testing.T, when string, polls int, runs map[string]int) {
	t.Helper()
	byKey := map[int][]int{}
	for _, n := range runs {
		byKey[n/3] = append(byKey[n/3], n)
	}
	for k, ns := range byKey {
		if len(ns) > 1 {
			sort.Ints(ns)
			t.Errorf("%s: dedup key %d started %d runs (n = %v), want 1", when, k, len(ns), ns)
		}
		for _, n := range ns {
			if n < 1 || n > polls {
				t.Errorf("%s: a run for n = %d, but the trigger was polled %d times", when, n, polls)
			}
		}
	}
	for k := 0; k <= polls/3; k++ {
		if _, ok := byKey[k]; !ok && !(k == polls/3 && polls%3 == 0) {
			t.Errorf("%s: no run for dedup key %d (polls 1..%d; runs n = %v)", when, k, polls, sortedValues(runs))
		}
	}
}

func sortedValues(m map[string]int) []int {
	out := make([]int, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Ints(out)
	return out
}

// TestServePollDedup: a poll trigger with dedup_key starts one run per key, and the dedup state
// survives a restart.
func TestServePollDedup(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	installGreeter(t, filepath.Join(h.home, "plugins"))
	h.write("ticks.fsc.hcl", pollWorkflow)
	if r := h.run("validate", "ticks.fsc.hcl"); r.code != 0 {
		t.Fatalf("the poll workflow does not validate:\n%s", r)
	}

	// Stop right after the run of a key's first poll (n = 3k): the next polls fall in the same key.
	waitForN := func(sp *serveProc, min int) {
		t.Helper()
		deadline := time.Now().Add(serveDeadline)
		for {
			for _, s := range sp.executions("") {
				if s.Status != "succeeded" {
					continue
				}
				var p struct {
					N int `json:"n"`
				}
				_ = json.Unmarshal(sp.execution(s.ID).Trigger.Payload, &p)
				if p.N >= min {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no run for a poll n >= %d within %s: %v\n%s", min, serveDeadline, sp.executions(""), sp)
			}
			time.Sleep(30 * time.Millisecond)
		}
	}
	sp := startServe(t, h, nil, "ticks.fsc.hcl")
	waitForN(sp, 6)
	sp.stopOK()
	polls1, runs1 := pollState(t, h)
	checkDedup(t, "first serve", polls1, runs1)
	if len(runs1) < 3 {
		t.Errorf("first serve: %d runs after %d polls, want at least 3", len(runs1), polls1)
	}

	sp = startServe(t, h, nil, "ticks.fsc.hcl")
	waitForN(sp, polls1+4)
	sp.stopOK()
	polls2, runs2 := pollState(t, h)
	if polls2 <= polls1 {
		t.Fatalf("the tick counter went from %d to %d across the restart", polls1, polls2)
	}
	checkDedup(t, "after the restart", polls2, runs2)
	for id, n := range runs2 {
		if _, old := runs1[id]; !old && n <= polls1 {
			t.Errorf("after the restart, run %s has n = %d, a poll of the first serve (polls 1..%d)", id, n, polls1)
		}
	}
	if (polls1+1)%3 != 0 {
		t.Logf("the first poll after the restart (n = %d) fell in key %d, which had its run before the restart", polls1+1, (polls1+1)/3)
	} else {
		t.Logf("the first poll after the restart (n = %d) began a new key: dedup across the restart only checked by the run counts", polls1+1)
	}
}

// ---------------------------------------------------------------------------------------------
// Waits and signals

const approvalWorkflow = `workflow "approve" {}

trigger "manual" "go" {}

wait "approve" {
  approval { message = "ok?" }
}

task "after" {
  uses   = builtin.transform
  inputs = { answer = wait.approve.output }
}

output "answer" { value = task.after.output.answer }
`

// TestServeApproval: an approval wait parks the run; `fuscia signal` answers it through the
// socket (or records the answer when no serve runs), -reject fails it, and the exit codes are
// docs/reference/cli.md's.
func TestServeApproval(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("approve.fsc.hcl", approvalWorkflow)
	sp := startServe(t, h, nil, "approve.fsc.hcl")

	id := sp.startRun("approve", `{}`)
	ex := sp.waitStatus(id, "waiting")
	if n := nodeOf(t, ex, "wait.approve"); n.Status != "waiting" {
		t.Errorf("wait.approve is %s, want waiting", n.Status)
	}
	sp.waitParked(1)

	r := h.run("signal", id, "wait.approve", "-data", `{"by":"ana"}`, "-home", h.home)
	wantCode(t, r, 0)
	wantContains(t, "signal's stdout", r.stdout, "Answered wait.approve", id)
	if strings.Contains(r.stdout, "recorded") {
		t.Errorf("serve runs the execution, yet signal says the answer is only recorded:\n%s", r)
	}
	ex = sp.waitStatus(id, "succeeded")
	jsonSame(t, "outputs", ex.Outputs, `{"answer": {"by": "ana"}}`)
	jsonSame(t, "wait.approve output", nodeOf(t, ex, "wait.approve").Output, `{"by": "ana"}`)
	sp.waitParked(0)

	r = h.run("signal", id, "wait.approve", "-data", `{"by":"bob"}`, "-home", h.home)
	wantCode(t, r, 1)
	wantContains(t, "second signal's stderr", r.stderr, "already")

	// An unknown node of a waiting run is invalid input; -reject fails the wait.
	id2 := sp.startRun("approve", `{}`)
	sp.waitStatus(id2, "waiting")
	r = h.run("signal", id2, "nope", "-home", h.home)
	wantCode(t, r, 2)
	// Another kind's address is not read as the wait of that name.
	r = h.run("signal", id2, "task.approve", "-home", h.home)
	wantCode(t, r, 2)
	wantContains(t, "signal to a task address", r.stderr, "task.approve", "wait.NAME")
	r = h.run("signal", id2, "wait.approve", "-reject", "-home", h.home)
	wantCode(t, r, 0)
	ex = sp.waitStatus(id2, "failed")
	if n := nodeOf(t, ex, "wait.approve"); n.Status != "failed" || n.Error == nil || n.Error.Kind != "rejected" {
		b, _ := json.Marshal(n)
		t.Errorf("rejected wait.approve = %s, want failed with error kind rejected", b)
	}
	if n := ex.Nodes["task.after"]; n != nil && n.Status == "succeeded" {
		t.Errorf("task.after ran after a rejection")
	}

	// Answered (by its bare name) while no serve runs: recorded; the next serve finishes it.
	id3 := sp.startRun("approve", `{}`)
	sp.waitStatus(id3, "waiting")
	sp.waitParked(1)
	if ex := showJSON(t, h, id3); ex.Status != "waiting" { // through serve's socket
		t.Errorf("show through serve says the parked run is %s, want waiting", ex.Status)
	}
	sp.stopOK()
	if ex := showJSON(t, h, id3); ex.Status != "waiting" {
		t.Errorf("with serve stopped, show says the parked run is %s, want waiting", ex.Status)
	}
	r = h.run("signal", id3, "approve", "-data", `"later"`, "-home", h.home)
	wantCode(t, r, 0)
	wantContains(t, "signal's stdout with no serve", r.stdout, "the answer is recorded")
	sp = startServe(t, h, nil, "approve.fsc.hcl")
	ex = sp.waitStatus(id3, "succeeded")
	jsonSame(t, "outputs of the run answered while serve was down", ex.Outputs, `{"answer": "later"}`)
	sp.waitParked(0)
	sp.stopOK()
}

const callbackTimeoutWorkflow = `workflow "cb" {}

trigger "manual" "go" {}

wait "w" {
  callback {}
  timeout = "1s"
}

task "after" {
  uses   = builtin.transform
  inputs = { got = wait.w.output }
}
`

const durationWaitWorkflow = `workflow "nap" {}

trigger "manual" "go" {}

wait "w" { duration = "3s" }

task "after" {
  uses   = builtin.transform
  after  = [wait.w]
  inputs = { done = true }
}
`

// TestServeWaitTimeouts: a callback wait past its timeout fails with kind timeout; a duration
// wait that fell due while serve was stopped fires at once on the next start.
func TestServeWaitTimeouts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("flows/cb.fsc.hcl", callbackTimeoutWorkflow)
	h.write("flows/nap.fsc.hcl", durationWaitWorkflow)
	sp := startServe(t, h, nil, "flows")

	cb := sp.startRun("cb", `{}`)
	napStart := time.Now()
	nap := sp.startRun("nap", `{}`)
	sp.waitStatus(nap, "waiting")
	sp.stopOK()
	if since := time.Since(napStart); since > 3*time.Second {
		t.Logf("serve stopped %s after the duration wait started (slow machine)", since)
	}
	time.Sleep(time.Until(napStart.Add(4 * time.Second)))

	// Fired at once it ends well within 2 s of the restart; a wait that restarted its 3 s
	// would not.
	sp = startServe(t, h, nil, "flows")
	restarted := time.Now()
	ex := sp.waitStatus(nap, "succeeded")
	if took := time.Since(restarted); took > 2*time.Second {
		t.Errorf("the duration wait, due while serve was stopped, fired %s after the restart, want at once", took)
	}
	if n := nodeOf(t, ex, "wait.w"); n.Status != "succeeded" {
		t.Errorf("wait.w is %s, want succeeded", n.Status)
	}

	ex = sp.waitStatus(cb, "failed")
	n := nodeOf(t, ex, "wait.w")
	if n.Status != "failed" || n.Error == nil || n.Error.Kind != "timeout" {
		b, _ := json.Marshal(n)
		t.Errorf("callback wait past its timeout = %s, want failed with error kind timeout", b)
	}
	if ex.FinishedAt != nil && ex.FinishedAt.Sub(ex.StartedAt) < 900*time.Millisecond {
		t.Errorf("the callback wait timed out %s after the start, before its 1s timeout", ex.FinishedAt.Sub(ex.StartedAt))
	}
	if a := ex.Nodes["task.after"]; a != nil && a.Status == "succeeded" {
		t.Errorf("task.after ran after the wait timed out")
	}

	// A second callback run, not interrupted: it times out on time.
	cb2 := sp.startRun("cb", `{}`)
	began := time.Now()
	ex = sp.waitStatus(cb2, "failed")
	if n := nodeOf(t, ex, "wait.w"); n.Error == nil || n.Error.Kind != "timeout" {
		b, _ := json.Marshal(n)
		t.Errorf("callback wait past its timeout = %s, want error kind timeout", b)
	}
	if took := time.Since(began); took > 4*time.Second {
		t.Errorf("a 1s callback timeout took %s to fail the run", took)
	}
	sp.stopOK()
}

// ---------------------------------------------------------------------------------------------
// Shutdown and crash

const drainWorkflow = `workflow "drain" {}

trigger "manual" "go" {}

task "short" {
  uses   = builtin.sleep
  inputs = { duration = "%s" }
}

task "long" {
  uses   = builtin.sleep
  inputs = { duration = "%s" }
}

task "after" {
  uses   = builtin.transform
  after  = [task.short, task.long]
  inputs = { done = true }
}
`

// TestServeSIGTERM: SIGTERM lets running attempts finish within -shutdown-grace, journals the
// rest as interrupted and exits 0; the next serve re-runs only the interrupted attempt.
func TestServeSIGTERM(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("drain.fsc.hcl", fmt.Sprintf(drainWorkflow, "2s", "10s"))
	sp := startServe(t, h, nil, "drain.fsc.hcl", "-shutdown-grace", "3s")
	id := sp.startRun("drain", `{}`)
	began := time.Now()
	sp.waitFor(id, "running both sleeps", func(ex journal.Execution) bool {
		s, l := ex.Nodes["task.short"], ex.Nodes["task.long"]
		return s != nil && l != nil && s.Status == "running" && l.Status == "running"
	})
	time.Sleep(time.Until(began.Add(time.Second)))
	code, took := sp.stop(15 * time.Second)
	if code != 0 {
		t.Errorf("serve exited %d after SIGTERM, want 0:\n%s", code, sp)
	}
	if took > 6*time.Second {
		t.Errorf("serve took %s to stop with -shutdown-grace 3s", took)
	}
	if took < 2500*time.Millisecond {
		t.Errorf("serve stopped %s after SIGTERM: it did not give the running 10s sleep its 3s of grace", took)
	}
	wantContains(t, "serve's stdout", sp.stdout.String(), "Shutting down:", "Stopped.")

	ex := showJSON(t, h, id)
	if ex.Status != "interrupted" {
		t.Errorf("after the shutdown the run is %s, want interrupted (unfinished, resumable)", ex.Status)
	}
	if n := nodeOf(t, ex, "task.short"); n.Status != "succeeded" || n.Attempts != 1 {
		t.Errorf("task.short (2s, within the grace) is %s with %d attempts, want succeeded with 1", n.Status, n.Attempts)
	}
	if n := nodeOf(t, ex, "task.long"); n.Status == "succeeded" || n.Status == "failed" {
		t.Errorf("task.long (10s, past the grace) is %s after the shutdown, want unfinished", n.Status)
	}
	if n := ex.Nodes["task.after"]; n != nil && n.Status != "pending" && n.Status != "" {
		t.Errorf("task.after is %s after the shutdown, want pending", n.Status)
	}

	sp = startServe(t, h, nil, "drain.fsc.hcl")
	ex = sp.waitStatus(id, "succeeded")
	if n := nodeOf(t, ex, "task.long"); n.Attempts != 2 {
		t.Errorf("task.long has %d attempts, want 2 (the interrupted one run again)", n.Attempts)
	}
	if n := nodeOf(t, ex, "task.short"); n.Attempts != 1 {
		t.Errorf("task.short has %d attempts, want 1 (finished before the shutdown, not run again)", n.Attempts)
	}
	if n := nodeOf(t, ex, "task.after"); n.Status != "succeeded" || n.Attempts != 1 {
		t.Errorf("task.after is %s with %d attempts, want succeeded with 1", n.Status, n.Attempts)
	}
	sp.stopOK()
}

// TestServeSIGKILL: a serve killed mid-run leaves a stale socket that does not stop the next
// one, which resumes the run without running finished tasks again.
func TestServeSIGKILL(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("drain.fsc.hcl", fmt.Sprintf(drainWorkflow, "500ms", "4s"))
	sp := startServe(t, h, nil, "drain.fsc.hcl")
	id := sp.startRun("drain", `{}`)
	sp.waitFor(id, "done with task.short", func(ex journal.Execution) bool {
		s := ex.Nodes["task.short"]
		return s != nil && s.Status == "succeeded"
	})
	sp.kill()
	if _, err := os.Lstat(filepath.Join(h.home, "fuscia.sock")); err != nil {
		t.Logf("no socket file left after SIGKILL (%v): the stale-socket case is not exercised", err)
	}

	sp = startServe(t, h, nil, "drain.fsc.hcl")
	ex := sp.waitStatus(id, "succeeded")
	if n := nodeOf(t, ex, "task.short"); n.Attempts != 1 {
		t.Errorf("task.short has %d attempts, want 1 (it had finished before the kill)", n.Attempts)
	}
	if n := nodeOf(t, ex, "task.long"); n.Attempts != 2 {
		t.Errorf("task.long has %d attempts, want 2 (the one in flight at the kill run again)", n.Attempts)
	}
	// The CLI reaches the new serve through the socket.
	r := h.run("executions", "list", "-json", "-home", h.home)
	wantCode(t, r, 0)
	wantContains(t, "executions list", r.stdout, id)
	sp.stopOK()
}

// ---------------------------------------------------------------------------------------------
// max_concurrent_runs

// overlapWorkflow: name, on_overlap, the nap's duration; its webhook is /hooks/NAME.
const overlapWorkflow = `workflow "%[1]s" {
  max_concurrent_runs = 1
  on_overlap          = "%[2]s"
}

trigger "webhook" "in" { path = "/hooks/%[1]s" }

task "nap" {
  uses   = builtin.sleep
  inputs = { duration = "%[3]s" }
}
`

// TestServeOverlap: max_concurrent_runs = 1 with on_overlap = "skip" answers 409 while a run
// goes on; with "queue" the second run waits for the first.
func TestServeOverlap(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("flows/skip.fsc.hcl", fmt.Sprintf(overlapWorkflow, "skip", "skip", "2s"))
	h.write("flows/queue.fsc.hcl", fmt.Sprintf(overlapWorkflow, "queue", "queue", "1500ms"))
	h.write("flows/sburst.fsc.hcl", fmt.Sprintf(overlapWorkflow, "sburst", "skip", "300ms"))
	h.write("flows/qburst.fsc.hcl", fmt.Sprintf(overlapWorkflow, "qburst", "queue", "300ms"))
	sp := startServe(t, h, nil, "flows")
	hook := func(path string) (int, map[string]any) {
		t.Helper()
		code, b := sp.postJSON(path, `{}`)
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("POST %s: %d %s: %v", path, code, b, err)
		}
		return code, v
	}

	code, first := hook("/hooks/skip")
	if code != http.StatusAccepted || first["queued"] != nil {
		t.Fatalf("first run of skip: %d %v, want 202 without queued", code, first)
	}
	code, second := hook("/hooks/skip")
	if code != http.StatusConflict || second["skipped"] != true {
		t.Errorf("second run of skip while the first runs: %d %v, want 409 {\"skipped\": true, …}", code, second)
	}
	if reason, _ := second["reason"].(string); reason == "" {
		t.Errorf("409 answer has no reason: %v", second)
	}
	if _, ok := second["execution_id"]; ok {
		t.Errorf("409 answer names an execution: %v", second)
	}
	if n := len(sp.executions("?workflow=skip")); n != 1 {
		t.Errorf("%d runs of skip, want 1 (the skipped request must start none)", n)
	}
	sp.waitStatus(first["execution_id"].(string), "succeeded")

	// Several requests at once (a few rounds, each once the previous runs ended): exactly one
	// starts, the others are skipped.
	const burst = 6
	for round := range 3 {
		codes, answers := hookBurst(t, sp, "/hooks/sburst", burst)
		var ids []string
		for i, c := range codes {
			if c == http.StatusAccepted {
				ids = append(ids, executionID(t, answers[i]))
			} else if c != http.StatusConflict {
				t.Errorf("burst of %d requests: an answer %d %s, want 202 or 409", burst, c, answers[i])
			}
		}
		for _, id := range ids {
			sp.waitStatus(id, "succeeded")
		}
		if len(ids) != 1 {
			t.Errorf("round %d: burst of %d simultaneous webhook requests to a max_concurrent_runs = 1, on_overlap = \"skip\" workflow: %d answered 202 (%v), want exactly 1: the others must be skipped, not started and held behind the first",
				round, burst, len(ids), codes)
			break
		}
	}

	// queue: the second is accepted as queued and starts when the first has finished.
	code, q1 := hook("/hooks/queue")
	if code != http.StatusAccepted || q1["queued"] != nil {
		t.Fatalf("first run of queue: %d %v, want 202 without queued", code, q1)
	}
	code, q2 := hook("/hooks/queue")
	if code != http.StatusAccepted || q2["queued"] != true {
		t.Fatalf("second run of queue while the first runs: %d %v, want 202 with \"queued\": true", code, q2)
	}
	ex1 := sp.waitStatus(q1["execution_id"].(string), "succeeded")
	ex2 := sp.waitStatus(q2["execution_id"].(string), "succeeded")
	n1, n2 := nodeOf(t, ex1, "task.nap"), nodeOf(t, ex2, "task.nap")
	if n1.FinishedAt == nil || n2.StartedAt == nil {
		t.Fatalf("nap timings missing: %+v %+v", n1, n2)
	}
	if n2.StartedAt.Before(*n1.FinishedAt) {
		t.Errorf("the queued run's nap started at %s, before the first run's nap finished at %s", n2.StartedAt, n1.FinishedAt)
	}

	// queue, several requests at once: all accepted, all but one say queued, none overlap.
	const qn = 3
	codes, answers := hookBurst(t, sp, "/hooks/qburst", qn)
	notQueued := 0
	var naps []*journal.NodeView
	for i, c := range codes {
		if c != http.StatusAccepted {
			t.Errorf("burst to a queue workflow: answer %d %s, want 202", c, answers[i])
			continue
		}
		var v struct {
			ID     string `json:"execution_id"`
			Queued bool   `json:"queued"`
		}
		_ = json.Unmarshal(answers[i], &v)
		if !v.Queued {
			notQueued++
		}
		naps = append(naps, nodeOf(t, sp.waitStatus(v.ID, "succeeded"), "task.nap"))
	}
	if notQueued != 1 {
		t.Errorf("burst of %d simultaneous webhook requests to a max_concurrent_runs = 1, on_overlap = \"queue\" workflow: %d answers without \"queued\": true, want exactly 1 (the others were held back)", qn, notQueued)
	}
	sort.Slice(naps, func(i, j int) bool { return naps[i].StartedAt.Before(*naps[j].StartedAt) })
	for i := 1; i < len(naps); i++ {
		if naps[i].StartedAt.Before(*naps[i-1].FinishedAt) {
			t.Errorf("queued runs overlapped: a nap started at %s before the previous finished at %s", naps[i].StartedAt, naps[i-1].FinishedAt)
		}
	}
	sp.stopOK()
}

// hookBurst sends n POSTs to path at once and returns their status codes and bodies.
func hookBurst(t *testing.T, sp *serveProc, path string, n int) ([]int, [][]byte) {
	t.Helper()
	codes, bodies := make([]int, n), make([][]byte, n)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			req, _ := http.NewRequest(http.MethodPost, sp.base+path, strings.NewReader("{}"))
			req.Header.Set("Content-Type", "application/json")
			resp, err := serveClient.Do(req)
			if err != nil {
				return
			}
			bodies[i], _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			codes[i] = resp.StatusCode
		}()
	}
	close(gate)
	wg.Wait()
	return codes, bodies
}

// ---------------------------------------------------------------------------------------------
// Reload

const reloadWorkflow = `workflow "reload" {}

trigger "webhook" "in" { path = "/hooks/reload" }

task "v" {
  uses   = builtin.transform
  inputs = { version = "%s" }
}

output "version" { value = task.v.output.version }
`

// TestServeReload: serve reloads a changed file, keeps the previous version when the change is
// broken (and shows why), and stops serving a removed file.
func TestServeReload(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	file := h.write("flows/reload.fsc.hcl", fmt.Sprintf(reloadWorkflow, "v1"))
	sp := startServe(t, h, nil, "flows")
	version := func() string {
		t.Helper()
		code, b := sp.postJSON("/hooks/reload?wait=true", `{}`)
		if code != http.StatusOK {
			t.Fatalf("POST /hooks/reload?wait=true: %d %s, want 200\n%s", code, b, sp)
		}
		var ex journal.Execution
		if err := json.Unmarshal(b, &ex); err != nil {
			t.Fatal(err)
		}
		var out struct {
			Version string `json:"version"`
		}
		_ = json.Unmarshal(ex.Outputs, &out)
		return out.Version
	}
	if v := version(); v != "v1" {
		t.Fatalf("first version = %q, want v1", v)
	}
	waitVersion := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for v := version(); v != want; v = version() {
			if time.Now().After(deadline) {
				t.Fatalf("new runs still use %q 10s after the edit, want %q:\n%s", v, want, sp)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	h.write(file, fmt.Sprintf(reloadWorkflow, "v2"))
	waitVersion("v2")

	// A broken edit: the diagnostics on stderr, the previous version goes on.
	h.write(file, fmt.Sprintf(reloadWorkflow, "v3")+"\ntask \"broken\" {\n  uses = \n")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(sp.stderr.String(), "Error:") {
		if time.Now().After(deadline) {
			t.Fatalf("no diagnostics on stderr 10s after a broken edit:\n%s", sp)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	wantContains(t, "serve's stderr", sp.stderr.String(), "reload.fsc.hcl")
	if v := version(); v != "v2" {
		t.Errorf("after a broken edit new runs use %q, want the previous version v2", v)
	}
	code, b := sp.request(http.MethodPost, "/hooks/reload", strings.NewReader("{}"), nil)
	if code != http.StatusAccepted {
		t.Errorf("after a broken edit the webhook answers %d %s, want 202", code, b)
	}
	time.Sleep(1500 * time.Millisecond) // the watcher looks again: still the previous version
	if v := version(); v != "v2" {
		t.Errorf("a while after a broken edit new runs use %q, want v2", v)
	}

	// Removed: the webhook is gone.
	if err := os.Remove(filepath.Join(h.dir, file)); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		code, b := sp.postJSON("/hooks/reload", `{}`)
		if code == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhook of a removed file still answers %d %s 10s later", code, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code, b := sp.get("/v1/workflows"); code != http.StatusOK || strings.Contains(string(b), `"reload"`) {
		t.Errorf("GET /v1/workflows after the file was removed: %d %s, want no reload workflow", code, b)
	}
	sp.stopOK()
}

// ---------------------------------------------------------------------------------------------
// Metrics

const metricsWorkflows = `workflow "m" {}

trigger "manual" "go" {}

task "a" {
  uses   = builtin.transform
  inputs = { x = 1 }
}
`

const metricsFailWorkflow = `workflow "mf" {}

trigger "manual" "go" {}

task "boom" {
  uses   = builtin.fail
  inputs = { message = "no", kind = "fatal" }
}
`

const metricsParkWorkflow = `workflow "mp" {}

trigger "manual" "go" {}

wait "ok" {
  approval { message = "?" }
}
`

// TestServeMetrics: -metrics-listen serves Prometheus text with the runs and node attempts by
// outcome; a parked run is not counted as ended.
func TestServeMetrics(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("flows/m.fsc.hcl", metricsWorkflows)
	h.write("flows/mf.fsc.hcl", metricsFailWorkflow)
	h.write("flows/mp.fsc.hcl", metricsParkWorkflow)
	sp := startServe(t, h, nil, "flows", "-metrics-listen", "127.0.0.1:0")
	if sp.metrics == "" || !strings.HasSuffix(sp.metrics, "/metrics") {
		t.Fatalf("serve printed no metrics address:\n%s", sp)
	}
	code, b := sp.postJSON("/v1/workflows/m/runs?wait=true", `{"payload": {"k": 1}}`)
	if code != http.StatusOK {
		t.Fatalf("POST /v1/workflows/m/runs?wait=true: %d %s, want 200", code, b)
	}
	var mex journal.Execution
	if err := json.Unmarshal(b, &mex); err != nil || mex.Status != "succeeded" {
		t.Errorf("POST /v1/workflows/m/runs?wait=true: %s (%v), want the succeeded execution", b, err)
	}
	jsonSame(t, "the run's trigger payload", mex.Trigger.Payload, `{"k": 1}`)
	if code, b := sp.postJSON("/v1/workflows/nope/runs", `{}`); code != http.StatusNotFound {
		t.Errorf("POST /v1/workflows/nope/runs: %d %s, want 404", code, b)
	}
	if code, b := sp.get("/v1/executions/01NOSUCHEXECUTION0000000000"); code != http.StatusNotFound {
		t.Errorf("GET /v1/executions/UNKNOWN: %d %s, want 404", code, b)
	}
	sp.waitStatus(sp.startRun("mf", `{}`), "failed")
	park := sp.startRun("mp", `{}`)
	sp.waitStatus(park, "waiting")
	sp.waitParked(1)

	series, text := scrapeMetrics(t, sp.metrics)
	want := map[string]float64{
		`fuscia_runs_total{outcome="succeeded",workflow="m"}`:                                 1,
		`fuscia_runs_total{outcome="failed",workflow="mf"}`:                                   1,
		`fuscia_node_attempts_total{kind="builtin",outcome="succeeded",workflow="m"}`:         1,
		`fuscia_node_attempts_total{kind="builtin",outcome="fatal",workflow="mf"}`:            1,
		`fuscia_node_duration_seconds_count{kind="builtin",outcome="succeeded",workflow="m"}`: 1,
		`fuscia_active_runs{workflow="m"}`:                                                    0,
		`fuscia_active_runs{workflow="mp"}`:                                                   0,
	}
	for k, v := range want {
		got, ok := series[k]
		if !ok {
			t.Errorf("/metrics has no series %s", k)
		} else if math.Abs(got-v) > 1e-9 {
			t.Errorf("/metrics: %s = %v, want %v", k, got, v)
		}
	}
	for k := range series {
		if strings.HasPrefix(k, "fuscia_runs_total{") && strings.Contains(k, `workflow="mp"`) {
			t.Errorf("/metrics counts the parked run as ended: %s", k)
		}
		if strings.Contains(k, "execution_id") {
			t.Errorf("/metrics has a per-execution label: %s", k)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", text)
	}
	sp.stopOK()
}

// scrapeMetrics GETs serve's /metrics at url: every series's value by its name and labels, and
// the whole text.
func scrapeMetrics(t *testing.T, url string) (map[string]float64, string) {
	t.Helper()
	resp, err := serveClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d\n%s", resp.StatusCode, b)
	}
	text := string(b)
	series := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		var v float64
		if _, err := fmt.Sscan(line[i+1:], &v); err == nil {
			series[line[:i]] = v
		}
	}
	return series, text
}

// TestServeGOMAXPROCS: unless GOMAXPROCS is set, serve runs Go code on two threads more than
// Go's default, one for each of the store's compactors (docs/serve.md, "CPUs"); a GOMAXPROCS
// that is set stands. The Go runtime's own gauge on /metrics says which.
func TestServeGOMAXPROCS(t *testing.T) {
	t.Parallel()
	// What serve starts from when GOMAXPROCS is unset: this test process's default (go test
	// sets no GOMAXPROCS without -cpu), or the value serve inherits from the environment.
	base := runtime.GOMAXPROCS(0)
	want := base + journal.Compactors
	if v := os.Getenv("GOMAXPROCS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Skipf("GOMAXPROCS=%q in the environment", v)
		}
		want = n
	}
	for _, tc := range []struct {
		name string
		env  []string
		want int
	}{
		{name: "unset", want: want},
		{name: "set", env: []string{"GOMAXPROCS=1"}, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.write("flows/m.fsc.hcl", metricsWorkflows)
			sp := startServe(t, h, tc.env, "flows", "-metrics-listen", "127.0.0.1:0")
			series, text := scrapeMetrics(t, sp.metrics)
			if got, ok := series["go_sched_gomaxprocs_threads"]; !ok || got != float64(tc.want) {
				t.Errorf("go_sched_gomaxprocs_threads = %v (present: %v), want %d\n%s", got, ok, tc.want, text)
			}
			sp.stopOK()
		})
	}
}

// ---------------------------------------------------------------------------------------------
// Cancelling a parked run

const parkedCancelWorkflow = `workflow "p" {}

trigger "manual" "go" {}

trigger "webhook" "in" { path = "/hooks/p" }

wait "ok" {
  approval { message = "?" }
  timeout = "3s"
}
`

// TestServeCancelParked: `fuscia cancel` of a run parked at its wait, while serve runs: the run
// ends cancelled, and serve lets go of it (its parked entry, its ?wait=true caller, the metrics),
// and does not try to resume it when its wait's deadline comes.
func TestServeCancelParked(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("p.fsc.hcl", parkedCancelWorkflow)
	sp := startServe(t, h, nil, "p.fsc.hcl", "-webhook-wait", "8s", "-metrics-listen", "127.0.0.1:0")

	a := sp.startRun("p", `{}`)
	sp.waitStatus(a, "waiting")
	type answer struct {
		code int
		body []byte
		took time.Duration
	}
	hookDone := make(chan answer, 1)
	go func() {
		start := time.Now()
		req, _ := http.NewRequest(http.MethodPost, sp.base+"/hooks/p?wait=true", strings.NewReader("{}"))
		resp, err := serveClient.Do(req)
		if err != nil {
			hookDone <- answer{code: -1, body: []byte(err.Error())}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		hookDone <- answer{resp.StatusCode, b, time.Since(start)}
	}()
	sp.waitParked(2)
	var b string
	for _, s := range sp.executions("") {
		if s.ID != a {
			b = s.ID
		}
	}
	if b == "" {
		t.Fatalf("the webhook's run is not listed: %v", sp.executions(""))
	}

	cancelled := time.Now()
	for _, id := range []string{a, b} {
		r := h.run("cancel", id, "-home", h.home)
		wantCode(t, r, 0)
		ex := sp.waitStatus(id, "cancelled")
		if n := nodeOf(t, ex, "wait.ok"); n.Status != "cancelled" {
			t.Errorf("run %s is cancelled but its wait.ok is %q, want cancelled (a waiting node of a cancelled run)", id, n.Status)
		}
	}

	select {
	case ans := <-hookDone:
		if ans.code != http.StatusOK || !strings.Contains(string(ans.body), `"cancelled"`) {
			t.Errorf("the ?wait=true caller of a run cancelled while parked got %d after %s: %s; want 200 with the cancelled execution once it was cancelled", ans.code, ans.took, ans.body)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("the ?wait=true caller got no answer")
	}
	if took := time.Since(cancelled); took > 3*time.Second {
		t.Errorf("the ?wait=true caller of a run cancelled while parked was answered %s after the cancel, want at once", took)
	}

	deadline := time.Now().Add(2 * time.Second)
	for {
		got, _ := sp.health()["parked_runs"].(float64)
		if got == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("GET /v1/health still counts %v parked runs 2s after both were cancelled, want 0", got)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Past the waits' 3s deadline: serve must not try to resume the cancelled runs.
	time.Sleep(time.Until(cancelled.Add(3500 * time.Millisecond)))
	for _, line := range strings.Split(sp.stderr.String(), "\n") {
		if strings.Contains(line, "could not be resumed") {
			t.Errorf("serve tried to resume a run cancelled while parked when its wait's deadline came: %s", line)
		}
	}
	for _, id := range []string{a, b} {
		if ex := sp.execution(id); ex.Status != "cancelled" {
			t.Errorf("run %s is %s after its wait's deadline, want still cancelled", id, ex.Status)
		}
	}

	resp, err := serveClient.Get(sp.metrics)
	if err != nil {
		t.Fatal(err)
	}
	mb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `fuscia_runs_total{outcome="cancelled",workflow="p"} 2`; !strings.Contains(string(mb), want) {
		t.Errorf("/metrics has no %s: runs cancelled while parked are not counted", want)
	}
	sp.stopOK()
}

// ---------------------------------------------------------------------------------------------
// Signals racing

// signalAPI is POST /v1/executions/{id}/signal.
func signalAPI(sp *serveProc, id, node, data string) (int, []byte, error) {
	req, _ := http.NewRequest(http.MethodPost, sp.base+"/v1/executions/"+id+"/signal",
		strings.NewReader(`{"node": "`+node+`", "data": `+data+`}`))
	req.Header.Set("Content-Type", "application/json")
	sp.authorize(req)
	resp, err := serveClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// TestServeSignalRaces: a wait takes one answer, whatever the timing: several signals at once
// for a parked run are one answer and refusals, and a signal sent as the run parks is not lost.
func TestServeSignalRaces(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("approve.fsc.hcl", approvalWorkflow)
	sp := startServe(t, h, nil, "approve.fsc.hcl")

	// Several answers at once for a parked run: exactly one is taken.
	const burst = 5
	for round := range 3 {
		id := sp.startRun("approve", `{}`)
		sp.waitStatus(id, "waiting")
		sp.waitParked(1)
		codes := make([]int, burst)
		bodies := make([][]byte, burst)
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for i := range burst {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				codes[i], bodies[i], _ = signalAPI(sp, id, "wait.approve", fmt.Sprintf(`{"i": %d}`, i))
			}()
		}
		close(gate)
		wg.Wait()
		var took []int
		for i, c := range codes {
			switch c {
			case http.StatusOK:
				took = append(took, i)
			case http.StatusConflict:
			default:
				t.Errorf("round %d: signal %d answered %d %s, want 200 or 409", round, i, c, bodies[i])
			}
		}
		ex := sp.waitStatus(id, "succeeded")
		if len(took) != 1 {
			t.Errorf("round %d: %d simultaneous signals of a parked run's approval: %d answered 200 (signals %v), want exactly 1 (the others 409 not waiting); the wait's output is %s",
				round, burst, len(took), took, nodeOf(t, ex, "wait.approve").Output)
			continue
		}
		jsonSame(t, "the wait's output", nodeOf(t, ex, "wait.approve").Output, fmt.Sprintf(`{"i": %d}`, took[0]))
		sp.waitParked(0)
	}

	// A signal sent the moment the run parks: answered (resolved or resumed), never lost.
	var lost []string
	for range 40 {
		id := sp.startRun("approve", `{}`)
		deadline := time.Now().Add(5 * time.Second)
		for {
			code, b, err := signalAPI(sp, id, "wait.approve", `{"ok": true}`)
			if err != nil {
				t.Fatal(err)
			}
			if code == http.StatusConflict && bytes.Contains(b, []byte("not_waiting")) && time.Now().Before(deadline) {
				continue // not at the wait yet
			}
			if code != http.StatusOK {
				time.Sleep(100 * time.Millisecond)
				lost = append(lost, fmt.Sprintf("%s: %d %s (the run is now %s)", id, code, bytes.TrimSpace(b), sp.execution(id).Status))
				break
			}
			sp.waitStatus(id, "succeeded")
			break
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d of 40 signals sent as their run parked at the approval were refused (\"has ended\") although the run was waiting for them; the answer is dropped and the run stays parked:\n%s",
			len(lost), strings.Join(lost, "\n"))
	}
	sp.stopOK()
}

// ---------------------------------------------------------------------------------------------
// A second signal, a second serve

// TestServeSecondSignal: a second SIGTERM (here SIGINT then SIGTERM) during the grace
// interrupts the running attempts at once; the process still exits 0 and the run stays
// resumable.
func TestServeSecondSignal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("drain.fsc.hcl", fmt.Sprintf(drainWorkflow, "10s", "10s"))
	sp := startServe(t, h, nil, "drain.fsc.hcl", "-shutdown-grace", "30s")
	id := sp.startRun("drain", `{}`)
	sp.waitFor(id, "running its sleeps", func(ex journal.Execution) bool {
		n := ex.Nodes["task.long"]
		return n != nil && n.Status == "running"
	})
	start := time.Now()
	if err := sp.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(sp.stdout.String(), "Shutting down:") {
		if time.Now().After(deadline) {
			t.Fatalf("no \"Shutting down:\" 5s after SIGINT:\n%s", sp)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if sp.done() {
		t.Fatalf("serve exited at once on the first SIGINT, without the grace:\n%s", sp)
	}
	code, _ := sp.stop(10 * time.Second)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("serve exited %s after SIGINT then SIGTERM with -shutdown-grace 30s: the second signal did not interrupt the attempts", took)
	}
	if code != 0 {
		t.Errorf("serve exited %d, want 0:\n%s", code, sp)
	}
	ex := showJSON(t, h, id)
	if ex.Status != "interrupted" {
		t.Errorf("after the interrupted shutdown the run is %s, want interrupted (resumable)", ex.Status)
	}
	for _, addr := range []string{"task.short", "task.long"} {
		if n := nodeOf(t, ex, addr); n.Status == "failed" || n.Status == "succeeded" || n.Status == "cancelled" {
			t.Errorf("%s is %s after the interrupted shutdown, want unfinished (an interruption is not an outcome)", addr, n.Status)
		}
	}
}

// TestServeTwice: a second serve on the same home does not take the store nor the first one's
// socket: it waits, says so, and takes over once the first has stopped.
func TestServeTwice(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("approve.fsc.hcl", approvalWorkflow)
	sp := startServe(t, h, nil, "approve.fsc.hcl")
	id := sp.startRun("approve", `{}`)
	sp.waitStatus(id, "waiting")

	second := launchServe(t, h, nil, "approve.fsc.hcl")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(second.stderr.String(), "Waiting for the state store") {
		if second.done() || time.Now().After(deadline) {
			t.Fatalf("a second serve on the same home neither waits nor says so:\n%s", second)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if strings.Contains(second.stdout.String(), "Serving ") {
		t.Errorf("a second serve on the same home says it serves:\n%s", second)
	}
	// The first still answers on its socket: the CLI goes through it.
	r := h.run("signal", id, "wait.approve", "-data", `"yes"`, "-home", h.home)
	wantCode(t, r, 0)
	ex := sp.waitStatus(id, "succeeded")
	jsonSame(t, "outputs", ex.Outputs, `{"answer": "yes"}`)
	id2 := sp.startRun("approve", `{}`)
	sp.waitStatus(id2, "waiting")
	sp.stopOK()

	// The second takes over: it resumes the parked run and answers on the socket.
	second.waitServing(serveDeadline)
	second.waitParked(1)
	r = h.run("signal", id2, "approve", "-data", `"no"`, "-home", h.home)
	wantCode(t, r, 0)
	ex = second.waitStatus(id2, "succeeded")
	jsonSame(t, "outputs", ex.Outputs, `{"answer": "no"}`)

	// A serve still waiting for the store stops cleanly on SIGTERM: a stop, not a failure.
	third := launchServe(t, h, nil, "approve.fsc.hcl")
	deadline = time.Now().Add(10 * time.Second)
	for !strings.Contains(third.stderr.String(), "Waiting for the state store") {
		if third.done() || time.Now().After(deadline) {
			t.Fatalf("a third serve on the same home neither waits nor says so:\n%s", third)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code, _ := third.stop(10 * time.Second); code != 0 {
		t.Errorf("SIGTERM to a serve waiting for the store: exit %d, want 0\n%s", code, third)
	}
	second.stopOK()
}
