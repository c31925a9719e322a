package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// branches are three join branches: a and b succeed, c as given.
func joinWorkflow(c, join string) string {
	return fmt.Sprintf(`
workflow "j" {}
task "a" {
  uses   = builtin.transform
  inputs = { from = "a", a = 1, shared = "a" }
}
task "b" {
  uses   = builtin.transform
  inputs = { from = "b", b = 2, shared = "b" }
}
%s
%s
task "next" {
  uses   = builtin.transform
  inputs = { got = join.j.output }
}
`, c, join)
}

const (
	cOK = `task "c" {
  uses   = builtin.transform
  inputs = { from = "c" }
}`
	cFails = `task "c" {
  uses          = builtin.fail
  fail_workflow = false
  inputs        = { message = "c broke" }
}`
	cSkipped = `task "c" {
  uses   = builtin.transform
  when   = false
  inputs = { from = "c" }
}`
)

func TestJoin(t *testing.T) {
	cases := []struct {
		name       string
		c          string
		join       string
		status     string
		run        string
		output     string // "" when not checked
		nextStatus string
	}{
		{
			name: "all succeed", c: cOK, join: `join "j" {
  after    = [task.a, task.b, task.c]
  strategy = "all"
  merge    = "append"
}`,
			status: "succeeded", run: "succeeded", nextStatus: "succeeded",
			output: `[{"from":"a","a":1,"shared":"a"},{"from":"b","b":2,"shared":"b"},{"from":"c"}]`,
		},
		{
			name: "all with a failed branch", c: cFails, join: `join "j" {
  after    = [task.a, task.b, task.c]
  strategy = "all"
}`,
			status: "failed", run: "failed", nextStatus: "cancelled",
		},
		{
			name: "all with a non-critical join and a failed branch", c: cFails, join: `join "j" {
  after         = [task.a, task.b, task.c]
  strategy      = "all"
  fail_workflow = false
}`,
			status: "failed", run: "completed_with_errors", nextStatus: "skipped",
		},
		{
			name: "all ignores a skipped branch", c: cSkipped, join: `join "j" {
  after = [task.a, task.b, task.c]
}`,
			status: "succeeded", run: "succeeded", nextStatus: "succeeded",
			output: `{"a":{"status":"succeeded","output":{"from":"a","a":1,"shared":"a"},"error":null},
			          "b":{"status":"succeeded","output":{"from":"b","b":2,"shared":"b"},"error":null},
			          "c":{"status":"skipped","output":null,"error":null}}`,
		},
		{
			name: "any with a failed branch", c: cFails, join: `join "j" {
  after    = [task.a, task.b, task.c]
  strategy = "any"
}`,
			status: "completed_with_errors", run: "completed_with_errors", nextStatus: "succeeded",
			output: `{"a":{"status":"succeeded","output":{"from":"a","a":1,"shared":"a"},"error":null},
			          "b":{"status":"succeeded","output":{"from":"b","b":2,"shared":"b"},"error":null},
			          "c":{"status":"failed","output":null,"error":{"kind":"fatal","message":"c broke"}}}`,
		},
		{
			name: "merge_object in after order", c: cOK, join: `join "j" {
  after    = [task.b, task.c, task.a]
  strategy = "all"
  merge    = "merge_object"
}`,
			status: "succeeded", run: "succeeded", nextStatus: "succeeded",
			output: `{"from":"a","a":1,"b":2,"shared":"a"}`,
		},
		{
			name: "append skips failed branches", c: cFails, join: `join "j" {
  after    = [task.c, task.b, task.a]
  strategy = "any"
  merge    = "append"
}`,
			status: "completed_with_errors", run: "completed_with_errors", nextStatus: "succeeded",
			output: `[{"from":"b","b":2,"shared":"b"},{"from":"a","a":1,"shared":"a"}]`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t)
			ex := te.apply(joinWorkflow(tc.c, tc.join), StartOptions{})
			wantRun(t, ex, tc.run)
			j := wantNode(t, ex, "join.j", tc.status)
			if tc.output != "" {
				wantJSON(t, "join output", j.Output, tc.output)
			}
			wantNode(t, ex, "task.next", tc.nextStatus)
			if tc.status == "failed" && j.Error == nil {
				t.Fatalf("failed join without error: %s", jsonOf(t, j))
			}
		})
	}
}

