package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fuscia/fuscia/internal/syncbuf"
)

const remoteApplyWorkflow = `workflow "two" {}

variable "who" {
  type    = string
  default = "world"
}

task "a" {
  uses   = builtin.transform
  inputs = { greeting = "hello ${var.who}" }
}

task "nap" {
  uses   = builtin.sleep
  after  = [task.a]
  inputs = { duration = "200ms" }
}

output "greeting" { value = task.a.output.greeting }
`

const failingWorkflow = `workflow "bad" {}

task "boom" {
  uses   = builtin.fail
  inputs = { message = "no" }
}
`

const slowWorkflow = `workflow "slow" {}

task "nap" {
  uses   = builtin.sleep
  inputs = { duration = "30s" }
}
`

// eventTypes returns the "type" of every NDJSON line of out.
func eventTypes(t *testing.T, out string) []string {
	t.Helper()
	var types []string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("a line that is not JSON: %q", sc.Text())
		}
		types = append(types, ev.Type)
	}
	return types
}

// applyProc is a `fuscia apply` started without waiting for it; it is reaped whatever happens.
type applyProc struct {
	cmd            *exec.Cmd
	stdout, stderr *syncbuf.Buffer
	exited         chan int
}

func startApply(t *testing.T, h *harness, args ...string) *applyProc {
	t.Helper()
	p := &applyProc{cmd: exec.Command(fusciaBin, append([]string{"apply"}, args...)...),
		stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}, exited: make(chan int, 1)}
	p.cmd.Dir = h.dir
	p.cmd.Env = append(append(baseEnv(), "FUSCIA_HOME="+h.home), h.env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			code = -2
		}
		p.exited <- code
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
	})
	return p
}

// wait returns apply's exit code; it fails the test after limit.
func (p *applyProc) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case code := <-p.exited:
		p.exited <- code // for the cleanup
		return code
	case <-time.After(limit):
		t.Fatalf("apply did not exit within %s:\n%s\n%s", limit, p.stdout, p.stderr)
		return -1
	}
}

