package engine

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
)

func TestTaskChainAndOrdering(t *testing.T) {
	te := newTestEnv(t)
	ex := te.apply(`
workflow "chain" {}
task "a" {
  uses   = builtin.transform
  inputs = { n = 1 }
}
task "b" {
  uses   = builtin.transform
  inputs = { n = task.a.output.n + 1 }
}
task "c" {
  uses   = builtin.transform
  inputs = { n = task.b.output.n * 10 }
}
task "d" {
  uses       = builtin.transform
  depends_on = [task.c]
  inputs     = { done = true }
}
output "n" { value = task.c.output.n }
`, StartOptions{})
	wantRun(t, ex, "succeeded")
	wantJSON(t, "outputs", ex.Outputs, `{"n": 20}`)
	c := wantNode(t, ex, "task.c", "succeeded")
	d := wantNode(t, ex, "task.d", "succeeded")
	wantJSON(t, "task.c output", c.Output, `{"n": 20}`)
	if d.StartedAt == nil || c.FinishedAt == nil || d.StartedAt.Before(*c.FinishedAt) {
		t.Fatalf("task.d started before task.c finished: %s", jsonOf(t, ex))
	}
}

func TestForEach(t *testing.T) {
	cases := []struct {
		name     string
		forEach  string
		inputs   string
		output   string
		keys     []string
		statuses []string
	}{
		{
			name:     "list",
			forEach:  `["x", "y", "z"]`,
			inputs:   `{ v = upper(each.value), k = each.key, i = each.index }`,
			output:   `[{"v":"X","k":0,"i":0},{"v":"Y","k":1,"i":1},{"v":"Z","k":2,"i":2}]`,
			keys:     []string{"0", "1", "2"},
			statuses: []string{"succeeded", "succeeded", "succeeded"},
		},
		{
			name:     "map",
			forEach:  `{ beta = 2, alpha = 1 }`,
			inputs:   `{ v = each.value * 10, k = each.key, i = each.index }`,
			output:   `{"alpha":{"v":10,"k":"alpha","i":0},"beta":{"v":20,"k":"beta","i":1}}`,
			keys:     []string{`"alpha"`, `"beta"`},
			statuses: []string{"succeeded", "succeeded"},
		},
		{
			name:     "empty list",
			forEach:  `[]`,
			inputs:   `{ v = each.value }`,
			output:   `[]`,
			statuses: nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t)
			ex := te.apply(fmt.Sprintf(`
workflow "fe" {}
task "items" {
  uses     = builtin.transform
  for_each = %s
  inputs   = %s
}
task "after" {
  uses   = builtin.transform
  inputs = { all = task.items.output }
}
`, tc.forEach, tc.inputs), StartOptions{})
			wantRun(t, ex, "succeeded")
			n := wantNode(t, ex, "task.items", "succeeded")
			wantJSON(t, "task.items output", n.Output, tc.output)
			if len(n.Instances) != len(tc.statuses) {
				t.Fatalf("%d instances, want %d: %s", len(n.Instances), len(tc.statuses), jsonOf(t, n))
			}
			for i, in := range n.Instances {
				if string(in.Key) != tc.keys[i] || in.Status != tc.statuses[i] || in.Attempts != 1 {
					t.Fatalf("instance %d: %s", i, jsonOf(t, in))
				}
			}
			after := wantNode(t, ex, "task.after", "succeeded")
			wantJSON(t, "task.after output", after.Output, `{"all":`+tc.output+`}`)
		})
	}
}

func TestForEachConcurrency(t *testing.T) {
	cases := []struct {
		name        string
		concurrency string
		parallelism int
		want        int
	}{
		{name: "concurrency 2", concurrency: "concurrency = 2", want: 2},
		{name: "concurrency 1", concurrency: "concurrency = 1", want: 1},
		{name: "bounded by parallelism", parallelism: 3, want: 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t)
			g := gaugeServerUntil(t, tc.want, 40*time.Millisecond)
			ex := te.apply(fmt.Sprintf(`
workflow "fe" {}
task "calls" {
  uses     = builtin.http
  for_each = range(6)
  %s
  inputs   = { url = "%s/item/${each.value}" }
}
`, tc.concurrency, g.URL), StartOptions{Parallelism: tc.parallelism})
			wantRun(t, ex, "succeeded")
			maxc, total := g.stats()
			if maxc != tc.want || total != 6 {
				t.Fatalf("max concurrent %d (want %d), requests %d (want 6)", maxc, tc.want, total)
			}
			n := wantNode(t, ex, "task.calls", "succeeded")
			if !strings.Contains(string(n.Output), `"path":"/item/5"`) {
				t.Fatalf("output %s", n.Output)
			}
		})
	}
}

