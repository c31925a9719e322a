package main

// End-to-end tests of serve's readiness (docs/serve.md, "Readiness"): a webhook hammered from
// before the process starts, through the load of the workflows and across reloads, answers
// only 202 or 503 with Retry-After — never 404, never a cut connection — and the run of every
// 202 exists and finishes; a serve waiting for the store answers 503 already; a draining one
// answers 503 on every path. And a trigger's log line has one "level" key, at the trigger's
// level (docs/serve.md, "Triggers").

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/plugin/plugintest"
)

const readyHookWorkflow = `workflow "ready" {}

trigger "webhook" "in" { path = "/hooks/ready" }

task "echo" {
  uses   = builtin.transform
  inputs = { version = "%s" }
}

output "version" { value = task.echo.output.version }
`

// readyGateWorkflow uses the greeter plugin: serve starts it to check the workflow while it
// loads the file.
const readyGateWorkflow = `workflow "gate" {}

plugin "greeter" {
  source  = "greeter"
  version = "0.1.0"
}

trigger "manual" "go" {}

task "hi" {
  uses   = plugin.greeter.greet
  inputs = { name = "gate" }
}
`

// installBlockingGreeter installs, as the greeter plugin in dir, a script that creates the
// file started, then waits for the file release (a minute at most) and runs the real greeter:
// the load of a workflow that uses it stays under way, observably, until the test releases it.
func installBlockingGreeter(t *testing.T, dir string) (started, release string) {
	t.Helper()
	bin := plugintest.Build(t, "examples/plugins/greeter", "greeter")
	marks := t.TempDir()
	started, release = filepath.Join(marks, "started"), filepath.Join(marks, "release")
	script := fmt.Sprintf("#!/bin/sh\n: > '%s'\ni=0\nwhile [ ! -e '%s' ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\nexec '%s' \"$@\"\n",
		started, release, bin)
	writeFile(t, filepath.Join(dir, greeterFile), []byte(script), 0o755)
	return started, release
}

// freeAddr is a 127.0.0.1 address with a port nothing listens on, for a serve to bind.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// shot is one request of a hammer and what came of it.
type shot struct {
	code       int
	retryAfter string
	body       string
	err        error
	// early: sent before any request had an answer. Only then may the connection be refused
	// (the process has not bound its address yet).
	early bool
}

// hammer posts to one URL from several goroutines, each pausing 20ms between requests, until
// stopped or maxShots requests were sent.
type hammer struct {
	t        *testing.T
	url      string
	client   *http.Client
	answered atomic.Bool
	sent     atomic.Int64
	stopped  chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup

	mu    sync.Mutex
	shots []shot
}

const maxShots = 40000

