package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
)

// crashWorkflow mixes HTTP calls to a counting server with sleeps, so that a kill lands before,
// during and between attempts.
const crashWorkflow = `
workflow "crash" {
  timeout = "10s"
}
variable "base" { type = string }

task "a" {
  uses   = builtin.http
  inputs = { url = "${var.base}/a" }
}
task "nap1" {
  uses   = builtin.sleep
  after  = [task.a]
  inputs = { duration = "120ms" }
}
task "b" {
  uses   = builtin.http
  after  = [task.nap1]
  inputs = { url = "${var.base}/b?from=${task.a.output.body.name}" }
}
task "c" {
  uses     = builtin.http
  for_each = ["x", "y", "z"]
  after    = [task.nap1]
  inputs   = { url = "${var.base}/c-${each.value}" }
}
task "nap2" {
  uses   = builtin.sleep
  after  = [task.b, task.c]
  inputs = { duration = "120ms" }
}
task "d" {
  uses   = builtin.http
  after  = [task.nap2]
  inputs = { url = "${var.base}/d?b=${task.b.output.body.name}&c=${join(",", [for o in task.c.output : o.body.name])}" }
}
output "result" { value = task.d.output.body }
output "names" { value = [task.a.output.body.name, task.b.output.body.name] }
`

// countingServer answers every path with a deterministic JSON body and counts requests by path.
type countingServer struct {
	*httptest.Server
	mu     sync.Mutex
	counts map[string]int
}

func newCountingServer(t *testing.T) *countingServer {
	cs := &countingServer{counts: map[string]int{}}
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.mu.Lock()
		cs.counts[r.URL.Path]++
		cs.mu.Unlock()
		time.Sleep(30 * time.Millisecond) // long enough for a kill to land mid-request
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"name": %q, "query": %q}`, strings.TrimPrefix(r.URL.Path, "/"), r.URL.RawQuery)
	}))
	t.Cleanup(cs.Close)
	return cs
}

func (cs *countingServer) snapshot() map[string]int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	out := make(map[string]int, len(cs.counts))
	for k, v := range cs.counts {
		out[k] = v
	}
	return out
}

// paths maps a node (or for_each item) of crashWorkflow to the path it calls.
func crashPaths(node string, index []int) string {
	switch node {
	case "task.a", "task.b", "task.d":
		return "/" + strings.TrimPrefix(node, "task.")
	case "task.c":
		return "/c-" + []string{"x", "y", "z"}[index[0]]
	}
	return ""
}

func outputsOf(t *testing.T, stdout string) string {
	t.Helper()
	for _, line := range strings.Split(stdout, "\n") {
		var ev struct {
			Type      string `json:"type"`
			Execution struct {
				Status  string          `json:"status"`
				Outputs json.RawMessage `json:"outputs"`
			} `json:"execution"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "execution_finished" {
			if ev.Execution.Status != "succeeded" {
				t.Fatalf("run ended %s:\n%s", ev.Execution.Status, stdout)
			}
			return string(ev.Execution.Outputs)
		}
	}
	t.Fatalf("no execution_finished event in:\n%s", stdout)
	return ""
}

// TestCrashAndResume kills `fuscia apply` with SIGKILL at random points and resumes the run: it
// must end with the outputs of an uninterrupted run, and no node the journal had finished may
// call the server again.
func TestCrashAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test is slow")
	}
	srv := newCountingServer(t)
	baseline := newHarness(t)
	baseline.write("crash.fsc.hcl", crashWorkflow)
	r := baseline.run("apply", "crash.fsc.hcl", "-json", "-var", "base="+srv.URL)
	wantCode(t, r, 0)
	want := outputsOf(t, r.stdout)

	const points = 20
	kills := 0
	for try := 0; kills < points && try < 4*points; try++ {
		srv := newCountingServer(t)
		h := newHarness(t)
		h.write("crash.fsc.hcl", crashWorkflow)
		delay := time.Duration(rand.IntN(700)+5) * time.Millisecond
		id, killed := applyAndKill(t, h, srv.URL, delay)
		if !killed || id == "" {
			continue
		}
		before := srv.snapshot()
		finished, status := finishedPaths(t, h, id)
		if journal.Finished(status) {
			continue // the kill landed after the run had ended: nothing to resume
		}
		kills++
		res := h.run("resume", id, "-json")
		wantCode(t, res, 0)
		if got := outputsOf(t, res.stdout); got != want {
			t.Errorf("kill after %s: outputs after resume\n%s\nwant\n%s", delay, got, want)
		}
		after := srv.snapshot()
		for path := range finished {
			if after[path] != before[path] {
				t.Errorf("kill after %s: %s had finished before the crash but was called again (%d -> %d)", delay, path, before[path], after[path])
			}
		}
		for _, p := range []string{"/a", "/b", "/c-x", "/c-y", "/c-z", "/d"} {
			if after[p] == 0 {
				t.Errorf("kill after %s: %s was never called", delay, p)
			}
		}
	}
	if kills < points {
		t.Fatalf("only %d of %d kills landed during a run", kills, points)
	}
}

// applyAndKill starts apply and SIGKILLs it after delay; it returns the execution id if the run
// had started, and whether the kill happened before the process ended by itself.
func applyAndKill(t *testing.T, h *harness, base string, delay time.Duration) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, fusciaBin, "apply", "crash.fsc.hcl", "-json", "-var", "base="+base)
	cmd.Dir = h.dir
	cmd.Env = append(baseEnv(), "FUSCIA_HOME="+h.home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ids := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		sent := false
		for sc.Scan() {
			var ev struct {
				Type string `json:"type"`
				ID   string `json:"execution_id"`
			}
			if !sent && json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "execution_started" {
				ids <- ev.ID
				sent = true
			}
		}
		if !sent {
			close(ids)
		}
	}()
	exited := make(chan error, 1)
	time.Sleep(delay)
	killed := cmd.Process.Signal(syscall.SIGKILL) == nil
	go func() { exited <- cmd.Wait() }()
	werr := <-exited
	if werr == nil {
		killed = false // it had finished before the signal
	}
	id := <-ids
	return id, killed
}

// finishedPaths reads the interrupted run from the store and returns the server paths of the
// HTTP nodes (and items) it had finished.
func finishedPaths(t *testing.T, h *harness, id string) (map[string]bool, string) {
	t.Helper()
	st, err := journal.Open(filepath.Join(h.home, "state"), journal.Options{})
	if err != nil {
		t.Fatalf("open the store after the kill: %v", err)
	}
	defer st.Close()
	ex, err := st.Execution(id)
	if err != nil {
		t.Fatalf("read execution %s after the kill: %v", id, err)
	}
	out := map[string]bool{}
	for addr, n := range ex.Nodes {
		if n.Status == "succeeded" && addr != "task.c" {
			if p := crashPaths(addr, nil); p != "" {
				out[p] = true
			}
		}
		for i, inst := range n.Instances {
			if inst.Status == "succeeded" {
				out[crashPaths(addr, []int{i})] = true
			}
		}
	}
	return out, ex.Status
}
