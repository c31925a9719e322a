package main

// End-to-end tests of plugin providers through the real binary and real plugin subprocesses
// (docs/reference/plugin-protocol.md, docs/plugins.md): the example plugin examples/plugins/greeter (tasks greet, fail,
// crash, hang, count; trigger tick) and the broken binaries of plugin/testdata are built with
// plugintest, installed into a test's ./plugins or $FUSCIA_HOME/plugins, and planned, applied,
// shown and logged through `fuscia`. Every test checks that no plugin process outlives it.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/plugin"
	"github.com/fuscia/fuscia/plugin/plugintest"
)

// greeterFile is the greeter's installed file name: its version is in the name, as the README
// installs it.
const greeterFile = "fuscia-plugin-greeter_v0.1.0"

// installGreeter builds examples/plugins/greeter (once per test binary), installs it into dir
// and returns the installed path. When the test ends, no process of that binary may be left.
func installGreeter(t *testing.T, dir string) string {
	t.Helper()
	bin := plugintest.Build(t, "examples/plugins/greeter", "greeter")
	path := plugintest.Install(t, bin, dir, greeterFile)
	t.Cleanup(func() { plugintest.NoneLeft(t, path) })
	return path
}

// oneLine joins the words of s with single spaces: human diagnostics are wrapped.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// lineOf is the 1-based line of the first occurrence of sub in src.
func lineOf(t *testing.T, src, sub string) int {
	t.Helper()
	i := strings.Index(src, sub)
	if i < 0 {
		t.Fatalf("%q is not in the workflow", sub)
	}
	return 1 + strings.Count(src[:i], "\n")
}

// greeterBlock declares the greeter plugin; every workflow below starts with it.
const greeterBlock = `plugin "greeter" {
  source  = "greeter"
  version = "0.1.0"
}
`

const greetingsWorkflow = `workflow "greetings" {}

` + greeterBlock + `
task "hello" {
  uses   = plugin.greeter.greet
  inputs = { name = "Ada" }
}

task "again" {
  uses   = plugin.greeter.greet
  inputs = { name = task.hello.output.message, greeting = "Hi" }
}

task "steps" {
  uses   = plugin.greeter.count
  inputs = { delay_ms = 10 }
}

output "messages" {
  value = [task.hello.output.message, task.again.output.message]
}

output "steps" {
  value = task.steps.output
}
`

