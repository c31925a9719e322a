package main

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lastEvent returns the execution object of the execution_finished line of apply -json.
func finishedExecution(t *testing.T, stdout string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first["type"] != "version" || first["ui"] != "1.0" {
		t.Fatalf("first line is not the version event: %s", lines[0])
	}
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last["type"] != "execution_finished" {
		t.Fatalf("last line is not execution_finished: %s", lines[len(lines)-1])
	}
	for _, l := range lines {
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("not a JSON line: %s", l)
		}
		if ev["type"] == nil || ev["@timestamp"] == nil {
			t.Fatalf("line without type or @timestamp: %s", l)
		}
	}
	ex, _ := last["execution"].(map[string]any)
	if ex == nil {
		t.Fatalf("execution_finished has no execution: %s", lines[len(lines)-1])
	}
	return ex
}

func TestApplyExitCodes(t *testing.T) {
	cases := []struct {
		name, src string
		code      int
		status    string
	}{
		{"succeeded", `workflow "w" {}
task "a" {
  uses   = builtin.transform
  inputs = { x = 1 }
}`, 0, "succeeded"},
		{"failed", `workflow "w" {}
task "a" {
  uses   = builtin.fail
  inputs = { message = "boom" }
}`, 1, "failed"},
		{"completed with errors", `workflow "w" {}
task "a" {
  uses          = builtin.fail
  fail_workflow = false
  inputs        = { message = "boom" }
}
task "b" {
  uses   = builtin.transform
  inputs = { x = 1 }
}`, 3, "completed_with_errors"},
		{"timed out", `workflow "w" {
  max_duration = "100ms"
}
task "a" {
  uses   = builtin.sleep
  inputs = { duration = "10s" }
}`, 1, "timed_out"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.write("w.fsc.hcl", tc.src)
			r := h.run("apply", "w.fsc.hcl", "-json")
			wantCode(t, r, tc.code)
			if ex := finishedExecution(t, r.stdout); ex["status"] != tc.status {
				t.Fatalf("status %v, want %s", ex["status"], tc.status)
			}
			plain := h.run("apply", "w.fsc.hcl")
			wantCode(t, plain, tc.code)
			wantContains(t, "stdout", plain.stdout, "Execution ", " "+tc.status+" in ")
		})
	}
}

func TestApplyBadInput(t *testing.T) {
	h := newHarness(t)
	h.write("w.fsc.hcl", `workflow "w" {}
variable "n" { type = number }
task "a" {
  uses   = builtin.transform
  inputs = { n = var.n }
}`)
	r := h.run("apply", "w.fsc.hcl", "-var", "n=1", "-payload", "{not json")
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, "Invalid -payload", "not valid JSON")
	r = h.run("apply", "w.fsc.hcl", "-var", "n=abc")
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, "n")
	r = h.run("apply", "w.fsc.hcl")
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, "No value for required variable")
	h.write("bad.fsplan", "PK\x03\x04 this is not a zip")
	r = h.run("apply", "bad.fsplan")
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, "Invalid plan file", "corrupt")
	r = h.run("resume", "01NOSUCHEXECUTION000000000")
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, "Unknown execution")
}

func TestApplySavedPlan(t *testing.T) {
	h := newHarness(t)
	h.write("w.fsc.hcl", `workflow "w" {}
variable "who" { type = string }
task "a" {
  uses   = builtin.transform
  inputs = { msg = "hi ${var.who}" }
}
output "msg" { value = task.a.output.msg }`)
	wantCode(t, h.run("plan", "w.fsc.hcl", "-var", "who=ada", "-out", "w.fsplan"), 0)
	// It holds the variables' values: its owner's only.
	if st, err := os.Stat(filepath.Join(h.dir, "w.fsplan")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the saved plan's mode: %v, %v; want 0600", st.Mode(), err)
	}
	// The saved plan runs what was planned, not the file on disk.
	h.write("w.fsc.hcl", `workflow "w" {}
task "z" {
  uses   = builtin.fail
  inputs = { message = "not this" }
}`)
	r := h.run("apply", "w.fsplan", "-json")
	wantCode(t, r, 0)
	ex := finishedExecution(t, r.stdout)
	if out, _ := json.Marshal(ex["outputs"]); string(out) != `{"msg":"hi ada"}` {
		t.Fatalf("outputs %s", out)
	}
	r = h.run("apply", "w.fsplan", "-var", "who=bob")
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, "saved plan")
}

