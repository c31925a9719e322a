package engine

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
)

// TestIsPureNode: which nodes a strict run may leave undurable until the next effect.
func TestIsPureNode(t *testing.T) {
	te := newTestEnv(t)
	prog := te.program(te.write("kinds.fsc.hcl", `workflow "kinds" {}

task "shape" {
  uses   = builtin.transform
  inputs = { v = upper("a") }
}

task "stop" {
  uses   = builtin.fail
  when   = false
  inputs = { message = "no" }
}

task "fetch" {
  uses   = builtin.http
  inputs = { url = "http://127.0.0.1:1/x" }
}

task "nap" {
  uses   = builtin.sleep
  inputs = { duration = "1ms" }
}

switch "route" {
  case "big" {
    when = task.shape.output.v == "A"
  }
  default "small" {}
}

join "both" {
  after = [task.shape, task.nap]
}

join "some" {
  after    = [task.shape, task.nap]
  strategy = "m_of_n"
  m        = 1
}

loop "rows" {
  for_each = [1, 2]
  task "row" {
    uses   = builtin.transform
    inputs = { r = each.value }
  }
}

wait "later" {
  duration = "1s"
}
`))
	want := map[string]bool{
		"task.shape": true, "task.stop": true, "switch.route": true, "join.both": true,
		"loop.rows/task.row": true,
		"task.fetch":         false, "task.nap": false, "join.some": false, "loop.rows": false,
		"wait.later": false,
	}
	for _, n := range prog.Workflow.Nodes {
		w, ok := want[n.Addr.String()]
		if !ok {
			t.Errorf("%s: not in the table", n.Addr)
			continue
		}
		if got := isPureNode(n); got != w {
			t.Errorf("isPureNode(%s) = %v, want %v", n.Addr, got, w)
		}
	}
	// A node whose expressions call a function that is not pure is not pure, whatever it is.
	shape := prog.Workflow.Node(lang.Addr{Kind: lang.KindTask, Name: "shape"})
	if shape.CallsOnly(func(name string) bool { return name != "upper" }) {
		t.Fatal("CallsOnly did not see upper()")
	}
}

// pureChain is a strict chain of n transforms, a switch and a join.
func pureChain(n int) string {
	var b strings.Builder
	b.WriteString("workflow \"pure\" {}\n")
	b.WriteString("task \"t0\" {\n  uses = builtin.transform\n  inputs = { n = 0 }\n}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "task \"t%d\" {\n  uses = builtin.transform\n  inputs = { n = task.t%d.output.n + 1 }\n}\n", i, i-1)
	}
	fmt.Fprintf(&b, `switch "route" {
  case "many" {
    when = task.t%[1]d.output.n > 3
  }
  default "few" {}
}
task "many" {
  uses   = builtin.transform
  after  = [switch.route.many]
  inputs = { n = task.t%[1]d.output.n }
}
join "end" {
  after = [task.many, task.t%[1]d]
}
output "n" { value = task.many.output.n }
`, n-1)
	return b.String()
}

// TestStrictPureNodesDoNotSync: a strict run of pure nodes syncs its journal at its start and
// its end only; each node's successors start without waiting for a sync. The store holds
// relaxed writes until something syncs them, so that no timer sync blurs the count.
func TestStrictPureNodesDoNotSync(t *testing.T) {
	te := newTestEnvWith(t, journal.Options{HoldRelaxed: true}, nil)
	prog := te.program(te.write("pure.fsc.hcl", pureChain(20)))
	before := te.store.Syncs()
	ex := te.wait(startProg(t, te, prog))
	wantRun(t, ex, "succeeded")
	wantJSON(t, "outputs", ex.Outputs, `{"n": 19}`)
	wantNode(t, ex, "switch.route", "succeeded")
	wantNode(t, ex, "join.end", "succeeded")
	// The plan, the run's start and its end (and the seal of a WAL segment, should its
	// 10-second checkpoint fall in): 23 nodes, and not one sync of their own. Before, 26.
	if syncs := te.store.Syncs() - before; syncs > 4 {
		t.Errorf("a strict run of 23 pure nodes made %d WAL syncs; want at most 4 (plan, start, end, a checkpoint)", syncs)
	}
}

// TestEffectChainOneSyncPerNode: in a chain of effects the barrier before each one has nothing
// left to sync — the effect before it made its result durable — so a chain costs one sync per
// node, as before.
func TestEffectChainOneSyncPerNode(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(srv.Close)
	te := newTestEnvWith(t, journal.Options{HoldRelaxed: true}, nil)
	const n = 6
	var b strings.Builder
	b.WriteString("workflow \"effects\" {}\n")
	fmt.Fprintf(&b, "task \"h0\" {\n  uses = builtin.http\n  inputs = { url = %q }\n}\n", srv.URL+"/0")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "task \"h%d\" {\n  uses = builtin.http\n  inputs = { url = \"%s/%d?s=${task.h%d.output.status}\" }\n}\n", i, srv.URL, i, i-1)
	}
	prog := te.program(te.write("effects.fsc.hcl", b.String()))
	before := te.store.Syncs()
	ex := te.wait(startProg(t, te, prog))
	wantRun(t, ex, "succeeded")
	if syncs := te.store.Syncs() - before; syncs > n+4 {
		t.Errorf("a strict chain of %d effects made %d WAL syncs; want at most %d (one per effect, plan, start, end, a checkpoint)", n, syncs, n+4)
	}
}