// TestPluginGreeterApply: plan, apply, show, logs of a workflow that runs the real greeter: two
// greet tasks (the second greets the first's message), and count, whose continue results make
// four calls in one attempt. The greetings counter in the plugin's KV is the execution's: it
// counts both greet tasks of a run and starts again in the next run.
func TestPluginGreeterApply(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bin := installGreeter(t, filepath.Join(h.dir, "plugins"))
	digest, err := plugin.Digest(bin)
	if err != nil {
		t.Fatal(err)
	}
	f := h.write("greetings.fsc.hcl", greetingsWorkflow)

	r := h.run("plan", f)
	wantCode(t, r, 0)
	wantContains(t, "plan", r.stdout,
		"+ task.hello (plugin.greeter.greet, plugin greeter@0.1.0)",
		"+ task.steps (plugin.greeter.count, plugin greeter@0.1.0)",
		"plugin.greeter: greeter@0.1.0 ("+digest+")",
		`name = "Ada"`, "(known after apply)")
	if !strings.HasSuffix(r.stdout, "\nPlan: 3 nodes in 2 stages, 1 plugins, 0 components.\n") {
		t.Errorf("summary line wrong:\n%s", r.stdout)
	}
	lockRE := regexp.MustCompile(`(?s)plugin "greeter" \{\s*version\s*=\s*"0\.1\.0"\s*digest\s*=\s*"` + regexp.QuoteMeta(digest) + `"\s*\}`)
	if lock := h.read(".fuscia.lock.hcl"); !lockRE.MatchString(lock) {
		t.Errorf("lock file has no plugin \"greeter\" block with version 0.1.0 and digest %s:\n%s", digest, lock)
	}

	helloLine := regexp.MustCompile(`(?m)^\S+ \S+ INFO\s+task\.hello\s+greeting Ada \(greeting 1 of this execution\)$`)
	againLine := regexp.MustCompile(`(?m)^\S+ \S+ INFO\s+task\.again\s+greeting Hello, Ada! \(greeting 2 of this execution\)$`)
	// Twice: the greeting counter lives in the execution's KV scope, not in the plugin process
	// (which is a new one in each apply) nor in a scope shared by runs.
	for run := 1; run <= 2; run++ {
		id, r := crApply(t, h, 0, f)
		wantContains(t, "apply", r.stdout,
			"task.hello: [info] greeting Ada (greeting 1 of this execution)",
			"task.again: [info] greeting Hello, Ada! (greeting 2 of this execution)",
			"task.steps: succeeded in ",
			`messages = ["Hello, Ada!","Hi, Hello, Ada!!"]`,
			`steps = {"calls":3}`,
			"Execution "+id+" succeeded in ")

		ex := crShow(t, h, id)
		if ex.Workflow != "greetings" || ex.Status != "succeeded" || ex.Error != nil {
			t.Errorf("run %d: workflow %q, status %q, error %+v; want greetings, succeeded, none", run, ex.Workflow, ex.Status, ex.Error)
		}
		jsonEqual(t, "outputs.messages", ex.Outputs["messages"], `["Hello, Ada!", "Hi, Hello, Ada!!"]`)
		jsonEqual(t, "outputs.steps", ex.Outputs["steps"], `{"calls": 3}`)
		for addr, want := range map[string]string{
			"task.hello": `{"message": "Hello, Ada!"}`,
			"task.again": `{"message": "Hi, Hello, Ada!!"}`,
			"task.steps": `{"calls": 3}`, // four calls, one attempt: continue is not a retry
		} {
			n := crNodeOf(t, ex, addr)
			if n.Status != "succeeded" || n.Attempts != 1 || n.Error != nil {
				t.Errorf("run %d: %s %+v, want succeeded after 1 attempt", run, addr, n)
			}
			jsonEqual(t, addr+" output", n.Output, want)
		}

		// The greeter's log lines, sent through the Host service, are the nodes' logs.
		r = h.run("logs", id)
		wantCode(t, r, 0)
		if !helloLine.MatchString(r.stdout) || !againLine.MatchString(r.stdout) {
			t.Errorf("run %d: logs lack the greetings:\n%s", run, r)
		}
		for i := 1; i <= 3; i++ {
			if !regexp.MustCompile(fmt.Sprintf(`(?m)^\S+ \S+ DEBUG\s+task\.steps\s+count: call %d continues$`, i)).MatchString(r.stdout) {
				t.Errorf("run %d: logs lack count's call %d:\n%s", run, i, r.stdout)
			}
		}
		if strings.Contains(r.stdout, "call 4") {
			t.Errorf("run %d: count continued a fourth time:\n%s", run, r.stdout)
		}
		r = h.run("logs", id, "-node", "task.again")
		wantCode(t, r, 0)
		if !againLine.MatchString(r.stdout) || strings.Contains(r.stdout, "task.hello") || strings.Contains(r.stdout, "task.steps") {
			t.Errorf("run %d: logs -node task.again:\n%s", run, r)
		}
	}

	// apply -json: count's three continue results are progress events of one attempt, and the
	// plugin's log lines are node_log events with their levels.
	r = h.run("apply", f, "-json")
	wantCode(t, r, 0)
	var progress []float64
	started := 0
	logs := map[string][]string{}
	for _, ev := range exEvents(t, r.stdout) {
		if ev["node"] != "task.steps" && ev["type"] != "node_log" {
			continue
		}
		switch ev["type"] {
		case "node_started":
			started++
			if ev["attempt"] != 1.0 {
				t.Errorf("task.steps started attempt %v, want 1", ev["attempt"])
			}
		case "node_progress":
			done, _ := ev["done"].(float64)
			total, _ := ev["total"].(float64)
			if total <= 0 {
				t.Errorf("progress event without a total: %v", ev)
				continue
			}
			progress = append(progress, done/total)
		case "node_log":
			node, _ := ev["node"].(string)
			logs[node] = append(logs[node], fmt.Sprintf("%v %v", ev["level"], ev["message"]))
		}
	}
	if started != 1 {
		t.Errorf("task.steps started %d times, want once", started)
	}
	if len(progress) != 3 || !slices.IsSorted(progress) || progress[2] != 1 {
		t.Errorf("task.steps progress %v, want three rising steps ending at 1 (one per continue)", progress)
	}
	if got, want := logs["task.hello"], []string{"info greeting Ada (greeting 1 of this execution)"}; !slices.Equal(got, want) {
		t.Errorf("node_log events of task.hello %q, want %q", got, want)
	}
	if got := logs["task.steps"]; len(got) != 3 || got[0] != "debug count: call 1 continues" {
		t.Errorf("node_log events of task.steps %q, want three debug lines", got)
	}
	ex := finishedExecution(t, r.stdout)
	if ex["status"] != "succeeded" {
		t.Errorf("execution_finished status %v", ex["status"])
	}
}

// failWorkflow runs greeter's fail task with an error kind, with a retry block that only
// retryable errors use.
func failWorkflow(kind string) string {
	return `workflow "fails" {}

` + greeterBlock + `
task "boom" {
  uses   = plugin.greeter.fail
  inputs = { kind = "` + kind + `", message = "it broke: ` + kind + `" }
  retry {
    attempts      = 2
    backoff       = "fixed"
    initial_delay = "10ms"
  }
}
`
}

