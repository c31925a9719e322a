package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/local"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/planner"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/plugin"
)

// Hosts on a real store in a temporary home: runs, the store's ownership between two hosts,
// and a serving host's wiring (its engine parks waits, the socket's API has serve's endpoints,
// a signal resumes a parked run, invalid files are reported).

// deadline bounds every wait for a condition: generous, for -race on a loaded machine.
const deadline = 30 * time.Second

const transformFlow = `workflow "w" {}
task "t" {
  uses   = builtin.transform
  inputs = { x = 1 }
}
`

const approvalFlow = `workflow "w" {}
trigger "manual" "start" {}
wait "approve" {
  approval { message = "ok?" }
}
task "after" {
  uses   = builtin.transform
  inputs = { answer = wait.approve.output }
}
`

// newHome is a home directory in the test's temporary directory, whose socket path stays
// short enough for local.Own (103 bytes) with this package's test names.
func newHome(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "home")
}

func writeFile(t *testing.T, dir, name, src string) string {
	t.Helper()
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// program makes the run's plan of src, as apply does.
func program(t *testing.T, home, src string, m *plugin.Manager) *engine.Program {
	t.Helper()
	file := writeFile(t, t.TempDir(), "w.fsc.hcl", src)
	res, diags := planner.Make(context.Background(), planner.Request{File: file, Purpose: planner.ForRun, Env: plan.Env{Home: home}, Plugins: m})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return engine.NewProgram(res.Workflow, res.Blob)
}

func open(t *testing.T, o Options) *Host {
	t.Helper()
	h, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Open(context.Background()); err != nil {
		_ = h.Close()
		t.Fatal(err)
	}
	return h
}

// within waits for ch's value, failing after deadline.
func within[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(deadline):
		t.Fatalf("not within %s: %s", deadline, what)
		panic("unreachable")
	}
}

