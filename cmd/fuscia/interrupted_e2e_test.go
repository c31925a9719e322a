package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"syscall"
	"testing"

	"github.com/fuscia/fuscia/engine/journal"
)

// interruptedWorkflow sleeps between two transforms: apply is killed during the sleep.
const interruptedWorkflow = `workflow "nap" {}
task "a" {
  uses   = builtin.transform
  inputs = { x = 41 }
}
task "nap" {
  uses   = builtin.sleep
  after  = [task.a]
  inputs = { duration = "3s" }
}
task "b" {
  uses   = builtin.transform
  after  = [task.nap]
  inputs = { y = task.a.output.x + 1 }
}
output "y" { value = task.b.output.y }
`

// killDuringNap runs `apply nap.fsc.hcl -json` and SIGKILLs it once task.nap has started; it
// returns the execution id.
func killDuringNap(t *testing.T, h *harness) string {
	t.Helper()
	h.write("nap.fsc.hcl", interruptedWorkflow)
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, fusciaBin, "apply", "nap.fsc.hcl", "-json")
	cmd.Dir = h.dir
	cmd.Env = append(baseEnv(), "FUSCIA_HOME="+h.home)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var id string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var ev struct {
			Type string `json:"type"`
			ID   string `json:"execution_id"`
			Node string `json:"node"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		if ev.Type == "node_started" && ev.Node == "task.nap" {
			id = ev.ID
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill apply: %v", err)
	}
	for sc.Scan() { // drain the pipe so that Wait returns
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("apply ended by itself before the kill")
	}
	if id == "" {
		t.Fatal("apply never started task.nap")
	}
	return id
}

// listStatus returns the status executions list -json (with args) gives run id, "" when it is
// not listed.
func listStatus(t *testing.T, h *harness, id string, args ...string) string {
	t.Helper()
	r := h.run(append([]string{"executions", "list", "-json"}, args...)...)
	wantCode(t, r, 0)
	var out struct {
		Executions []journal.Summary `json:"executions"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("executions list -json: %v\n%s", err, r.stdout)
	}
	for _, s := range out.Executions {
		if s.ID == id {
			return s.Status
		}
	}
	return ""
}

// TestInterruptedRun: a run whose apply was killed shows as interrupted (list, its -status
// filter, show, show -json) instead of running, until resume runs it to the end.
func TestInterruptedRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := killDuringNap(t, h)

	if got := listStatus(t, h, id); got != journal.StatusInterrupted {
		t.Fatalf("executions list: %s is %q, want interrupted", id, got)
	}
	if got := listStatus(t, h, id, "-status", "interrupted"); got != journal.StatusInterrupted {
		t.Errorf("executions list -status interrupted does not list %s", id)
	}
	if got := listStatus(t, h, id, "-status", "running"); got != "" {
		t.Errorf("executions list -status running lists %s (%s)", id, got)
	}
	ex := showJSON(t, h, id)
	if ex.Status != journal.StatusInterrupted || ex.FinishedAt != nil {
		t.Errorf("show -json: status %s, finished_at %v; want interrupted, unfinished", ex.Status, ex.FinishedAt)
	}
	if n := nodeOf(t, ex, "task.b"); n.Status != journal.StatusPending {
		t.Errorf("task.b is %s, want pending", n.Status)
	}
	r := h.run("show", id)
	wantCode(t, r, 0)
	wantContains(t, "show", r.stdout, "Status:    interrupted", "fuscia resume "+id)

	r = h.run("resume", id, "-json")
	wantCode(t, r, 0)
	if got := outputsOf(t, r.stdout); got != `{"y":42}` {
		t.Errorf("outputs after resume = %s, want {\"y\":42}", got)
	}
	if got := listStatus(t, h, id); got != journal.StatusSucceeded {
		t.Errorf("after resume: %s is %q, want succeeded", id, got)
	}
	ex = showJSON(t, h, id)
	if n := nodeOf(t, ex, "task.a"); n.Attempts != 1 {
		t.Errorf("task.a ran %d times, want once (it had finished before the kill)", n.Attempts)
	}
}

// TestServeResumesInterrupted: serve started on a home holding a run whose apply was killed
// resumes it by itself; the API shows interrupted runs with their status filter.
func TestServeResumesInterrupted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := killDuringNap(t, h)
	other := killDuringNap(t, h)
	if got := listStatus(t, h, other); got != journal.StatusInterrupted {
		t.Fatalf("executions list: %s is %q, want interrupted", other, got)
	}

	sp := startServe(t, h, nil, "nap.fsc.hcl")
	for _, run := range []string{id, other} {
		ex := sp.waitStatus(run, journal.StatusSucceeded)
		if n := nodeOf(t, ex, "task.b"); n.Status != journal.StatusSucceeded {
			t.Errorf("%s: task.b is %s, want succeeded", run, n.Status)
		}
	}
	var ids []string
	for _, s := range sp.executions("?status=interrupted") {
		ids = append(ids, s.ID)
	}
	if len(ids) != 0 {
		t.Errorf("GET /v1/executions?status=interrupted after the resumption = %v, want none", ids)
	}
	sp.stopOK()
	if got := listStatus(t, h, id); got != journal.StatusSucceeded {
		t.Errorf("after serve: %s is %q, want succeeded", id, got)
	}
}

// TestInterruptedThroughTheAPI: while another apply owns the store, the CLI reads through its
// API on the socket, which shows the killed run as interrupted too.
func TestInterruptedThroughTheAPI(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := killDuringNap(t, h)
	h.write("long.fsc.hcl", `workflow "long" {}
task "nap" {
  uses   = builtin.sleep
  inputs = { duration = "60s" }
}`)
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, fusciaBin, "apply", "long.fsc.hcl", "-json")
	cmd.Dir = h.dir
	cmd.Env = append(baseEnv(), "FUSCIA_HOME="+h.home)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	sc := bufio.NewScanner(out)
	var long string
	for long == "" && sc.Scan() {
		var ev struct {
			Type string `json:"type"`
			ID   string `json:"execution_id"`
			Node string `json:"node"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "node_started" && ev.Node == "task.nap" {
			long = ev.ID
		}
	}
	if long == "" {
		t.Fatal("the second apply never started its sleep")
	}
	go func() { // keep the pipe drained until the process is killed
		for sc.Scan() {
		}
	}()
	// The store is the second apply's: these commands read it through its socket.
	if got := listStatus(t, h, long); got != journal.StatusRunning {
		t.Fatalf("the owner's own run %s is %q, want running", long, got)
	}
	if got := listStatus(t, h, id, "-status", "interrupted"); got != journal.StatusInterrupted {
		t.Errorf("through the owner's API, %s is %q, want interrupted", id, got)
	}
	if ex := showJSON(t, h, id); ex.Status != journal.StatusInterrupted {
		t.Errorf("show -json through the owner's API: %s, want interrupted", ex.Status)
	}
}