// TestPluginGreeterErrorKinds: the error kind a plugin answers is the node's error kind in show
// -json, and the run fails (exit 1); only retryable is retried.
func TestPluginGreeterErrorKinds(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		kind     string
		attempts int
	}{
		{"retryable", 2},
		{"fatal", 1},
		{"validation", 1},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			installGreeter(t, filepath.Join(h.home, "plugins"))
			f := h.write("fail.fsc.hcl", failWorkflow(tt.kind))
			id, r := crApply(t, h, 1, f)
			wantContains(t, "apply", r.stdout, "task.boom: failed in ", tt.kind+": it broke: "+tt.kind, "Execution "+id+" failed in ")

			ex := crShow(t, h, id)
			if ex.Status != "failed" || ex.Error == nil || ex.Error.Kind != tt.kind {
				t.Errorf("execution: status %q, error %+v; want failed with kind %s", ex.Status, ex.Error, tt.kind)
			}
			n := crNodeOf(t, ex, "task.boom")
			if n.Status != "failed" || n.Error == nil || n.Error.Kind != tt.kind || n.Error.Message != "it broke: "+tt.kind {
				t.Errorf("task.boom %+v, want failed with %s: it broke: %s", n, tt.kind, tt.kind)
			}
			if n.Attempts != tt.attempts {
				t.Errorf("task.boom made %d attempts, want %d", n.Attempts, tt.attempts)
			}
		})
	}
}

// TestPluginGreeterCrash: a plugin process that dies during a call fails the attempt with
// plugin_crashed, which is retryable, and the next call starts a new process.
func TestPluginGreeterCrash(t *testing.T) {
	t.Parallel()

	// Nothing else runs in this workflow: the only call in flight is the crashing one.
	t.Run("retried on a new process", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		installGreeter(t, filepath.Join(h.dir, "plugins"))
		f := h.write("crash.fsc.hcl", `workflow "crashes" {}

`+greeterBlock+`
task "wobbly" {
  uses   = plugin.greeter.crash
  inputs = {}
  retry {
    attempts      = 2
    initial_delay = "10ms"
  }
}

output "wobbly" {
  value = task.wobbly.output
}
`)
		r := h.run("apply", f)
		wantCode(t, r, 0)
		m := crExecutionRE.FindStringSubmatch(r.stdout)
		if m == nil {
			t.Fatalf("apply printed no execution id:\n%s", r)
		}
		wantContains(t, "apply", r.stdout, "plugin_crashed", "(attempt 2)", `wobbly = {"attempt":2,"crashed_before":true}`)
		ex := crShow(t, h, m[1])
		n := crNodeOf(t, ex, "task.wobbly")
		if ex.Status != "succeeded" || n.Status != "succeeded" || n.Attempts != 2 || n.Error != nil {
			t.Errorf("status %q, task.wobbly %+v; want succeeded after 2 attempts", ex.Status, n)
		}
		jsonEqual(t, "task.wobbly output", n.Output, `{"crashed_before": true, "attempt": 2}`)
	})

	t.Run("always", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		installGreeter(t, filepath.Join(h.dir, "plugins"))
		f := h.write("crash.fsc.hcl", `workflow "crashes" {}

`+greeterBlock+`
task "down" {
  uses   = plugin.greeter.crash
  inputs = { always = true }
}
`)
		id, r := crApply(t, h, 1, f)
		wantContains(t, "apply", r.stdout, "task.down: failed in ", "plugin_crashed")
		ex := crShow(t, h, id)
		if ex.Status != "failed" || ex.Error == nil || ex.Error.Kind != "plugin_crashed" {
			t.Errorf("execution: status %q, error %+v; want failed with plugin_crashed", ex.Status, ex.Error)
		}
		n := crNodeOf(t, ex, "task.down")
		if n.Status != "failed" || n.Attempts != 1 || n.Error == nil || n.Error.Kind != "plugin_crashed" {
			t.Fatalf("task.down %+v, want failed with plugin_crashed after 1 attempt", n)
		}
		wantContains(t, "error message", n.Error.Message, `plugin "greeter"`, greeterFile, "crashed during task crash")
	})

	// A crash also fails the calls of other nodes in flight on the same process; a later call
	// runs on a new process, and the execution's KV outlives the process.
	t.Run("calls in flight", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		installGreeter(t, filepath.Join(h.dir, "plugins"))
		f := h.write("inflight.fsc.hcl", `workflow "inflight" {}

`+greeterBlock+`
task "first" {
  uses   = plugin.greeter.greet
  inputs = { name = "Ada" }
}

task "long" {
  uses          = plugin.greeter.hang
  inputs        = { seconds = 60 }
  fail_workflow = false
}

task "pause" {
  uses   = builtin.sleep
  inputs = { duration = "2s" }
  after  = [task.first]
}

task "down" {
  uses          = plugin.greeter.crash
  inputs        = { always = true }
  after         = [task.pause]
  fail_workflow = false
}

task "pause_more" {
  uses   = builtin.sleep
  inputs = { duration = "3s" }
  after  = [task.pause]
}

task "again" {
  uses   = plugin.greeter.greet
  inputs = { name = "Bob" }
  after  = [task.pause_more]
}
`)
		start := time.Now()
		id, r := crApply(t, h, 3, f)
		if d := time.Since(start); d > 45*time.Second {
			t.Errorf("apply took %s: the hanging call was not ended by the crash", d)
		}
		ex := crShow(t, h, id)
		if ex.Status != "completed_with_errors" {
			t.Errorf("status %q, want completed_with_errors", ex.Status)
		}
		for _, addr := range []string{"task.long", "task.down"} {
			n := crNodeOf(t, ex, addr)
			if n.Status != "failed" || n.Error == nil || n.Error.Kind != "plugin_crashed" {
				t.Errorf("%s %+v, want failed with plugin_crashed", addr, n)
			}
		}
		if n := crNodeOf(t, ex, "task.long"); n.Error != nil {
			wantContains(t, "task.long error", n.Error.Message, "crashed during task hang")
		}
		n := crNodeOf(t, ex, "task.again")
		if n.Status != "succeeded" {
			t.Fatalf("task.again %+v, want succeeded on a restarted plugin", n)
		}
		jsonEqual(t, "task.again output", n.Output, `{"message": "Hello, Bob!"}`)
		wantContains(t, "apply", r.stdout, "greeting Ada (greeting 1 of this execution)", "greeting Bob (greeting 2 of this execution)")
	})
}