func TestWhen(t *testing.T) {
	t.Run("false skips the node and its dependents", func(t *testing.T) {
		te := newTestEnv(t)
		ex := te.apply(`
workflow "w" {}
variable "go" {
  type    = bool
  default = false
}
task "a" {
  uses   = builtin.transform
  when   = var.go
  inputs = { x = 1 }
}
task "b" {
  uses   = builtin.transform
  inputs = { y = task.a.output.x }
}
task "c" {
  uses       = builtin.transform
  depends_on = [task.b]
}
task "free" {
  uses = builtin.transform
}
`, StartOptions{})
		wantRun(t, ex, "succeeded")
		a := wantNode(t, ex, "task.a", "skipped")
		b := wantNode(t, ex, "task.b", "skipped")
		c := wantNode(t, ex, "task.c", "skipped")
		wantNode(t, ex, "task.free", "succeeded")
		if a.Reason != "when is false" || b.Reason != "upstream task.a was skipped" || c.Reason != "upstream task.b was skipped" {
			t.Fatalf("reasons %q, %q, %q", a.Reason, b.Reason, c.Reason)
		}
	})
	t.Run("true runs", func(t *testing.T) {
		te := newTestEnv(t)
		ex := te.apply(`
workflow "w" {}
task "a" {
  uses   = builtin.transform
  when   = 1 < 2
  inputs = { x = 1 }
}
`, StartOptions{})
		wantRun(t, ex, "succeeded")
		wantNode(t, ex, "task.a", "succeeded")
	})
	t.Run("per item with each", func(t *testing.T) {
		te := newTestEnv(t)
		ex := te.apply(`
workflow "w" {}
task "even" {
  uses     = builtin.transform
  for_each = [1, 2, 3, 4]
  when     = each.value % 2 == 0
  inputs   = { v = each.value }
}
task "next" {
  uses   = builtin.transform
  inputs = { got = task.even.output }
}
`, StartOptions{})
		wantRun(t, ex, "succeeded")
		n := wantNode(t, ex, "task.even", "succeeded")
		wantJSON(t, "output", n.Output, `[null, {"v": 2}, null, {"v": 4}]`)
		want := []string{"skipped", "succeeded", "skipped", "succeeded"}
		for i, in := range n.Instances {
			if in.Status != want[i] {
				t.Fatalf("instance %d %s, want %s", i, in.Status, want[i])
			}
		}
		if n.Instances[0].Reason != "when is false" {
			t.Fatalf("reason %q", n.Instances[0].Reason)
		}
		wantNode(t, ex, "task.next", "succeeded")
	})
	t.Run("not a boolean fails", func(t *testing.T) {
		te := newTestEnv(t)
		ex := te.apply(`
workflow "w" {}
task "src" {
  uses   = builtin.transform
  inputs = { s = "yes" }
}
task "a" {
  uses = builtin.transform
  when = task.src.output.s
}
`, StartOptions{})
		wantRun(t, ex, "failed")
		n := wantNode(t, ex, "task.a", "failed")
		wantErr(t, "task.a", n, "validation", "wf.fsc.hcl")
	})
}

func TestTimeout(t *testing.T) {
	te := newTestEnv(t)
	start := time.Now()
	ex := te.apply(`
workflow "t" {}
task "slow" {
  uses    = builtin.sleep
  timeout = "50ms"
  inputs  = { duration = "5s" }
}
`, StartOptions{})
	within(t, "the run", time.Since(start), 2*time.Second)
	wantRun(t, ex, "failed")
	n := wantNode(t, ex, "task.slow", "failed")
	wantErr(t, "task.slow", n, "timeout")
	if ex.Error == nil || ex.Error.Kind != "timeout" {
		t.Fatalf("run error %s", jsonOf(t, ex.Error))
	}
}