// waitOutput waits until buf holds want.
func waitOutput(t *testing.T, buf *syncbuf.Buffer, want string) {
	t.Helper()
	deadline := time.Now().Add(serveDeadline)
	for !strings.Contains(buf.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q within %s in:\n%s", want, serveDeadline, buf.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeApply: while serve owns the store, `fuscia apply` runs the workflow in serve (docs/reference/cli.md:
// the other commands talk to it through its socket) and prints what a local apply prints, with
// its exit codes; Ctrl-C cancels the run in serve; the TCP API does not take plans.
func TestServeApply(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("flows/hook.fsc.hcl", `workflow "hook" {}
trigger "webhook" "in" { path = "/hooks/in" }
task "t" {
  uses   = builtin.transform
  inputs = { x = 1 }
}
`)
	h.write("two.fsc.hcl", remoteApplyWorkflow)
	h.write("bad.fsc.hcl", failingWorkflow)
	h.write("slow.fsc.hcl", slowWorkflow)
	sp := startServe(t, h, nil, "flows", "-shutdown-grace", "1s")

	r := h.run("apply", "two.fsc.hcl", "-json", "-var", "who=serve")
	wantCode(t, r, 0)
	types := eventTypes(t, r.stdout)
	want := []string{"version", "execution_started", "node_started", "node_finished", "node_started", "node_finished", "execution_finished"}
	if strings.Join(types, " ") != strings.Join(want, " ") {
		t.Errorf("apply -json through serve printed %v, want %v\n%s", types, want, r)
	}
	id := executionID(t, []byte(r.stdout[strings.Index(r.stdout, `{"type":"execution_started"`):strings.Index(r.stdout, "\n"+`{"type":"node_started"`)]))
	ex := sp.execution(id)
	if ex.Status != "succeeded" {
		t.Errorf("serve has the run as %s, want succeeded", ex.Status)
	}
	jsonSame(t, "outputs", ex.Outputs, `{"greeting": "hello serve"}`)

	r = h.run("apply", "two.fsc.hcl")
	wantCode(t, r, 0)
	wantContains(t, "human apply through serve", r.stdout, "task.a: succeeded", `greeting = "hello world"`, "succeeded in")

	r = h.run("apply", "bad.fsc.hcl")
	wantCode(t, r, 1)
	wantContains(t, "failing apply through serve", r.stdout, "failed")

	// Ctrl-C: the run in serve is cancelled and apply prints its end, as a local apply does.
	p := startApply(t, h, "slow.fsc.hcl")
	waitOutput(t, p.stdout, "task.nap: started")
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 20*time.Second); code != 1 {
		t.Errorf("apply interrupted: exit %d, want 1\n%s\n%s", code, p.stdout, p.stderr)
	}
	wantContains(t, "interrupted apply", p.stdout.String(), "cancelled")
	cancelled := sp.executions("?workflow=slow")
	if len(cancelled) != 1 || cancelled[0].Status != "cancelled" {
		t.Errorf("serve's runs of slow = %+v, want one cancelled", cancelled)
	}

	// Plans are code: the TCP API refuses them.
	code, body := sp.request(http.MethodPost, "/v1/apply", strings.NewReader(`{"plan": ""}`), http.Header{"Content-Type": {"application/json"}})
	if code != http.StatusForbidden {
		t.Errorf("POST /v1/apply on TCP: %d %s, want 403", code, body)
	}

	// serve stops during the run: apply says so and exits 1; the run resumes at the next start.
	p = startApply(t, h, "slow.fsc.hcl")
	waitOutput(t, p.stdout, "task.nap: started")
	sp.stopOK()
	if code := p.wait(t, 20*time.Second); code != 1 {
		t.Errorf("apply whose serve stopped: exit %d, want 1\n%s\n%s", code, p.stdout, p.stderr)
	}
	wantContains(t, "apply whose serve stopped", p.stderr.String(), "fuscia serve stopped before the run ended", "fuscia logs -follow")
}

// TestServeApplyPastAWait: apply through serve of a run that parks at a wait (2 s, past the
// second that keeps it in memory) prints the events after the wait too, as a local apply does:
// the run serve resumes reports to the stream. Before, the stream went from node_waiting to
// execution_finished.
func TestServeApplyPastAWait(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("wait.fsc.hcl", `workflow "parks" {}
task "t" {
  uses   = builtin.transform
  inputs = { x = 1 }
}
wait "w" {
  after    = [task.t]
  duration = "2s"
}
task "u" {
  uses   = builtin.transform
  after  = [wait.w]
  inputs = { y = 2 }
}
`)
	local := h.run("apply", "wait.fsc.hcl", "-json")
	wantCode(t, local, 0)
	sp := startServe(t, h, nil)
	r := h.run("apply", "wait.fsc.hcl", "-json")
	wantCode(t, r, 0)
	if got, want := strings.Join(eventTypes(t, r.stdout), " "), strings.Join(eventTypes(t, local.stdout), " "); got != want {
		t.Errorf("apply -json through serve printed\n%s\nwant what a local apply prints\n%s\n%s", got, want, r)
	}
	finished := func(out, node string) string {
		return regexp.MustCompile(`\{"type":"node_finished",[^\n]*"node":"` + regexp.QuoteMeta(node) + `"[^\n]*`).FindString(out)
	}
	for _, node := range []string{"wait.w", "task.u"} {
		if finished(r.stdout, node) == "" {
			t.Errorf("apply -json through serve has no node_finished of %s:\n%s", node, r.stdout)
		}
	}
	// The wait's duration is the wait's (2 s), not the resumed run's few microseconds.
	var w struct{ Duration float64 }
	if err := json.Unmarshal([]byte(finished(r.stdout, "wait.w")), &w); err != nil || w.Duration < 1.5 {
		t.Errorf("wait.w's node_finished through serve: duration %v (%v); want about 2 s", w.Duration, err)
	}

	// Cancelled while parked: the cancelled wait and the nodes after it are reported, as a local
	// apply reports them.
	p := startApply(t, h, "wait.fsc.hcl", "-json")
	waitOutput(t, p.stdout, `"type":"node_waiting"`)
	var started struct {
		ExecutionID string `json:"execution_id"`
	}
	for _, line := range strings.Split(p.stdout.String(), "\n") {
		if strings.HasPrefix(line, `{"type":"execution_started"`) {
			_ = json.Unmarshal([]byte(line), &started)
		}
	}
	id := started.ExecutionID
	wantCode(t, h.run("cancel", id), 0)
	if code := p.wait(t, 30*time.Second); code != 1 {
		t.Errorf("apply of a run cancelled while parked: exit %d, want 1\n%s\n%s", code, p.stdout, p.stderr)
	}
	if got := finished(p.stdout.String(), "wait.w"); !strings.Contains(got, `"status":"cancelled"`) {
		t.Errorf("apply -json through serve of a run cancelled while parked has no cancelled wait.w:\n%s", p.stdout)
	}
	sp.stopOK()
}

// TestServeLogsFollowJSON: `logs -follow -json` of a run serve runs prints the stream of
// `apply -json` (docs/reference/cli.md): version, execution_started, node events with node_waiting, and last
// execution_finished.
func TestServeLogsFollowJSON(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("approve.fsc.hcl", approvalWorkflow)
	sp := startServe(t, h, nil, "approve.fsc.hcl")
	id := sp.startRun("approve", `{}`)
	sp.waitStatus(id, "waiting")

	cmd := exec.Command(fusciaBin, "logs", id, "-follow", "-json")
	cmd.Dir = h.dir
	cmd.Env = append(baseEnv(), "FUSCIA_HOME="+h.home)
	stdout, stderr := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited; exited <- nil })
	waitOutput(t, stdout, `"node_waiting"`)

	r := h.run("signal", id, "wait.approve", "-data", `"ok"`)
	wantCode(t, r, 0)
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Fatalf("logs -follow -json: %v\n%s\n%s", err, stdout, stderr)
		}
	case <-time.After(serveDeadline):
		t.Fatalf("logs -follow -json did not end with the run:\n%s\n%s", stdout, stderr)
	}
	types := eventTypes(t, stdout.String())
	want := []string{"version", "execution_started", "node_started", "node_waiting", "node_finished", "node_started", "node_finished", "execution_finished"}
	if strings.Join(types, " ") != strings.Join(want, " ") {
		t.Errorf("logs -follow -json printed %v, want %v\n%s", types, want, stdout)
	}
	if !strings.Contains(stdout.String(), `"node":"wait.approve"`) || !strings.Contains(stdout.String(), `"status":"succeeded"`) {
		t.Errorf("the events do not name wait.approve or the run's end:\n%s", stdout)
	}
}