// TestSecretNeverStored runs a workflow that uses a secret in many ways and then reads every
// file under FUSCIA_HOME: the secret's value must be nowhere.
func TestSecretNeverStored(t *testing.T) {
	srv := newCountingServer(t)
	h := newHarness(t)
	const secret = "s3cr3t-Value-4711"
	h.env = append(h.env, "API_TOKEN="+secret)
	h.write("w.fsc.hcl", `workflow "w" {}
secret "token" { env = "API_TOKEN" }
variable "base" { type = string }
task "call" {
  uses   = builtin.http
  inputs = {
    url     = "${var.base}/echo"
    headers = { Authorization = "Bearer ${secret.token}" }
  }
}
task "shape" {
  uses   = builtin.transform
  inputs = { auth = "Bearer ${secret.token}", plain = "visible", n = task.call.output.status }
}
task "echo" {
  uses   = builtin.http
  inputs = { url = "${var.base}/q?t=${secret.token}" }
}
task "fails" {
  uses          = builtin.fail
  fail_workflow = false
  inputs        = { message = "failed with ${secret.token}" }
}
output "auth" { value = task.shape.output.auth }
output "echoed" { value = task.echo.output.body }
`)
	r := h.run("apply", "w.fsc.hcl", "-json", "-var", "base="+srv.URL)
	wantCode(t, r, 3)
	if strings.Contains(r.stdout, secret) {
		t.Errorf("apply -json printed the secret:\n%s", r.stdout)
	}
	found := 0
	err := filepath.WalkDir(h.home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&fs.ModeSocket != 0 {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		found++
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("%s contains the secret", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatal("FUSCIA_HOME has no files: nothing was checked")
	}
}

// TestSecondApplyWaits starts two applies on one home: the second waits for the first to
// release the store, says so, and then runs.
func TestSecondApplyWaits(t *testing.T) {
	h := newHarness(t)
	h.write("slow.fsc.hcl", `workflow "slow" {}
task "nap" {
  uses   = builtin.sleep
  inputs = { duration = "1500ms" }
}`)
	h.write("fast.fsc.hcl", `workflow "fast" {}
task "a" {
  uses   = builtin.transform
  inputs = { x = 1 }
}`)
	first := exec.Command(fusciaBin, "apply", "slow.fsc.hcl")
	first.Dir, first.Env = h.dir, append(baseEnv(), "FUSCIA_HOME="+h.home)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Wait()
	waitForFile(t, filepath.Join(h.home, "fuscia.sock"))
	r := h.run("apply", "fast.fsc.hcl")
	wantCode(t, r, 0)
	wantContains(t, "stderr", r.stderr, "Waiting for the state store")
	if err := first.Wait(); err != nil {
		t.Fatalf("first apply: %v", err)
	}
}

func waitForFile(t *testing.T, path string) {
	t.Helper()
	for i := 0; i < 200; i++ {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", path)
}

// TestInterruptCancels sends SIGINT to apply: the run is cancelled gracefully and journaled so.
func TestInterruptCancels(t *testing.T) {
	h := newHarness(t)
	h.write("slow.fsc.hcl", `workflow "slow" {}
task "nap" {
  uses   = builtin.sleep
  inputs = { duration = "30s" }
}`)
	cmd := exec.Command(fusciaBin, "apply", "slow.fsc.hcl", "-json")
	cmd.Dir, cmd.Env = h.dir, append(baseEnv(), "FUSCIA_HOME="+h.home)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForFile(t, filepath.Join(h.home, "fuscia.sock"))
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want code 1", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cancel took %s", d)
	}
	ex := finishedExecution(t, out.String())
	if ex["status"] != "cancelled" {
		t.Fatalf("status %v", ex["status"])
	}
	nodes := ex["nodes"].(map[string]any)
	if n := nodes["task.nap"].(map[string]any); n["status"] != "cancelled" {
		t.Fatalf("task.nap: %v", n)
	}
}

// TestCorruptStore: a damaged store is reported with the file and what is safe to do, not a
// stack, for runs and reads; moving the store aside (which loses every run) is a last resort.
func TestCorruptStore(t *testing.T) {
	h := newHarness(t)
	h.write("w.fsc.hcl", `workflow "w" {}
task "a" {
  uses   = builtin.transform
  inputs = { x = 1 }
}`)
	wantCode(t, h.run("apply", "w.fsc.hcl"), 0)
	writeFile(t, filepath.Join(h.home, "state", "MANIFEST"), []byte("garbage"), 0o644)
	for _, args := range [][]string{{"apply", "w.fsc.hcl"}, {"executions", "list"}} {
		r := h.run(args...)
		wantCode(t, r, 1)
		wantContains(t, "stderr", r.stderr, filepath.Join(h.home, "state", "MANIFEST")+" is corrupt", "nothing was changed", "keep a copy", "backup", "only as a last resort")
		if strings.Contains(r.stderr, "and run again") {
			t.Errorf("stderr advises moving the store aside first:\n%s", r.stderr)
		}
	}
}

// TestTraces: with OTEL_TRACES_EXPORTER=console, apply writes a span for the run and one per
// node attempt, with docs/engine.md's attributes, to stderr (stdout stays clean for -json): one
// trace, each attempt's span under the run's, a component attempt's instantiation and call and
// a plugin's RPC under their attempt's.
func TestTraces(t *testing.T) {
	h := newHarness(t)
	h.env = append(h.env, "OTEL_TRACES_EXPORTER=console")
	crInstallDir(t, h, "wat-echo", watEchoDir(t))
	installEchoPlugin(t, filepath.Join(h.dir, "plugins"))
	h.write("w.fsc.hcl", `workflow "traced" {}
component "echo" {
  source = "fuscia/wat-echo"
}
plugin "echo" {
  source = "echo"
}
task "a" {
  uses   = builtin.transform
  inputs = { x = 1 }
}
task "comp" {
  uses   = component.echo.echo
  inputs = { n = 1 }
}
task "plug" {
  uses   = plugin.echo.run
  inputs = { n = 1 }
}`)
	r := h.run("apply", "w.fsc.hcl", "-json")
	wantCode(t, r, 0)
	wantContains(t, "stderr", r.stderr, `"run traced"`, `"attempt task.a"`, "fuscia.execution_id", "fuscia.node", "fuscia.attempt", "fuscia.outcome")
	finishedExecution(t, r.stdout)

	type spanID struct{ TraceID, SpanID string }
	byName := map[string]struct{ ctx, parent spanID }{}
	dec := json.NewDecoder(strings.NewReader(r.stderr))
	for {
		var sp struct {
			Name                string
			SpanContext, Parent spanID
		}
		if err := dec.Decode(&sp); err != nil {
			if err != io.EOF {
				t.Fatalf("stderr is not the console exporter's JSON spans: %v\n%s", err, r.stderr)
			}
			break
		}
		byName[sp.Name] = struct{ ctx, parent spanID }{sp.SpanContext, sp.Parent}
	}
	run := byName["run traced"]
	for child, parent := range map[string]string{
		"attempt task.a": "run traced", "attempt task.comp": "run traced", "attempt task.plug": "run traced",
		"wasm instantiate": "attempt task.comp", "wasm call": "attempt task.comp", "plugin task run": "attempt task.plug",
	} {
		c, ok := byName[child]
		if !ok {
			t.Errorf("no span %q; spans: %v", child, slices.Sorted(maps.Keys(byName)))
			continue
		}
		if c.ctx.TraceID != run.ctx.TraceID || c.parent.SpanID != byName[parent].ctx.SpanID {
			t.Errorf("span %q is in trace %s under %s; want trace %s under %q (%s)", child, c.ctx.TraceID, c.parent.SpanID,
				run.ctx.TraceID, parent, byName[parent].ctx.SpanID)
		}
	}

	// An exporter Fuscia does not know is the setting's fault, exit 2, not the state store's.
	h.env = append(h.env, "OTEL_TRACES_EXPORTER=bogus")
	r = h.run("apply", "w.fsc.hcl")
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, "Error: Invalid telemetry setting", "OTEL_TRACES_EXPORTER=bogus is not supported")
	if strings.Contains(r.stderr, "state store") {
		t.Errorf("a bad exporter is reported as the state store's:\n%s", r.stderr)
	}

	// An exporter that cannot reach its endpoint is reported in the log, in its format (it was
	// a plain line of Go's standard logger).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	h.env = append(h.env, "OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+closed)
	r = h.run("apply", "w.fsc.hcl", "-log-format", "json")
	wantCode(t, r, 0)
	wantContains(t, "stderr", r.stderr, `"level":"WARN","msg":"telemetry: traces export`, closed)
	for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("a line of stderr is not JSON with -log-format json: %q", line)
		}
	}
}