func TestJoinAnyNoneSucceeded(t *testing.T) {
	te := newTestEnv(t)
	ex := te.apply(`
workflow "j" {}
task "a" {
  uses          = builtin.fail
  fail_workflow = false
  inputs        = { message = "a broke" }
}
task "b" {
  uses          = builtin.fail
  fail_workflow = false
  inputs        = { message = "b broke" }
}
join "j" {
  after    = [task.a, task.b]
  strategy = "any"
}
`, StartOptions{})
	wantRun(t, ex, "failed")
	wantErr(t, "join.j", wantNode(t, ex, "join.j", "failed"), "fatal", "no branch succeeded")
}

func TestJoinLastWins(t *testing.T) {
	for _, slow := range []string{"a", "b"} {
		t.Run("slow "+slow, func(t *testing.T) {
			te := newTestEnv(t)
			delay := map[string]string{"a": "5ms", "b": "5ms"}
			delay[slow] = "80ms"
			ex := te.apply(fmt.Sprintf(`
workflow "j" {}
task "wa" {
  uses   = builtin.sleep
  inputs = { duration = %q }
}
task "wb" {
  uses   = builtin.sleep
  inputs = { duration = %q }
}
task "a" {
  uses   = builtin.transform
  inputs = { from = "a", after = task.wa.output }
}
task "b" {
  uses   = builtin.transform
  inputs = { from = "b", after = task.wb.output }
}
join "j" {
  after = [task.a, task.b]
  merge = "last_wins"
}
`, delay["a"], delay["b"]), StartOptions{})
			wantRun(t, ex, "succeeded")
			j := wantNode(t, ex, "join.j", "succeeded")
			wantJSON(t, "join output", j.Output, fmt.Sprintf(`{"from": %q, "after": {"slept": %q}}`, slow, "80ms"))
		})
	}
}

func TestJoinMofN(t *testing.T) {
	t.Run("proceeds at m and cancels the rest", func(t *testing.T) {
		te := newTestEnv(t)
		start := time.Now()
		ex := te.apply(`
workflow "j" {}
task "a" {
  uses   = builtin.transform
  inputs = { from = "a" }
}
task "b" {
  uses   = builtin.sleep
  inputs = { duration = "20ms" }
}
task "c" {
  uses   = builtin.sleep
  inputs = { duration = "5s" }
}
task "c_next" {
  uses   = builtin.transform
  inputs = { x = task.c.output }
}
join "j" {
  after    = [task.a, task.b, task.c]
  strategy = "m_of_n"
  m        = 2
}
task "next" {
  uses   = builtin.transform
  inputs = { got = join.j.output }
}
`, StartOptions{})
		within(t, "the run", time.Since(start), 2*time.Second)
		wantRun(t, ex, "succeeded")
		j := wantNode(t, ex, "join.j", "succeeded")
		wantJSON(t, "join output", j.Output, `{
			"a": {"status": "succeeded", "output": {"from": "a"}, "error": null},
			"b": {"status": "succeeded", "output": {"slept": "20ms"}, "error": null},
			"c": {"status": "cancelled", "output": null, "error": {"kind": "cancelled", "message": "join.j already had 2 successful branches"}}}`)
		wantErr(t, "task.c", wantNode(t, ex, "task.c", "cancelled"), "cancelled")
		wantNode(t, ex, "task.c_next", "skipped")
		wantNode(t, ex, "task.next", "succeeded")
		if ex.Error != nil {
			t.Fatalf("run error %v", ex.Error)
		}
	})
	t.Run("a branch it cancelled counts as skipped for other joins", func(t *testing.T) {
		// docs/reference/language.md: the cancelled branches do not make the run fail. A
		// second join over the same branches failed ("branch task.slow did not succeed"), and
		// with it the run.
		te := newTestEnv(t)
		ex := te.apply(`
workflow "j" {}
task "fast" {
  uses = builtin.transform
}
task "slow" {
  uses   = builtin.sleep
  inputs = { duration = "5s" }
}
join "first" {
  after    = [task.fast, task.slow]
  strategy = "m_of_n"
  m        = 1
}
join "both" {
  after = [task.fast, task.slow]
}
join "either" {
  after    = [task.fast, task.slow]
  strategy = "any"
}
`, StartOptions{})
		wantRun(t, ex, "succeeded")
		wantNode(t, ex, "task.slow", "cancelled")
		wantNode(t, ex, "join.first", "succeeded")
		both := wantNode(t, ex, "join.both", "succeeded")
		wantNode(t, ex, "join.either", "succeeded")
		// Listed as cancelled, not skipped (its error said cancelled under a skipped status).
		wantJSON(t, "join.both's output", both.Output, `{
			"fast": {"status": "succeeded", "output": {}, "error": null},
			"slow": {"status": "cancelled", "output": null, "error": {"kind": "cancelled", "message": "join.first already had 1 successful branches"}}}`)
	})
	t.Run("fails as soon as m is out of reach", func(t *testing.T) {
		te := newTestEnv(t)
		start := time.Now()
		ex := te.apply(`
workflow "j" {}
task "a" {
  uses          = builtin.fail
  fail_workflow = false
  inputs        = { message = "a broke" }
}
task "b" {
  uses          = builtin.fail
  fail_workflow = false
  inputs        = { message = "b broke" }
}
task "c" {
  uses   = builtin.sleep
  inputs = { duration = "5s" }
}
join "j" {
  after         = [task.a, task.b, task.c]
  strategy      = "m_of_n"
  m             = 2
  fail_workflow = false
}
`, StartOptions{})
		within(t, "the run", time.Since(start), 2*time.Second)
		wantRun(t, ex, "completed_with_errors")
		wantErr(t, "join.j", wantNode(t, ex, "join.j", "failed"), "fatal", "needed")
		wantNode(t, ex, "task.c", "cancelled")
	})
	t.Run("counts a branch that completed with errors", func(t *testing.T) {
		te := newTestEnv(t)
		ex := te.apply(`
workflow "j" {}
task "bad" {
  uses          = builtin.fail
  fail_workflow = false
  inputs        = { message = "x" }
}
task "a" {
  uses   = builtin.transform
  inputs = { from = "a" }
}
join "inner" {
  after    = [task.bad, task.a]
  strategy = "any"
}
task "slow" {
  uses   = builtin.sleep
  inputs = { duration = "5s" }
}
join "j" {
  after    = [join.inner, task.slow]
  strategy = "m_of_n"
  m        = 1
  merge    = "append"
}
`, StartOptions{})
		wantRun(t, ex, "completed_with_errors")
		wantNode(t, ex, "join.inner", "completed_with_errors")
		j := wantNode(t, ex, "join.j", "succeeded")
		wantNode(t, ex, "task.slow", "cancelled")
		if len(j.Output) == 0 || string(j.Output) == "null" {
			t.Fatalf("join output %s", j.Output)
		}
	})
}