// TestPluginGreeterHang: a call that ignores its deadline ends the attempt with timeout at the
// deadline; a grace period later the plugin, asked whether the call still runs, is killed.
// The deadlines are seconds, not milliseconds: on a loaded machine a call with a shorter one can
// expire before it reaches the plugin, which then has nothing running to be killed for.
func TestPluginGreeterHang(t *testing.T) {
	t.Parallel()

	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.env = append(h.env, "FUSCIA_PLUGIN_GRACE_PERIOD=500ms")
		bin := installGreeter(t, filepath.Join(h.dir, "plugins"))
		f := h.write("hang.fsc.hcl", `workflow "hangs" {}

`+greeterBlock+`
task "stuck" {
  uses    = plugin.greeter.hang
  inputs  = {}
  timeout = "2s"
}
`)
		start := time.Now()
		id, r := crApply(t, h, 1, f)
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("apply took %s; the hang task sleeps an hour, the attempt's timeout is 2s", d)
		}
		// The command is over: the plugin must be gone now, not only at the test's end.
		plugintest.NoneLeft(t, bin)
		wantContains(t, "apply", r.stdout, "task.stuck: [info] hanging for 3600s, whatever the deadline", "task.stuck: failed in ", "timeout")
		ex := crShow(t, h, id)
		n := crNodeOf(t, ex, "task.stuck")
		if ex.Status != "failed" || n.Status != "failed" || n.Attempts != 1 || n.Error == nil || n.Error.Kind != "timeout" {
			t.Fatalf("status %q, task.stuck %+v; want failed with timeout after 1 attempt", ex.Status, n)
		}
		wantContains(t, "error message", n.Error.Message, "2s")
		if d := n.FinishedAt.Sub(n.StartedAt); d < 2*time.Second || d > 30*time.Second {
			t.Errorf("task.stuck ran for %s, want a little over 2s", d)
		}
	})

	// The run goes on after the timeout: the grace-period watcher, not the end of the command,
	// kills the plugin, and a later task runs on a new process.
	t.Run("killed after the grace period", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.env = append(h.env, "FUSCIA_PLUGIN_GRACE_PERIOD=500ms")
		installGreeter(t, filepath.Join(h.dir, "plugins"))
		f := h.write("grace.fsc.hcl", `workflow "grace" {}

`+greeterBlock+`
task "stuck" {
  uses          = plugin.greeter.hang
  inputs        = { seconds = 3600 }
  timeout       = "2s"
  fail_workflow = false
}

task "pause" {
  uses   = builtin.sleep
  inputs = { duration = "6s" }
}

task "after" {
  uses   = plugin.greeter.greet
  inputs = { name = "survivor" }
  after  = [task.pause]
}
`)
		start := time.Now()
		id, r := crApply(t, h, 3, f)
		if d := time.Since(start); d > 45*time.Second {
			t.Errorf("apply took %s", d)
		}
		wantContains(t, "stderr", r.stderr, "killing a plugin that did not return from a call within the grace period after its deadline", `"plugin":"greeter"`)
		ex := crShow(t, h, id)
		if n := crNodeOf(t, ex, "task.stuck"); n.Status != "failed" || n.Error == nil || n.Error.Kind != "timeout" {
			t.Errorf("task.stuck %+v, want failed with timeout", n)
		}
		n := crNodeOf(t, ex, "task.after")
		if n.Status != "succeeded" {
			t.Fatalf("task.after %+v, want succeeded", n)
		}
		jsonEqual(t, "task.after output", n.Output, `{"message": "Hello, survivor!"}`)
		if ex.Status != "completed_with_errors" {
			t.Errorf("status %q, want completed_with_errors", ex.Status)
		}
	})
}