// TestLogsFollowJSONOfApply: `logs -follow -json` of a run that a one-shot `apply` runs ends,
// exit 0, with execution_finished although the apply (and its socket) is gone by then; the node
// running when it started is reported once, with its duration (before, the command failed
// dialing the socket, and the node came with a second node_started and a duration of 0).
func TestLogsFollowJSONOfApply(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("nap.fsc.hcl", `
workflow "nap" {}
task "first" {
  uses   = builtin.transform
  inputs = { a = 1 }
}
task "nap" {
  uses   = builtin.sleep
  after  = [task.first]
  inputs = { duration = "1500ms" }
}
task "last" {
  uses   = builtin.transform
  after  = [task.nap]
  inputs = { b = 2 }
}
`)
	p := startApply(t, h, "-json", "nap.fsc.hcl")
	waitOutput(t, p.stdout, `"node":"task.nap"`)
	var started struct {
		ExecutionID string `json:"execution_id"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(p.stdout.String(), "\n", 3)[1]), &started); err != nil || started.ExecutionID == "" {
		t.Fatalf("no execution id in apply's second line: %v\n%s", err, p.stdout)
	}
	r := h.run("logs", started.ExecutionID, "-follow", "-json")
	wantCode(t, r, 0)
	if code := p.wait(t, serveDeadline); code != 0 {
		t.Fatalf("apply: exit %d\n%s", code, p.stderr)
	}
	types := eventTypes(t, r.stdout)
	if len(types) == 0 || types[len(types)-1] != "execution_finished" {
		t.Fatalf("logs -follow -json did not end with execution_finished: %v\n%s", types, r.stdout)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `"workflow":"nap"`) || !strings.Contains(last, `"status":"succeeded"`) {
		t.Errorf("execution_finished is not apply -json's (workflow, status): %s", last)
	}
	naps, finished := 0, false
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev struct {
			Type     string   `json:"type"`
			Node     string   `json:"node"`
			Duration *float64 `json:"duration"`
		}
		_ = json.Unmarshal([]byte(line), &ev)
		if ev.Node != "task.nap" {
			continue
		}
		switch ev.Type {
		case "node_started":
			naps++
		case "node_finished":
			finished = true
			if ev.Duration == nil || *ev.Duration < 1 {
				t.Errorf("task.nap finished with duration %v, want its 1.5 s: %s", ev.Duration, line)
			}
		}
	}
	if naps != 1 || !finished {
		t.Errorf("task.nap: %d node_started and finished=%v, want one start and its end\n%s", naps, finished, r.stdout)
	}
}