func TestRetry(t *testing.T) {
	cases := []struct {
		name     string
		statuses []int
		retry    string
		status   string
		attempts int
		hits     int
		kind     string
	}{
		{name: "503 twice then 200", statuses: []int{503, 503, 200}, retry: `retry {
    attempts      = 3
    initial_delay = "10ms"
  }`, status: "succeeded", attempts: 3, hits: 3},
		{name: "429 retried until attempts run out", statuses: []int{429}, retry: `retry {
    attempts      = 2
    initial_delay = "10ms"
    backoff       = "fixed"
  }`, status: "failed", attempts: 2, hits: 2, kind: "retryable"},
		{name: "404 is not retried", statuses: []int{404}, retry: `retry {
    attempts      = 3
    initial_delay = "10ms"
  }`, status: "failed", attempts: 1, hits: 1, kind: "fatal"},
		{name: "no retry block: one attempt", statuses: []int{503, 200}, status: "failed", attempts: 1, hits: 1, kind: "retryable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t)
			srv := countingServer(t, tc.statuses...)
			ex := te.apply(fmt.Sprintf(`
workflow "r" {}
task "call" {
  uses   = builtin.http
  inputs = { url = "%s" }
  %s
}
`, srv.URL, tc.retry), StartOptions{})
			n := wantNode(t, ex, "task.call", tc.status)
			if n.Attempts != tc.attempts || srv.n() != tc.hits {
				t.Fatalf("attempts %d (want %d), server saw %d (want %d): %s", n.Attempts, tc.attempts, srv.n(), tc.hits, jsonOf(t, n))
			}
			if tc.status == "succeeded" {
				wantRun(t, ex, "succeeded")
				if !strings.Contains(string(n.Output), `"n":3`) || n.Error != nil {
					t.Fatalf("output %s error %v", n.Output, n.Error)
				}
				return
			}
			wantRun(t, ex, "failed")
			wantErr(t, "task.call", n, tc.kind)
		})
	}
	t.Run("builtin.fail retryable", func(t *testing.T) {
		te := newTestEnv(t)
		ex := te.apply(`
workflow "r" {
  retry {
    attempts      = 5
    initial_delay = "1ms"
  }
}
task "flaky" {
  uses   = builtin.fail
  inputs = { message = "try again", kind = "retryable" }
  retry {
    attempts      = 2
    initial_delay = "10ms"
  }
}
`, StartOptions{})
		wantRun(t, ex, "failed")
		n := wantNode(t, ex, "task.flaky", "failed")
		if n.Attempts != 2 {
			t.Fatalf("attempts %d, want 2 (the node's retry replaces the workflow's)", n.Attempts)
		}
		wantErr(t, "task.flaky", n, "retryable", "try again")
	})
	t.Run("workflow default retry", func(t *testing.T) {
		te := newTestEnv(t)
		ex := te.apply(`
workflow "r" {
  retry {
    attempts      = 3
    initial_delay = "1ms"
  }
}
task "flaky" {
  uses   = builtin.fail
  inputs = { message = "again", kind = "retryable" }
}
task "fatal" {
  uses          = builtin.fail
  fail_workflow = false
  inputs        = { message = "no" }
}
`, StartOptions{})
		wantRun(t, ex, "failed")
		if n := wantNode(t, ex, "task.flaky", "failed"); n.Attempts != 3 {
			t.Fatalf("attempts %d, want 3", n.Attempts)
		}
	})
}