// TestPluginBadBinaries: binaries that cannot be plugins are refused when plan starts them, with
// exit 2 and a diagnostic on the plugin block that names the plugin and says what is wrong;
// none of them is left running.
func TestPluginBadBinaries(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		wants []string
	}{
		{"badstdout", []string{`the plugin wrote "hello from a chatty plugin" to stdout before its handshake`, "stdout is reserved for go-plugin"}},
		{"notplugin", []string{"the binary exited before the handshake; it is not a Fuscia plugin", "(its stderr: usage: notplugin FILE)"}},
		{"wrongcookie", []string{"the binary exited before the handshake", "another magic cookie", "FUSCIA_PLUGIN=f7a1c0de-fuscia-plugin, protocol 1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			bin := plugintest.Build(t, "plugin/testdata/"+tt.name, tt.name)
			path := plugintest.Install(t, bin, filepath.Join(h.dir, "plugins"), "fuscia-plugin-"+tt.name)
			t.Cleanup(func() { plugintest.NoneLeft(t, path) })
			src := `workflow "bad" {}

plugin "` + tt.name + `" {
  source = "` + tt.name + `"
}

task "x" {
  uses   = plugin.` + tt.name + `.noop
  inputs = {}
}
`
			f := h.write("bad.fsc.hcl", src)
			named := fmt.Sprintf(`Plugin %q (fuscia-plugin-%s): `, tt.name, tt.name)

			r := h.run("plan", f)
			wantCode(t, r, 2)
			plugintest.NoneLeft(t, path)
			wantContains(t, "plan stderr", oneLine(r.stderr), append([]string{"Error: Cannot use plugin", "on bad.fsc.hcl line 3", named}, tt.wants...)...)
			if r.stdout != "" {
				t.Errorf("a refused plan printed to stdout:\n%s", r)
			}
			if _, err := os.Stat(filepath.Join(h.dir, ".fuscia.lock.hcl")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a failed plan wrote the lock file (stat: %v)", err)
			}

			for _, args := range [][]string{{"plan", f, "-json"}, {"validate", f, "-json"}} {
				r = h.run(args...)
				wantCode(t, r, 2)
				v := decodeValidate(t, r.stdout)
				if v.ErrorCount != 1 {
					t.Fatalf("%v: %+v, want one error", args, v)
				}
				d := v.Diagnostics[0]
				if d.Summary != "Cannot use plugin" || d.Range == nil || d.Range.Start.Line != 3 {
					t.Errorf("%v: diagnostic %+v, want Cannot use plugin on line 3", args, d)
				}
				wantContains(t, "detail", d.Detail, append([]string{named}, tt.wants...)...)
			}

			r = h.run("apply", f)
			wantCode(t, r, 2)
			wantContains(t, "apply stderr", oneLine(r.stderr), "Error: Cannot use plugin", named)
			plugintest.NoneLeft(t, path)
		})
	}
}

// TestPluginGreeterSavedPlan: a saved plan runs the planned greeter binary; once the installed
// binary changes it is refused before anything starts, and with the planned bytes back it runs
// again. (TestStalePlan checks the refusal's wording with the echo plugin.)
func TestPluginGreeterSavedPlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bin := installGreeter(t, filepath.Join(h.dir, "plugins"))
	planned, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	f := h.write("greetings.fsc.hcl", greetingsWorkflow)
	wantCode(t, h.run("plan", f, "-out", "w.fsplan"), 0)

	_, r := crApply(t, h, 0, "w.fsplan")
	wantContains(t, "apply", r.stdout, `messages = ["Hello, Ada!","Hi, Hello, Ada!!"]`)

	rebuildPlugin(t, bin, "# changed after planning\n")
	r = h.run("apply", "w.fsplan")
	wantCode(t, r, 2)
	wantContains(t, "stderr", oneLine(r.stderr), "Invalid plan file", "stale", `plugin "greeter"`)
	plugintest.NoneLeft(t, bin)

	// The planned bytes back (the same digest): the plan is valid again.
	writeFile(t, bin, planned, 0o755)
	_, r = crApply(t, h, 0, "w.fsplan")
	wantContains(t, "apply", r.stdout, `messages = ["Hello, Ada!","Hi, Hello, Ada!!"]`, "greeting 2 of this execution")
}

// validateDiags runs `validate -json` or `plan -json` with args and returns its diagnostics.
func validateDiags(t *testing.T, h *harness, code int, args ...string) []jsonDiag {
	t.Helper()
	r := h.run(args...)
	wantCode(t, r, code)
	return decodeValidate(t, r.stdout).Diagnostics
}

