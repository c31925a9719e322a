package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/fuscia/fuscia/engine/internal/runtime/builtins"
	"github.com/fuscia/fuscia/engine/task"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
)

// testToken is an admin API token of every testServer's store.
const testToken = "fsc_readiness-test-token"

// testServer is a Server on a real store and engine, its Handler on a real HTTP listener.
type testServer struct {
	t    testing.TB
	dir  string // the workflow files
	srv  *Server
	st   *journal.Store
	http *httptest.Server
}

// newTestServer serves the workflow files in dir, loaded by load (nil: loadProgram). Its
// watcher never looks by itself (the tests call look).
func newTestServer(t testing.TB, dir string, load func(ctx context.Context, file string, src []byte) (*engine.Program, error)) *testServer {
	t.Helper()
	if load == nil {
		load = func(_ context.Context, file string, _ []byte) (*engine.Program, error) { return loadProgram(file) }
	}
	home := t.TempDir()
	st, err := journal.Open(filepath.Join(home, "state"), journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The API behind ServeAPI asks for a token (auth.go).
	sum := sha256.Sum256([]byte(testToken))
	if err := st.CreateToken(journal.Token{Name: "test", Scope: "admin", Hash: hex.EncodeToString(sum[:])}); err != nil {
		t.Fatal(err)
	}
	srv := New(Config{Paths: []string{dir}, Load: load, ReloadInterval: time.Hour})
	runner := builtin.New(builtin.Options{})
	eng := engine.New(engine.Config{
		Store: st, Tasks: task.ByKind{lang.UsesBuiltin: builtins.New(runner)},
		Artifacts: artifact.Dir{Root: filepath.Join(home, "artifacts")},
		ParkWaits: true, OnRunEnd: srv.RunEnded,
	})
	srv.Attach(eng, st)
	ts := &testServer{t: t, dir: dir, srv: srv, st: st, http: httptest.NewServer(srv.Handler())}
	t.Cleanup(func() {
		ts.http.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Stop(ctx)
		eng.Wait()
		runner.Close()
		if err := st.Close(); err != nil {
			t.Errorf("close the store: %v", err)
		}
	})
	return ts
}

// serveAPI gives the handler serve's own endpoints as its API (the owner's are engine/local's).
func (ts *testServer) serveAPI() {
	mux := http.NewServeMux()
	ts.srv.RegisterAPI(mux)
	ts.srv.ServeAPI(mux)
}

// loadProgram loads, checks and snapshots a workflow file as serve's Load does (without
// components or plugins).
func loadProgram(file string) (*engine.Program, error) {
	return snapshot(file, hcl.DiagError)
}

// snapshot loads and plans file; a component or plugin that is not installed is a diagnostic
// of severity missing.
func snapshot(file string, missing hcl.DiagnosticSeverity) (*engine.Program, error) {
	p := lang.NewParser()
	w, diags := p.Load(file, lang.Options{Planning: true})
	if diags.HasErrors() {
		return nil, errors.New(diags.Error())
	}
	res, rdiags := plan.Resolve(w, plan.Env{Home: filepath.Dir(file)}, missing)
	if rdiags.HasErrors() {
		return nil, errors.New(rdiags.Error())
	}
	sources := map[string][]byte{}
	for name, f := range p.Files() {
		sources[name] = f.Bytes
	}
	blob, err := plan.Encode(plan.Build(w, res), w, sources, w.VarValues().AsValueMap())
	if err != nil {
		return nil, err
	}
	return engine.NewProgram(w, blob), nil
}

type answer struct {
	code       int
	retryAfter string
	body       map[string]any
}

func (ts *testServer) do(method, path string) answer {
	ts.t.Helper()
	req, err := http.NewRequest(method, ts.http.URL+path, strings.NewReader("{}"))
	if err != nil {
		ts.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := ts.http.Client().Do(req)
	if err != nil {
		ts.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	a := answer{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	if err := json.Unmarshal(b, &a.body); err != nil {
		ts.t.Fatalf("%s %s: %d with a body that is not a JSON object: %v\n%s", method, path, a.code, err, b)
	}
	return a
}

// wantUnavailable checks a 503 with Retry-After whose status is status.
func (ts *testServer) wantUnavailable(method, path, status string) {
	ts.t.Helper()
	a := ts.do(method, path)
	if a.code != http.StatusServiceUnavailable || a.retryAfter == "" || a.body["status"] != status {
		ts.t.Errorf("%s %s: %d Retry-After %q %v, want 503 with Retry-After and status %q", method, path, a.code, a.retryAfter, a.body, status)
	}
}

// accepted posts to a webhook, wants 202, and returns the run's id.
func (ts *testServer) accepted(path string) string {
	ts.t.Helper()
	a := ts.do(http.MethodPost, path)
	id, _ := a.body["execution_id"].(string)
	if a.code != http.StatusAccepted || id == "" {
		ts.t.Fatalf("POST %s: %d %v, want 202 with an execution id", path, a.code, a.body)
	}
	return id
}

// waitSucceeded polls the store until run id succeeded.
func (ts *testServer) waitSucceeded(id string) {
	ts.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		sum, err := ts.st.Summary(id)
		if err == nil && sum.Status == journal.StatusSucceeded {
			return
		}
		if err == nil && journal.Finished(sum.Status) {
			ts.t.Fatalf("run %s ended %s, want succeeded", id, sum.Status)
		}
		if time.Now().After(deadline) {
			ts.t.Fatalf("run %s has not succeeded within 30s (%v, %v)", id, sum.Status, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func hookSource(name, path, version string) string {
	return fmt.Sprintf(`workflow %q {}

trigger "webhook" "in" { path = %q }

task "echo" {
  uses   = builtin.transform
  inputs = { version = %q }
}

output "version" { value = task.echo.output.version }
`, name, path, version)
}

func writeWorkflow(t testing.TB, path, src string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadinessGate: from the moment the listener answers until Start has loaded every file,
// every webhook path — loaded yet or not, or unknown — the manual-start API and the health
// check answer 503 with Retry-After, never 404; then the webhooks start runs and an unknown
// path is 404; from the start of Stop every path answers 503 "stopping" again.
func TestReadinessGate(t *testing.T) {
	dir := t.TempDir()
	// Loaded in name order: a before the blocking b, c after it.
	writeWorkflow(t, filepath.Join(dir, "a.fsc.hcl"), hookSource("a", "/hooks/a", "v1"))
	writeWorkflow(t, filepath.Join(dir, "b.fsc.hcl"), "workflow \"b\" {}\n\ntrigger \"manual\" \"go\" {}\n\ntask \"x\" {\n  uses   = builtin.transform\n  inputs = { x = 1 }\n}\n")
	writeWorkflow(t, filepath.Join(dir, "c.fsc.hcl"), hookSource("c", "/hooks/c", "v1"))
	loading, release := make(chan struct{}), make(chan struct{})
	ts := newTestServer(t, dir, func(_ context.Context, file string, _ []byte) (*engine.Program, error) {
		if filepath.Base(file) == "b.fsc.hcl" {
			close(loading)
			<-release
		}
		return loadProgram(file)
	})

	// The store is not open yet: no API.
	ts.wantUnavailable(http.MethodPost, "/hooks/a", statusStarting)
	ts.wantUnavailable(http.MethodGet, "/v1/health", statusStarting)
	ts.wantUnavailable(http.MethodGet, "/v1/executions", statusStarting)

	ts.serveAPI()
	started := make(chan error, 1)
	go func() {
		_, err := ts.srv.Start(context.Background())
		started <- err
	}()
	select {
	case <-loading:
	case <-time.After(30 * time.Second):
		t.Fatal("Start did not load b.fsc.hcl within 30s")
	}
	// a is loaded, b is loading, c is not yet.
	for _, path := range []string{"/hooks/a", "/hooks/c", "/hooks/nosuch"} {
		ts.wantUnavailable(http.MethodPost, path, statusStarting)
	}
	ts.wantUnavailable(http.MethodPost, "/v1/workflows/b/runs", statusStarting)
	ts.wantUnavailable(http.MethodGet, "/v1/health", statusStarting)

	close(release)
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Start did not return within 30s of the release")
	}
	for _, path := range []string{"/hooks/a", "/hooks/c"} {
		ts.waitSucceeded(ts.accepted(path))
	}
	if a := ts.do(http.MethodPost, "/hooks/nosuch"); a.code != http.StatusNotFound {
		t.Errorf("POST /hooks/nosuch once started: %d %v, want 404", a.code, a.body)
	}
	if a := ts.do(http.MethodGet, "/v1/health"); a.code != http.StatusOK || a.body["status"] != "ok" || a.retryAfter != "" {
		t.Errorf("GET /v1/health once started: %d %v (Retry-After %q), want 200 ok", a.code, a.body, a.retryAfter)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ts.srv.Stop(ctx)
	for _, path := range []string{"/hooks/a", "/hooks/nosuch"} {
		ts.wantUnavailable(http.MethodPost, path, statusStopping)
	}
	ts.wantUnavailable(http.MethodPost, "/v1/workflows/b/runs", statusStopping)
	ts.wantUnavailable(http.MethodGet, "/v1/health", statusStopping)
}

// TestReloadKeepsWebhooks: a file deleted and re-created between two looks of the watcher, or
// renamed, keeps its webhook answering; a file gone at two looks in a row is unloaded.
func TestReloadKeepsWebhooks(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "x.fsc.hcl")
	writeWorkflow(t, file, hookSource("x", "/hooks/x", "v1"))
	ts := newTestServer(t, dir, nil)
	ts.serveAPI()
	if _, err := ts.srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	version := func() string {
		t.Helper()
		a := ts.do(http.MethodPost, "/hooks/x?wait=true")
		out, _ := a.body["outputs"].(map[string]any)
		v, _ := out["version"].(string)
		if a.code != http.StatusOK || v == "" {
			t.Fatalf("POST /hooks/x?wait=true: %d %v, want 200 with the output version", a.code, a.body)
		}
		return v
	}
	servedFrom := func() string {
		t.Helper()
		ts.srv.mu.Lock()
		defer ts.srv.mu.Unlock()
		return ts.srv.hooks["/hooks/x"].l.file
	}

	// Deleted: the first look leaves it served.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	ts.srv.look()
	ts.waitSucceeded(ts.accepted("/hooks/x"))
	// Re-created with a change: the next look reloads it.
	writeWorkflow(t, file, hookSource("x", "/hooks/x", "v2-changed"))
	ts.srv.look()
	if v := version(); v != "v2-changed" {
		t.Fatalf("after the re-creation new runs use %q, want v2-changed", v)
	}

	// Renamed: the new file takes the workflow and its path at the first look.
	moved := filepath.Join(dir, "y.fsc.hcl")
	if err := os.Rename(file, moved); err != nil {
		t.Fatal(err)
	}
	ts.srv.look()
	if got := servedFrom(); got != moved {
		t.Fatalf("after the rename /hooks/x is served from %s, want %s", got, moved)
	}
	if v := version(); v != "v2-changed" {
		t.Fatalf("after the rename new runs use %q, want v2-changed", v)
	}
	ts.srv.look()
	if v := version(); v != "v2-changed" {
		t.Fatalf("a look after the rename: new runs use %q, want v2-changed", v)
	}

	// Removed for good: gone at two looks, the path is unknown.
	if err := os.Remove(moved); err != nil {
		t.Fatal(err)
	}
	ts.srv.look()
	ts.accepted("/hooks/x")
	ts.srv.look()
	if a := ts.do(http.MethodPost, "/hooks/x"); a.code != http.StatusNotFound {
		t.Fatalf("a file gone at two looks: POST /hooks/x %d %v, want 404", a.code, a.body)
	}
}

// TestTriggerLogLevels: a trigger's log line carries its level as the record's level — one
// "level" key — and below the logger's level it is not written.
func TestTriggerLogLevels(t *testing.T) {
	for _, min := range []slog.Level{slog.LevelDebug, slog.LevelInfo} {
		t.Run(min.String(), func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: min})).With("workflow", "w", "trigger", "poll.t")
			f := triggerLog(log)
			cases := []struct{ level, msg, want string }{
				{"debug", "d", "DEBUG"},
				{"info", "i", "INFO"},
				{"warn", "w", "WARN"},
				{"error", "e", "ERROR"},
				{"shout", "s", "INFO"}, // not a level: info
			}
			want := map[string]string{}
			for _, c := range cases {
				f(c.level, c.msg)
				if c.want != "DEBUG" || min == slog.LevelDebug {
					want[c.msg] = c.want
				}
			}
			got := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				levels := keyValues(t, line, "level")
				if len(levels) != 1 {
					t.Errorf("%d \"level\" keys in %s, want 1", len(levels), line)
					continue
				}
				msg := keyValues(t, line, "msg")
				if len(msg) != 1 || len(keyValues(t, line, "trigger")) != 1 {
					t.Errorf("a line without one msg and one trigger: %s", line)
					continue
				}
				got[msg[0]] = levels[0]
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("levels by message %v, want %v\n%s", got, want, buf.String())
			}
		})
	}
}

// keyValues lists the values of every occurrence of key at the top of the JSON object line,
// duplicates included (encoding/json keeps only the last).
func keyValues(t *testing.T, line, key string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", line)
	}
	var out []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatalf("%v in %s", err, line)
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%v in %s", err, line)
		}
		if k == key {
			out = append(out, fmt.Sprint(v))
		}
	}
	return out
}