// TestHostRuns: a host runs a workflow with the plugin manager it was handed, serves the
// socket while open, and Close releases the store (the socket goes, another host opens it and
// finds the run).
func TestHostRuns(t *testing.T) {
	home := newHome(t)
	m := plugin.NewManager(plugin.Options{})
	prog := program(t, home, transformFlow, m)
	var log bytes.Buffer
	h := open(t, Options{Home: home, Command: "test run", Plugins: m, Workflows: []*lang.Workflow{prog.Workflow},
		Stderr: &log, LogLevel: slog.LevelWarn})
	if h.Server() != nil || h.MetricsHandler() != nil {
		t.Fatal("a host without Serve has a server or metrics")
	}
	h.Preload(context.Background(), prog)
	r, err := h.Engine().Start(context.Background(), prog, engine.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	within(t, "the run ends", r.Done())
	ex, err := r.Result()
	if err != nil || ex.Status != journal.StatusSucceeded {
		t.Fatalf("run %v %v, want succeeded", ex, err)
	}
	sock := filepath.Join(home, local.SocketName)
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("no API socket while the host is open: %v", err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the socket outlived Close: %v", err)
	}

	again := open(t, Options{Home: home})
	defer again.Close()
	sum, err := again.Store().Summary(r.ID())
	if err != nil || sum.Status != journal.StatusSucceeded {
		t.Fatalf("the reopened store has %v %v for the run", sum, err)
	}
	if log.Len() > 0 {
		t.Errorf("warnings were logged:\n%s", log.String())
	}
}

// TestHostWaitsItsTurn: while another host owns the store, Open says so once and waits; it
// opens when the owner closes, and gives up when its ctx ends.
func TestHostWaitsItsTurn(t *testing.T) {
	home := newHome(t)
	first := open(t, Options{Home: home, Command: "first"})

	owned := make(chan string, 1)
	second, err := New(Options{Home: home, OnOwned: func(why string) { owned <- why }})
	if err != nil {
		t.Fatal(err)
	}
	opened := make(chan error, 1)
	go func() { opened <- second.Open(context.Background()) }()
	if why := within(t, "the second host says it waits", owned); !strings.Contains(why, "first") {
		t.Errorf("the wait names %q, want the owner's command", why)
	}
	select {
	case err := <-opened:
		t.Fatalf("Open returned (%v) while another host owns the store", err)
	default:
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := within(t, "the second host opens", opened); err != nil {
		t.Fatal(err)
	}
	if second.Store() == nil || second.Engine() == nil {
		t.Fatal("an open host has no store or engine")
	}

	third, err := New(Options{Home: home, OnOwned: func(string) {}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := third.Open(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Open with its ctx ended: %v, want the ctx's error", err)
	}
	if third.Store() != nil {
		t.Fatal("a host that did not open has a store")
	}
	if err := third.Close(); err != nil {
		t.Fatalf("Close after a failed Open: %v", err)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestServingHost: a serving host's parts are wired to each other: the socket's API has
// serve's endpoints, the server loads the workflows through the host (an invalid one goes to
// OnInvalid), its engine parks a run at its wait, a signal through the socket resumes the
// parked run, and the metrics count the trigger.
func TestServingHost(t *testing.T) {
	home := newHome(t)
	dir := t.TempDir()
	writeFile(t, dir, "w.fsc.hcl", approvalFlow)
	bad := writeFile(t, dir, "bad.fsc.hcl", `workflow "bad" {`+"\n")
	var mu sync.Mutex
	invalid := map[string]hcl.Diagnostics{}
	h, err := New(Options{Home: home, Serve: &ServeOptions{Paths: []string{dir},
		OnInvalid: func(file string, files map[string]*hcl.File, diags hcl.Diagnostics) {
			mu.Lock()
			defer mu.Unlock()
			if files[file] == nil {
				t.Errorf("OnInvalid(%s) without the file's source", file)
			}
			invalid[file] = diags
		}}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv := h.Server()
	if srv == nil {
		t.Fatal("a serving host has no server")
	}
	if err := h.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	sock := socketClient(home)
	call := func(method, path string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(method, "http://fuscia"+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := sock.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	// Before Start, serve's health answers "starting"; without serve's endpoints it would be 404.
	if code, body := call(http.MethodGet, "/v1/health"); code != http.StatusServiceUnavailable || body["status"] != "starting" {
		t.Fatalf("health before Start: %d %v, want 503 starting", code, body)
	}
	n, err := srv.Start(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("Start: %d workflows, %v; want 1", n, err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		srv.Stop(ctx)
	}()
	mu.Lock()
	if diags := invalid[bad]; !diags.HasErrors() || len(invalid) != 1 {
		t.Errorf("OnInvalid got %v, want the errors of %s only", invalid, bad)
	}
	mu.Unlock()
	// The API lists the file that does not load with its diagnostics' places (serve.LoadError).
	_, wl := call(http.MethodGet, "/v1/workflows")
	if errs, _ := wl["errors"].([]any); len(errs) != 1 || !strings.Contains(fmt.Sprint(errs[0]), "line:1") || !strings.Contains(fmt.Sprint(errs[0]), bad) {
		t.Errorf("GET /v1/workflows errors: %v, want %s's diagnostics at line 1", wl["errors"], bad)
	}

	code, body := call(http.MethodPost, "/v1/workflows/w/runs")
	id, _ := body["execution_id"].(string)
	if code != http.StatusAccepted || id == "" {
		t.Fatalf("start through the socket: %d %v", code, body)
	}
	waitFor(t, "the run parks at its wait", func() bool {
		sum, err := h.Store().Summary(id)
		return err == nil && sum.Status == journal.StatusWaiting && h.Engine().Active(id) == nil
	})

	b, err := local.OpenBackend(context.Background(), home, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Signal(context.Background(), id, "wait.approve", json.RawMessage(`{"ok": true}`), false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the signalled run finishes", func() bool {
		sum, err := h.Store().Summary(id)
		return err == nil && sum.Status == journal.StatusSucceeded
	})

	rec := httptest.NewRecorder()
	h.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	metrics, _ := io.ReadAll(rec.Body)
	if rec.Code != http.StatusOK || !strings.Contains(string(metrics), `workflow="w"`) {
		t.Errorf("metrics %d without the workflow's series:\n%s", rec.Code, metrics)
	}
}

// socketClient talks HTTP to the unix socket of the host of home.
func socketClient(home string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", filepath.Join(home, local.SocketName))
	}}}
}

// waitFor polls cond until it holds, failing after deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("not within %s: %s", deadline, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