func TestNonCriticalFailure(t *testing.T) {
	te := newTestEnv(t)
	ex := te.apply(`
workflow "nc" {}
task "bad" {
  uses          = builtin.fail
  fail_workflow = false
  inputs        = { message = "boom" }
}
task "dep" {
  uses   = builtin.transform
  inputs = { x = task.bad.output }
}
task "dep2" {
  uses       = builtin.transform
  depends_on = [task.dep]
}
task "other" {
  uses = builtin.transform
}
`, StartOptions{})
	wantRun(t, ex, "completed_with_errors")
	bad := wantNode(t, ex, "task.bad", "failed")
	wantErr(t, "task.bad", bad, "fatal", "boom")
	dep := wantNode(t, ex, "task.dep", "skipped")
	if dep.Reason != "upstream task.bad failed" {
		t.Fatalf("reason %q", dep.Reason)
	}
	wantNode(t, ex, "task.dep2", "skipped")
	wantNode(t, ex, "task.other", "succeeded")
	if ex.Error != nil {
		t.Fatalf("run error %v", ex.Error)
	}
}

func TestCriticalFailure(t *testing.T) {
	te := newTestEnv(t)
	start := time.Now()
	ex := te.apply(`
workflow "cf" {}
task "slow" {
  uses   = builtin.sleep
  inputs = { duration = "5s" }
}
task "after_slow" {
  uses   = builtin.transform
  inputs = { x = task.slow.output }
}
task "pre" {
  uses   = builtin.sleep
  inputs = { duration = "20ms" }
}
task "bad" {
  uses       = builtin.fail
  depends_on = [task.pre]
  inputs     = { message = "boom" }
}
task "after_bad" {
  uses   = builtin.transform
  inputs = { x = task.bad.output }
}
`, StartOptions{})
	within(t, "the run", time.Since(start), 2*time.Second)
	wantRun(t, ex, "failed")
	wantErr(t, "run", &journal.NodeView{Error: ex.Error}, "fatal", "bad", "boom")
	wantErr(t, "task.bad", wantNode(t, ex, "task.bad", "failed"), "fatal", "boom")
	wantErr(t, "task.slow", wantNode(t, ex, "task.slow", "cancelled"), "cancelled")
	wantNode(t, ex, "task.after_slow", "cancelled")
	wantNode(t, ex, "task.after_bad", "cancelled")
	wantNode(t, ex, "task.pre", "succeeded")
}

func TestInputErrors(t *testing.T) {
	cases := []struct {
		name      string
		inputs    string
		fragments []string
	}{
		{name: "url is a number", inputs: `{ url = task.src.output.n }`, fragments: []string{"task.bad", "url"}},
		{name: "bad coercion", inputs: `{ url = "http://127.0.0.1:1/", timeout = task.src.output.obj }`, fragments: []string{"task.bad", "timeout", "object"}},
		{name: "missing attribute of an upstream output", inputs: `{ url = task.src.output.nope }`, fragments: []string{"wf.fsc.hcl line 9", "nope"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t)
			ex := te.apply(fmt.Sprintf(`
workflow "in" {}
task "src" {
  uses   = builtin.transform
  inputs = { n = 42, obj = { a = 1 } }
}
task "bad" {
  uses   = builtin.http
  inputs = %s
}
`, tc.inputs), StartOptions{})
			wantRun(t, ex, "failed")
			n := wantNode(t, ex, "task.bad", "failed")
			wantErr(t, "task.bad", n, "validation", tc.fragments...)
			if n.Attempts != 0 {
				t.Fatalf("an attempt was made: %s", jsonOf(t, n))
			}
		})
	}
}