func TestJoinMofNCancelsEveryKind(t *testing.T) {
	cases := []struct {
		name   string
		branch string
	}{
		{name: "for_each task", branch: `task "slow" {
  uses     = builtin.sleep
  for_each = ["5s", "5s", "5s"]
  concurrency = 2
  inputs   = { duration = each.value }
}`},
		{name: "retrying task", branch: `task "slow" {
  uses   = builtin.fail
  inputs = { message = "later", kind = "retryable" }
  retry {
    attempts      = 3
    initial_delay = "5s"
  }
}`},
		{name: "loop", branch: `loop "slow" {
  for_each = [1, 2, 3]
  task "nap" {
    uses   = builtin.sleep
    inputs = { duration = "5s" }
  }
}`},
		{name: "call", branch: `call "slow" {
  workflow = "./child.fsc.hcl"
}`},
		{name: "wait", branch: `wait "slow" {
  approval {}
}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t)
			te.write("child.fsc.hcl", `
workflow "child" {}
task "nap" {
  uses   = builtin.sleep
  inputs = { duration = "5s" }
}
`)
			kind := strings.SplitN(tc.branch, " ", 2)[0]
			start := time.Now()
			ex := te.apply(fmt.Sprintf(`
workflow "j" {}
task "a" {
  uses   = builtin.sleep
  inputs = { duration = "30ms" }
}
%s
join "j" {
  after    = [task.a, %s.slow]
  strategy = "m_of_n"
  m        = 1
}
task "after_slow" {
  uses       = builtin.transform
  depends_on = [%s.slow]
}
`, tc.branch, kind, kind), StartOptions{})
			within(t, "the run", time.Since(start), 2*time.Second)
			wantRun(t, ex, "succeeded")
			wantNode(t, ex, "join.j", "succeeded")
			wantErr(t, kind+".slow", wantNode(t, ex, kind+".slow", "cancelled"), "cancelled", "join.j")
			wantNode(t, ex, "task.after_slow", "skipped")
			if ex.Error != nil {
				t.Fatalf("run error %v", ex.Error)
			}
		})
	}
}