// TestStalePlan: a saved plan whose locked plugin binary changed since planning is refused with
// exit 2 and a named error, before anything runs.
func TestStalePlan(t *testing.T) {
	h := newHarness(t)
	bin := installEchoPlugin(t, filepath.Join(h.dir, "plugins"))
	h.write("w.fsc.hcl", `workflow "w" {}
plugin "echo" {
  source = "echo"
}
task "a" {
  uses   = builtin.transform
  inputs = { x = 1 }
}`)
	wantCode(t, h.run("plan", "w.fsc.hcl", "-out", "w.fsplan"), 0)
	rebuildPlugin(t, bin, "# changed\n")
	r := h.run("apply", "w.fsplan")
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, "Invalid plan file", "stale", `plugin "echo"`)
	if _, err := os.Stat(filepath.Join(h.home, "state")); err == nil {
		t.Errorf("a refused plan opened the state store")
	}
}

// TestMissingSecret: a secret whose variable is not set stops apply before the run, as input it
// lacks: exit 2 with a diagnostic at the secret's block, as validate shows them, in text and
// -json. It was "Cannot start the run", exit 1.
func TestMissingSecret(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("w.fsc.hcl", `workflow "w" {}

secret "tok" {
  env = "FUSCIA_TEST_UNSET_TOKEN"
}

task "t" {
  uses   = builtin.transform
  inputs = { auth = "Bearer ${secret.tok}" }
}
`)
	r := h.run("apply", "w.fsc.hcl")
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, "Error: Secret not available", "on w.fsc.hcl line 3", "FUSCIA_TEST_UNSET_TOKEN is not set")
	r = h.run("apply", "w.fsc.hcl", "-json")
	wantCode(t, r, 2)
	if v := decodeValidate(t, r.stdout); len(v.Diagnostics) != 1 || v.Diagnostics[0].Summary != "Secret not available" {
		t.Errorf("apply -json: %+v", v)
	}

	// Through the serve that owns the home, whose environment lacks it: the same.
	sp := startServe(t, h, nil)
	r = h.run("apply", "w.fsc.hcl")
	wantCode(t, r, 2)
	wantContains(t, "stderr through serve", r.stderr, "Error: Secret not available", "on w.fsc.hcl line 3", "FUSCIA_TEST_UNSET_TOKEN is not set")
	sp.stopOK()
}
