package engine

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
)

// TestInputsPreparedWhileUpstreamRuns: while an effect runs, the loop evaluates the inputs of
// a task that only waits for it (`after`) ahead, and the task then runs with them; a task that
// reads the running node's output is left to its schedule. (task.zero binds builtin.transform:
// a block is bound at its first schedule, never ahead.)
func TestInputsPreparedWhileUpstreamRuns(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/slow" {
			<-release
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"n":41}`))
	}))
	defer srv.Close()
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	te := newTestEnv(t)
	r := te.start(`workflow "w" { durability = "relaxed" }
variable "x" { default = 1 }
task "zero" {
  uses   = builtin.transform
  inputs = { z = 0 }
}
task "first" {
  uses   = builtin.http
  after  = [task.zero]
  inputs = { url = "`+srv.URL+`/fast" }
}
task "a" {
  uses   = builtin.http
  after  = [task.first]
  inputs = { url = "`+srv.URL+`/slow" }
}
task "after_only" {
  uses   = builtin.transform
  after  = [task.a]
  inputs = { v = var.x + 1, n = task.first.output.status }
}
task "reads_a" {
  uses   = builtin.transform
  inputs = { v = task.a.output.status }
}
`, StartOptions{})
	// Poll the loop until task.a runs and its dependents were looked at: what was prepared is
	// read on the loop, which owns it.
	type view struct{ running, afterOnly, readsA bool }
	probe := func() view {
		got := make(chan view, 1)
		r.post(func() {
			a := r.top.byName["a"]
			got <- view{
				running:   a.task != nil && a.status == "running" && len(r.toPrepare) == 0,
				afterOnly: r.top.byName["after_only"].prepared != nil,
				readsA:    r.top.byName["reads_a"].prepared != nil,
			}
		})
		select {
		case v := <-got:
			return v
		case <-time.After(runDeadline):
			t.Fatal("the run's loop did not answer")
			return view{}
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	var v view
	for {
		v = probe()
		if v.running && v.afterOnly || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !v.afterOnly {
		t.Errorf("task.after_only's inputs were not evaluated while task.a ran (%+v)", v)
	}
	if v.readsA {
		t.Error("task.reads_a's inputs were evaluated before task.a, whose output they read, had finished")
	}
	close(release)
	released = true
	ex := te.wait(r)
	wantRun(t, ex, "succeeded")
	n := wantNode(t, ex, "task.after_only", "succeeded")
	wantJSON(t, "task.after_only's output", n.Output, `{"v":2,"n":200}`)
	wantJSON(t, "task.reads_a's output", wantNode(t, ex, "task.reads_a", "succeeded").Output, `{"v":200}`)
}

// TestInputsAheadWaitForTheAttempt: the loop evaluates inputs ahead only once the attempt it
// has just dispatched runs, not on the turn that dispatched it, when the attempt's new
// goroutine would wait behind the evaluation (docs/performance.md, item 1, session 8). While
// task.a's attempt is held in its BeforeEffect hook, before it runs, the loop answers probes
// without evaluating task.after_only's inputs; once the attempt runs (its call held by the
// server), they are evaluated, and the task runs with them.
func TestInputsAheadWaitForTheAttempt(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		<-release
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"n":41}`))
	}))
	defer srv.Close()
	entered, proceed := make(chan struct{}), make(chan struct{})
	var releaseOnce, proceedOnce sync.Once
	defer releaseOnce.Do(func() { close(release) })
	defer proceedOnce.Do(func() { close(proceed) })
	te := newTestEnvWith(t, journal.Options{}, func(c *Config) {
		c.BeforeEffect = func(_, instance string) {
			if instance == "task.a" {
				close(entered)
				<-proceed
			}
		}
	})
	r := te.start(`workflow "w" {}
variable "x" { default = 1 }
task "zero" {
  uses   = builtin.transform
  inputs = { z = 0 }
}
task "a" {
  uses   = builtin.http
  after  = [task.zero]
  inputs = { url = "`+srv.URL+`" }
}
task "after_only" {
  uses   = builtin.transform
  after  = [task.a]
  inputs = { v = var.x + 1 }
}
`, StartOptions{})
	type view struct{ noted, prepared bool }
	probe := func() view {
		got := make(chan view, 1)
		r.post(func() {
			d := r.top.byName["after_only"]
			got <- view{noted: slices.Contains(r.toPrepare, d), prepared: d.prepared != nil}
		})
		select {
		case v := <-got:
			return v
		case <-time.After(runDeadline):
			t.Fatal("the run's loop did not answer")
			return view{}
		}
	}
	select {
	case <-entered:
	case <-time.After(runDeadline):
		t.Fatal("task.a's attempt did not start")
	}
	// Several turns of the loop while the attempt has not run: none evaluates ahead.
	for i := 0; i < 3; i++ {
		if v := probe(); !v.noted || v.prepared {
			t.Fatalf("probe %d while task.a's attempt had not run: %+v, want noted and not prepared", i, v)
		}
	}
	proceedOnce.Do(func() { close(proceed) })
	deadline := time.Now().Add(30 * time.Second)
	for v := probe(); !v.prepared; v = probe() {
		if time.Now().After(deadline) {
			t.Fatalf("task.after_only's inputs were not evaluated while task.a's call ran: %+v", v)
		}
		time.Sleep(5 * time.Millisecond)
	}
	releaseOnce.Do(func() { close(release) })
	ex := te.wait(r)
	wantRun(t, ex, "succeeded")
	wantJSON(t, "task.after_only's output", wantNode(t, ex, "task.after_only", "succeeded").Output, `{"v":2}`)
}
