package engine

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// pathServer answers 500 for the paths in fail and 200 with {"path": …} otherwise; it records
// the paths it saw.
type pathServer struct {
	URL  string
	mu   sync.Mutex
	seen []string
}

func newPathServer(t *testing.T, fail ...string) *pathServer {
	t.Helper()
	ps := &pathServer{}
	bad := map[string]bool{}
	for _, f := range fail {
		bad[f] = true
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ps.mu.Lock()
		ps.seen = append(ps.seen, r.URL.Path)
		ps.mu.Unlock()
		if bad[r.URL.Path] {
			http.Error(w, "broken", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"path":` + jsonString(r.URL.Path) + `}`))
	}))
	t.Cleanup(srv.Close)
	ps.URL = srv.URL
	return ps
}

func (ps *pathServer) saw(path string) bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, p := range ps.seen {
		if p == path {
			return true
		}
	}
	return false
}

func TestLoopSequential(t *testing.T) {
	te := newTestEnv(t)
	ex := te.apply(`
workflow "l" {}
task "base" {
  uses   = builtin.transform
  inputs = { prefix = "p" }
}
loop "l" {
  for_each = ["a", "b", "c"]
  mode     = "sequential"

  task "nap" {
    uses   = builtin.sleep
    inputs = { duration = "15ms" }
  }
  task "t" {
    uses   = builtin.transform
    inputs = { v = "${task.base.output.prefix}-${upper(each.value)}", i = each.index, k = each.key, nap = task.nap.output.slept }
  }
  output = task.t.output.v
}
output "vs" { value = loop.l.output }
`, StartOptions{})
	wantRun(t, ex, "succeeded")
	l := wantNode(t, ex, "loop.l", "succeeded")
	wantJSON(t, "loop output", l.Output, `["p-A", "p-B", "p-C"]`)
	wantJSON(t, "outputs", ex.Outputs, `{"vs": ["p-A", "p-B", "p-C"]}`)
	if len(l.Iterations) != 3 {
		t.Fatalf("iterations: %s", jsonOf(t, l))
	}
	for i, it := range l.Iterations {
		if it.Status != "succeeded" || string(it.Key) != fmt.Sprint(i) {
			t.Fatalf("iteration %d: %s", i, jsonOf(t, it))
		}
		tn := it.Nodes["task.t"]
		if tn == nil || tn.Status != "succeeded" || tn.Attempts != 1 {
			t.Fatalf("iteration %d task.t: %s", i, jsonOf(t, it))
		}
		wantJSON(t, "task.t output", tn.Output, fmt.Sprintf(`{"v": "p-%s", "i": %d, "k": %d, "nap": "15ms"}`, string(rune('A'+i)), i, i))
		if i > 0 {
			prev := l.Iterations[i-1]
			if it.StartedAt == nil || prev.FinishedAt == nil || it.StartedAt.Before(*prev.FinishedAt) {
				t.Fatalf("iteration %d started before iteration %d finished: %s", i, i-1, jsonOf(t, l))
			}
		}
	}
}

func TestLoopParallel(t *testing.T) {
	cases := []struct {
		name        string
		concurrency string
		parallelism int
		want        int
	}{
		{name: "concurrency 2", concurrency: "concurrency = 2", want: 2},
		{name: "no concurrency: bounded by parallelism", parallelism: 3, want: 3},
		{name: "no bound", want: 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t)
			g := gaugeServerUntil(t, tc.want, 40*time.Millisecond)
			ex := te.apply(fmt.Sprintf(`
workflow "l" {}
loop "l" {
  for_each = { a = 1, b = 2, c = 3, d = 4, e = 5 }
  mode     = "parallel"
  %s

  task "call" {
    uses   = builtin.http
    inputs = { url = "%s/${each.key}/${each.value}" }
  }
  task "shape" {
    uses   = builtin.transform
    inputs = { path = task.call.output.body.path }
  }
  task "side" {
    uses   = builtin.transform
    inputs = { i = each.index }
  }
}
`, tc.concurrency, g.URL), StartOptions{Parallelism: tc.parallelism})
			wantRun(t, ex, "succeeded")
			if maxc, total := g.stats(); maxc != tc.want || total != 5 {
				t.Fatalf("max concurrent %d (want %d), requests %d", maxc, tc.want, total)
			}
			l := wantNode(t, ex, "loop.l", "succeeded")
			// The default output: the body's sinks by name, per key.
			wantJSON(t, "loop output", l.Output, `{
				"a": {"shape": {"path": "/a/1"}, "side": {"i": 0}},
				"b": {"shape": {"path": "/b/2"}, "side": {"i": 1}},
				"c": {"shape": {"path": "/c/3"}, "side": {"i": 2}},
				"d": {"shape": {"path": "/d/4"}, "side": {"i": 3}},
				"e": {"shape": {"path": "/e/5"}, "side": {"i": 4}}}`)
			if string(l.Iterations[4].Key) != `"e"` || l.Iterations[4].Nodes["task.call"].Status != "succeeded" {
				t.Fatalf("iteration e: %s", jsonOf(t, l.Iterations[4]))
			}
		})
	}
}

func TestLoopOnFailure(t *testing.T) {
	cases := []struct {
		onFailure  string
		mode       string
		loop, run  string
		output     string
		iterations []string
		sawThird   bool
	}{
		{onFailure: "stop_and_fail", mode: "sequential", loop: "failed", run: "failed",
			iterations: []string{"succeeded", "failed", "skipped"}},
		{onFailure: "stop_with_errors", mode: "sequential", loop: "completed_with_errors", run: "completed_with_errors",
			output: `[{"path": "/1"}, null, null]`, iterations: []string{"succeeded", "failed", "skipped"}},
		{onFailure: "continue", mode: "sequential", loop: "completed_with_errors", run: "completed_with_errors",
			output: `[{"path": "/1"}, null, {"path": "/3"}]`, iterations: []string{"succeeded", "failed", "succeeded"}, sawThird: true},
		// In parallel mode every iteration started before the failure: it runs to its end.
		{onFailure: "stop_and_fail", mode: "parallel", loop: "failed", run: "failed",
			iterations: []string{"succeeded", "failed", "succeeded"}, sawThird: true},
		{onFailure: "stop_with_errors", mode: "parallel", loop: "completed_with_errors", run: "completed_with_errors",
			output: `[{"path": "/1"}, null, {"path": "/3"}]`, iterations: []string{"succeeded", "failed", "succeeded"}, sawThird: true},
		{onFailure: "continue", mode: "parallel", loop: "completed_with_errors", run: "completed_with_errors",
			output: `[{"path": "/1"}, null, {"path": "/3"}]`, iterations: []string{"succeeded", "failed", "succeeded"}, sawThird: true},
	}
	for _, tc := range cases {
		t.Run(tc.onFailure+" "+tc.mode, func(t *testing.T) {
			te := newTestEnv(t)
			ps := newPathServer(t, "/2")
			ex := te.apply(fmt.Sprintf(`
workflow "l" {}
loop "l" {
  for_each   = [1, 2, 3]
  mode       = %q
  on_failure = %q

  task "call" {
    uses   = builtin.http
    inputs = { url = "%s/${each.value}" }
  }
  task "after_call" {
    uses   = builtin.transform
    inputs = { x = task.call.output }
  }
  output = task.call.output.body
}
task "next" {
  uses   = builtin.transform
  inputs = { got = loop.l.output }
}
`, tc.mode, tc.onFailure, ps.URL), StartOptions{})
			wantRun(t, ex, tc.run)
			l := wantNode(t, ex, "loop.l", tc.loop)
			if tc.output != "" {
				wantJSON(t, "loop output", l.Output, tc.output)
			}
			if len(l.Iterations) != 3 {
				t.Fatalf("iterations: %s", jsonOf(t, l))
			}
			for i, it := range l.Iterations {
				if it.Status != tc.iterations[i] {
					t.Fatalf("iteration %d: %s, want %s: %s", i, it.Status, tc.iterations[i], jsonOf(t, l))
				}
			}
			if ps.saw("/3") != tc.sawThird {
				t.Fatalf("third item requested: %v, want %v", ps.saw("/3"), tc.sawThird)
			}
			failed := l.Iterations[1]
			if failed.Error == nil || failed.Nodes["task.call"].Status != "failed" || failed.Nodes["task.after_call"].Status != "cancelled" {
				t.Fatalf("failed iteration: %s", jsonOf(t, failed))
			}
			if tc.loop == "failed" {
				wantErr(t, "loop.l", l, "retryable", "iteration 1")
				wantNode(t, ex, "task.next", "cancelled")
			} else {
				wantNode(t, ex, "task.next", "succeeded")
			}
		})
	}
}

func TestLoopNonCriticalBodyNode(t *testing.T) {
	te := newTestEnv(t)
	ex := te.apply(`
workflow "l" {}
loop "l" {
  for_each = [1, 2]

  task "optional" {
    uses          = builtin.fail
    fail_workflow = false
    when          = each.value == 2
    inputs        = { message = "optional broke" }
  }
  task "main" {
    uses   = builtin.transform
    inputs = { v = each.value }
  }
}
task "next" {
  uses   = builtin.transform
  inputs = { got = loop.l.output }
}
`, StartOptions{})
	wantRun(t, ex, "completed_with_errors")
	l := wantNode(t, ex, "loop.l", "completed_with_errors")
	wantJSON(t, "loop output", l.Output, `[{"optional": null, "main": {"v": 1}}, {"optional": null, "main": {"v": 2}}]`)
	if l.Iterations[0].Status != "succeeded" || l.Iterations[1].Status != "completed_with_errors" {
		t.Fatalf("iterations: %s", jsonOf(t, l))
	}
	if n := l.Iterations[1].Nodes["task.optional"]; n.Status != "failed" || l.Iterations[0].Nodes["task.optional"].Status != "skipped" {
		t.Fatalf("optional: %s", jsonOf(t, l))
	}
	wantNode(t, ex, "task.next", "succeeded")
}

func TestLoopBodyControlFlow(t *testing.T) {
	te := newTestEnv(t)
	ex := te.apply(`
workflow "l" {}
loop "l" {
  for_each = [5, 50]
  mode     = "parallel"

  switch "size" {
    case "big" { when = each.value > 10 }
    default "small" {}
  }
  task "big" {
    uses   = builtin.transform
    after  = [switch.size.big]
    inputs = { v = "big" }
  }
  task "small" {
    uses   = builtin.transform
    after  = [switch.size.small]
    inputs = { v = "small" }
  }
  join "j" {
    after    = [task.big, task.small]
    strategy = "all"
    merge    = "merge_object"
  }
  output = join.j.output
}
`, StartOptions{})
	wantRun(t, ex, "succeeded")
	l := wantNode(t, ex, "loop.l", "succeeded")
	wantJSON(t, "loop output", l.Output, `[{"v": "small"}, {"v": "big"}]`)
	if n := l.Iterations[1].Nodes["task.small"]; n.Status != "skipped" || n.Reason != "branch small not selected" {
		t.Fatalf("small: %s", jsonOf(t, n))
	}
}

func TestLoopEmpty(t *testing.T) {
	te := newTestEnv(t)
	ex := te.apply(`
workflow "l" {}
loop "l" {
  for_each = []
  task "t" {
    uses = builtin.transform
  }
}
task "next" {
  uses   = builtin.transform
  inputs = { got = loop.l.output }
}
`, StartOptions{})
	wantRun(t, ex, "succeeded")
	wantJSON(t, "loop output", wantNode(t, ex, "loop.l", "succeeded").Output, `[]`)
	wantJSON(t, "next", wantNode(t, ex, "task.next", "succeeded").Output, `{"got": []}`)
}