func startHammer(t *testing.T, url string, workers int) *hammer {
	hm := &hammer{t: t, url: url, stopped: make(chan struct{}),
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}}
	for range workers {
		hm.wg.Add(1)
		go func() {
			defer hm.wg.Done()
			for hm.sent.Add(1) <= maxShots {
				hm.add(hm.shoot())
				select {
				case <-hm.stopped:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
	}
	t.Cleanup(func() { hm.stop() })
	return hm
}

func (hm *hammer) shoot() shot {
	s := shot{early: !hm.answered.Load()}
	resp, err := hm.client.Post(hm.url, "application/json", strings.NewReader(`{}`))
	if err != nil {
		s.err = err
		return s
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.err = fmt.Errorf("read the answer: %w", err)
		return s
	}
	hm.answered.Store(true)
	s.code, s.retryAfter, s.body = resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
	return s
}

func (hm *hammer) add(s shot) {
	hm.mu.Lock()
	hm.shots = append(hm.shots, s)
	hm.mu.Unlock()
}

// answers counts the requests answered so far, and those answered code.
func (hm *hammer) answers(code int) (all, with int) {
	hm.mu.Lock()
	defer hm.mu.Unlock()
	for _, s := range hm.shots {
		if s.err == nil {
			all++
			if s.code == code {
				with++
			}
		}
	}
	return all, with
}

// waitAnswers waits until n more requests than now have been answered.
func (hm *hammer) waitAnswers(sp *serveProc, n int, when string) {
	hm.t.Helper()
	base, _ := hm.answers(0)
	hm.waitFor(sp, when, func() bool { all, _ := hm.answers(0); return all >= base+n })
}

func (hm *hammer) waitFor(sp *serveProc, what string, cond func() bool) {
	hm.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if sp.done() || time.Now().After(deadline) || hm.sent.Load() > maxShots {
			all, accepted := hm.answers(http.StatusAccepted)
			hm.t.Fatalf("%s: the hammer did not get there (%d answers, %d of them 202; serve exited: %v):\n%s", what, all, accepted, sp.done(), sp)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// snapshot is a copy of the shots so far.
func (hm *hammer) snapshot() []shot {
	hm.mu.Lock()
	defer hm.mu.Unlock()
	return append([]shot(nil), hm.shots...)
}

// stop stops the goroutines and returns every shot.
func (hm *hammer) stop() []shot {
	hm.stopOnce.Do(func() { close(hm.stopped) })
	hm.wg.Wait()
	hm.client.CloseIdleConnections()
	hm.mu.Lock()
	defer hm.mu.Unlock()
	return hm.shots
}

// checkShots checks every answer: 202 with an execution id, or 503 with Retry-After; a request
// that failed must have been refused before anything answered. It returns the ids of the 202s
// and the number of 503s.
func checkShots(t *testing.T, shots []shot) (ids []string, unavailable int) {
	t.Helper()
	bad := 0
	report := func(format string, args ...any) {
		if bad++; bad <= 10 {
			t.Errorf(format, args...)
		}
	}
	seen := map[string]bool{}
	for _, s := range shots {
		switch {
		case s.err != nil:
			if !s.early || !errors.Is(s.err, syscall.ECONNREFUSED) {
				report("a request failed after serve had answered (early %v): %v", s.early, s.err)
			}
		case s.code == http.StatusAccepted:
			var v struct {
				ID string `json:"execution_id"`
			}
			if err := json.Unmarshal([]byte(s.body), &v); err != nil || v.ID == "" || seen[v.ID] {
				report("202 without a new execution id: %s", s.body)
				continue
			}
			seen[v.ID] = true
			ids = append(ids, v.ID)
		case s.code == http.StatusServiceUnavailable:
			unavailable++
			if s.retryAfter == "" {
				report("503 without Retry-After: %s", s.body)
			}
		default:
			report("answer %d %s, want only 202 or 503 with Retry-After", s.code, s.body)
		}
	}
	if bad > 10 {
		t.Errorf("… and %d more bad answers", bad-10)
	}
	return ids, unavailable
}

// waitRunsSucceeded waits until every run in ids is listed as succeeded.
func waitRunsSucceeded(t *testing.T, sp *serveProc, workflow string, ids []string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		status := map[string]string{}
		for _, s := range sp.executions("?workflow=" + workflow) {
			status[s.ID] = s.Status
		}
		var missing, unfinished []string
		for _, id := range ids {
			switch st, ok := status[id]; {
			case !ok:
				missing = append(missing, id)
			case st != journal.StatusSucceeded:
				if journal.Finished(st) {
					t.Fatalf("accepted run %s ended %s, want succeeded", id, st)
				}
				unfinished = append(unfinished, id)
			}
		}
		if len(missing) == 0 && len(unfinished) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("of %d accepted runs, %d are not in the store (lost: %v) and %d have not finished 2 minutes on:\n%s",
				len(ids), len(missing), missing[:min(len(missing), 5)], len(unfinished), sp)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// logCount counts serve's JSON log lines with message msg.
func logCount(sp *serveProc, msg string) int {
	n := 0
	for _, line := range strings.Split(sp.stderr.String(), "\n") {
		var v struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &v) == nil && v.Msg == msg {
			n++
		}
	}
	return n
}

func waitLog(t *testing.T, sp *serveProc, msg string, n int) {
	t.Helper()
	deadline := time.Now().Add(serveDeadline)
	for logCount(sp, msg) < n {
		if sp.done() || time.Now().After(deadline) {
			t.Fatalf("serve did not log %q (%d times) within %s:\n%s", msg, n, serveDeadline, sp)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeReadiness: a webhook hammered from before serve starts gets only 503 with
// Retry-After while the workflows load (held open by a plugin that waits for the test), then
// 202s, also across an edit, a delete-and-re-create and a rename of its file — never a 404;
// and every accepted run is in the store and succeeds.
func TestServeReadiness(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the plugin that holds the load open is a shell script")
	}
	h := newHarness(t)
	started, release := installBlockingGreeter(t, filepath.Join(h.home, "plugins"))
	h.write("flows/a-gate.fsc.hcl", readyGateWorkflow) // loaded before hook.fsc.hcl
	hook := h.write("flows/hook.fsc.hcl", fmt.Sprintf(readyHookWorkflow, "v1"))
	addr := freeAddr(t)

	hm := startHammer(t, "http://"+addr+"/hooks/ready", 4)
	sp := launchServe(t, h, []string{"FUSCIA_PLUGIN_START_TIMEOUT=5m"}, "flows", "-listen", addr, "-log-format", "json")
	// Registered after serve's cleanup, so run before it: the plugin never waits on a stop.
	t.Cleanup(func() { _ = os.WriteFile(release, nil, 0o644) })

	// a-gate.fsc.hcl is loading (its plugin waits): hook.fsc.hcl is not loaded yet.
	hm.waitFor(sp, "the gate plugin starting", func() bool { _, err := os.Stat(started); return err == nil })
	hm.waitAnswers(sp, 20, "while the workflows load")
	for _, s := range hm.snapshot() {
		if s.err == nil && (s.code != http.StatusServiceUnavailable || s.retryAfter == "") {
			t.Fatalf("while the workflows load the webhook answers %d (Retry-After %q) %s, want 503 with Retry-After", s.code, s.retryAfter, s.body)
		}
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sp.waitServing(serveDeadline)
	hm.waitFor(sp, "202s once serving", func() bool { _, n := hm.answers(http.StatusAccepted); return n >= 20 })

	// An edit in place.
	h.write(hook, fmt.Sprintf(readyHookWorkflow, "v2"))
	waitLog(t, sp, "workflow reloaded", 1)
	hm.waitAnswers(sp, 20, "after an edit")
	// Deleted and written again, as git checkout does.
	if err := os.Remove(filepath.Join(h.dir, hook)); err != nil {
		t.Fatal(err)
	}
	h.write(hook, fmt.Sprintf(readyHookWorkflow, "v3"))
	waitLog(t, sp, "workflow reloaded", 2)
	hm.waitAnswers(sp, 20, "after a re-creation")
	// Renamed: the new file takes the workflow over.
	if err := os.Rename(filepath.Join(h.dir, hook), filepath.Join(h.dir, "flows/hook-renamed.fsc.hcl")); err != nil {
		t.Fatal(err)
	}
	waitLog(t, sp, "workflow reloaded from another file", 1)
	hm.waitAnswers(sp, 20, "after a rename")

	shots := hm.stop()
	ids, unavailable := checkShots(t, shots)
	if unavailable < 20 {
		t.Errorf("%d answers were 503 while the workflows loaded, want at least the 20 the test waited for", unavailable)
	}
	t.Logf("%d requests: %d accepted, %d answered 503", len(shots), len(ids), unavailable)
	waitRunsSucceeded(t, sp, "ready", ids)
	if code, b := sp.postJSON("/hooks/nosuch", `{}`); code != http.StatusNotFound {
		t.Errorf("POST /hooks/nosuch once serving: %d %s, want 404", code, b)
	}
	sp.stopOK()
}

// TestServeReadyWhileWaitingForStore: a serve waiting for the store (another serve owns it)
// already listens and answers 503 with Retry-After; one whose address the owner holds binds
// it once the owner has stopped.
func TestServeReadyWhileWaitingForStore(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.write("hook.fsc.hcl", fmt.Sprintf(readyHookWorkflow, "v1"))
	first := startServe(t, h, nil, f)

	waiting := func(sp *serveProc) {
		t.Helper()
		deadline := time.Now().Add(serveDeadline)
		for !strings.Contains(sp.stderr.String(), "Waiting for the state store") {
			if sp.done() || time.Now().After(deadline) {
				t.Fatalf("a second serve on the same home neither waits nor says so:\n%s", sp)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	second := launchServe(t, h, nil, f)
	waiting(second)
	m := apiLineRE.FindStringSubmatch(second.stdout.String())
	if m == nil {
		t.Fatalf("a serve waiting for the store does not listen yet:\n%s", second)
	}
	second.base = m[1]
	for _, path := range []string{"/hooks/ready", "/v1/health", "/v1/executions"} {
		req, _ := http.NewRequest(http.MethodGet, second.base+path, nil)
		if path == "/hooks/ready" {
			req.Method = http.MethodPost
		}
		resp, err := serveClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", req.Method, path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var v map[string]any
		_ = json.Unmarshal(b, &v)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || v["status"] != "starting" {
			t.Errorf("%s %s while waiting for the store: %d Retry-After %q %s, want 503 starting with Retry-After",
				req.Method, path, resp.StatusCode, resp.Header.Get("Retry-After"), b)
		}
	}
	if code, _ := second.stop(10 * time.Second); code != 0 {
		t.Errorf("SIGTERM to a serve waiting for the store: exit %d, want 0\n%s", code, second)
	}

	// The address of the owner: bound once the owner has released it.
	addr := strings.TrimPrefix(first.base, "http://")
	third := launchServe(t, h, nil, f, "-listen", addr)
	waiting(third)
	if strings.Contains(third.stdout.String(), "API and webhooks on") {
		t.Fatalf("a serve listens on an address another serve holds:\n%s", third)
	}
	first.stopOK()
	third.waitServing(serveDeadline)
	if third.base != first.base {
		t.Errorf("the third serve listens on %s, want %s", third.base, first.base)
	}
	code, b := third.postJSON("/hooks/ready", `{}`)
	if code != http.StatusAccepted {
		t.Fatalf("POST /hooks/ready: %d %s, want 202", code, b)
	}
	third.waitStatus(executionID(t, b), "succeeded")
	third.stopOK()
}

const napHookWorkflow = `workflow "nap" {}

trigger "webhook" "in" { path = "/hooks/nap" }

task "nap" {
  uses   = builtin.sleep
  inputs = { duration = "60s" }
}
`

// TestServeDrainAnswers503: while serve drains, every path outside /v1/ — its webhooks and
// paths it never served — and the health check answer 503 "stopping" with Retry-After.
func TestServeDrainAnswers503(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.write("nap.fsc.hcl", napHookWorkflow)
	sp := startServe(t, h, nil, f, "-shutdown-grace", "60s")
	code, b := sp.postJSON("/hooks/nap", `{}`)
	if code != http.StatusAccepted {
		t.Fatalf("POST /hooks/nap: %d %s, want 202", code, b)
	}
	sp.waitFor(executionID(t, b), "napping", func(ex journal.Execution) bool {
		n := ex.Nodes["task.nap"]
		return n != nil && n.Status == "running"
	})
	if err := sp.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	answer := func(method, path string) (int, string, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, sp.base+path, strings.NewReader(`{}`))
		resp, err := serveClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s during the drain: %v\n%s", method, path, err, sp)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var v map[string]any
		_ = json.Unmarshal(b, &v)
		return resp.StatusCode, resp.Header.Get("Retry-After"), v
	}
	deadline := time.Now().Add(serveDeadline)
	for {
		code, _, _ := answer(http.MethodPost, "/hooks/nap")
		if code == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhook still answers %d %s after SIGTERM:\n%s", code, serveDeadline, sp)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, r := range []struct{ method, path string }{
		{http.MethodPost, "/hooks/nap"}, {http.MethodPost, "/hooks/nosuch"}, {http.MethodGet, "/"}, {http.MethodGet, "/v1/health"},
	} {
		code, ra, v := answer(r.method, r.path)
		if code != http.StatusServiceUnavailable || ra == "" || v["status"] != "stopping" {
			t.Errorf("%s %s during the drain: %d Retry-After %q %v, want 503 stopping with Retry-After", r.method, r.path, code, ra, v)
		}
	}
	// A second signal ends the drain at once.
	if code, _ := sp.stop(15 * time.Second); code != 0 {
		t.Errorf("serve exited %d after the second signal, want 0:\n%s", code, sp)
	}
}

const greeterPollWorkflow = `workflow "greets" {}

plugin "greeter" {
  source  = "greeter"
  version = "0.1.0"
}

trigger "poll" "tick" {
  interval = "200ms"
  uses     = plugin.greeter.tick
}

task "echo" {
  uses   = builtin.transform
  inputs = { n = trigger.payload.n }
}
`

var triggerLineRE = regexp.MustCompile(`^(poll|tick) \d+`)

// TestServeTriggerLogLevels: the log lines of a component trigger (the ticker's "poll N: …",
// debug) and of a plugin trigger (the greeter's "tick N", debug) have one "level" key, DEBUG,
// with FUSCIA_LOG_LEVEL=debug; at serve's default level (info) they are not written.
func TestServeTriggerLogLevels(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	installGreeter(t, filepath.Join(h.home, "plugins"))
	crInstall(t, h, "ticker")
	h.write("flows/ticks.fsc.hcl", tickerPollWorkflow)
	h.write("flows/greets.fsc.hcl", greeterPollWorkflow)

	sp := startServe(t, h, []string{"FUSCIA_LOG_LEVEL=debug"}, "flows", "-log-format", "json")
	waitLog(t, sp, "poll 1: completed", 1)
	waitLog(t, sp, "tick 1", 1)
	before := len(sp.executions(""))
	sp.stopOK()
	for _, line := range strings.Split(strings.TrimSpace(sp.stderr.String()), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		levels := jsonKeyValues(t, line, "level")
		if len(levels) != 1 {
			t.Errorf("%d \"level\" keys, want 1: %s", len(levels), line)
			continue
		}
		msg := jsonKeyValues(t, line, "msg")
		if len(msg) != 1 || !triggerLineRE.MatchString(msg[0]) {
			continue
		}
		wf, trigger := jsonKeyValues(t, line, "workflow"), jsonKeyValues(t, line, "trigger")
		if levels[0] != "DEBUG" || len(trigger) != 1 || trigger[0] != "poll.tick" || len(wf) != 1 || (wf[0] != "ticks" && wf[0] != "greets") {
			t.Errorf("a trigger's debug line: level %v, workflow %v, trigger %v, want DEBUG, ticks or greets, poll.tick: %s", levels, wf, trigger, line)
		}
	}

	// At info, the triggers' debug lines are left out while they keep polling.
	sp = startServe(t, h, nil, "flows", "-log-format", "json")
	deadline := time.Now().Add(serveDeadline)
	for len(sp.executions("")) < before+4 {
		if time.Now().After(deadline) {
			t.Fatalf("the poll triggers started no new runs within %s:\n%s", serveDeadline, sp)
		}
		time.Sleep(50 * time.Millisecond)
	}
	sp.stopOK()
	for _, line := range strings.Split(sp.stderr.String(), "\n") {
		var v struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &v) == nil && triggerLineRE.MatchString(v.Msg) {
			t.Errorf("a trigger's debug line at serve's info level: %s", line)
		}
	}
}

// jsonKeyValues lists the values of every occurrence of key at the top of the JSON object
// line, duplicates included (encoding/json keeps only the last).
func jsonKeyValues(t *testing.T, line, key string) []string {
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