// TestBarrierBeforeEffect: when an effect starts, the pure results it follows are durable —
// the store holds relaxed writes until something syncs them, and the effect itself (an HTTP
// server) reads the journal as a resumed run would find it. The hook sees every effect, and
// only effects.
func TestBarrierBeforeEffect(t *testing.T) {
	var (
		mu     sync.Mutex
		seen   = map[string]map[string]string{} // path → node → status when it was called
		hooked []string
		te     *testEnv
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sums, err := te.store.List(journal.Filter{})
		status := map[string]string{}
		if err == nil && len(sums) == 1 {
			if ex, err := te.store.Execution(sums[0].ID); err == nil {
				for addr, n := range ex.Nodes {
					status[addr] = n.Status
				}
			}
		}
		mu.Lock()
		seen[r.URL.Path] = status
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"n": 5}`))
	}))
	t.Cleanup(srv.Close)
	te = newTestEnvWith(t, journal.Options{HoldRelaxed: true}, func(c *Config) {
		c.BeforeEffect = func(_, instance string) {
			mu.Lock()
			hooked = append(hooked, instance)
			mu.Unlock()
		}
	})
	src := fmt.Sprintf(`workflow "barrier" {}

task "p" {
  uses   = builtin.transform
  inputs = { n = 1 }
}

task "e1" {
  uses   = builtin.http
  inputs = { url = "%[1]s/e1?n=${task.p.output.n}" }
}

task "q" {
  uses   = builtin.transform
  inputs = { n = task.e1.output.body.n + task.p.output.n }
}

switch "route" {
  case "big" {
    when = task.q.output.n > 3
  }
  default "small" {}
}

task "e2" {
  uses     = builtin.http
  for_each = ["x"]
  after    = [switch.route.big]
  inputs   = { url = "%[1]s/e2?n=${task.q.output.n}" }
}

output "n" { value = task.q.output.n }
`, srv.URL)
	ex := te.apply(src, StartOptions{})
	wantRun(t, ex, "succeeded")
	wantJSON(t, "outputs", ex.Outputs, `{"n": 6}`)
	mu.Lock()
	defer mu.Unlock()
	for path, want := range map[string][]string{
		"/e1": {"task.p"},
		"/e2": {"task.p", "task.e1", "task.q", "switch.route"},
	} {
		got, ok := seen[path]
		if !ok {
			t.Errorf("%s was never called", path)
			continue
		}
		for _, node := range want {
			if got[node] != journal.StatusSucceeded {
				t.Errorf("when %s was called the journal had %s %q; want succeeded, durable before the effect (journal: %v)", path, node, got[node], got)
			}
		}
	}
	slices.Sort(hooked)
	if want := []string{"task.e1", "task.e2[0]"}; !slices.Equal(hooked, want) {
		t.Errorf("BeforeEffect saw %v, want %v", hooked, want)
	}
}

// startProg starts a run of prog.
func startProg(t *testing.T, te *testEnv, prog *Program) *Run {
	t.Helper()
	r, err := te.engine.Start(t.Context(), prog, StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// goroutineTasks passes every call on, recording the goroutine each ran on.
type goroutineTasks struct {
	task.Dispatcher
	mu sync.Mutex
	on []string // "goroutine N", in call order
}

func (g *goroutineTasks) Call(ctx context.Context, b task.Binding, call task.Call) outcome.Result {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(string(buf), " [")
	g.mu.Lock()
	g.on = append(g.on, id)
	g.mu.Unlock()
	return g.Dispatcher.Call(ctx, b, call)
}

// TestPureAttemptsRunOnTheLoop: the attempts of pure builtins run on the run's own goroutine,
// maxInline of them in a turn of the loop; the one past the bound runs on a goroutine of its
// own, and the loop takes its other messages before it goes on. Each attempt's start is
// journaled with its result, in order, and no later than it.
func TestPureAttemptsRunOnTheLoop(t *testing.T) {
	te := newTestEnv(t)
	rec := &goroutineTasks{Dispatcher: te.engine.cfg.Tasks}
	te.engine.cfg.Tasks = rec
	const n = 100
	ex := te.wait(startProg(t, te, te.program(te.write("chain.fsc.hcl", transformChain(n)))))
	wantRun(t, ex, "succeeded")
	wantJSON(t, "outputs", ex.Outputs, fmt.Sprintf(`{"n": %d}`, n-1))
	if len(rec.on) != n {
		t.Fatalf("%d calls; want %d", len(rec.on), n)
	}
	loop := rec.on[0]
	var elsewhere []int
	for i, id := range rec.on {
		if id != loop {
			elsewhere = append(elsewhere, i)
		}
	}
	// t0 … t63 in the first turn, t64 on its own goroutine, t65 … t99 in the turn that takes
	// t64's result.
	if !slices.Equal(elsewhere, []int{maxInline}) {
		t.Errorf("the calls of t%v ran off the loop's goroutine; want t%d only", elsewhere, maxInline)
	}
	entries := te.entries(ex.ID)
	for i := 0; i < n; i++ {
		node := fmt.Sprintf("task.t%d", i)
		var mine []journal.Entry
		for _, e := range entries {
			if e.Node == node {
				mine = append(mine, e)
			}
		}
		if len(mine) != 2 || mine[0].Type != journal.AttemptStarted || mine[1].Type != journal.NodeFinished ||
			mine[1].Seq != mine[0].Seq+1 || mine[1].Time.Before(mine[0].Time) {
			t.Fatalf("%s's entries: %+v; want attempt_started, then node_finished next and no earlier", node, mine)
		}
	}
}