// TestPluginGreeterPlanChecks: validate checks plugin task names and inputs against the
// greeter's schema; plan also asks the greeter's ValidateInput, which refuses a known empty name
// and lets an unknown one pass. Each diagnostic points at the offending expression.
func TestPluginGreeterPlanChecks(t *testing.T) {
	t.Parallel()

	t.Run("unknown task", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		installGreeter(t, filepath.Join(h.dir, "plugins"))
		src := `workflow "v" {}

` + greeterBlock + `
task "x" {
  uses   = plugin.greeter.nope
  inputs = { name = "Ada" }
}
`
		f := h.write("v.fsc.hcl", src)
		line := lineOf(t, src, "plugin.greeter.nope")
		for _, cmd := range []string{"validate", "plan"} {
			ds := validateDiags(t, h, 2, cmd, f, "-json")
			if len(ds) != 1 || ds[0].Summary != "Unknown plugin task" || ds[0].Range == nil || ds[0].Range.Start.Line != line {
				t.Fatalf("%s: %+v, want one Unknown plugin task on line %d", cmd, ds, line)
			}
			wantContains(t, "detail", ds[0].Detail, `Plugin greeter@0.1.0 has no task "nope"`, "count, crash, fail, greet, hang")
			checkPos(t, src, ds[0].Range.Start)
		}
		r := h.run("validate", f)
		wantCode(t, r, 2)
		wantContains(t, "stderr", r.stderr, "Error: Unknown plugin task", fmt.Sprintf("on %s line %d", f, line), "plugin.greeter.nope")
	})

	t.Run("input against the schema", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		installGreeter(t, filepath.Join(h.home, "plugins"))
		src := `workflow "v" {}

` + greeterBlock + `
task "x" {
  uses = plugin.greeter.greet
  inputs = {
    greeting = "Hi"
    nmae     = "Ada"
  }
}
`
		f := h.write("v.fsc.hcl", src)
		for _, cmd := range []string{"validate", "plan"} {
			ds := validateDiags(t, h, 2, cmd, f, "-json")
			if len(ds) != 2 {
				t.Fatalf("%s: %+v, want two diagnostics (name missing, nmae unknown)", cmd, ds)
			}
			want := map[string]int{
				`Attribute "name" is required`:                                            lineOf(t, src, "inputs = {"),
				`Input "nmae" of task.x (plugin.greeter.greet): Unknown attribute "nmae"`: lineOf(t, src, "nmae"),
			}
			for _, d := range ds {
				if d.Summary != "Invalid input for task.x" || d.Range == nil {
					t.Errorf("%s: diagnostic %+v, want Invalid input for task.x with a range", cmd, d)
					continue
				}
				found := false
				for sub, line := range want {
					if strings.Contains(d.Detail, sub) {
						found = true
						if d.Range.Start.Line != line {
							t.Errorf("%s: %q on line %d, want %d", cmd, d.Detail, d.Range.Start.Line, line)
						}
						delete(want, sub)
					}
				}
				if !found {
					t.Errorf("%s: unexpected diagnostic %+v", cmd, d)
				}
			}
		}
	})

	t.Run("empty name", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		installGreeter(t, filepath.Join(h.dir, "plugins"))
		src := `workflow "v" {}

` + greeterBlock + `
task "x" {
  uses = plugin.greeter.greet
  inputs = {
    greeting = "Hi"
    name     = ""
  }
}
`
		f := h.write("v.fsc.hcl", src)
		// validate stops at the schema (docs/plugins.md): "" is a string.
		if ds := validateDiags(t, h, 0, "validate", f, "-json"); len(ds) != 0 {
			t.Errorf("validate: %+v, want no diagnostics", ds)
		}
		line := lineOf(t, src, `name     = ""`)
		ds := validateDiags(t, h, 2, "plan", f, "-json")
		if len(ds) != 1 || ds[0].Summary != "name must not be empty" || ds[0].Range == nil {
			t.Fatalf("plan: %+v, want the greeter's diagnostic", ds)
		}
		d := ds[0]
		if d.Range.Start.Line != line || d.Range.Start.Column != strings.Index(strings.Split(src, "\n")[line-1], `""`)+1 {
			t.Errorf("plan: diagnostic at %+v, want the value of name on line %d", d.Range.Start, line)
		}
		wantContains(t, "detail", d.Detail, `Invalid input for task.x, "name"`, "Greet needs someone to greet.")
		r := h.run("plan", f)
		wantCode(t, r, 2)
		wantContains(t, "plan stderr", r.stderr, "Error: name must not be empty", fmt.Sprintf("on %s line %d", f, line), `name     = ""`)
		r = h.run("apply", f)
		wantCode(t, r, 2)
		wantContains(t, "apply stderr", r.stderr, "Error: name must not be empty")
	})

	// Plan asks the plugin about many tasks at once, and once per distinct input; each node
	// still gets its own diagnostics, at its own lines, and all of them stay in source order.
	t.Run("many tasks", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		installGreeter(t, filepath.Join(h.dir, "plugins"))
		var b strings.Builder
		b.WriteString("workflow \"v\" {}\n\n" + greeterBlock)
		const tasks = 30 // 11 distinct questions: more than the calls plan makes at once
		for i := range tasks {
			input := fmt.Sprintf(`{ greeting = "Hi", name = "Ada %d" }`, i)
			switch i % 3 {
			case 0:
				input = `{ greeting = "Hi" }` // the schema refuses it: the plugin is not asked
			case 1:
				input = `{ greeting = "Hi", name = "" }` // the same question each time: the plugin refuses it
			}
			fmt.Fprintf(&b, "\ntask \"t%d\" {\n  uses   = plugin.greeter.greet\n  inputs = %s\n}\n", i, input)
		}
		src := b.String()
		f := h.write("v.fsc.hcl", src)
		ds := validateDiags(t, h, 2, "plan", f, "-json")
		var want []string
		for i := range tasks {
			line := lineOf(t, src, fmt.Sprintf("task \"t%d\"", i)) + 2
			switch i % 3 {
			case 0:
				want = append(want, fmt.Sprintf("%d: Invalid input for task.t%d", line, i))
			case 1:
				want = append(want, fmt.Sprintf("%d: name must not be empty (Invalid input for task.t%d, \"name\")", line, i))
			}
		}
		var got []string
		for _, d := range ds {
			if d.Range == nil {
				t.Fatalf("plan: diagnostic %+v has no range", d)
			}
			g := fmt.Sprintf("%d: %s", d.Range.Start.Line, d.Summary)
			if d.Summary == "name must not be empty" {
				g += " (" + strings.SplitN(d.Detail, ":", 2)[0] + ")"
			}
			got = append(got, g)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("plan's diagnostics:\n%s\nwant, in this order:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})

	// A name known at plan (a variable) is checked by the plugin; one that is not (another
	// node's output, the trigger payload, a secret) is sent as unknown and passes.
	t.Run("variables and unknowns", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.env = append(h.env, "GREETER_SECRET_NAME=Eve")
		installGreeter(t, filepath.Join(h.dir, "plugins"))
		src := `workflow "v" {}

variable "who" {
  type = string
}

secret "who" {
  env = "GREETER_SECRET_NAME"
}

` + greeterBlock + `
task "x" {
  uses = plugin.greeter.greet
  inputs = {
    name = var.who
  }
}

task "from_output" {
  uses   = plugin.greeter.greet
  inputs = { name = task.x.output.message }
}

task "from_payload" {
  uses   = plugin.greeter.greet
  inputs = { name = trigger.payload.who }
}

task "from_secret" {
  uses   = plugin.greeter.greet
  inputs = { name = secret.who }
}
`
		f := h.write("v.fsc.hcl", src)
		line := lineOf(t, src, "name = var.who")

		ds := validateDiags(t, h, 2, "plan", f, "-json", "-var", "who=")
		if len(ds) != 1 || ds[0].Summary != "name must not be empty" || ds[0].Range == nil || ds[0].Range.Start.Line != line {
			t.Fatalf("plan -var who=: %+v, want the greeter's diagnostic on line %d", ds, line)
		}

		r := h.run("plan", f, "-var", "who=Ada")
		wantCode(t, r, 0)
		wantContains(t, "plan", r.stdout, `name = "Ada"`, "name = (known after apply)", "name = (sensitive)",
			"Plan: 4 nodes in 2 stages, 1 plugins, 0 components.")
		if strings.Contains(r.stdout, "Eve") {
			t.Errorf("plan shows the secret:\n%s", r.stdout)
		}

		id, _ := crApply(t, h, 0, f, "-var", "who=Ada", "-payload", `{"who": "Bob"}`)
		ex := crShow(t, h, id)
		for addr, want := range map[string]string{
			"task.x":            `{"message": "Hello, Ada!"}`,
			"task.from_output":  `{"message": "Hello, Hello, Ada!!"}`,
			"task.from_payload": `{"message": "Hello, Bob!"}`,
		} {
			jsonEqual(t, addr+" output", crNodeOf(t, ex, addr).Output, want)
		}
		if n := crNodeOf(t, ex, "task.from_secret"); n.Status != "succeeded" {
			t.Errorf("task.from_secret %+v, want succeeded", n)
		}
	})
}

// pluginListOutput is `plugin list -json` (docs/plugins.md).
type pluginListOutput struct {
	Plugins []struct {
		Name     string   `json:"name"`
		Version  string   `json:"version"`
		Checksum string   `json:"checksum"`
		Digest   string   `json:"digest"`
		Path     string   `json:"path"`
		Tasks    []string `json:"tasks"`
		Triggers []string `json:"triggers"`
		Error    string   `json:"error"`
	} `json:"plugins"`
}

// TestPluginList: `plugin list` and `plugin list -json` show the greeter (in the home) with the
// version it reports, its sorted tasks and triggers, and the sha256 of its binary; a binary that
// is not a plugin (in ./plugins) is listed with the reason.
func TestPluginList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)

	r := h.run("plugin", "list", "-json")
	wantCode(t, r, 0)
	jsonEqual(t, "plugin list -json with no plugins", json.RawMessage(r.stdout), `{"plugins": []}`)
	r = h.run("plugin", "list")
	wantCode(t, r, 0)
	wantContains(t, "plugin list", r.stdout, "No plugins found in ")

	bin := installGreeter(t, filepath.Join(h.home, "plugins"))
	digest, err := plugin.Digest(bin)
	if err != nil {
		t.Fatal(err)
	}
	if digest != sha256Of(t, bin) {
		t.Fatalf("plugin.Digest %s, sha256 of the file %s", digest, sha256Of(t, bin))
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	notPlugin := plugintest.Install(t, plugintest.Build(t, "plugin/testdata/notplugin", "notplugin"), filepath.Join(h.dir, "plugins"), "fuscia-plugin-notplugin")
	t.Cleanup(func() { plugintest.NoneLeft(t, notPlugin) })

	// Twice: the second answer comes from the schema cache and must be the same.
	for i := 0; i < 2; i++ {
		r = h.run("plugin", "list", "-json")
		wantCode(t, r, 0)
		if got := keys(t, json.RawMessage(r.stdout)); !slices.Equal(got, []string{"plugins"}) {
			t.Errorf("plugin list -json keys %v, want [plugins]", got)
		}
		var raw struct {
			Plugins []json.RawMessage `json:"plugins"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
			t.Fatal(err)
		}
		var out pluginListOutput
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("plugin list -json: %v\n%s", err, r.stdout)
		}
		if len(out.Plugins) != 2 || len(raw.Plugins) != 2 {
			t.Fatalf("plugin list -json lists %d plugins, want greeter and notplugin:\n%s", len(out.Plugins), r.stdout)
		}
		for j, p := range out.Plugins {
			switch p.Name {
			case "greeter":
				if got, want := keys(t, raw.Plugins[j]), []string{"checksum", "digest", "name", "path", "tasks", "triggers", "version"}; !slices.Equal(got, want) {
					t.Errorf("greeter's keys %v, want %v", got, want)
				}
				if p.Version != "0.1.0" || p.Checksum != digest || p.Digest != digest || p.Path != abs || p.Error != "" {
					t.Errorf("greeter: %+v; want version 0.1.0, checksum and digest %s, path %s", p, digest, abs)
				}
				if want := []string{"count", "crash", "fail", "greet", "hang"}; !slices.Equal(p.Tasks, want) {
					t.Errorf("greeter's tasks %v, want %v", p.Tasks, want)
				}
				if want := []string{"tick"}; !slices.Equal(p.Triggers, want) {
					t.Errorf("greeter's triggers %v, want %v", p.Triggers, want)
				}
			case "notplugin":
				if p.Error == "" || len(p.Tasks) != 0 || len(p.Triggers) != 0 || !strings.HasPrefix(p.Checksum, "sha256:") {
					t.Errorf("notplugin: %+v; want an error, no tasks or triggers, a checksum", p)
				}
				wantContains(t, "notplugin error", p.Error, "exited before the handshake")
			default:
				t.Errorf("unexpected plugin %+v", p)
			}
		}
	}

	r = h.run("plugin", "list")
	wantCode(t, r, 0)
	wantContains(t, "plugin list", oneLine(r.stdout),
		"NAME VERSION TASKS TRIGGERS CHECKSUM PATH",
		"greeter 0.1.0 count, crash, fail, greet, hang tick "+digest+" "+abs,
		"Warning: notplugin: ")
}

// TestPluginOutputRefsChecked: validate and plan check a reference into a plugin task's output
// against the task's output_schema, as they check a component's (docs/plugins.md): a typo in
// `task.hello.output.mesage` is an error at its line before anything runs, where the run used
// to call greet and fail the next node.
func TestPluginOutputRefsChecked(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	installGreeter(t, filepath.Join(h.dir, "plugins"))
	src := "workflow \"typo\" {}\n\n" + greeterBlock + `
task "hello" {
  uses   = plugin.greeter.greet
  inputs = { name = "Ada" }
}

task "again" {
  uses   = plugin.greeter.greet
  inputs = { name = task.hello.output.mesage }
}
`
	f := h.write("typo.fsc.hcl", src)
	for _, cmd := range []string{"validate", "plan"} {
		r := h.run(cmd, f)
		wantCode(t, r, 2) // an invalid workflow
		wantContains(t, cmd, oneLine(r.stderr), "Unsupported attribute", `has no attribute "mesage"`, "message",
			fmt.Sprintf("typo.fsc.hcl line %d", lineOf(t, src, "mesage")))
	}
}