func TestParallelism(t *testing.T) {
	six := func(url string) string {
		var b strings.Builder
		for i := range 6 {
			fmt.Fprintf(&b, "task \"c%d\" {\n  uses = builtin.http\n  inputs = { url = \"%s/%d\" }\n}\n", i, url, i)
		}
		return b.String()
	}
	cases := []struct {
		name        string
		settings    string
		parallelism int
		want        int
	}{
		{name: "StartOptions.Parallelism", parallelism: 2, want: 2},
		{name: "max_parallel", settings: "max_parallel = 3", want: 3},
		{name: "option beats max_parallel", settings: "max_parallel = 3", parallelism: 1, want: 1},
		{name: "default is 16", want: 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t)
			g := gaugeServerUntil(t, tc.want, 50*time.Millisecond)
			ex := te.apply(fmt.Sprintf("workflow \"p\" {\n  %s\n}\n%s", tc.settings, six(g.URL)), StartOptions{Parallelism: tc.parallelism})
			wantRun(t, ex, "succeeded")
			if maxc, total := g.stats(); maxc != tc.want || total != 6 {
				t.Fatalf("max concurrent %d (want %d), requests %d", maxc, tc.want, total)
			}
		})
	}
	t.Run("a retry waiting holds no slot", func(t *testing.T) {
		te := newTestEnv(t)
		srv := countingServer(t, 503, 200)
		ex := te.apply(fmt.Sprintf(`
workflow "p" {}
task "a" {
  uses   = builtin.http
  inputs = { url = "%s" }
  retry {
    attempts      = 2
    initial_delay = "300ms"
    backoff       = "fixed"
  }
}
task "z" {
  uses = builtin.transform
}
task "b" {
  uses       = builtin.sleep
  depends_on = [task.z]
  inputs     = { duration = "20ms" }
}
`, srv.URL), StartOptions{Parallelism: 1})
		wantRun(t, ex, "succeeded")
		a := wantNode(t, ex, "task.a", "succeeded")
		b := wantNode(t, ex, "task.b", "succeeded")
		if a.Attempts != 2 || !b.FinishedAt.Before(*a.FinishedAt) {
			t.Fatalf("task.b finished at %s, task.a at %s (attempts %d): the retry held the only slot", b.FinishedAt, a.FinishedAt, a.Attempts)
		}
	})
}

func TestForEachItemFailure(t *testing.T) {
	te := newTestEnv(t)
	ps := newPathServer(t, "/retry")
	// The fatal answer comes after the retryable one, so that item 0 is waiting for its retry
	// when item 1 fails.
	fatal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(50 * time.Millisecond)
		http.Error(w, "gone", http.StatusNotFound)
	}))
	defer fatal.Close()
	start := time.Now()
	ex := te.apply(fmt.Sprintf(`
workflow "fe" {}
task "items" {
  uses        = builtin.http
  for_each    = ["retry", "fatal", "later1", "later2"]
  concurrency = 2
  inputs      = { url = each.value == "fatal" ? "%s" : "%s/${each.value}" }
  retry {
    attempts      = 3
    initial_delay = "5s"
  }
}
task "next" {
  uses   = builtin.transform
  inputs = { x = task.items.output }
}
`, fatal.URL, ps.URL), StartOptions{})
	within(t, "the run", time.Since(start), 2*time.Second)
	wantRun(t, ex, "failed")
	n := wantNode(t, ex, "task.items", "failed")
	wantErr(t, "task.items", n, "fatal", "item 1", "404")
	want := []string{"cancelled", "failed", "cancelled", "cancelled"}
	for i, in := range n.Instances {
		if in.Status != want[i] {
			t.Fatalf("instance %d: %s, want %s: %s", i, in.Status, want[i], jsonOf(t, n.Instances))
		}
	}
	if n.Instances[0].Attempts != 1 || ps.saw("/later1") || ps.saw("/later2") {
		t.Fatalf("instances %s, requests %v", jsonOf(t, n.Instances), ps.seen)
	}
	wantNode(t, ex, "task.next", "cancelled")
}

// TestRunTimeShapeErrorsSayWhere: a when that gives null and a for_each that gives a string,
// both known only at run time, fail their node naming the file, the line and what they gave
// ("null", not cty's "dynamic").
func TestRunTimeShapeErrorsSayWhere(t *testing.T) {
	te := newTestEnv(t)
	ex := te.apply(`
workflow "w" {}
task "src" {
  uses   = builtin.transform
  inputs = { n = null, l = "abc" }
}
task "gated" {
  uses   = builtin.transform
  when   = task.src.output.n
  fail_workflow = false
}
task "each" {
  uses     = builtin.transform
  for_each = task.src.output.l
  fail_workflow = false
}
`, StartOptions{})
	wantErr(t, "task.gated", wantNode(t, ex, "task.gated", "failed"), "validation", "wf.fsc.hcl line 9", "when must be true or false; got null")
	wantErr(t, "task.each", wantNode(t, ex, "task.each", "failed"), "validation", "wf.fsc.hcl line 14", "for_each must be a list, set or map; got string")
}
