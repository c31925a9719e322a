package engine

import (
	"context"
	"encoding/json"
	"github.com/fuscia/fuscia/engine/internal/runtime/builtins"
	"github.com/fuscia/fuscia/engine/task"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
)

// testEnv is a real store in a temporary directory and an engine on it.
type testEnv struct {
	t      *testing.T
	dir    string
	store  *journal.Store
	engine *Engine
	env    map[string]string
	closed bool
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	return newTestEnvWith(t, journal.Options{}, nil)
}

// newTestEnvWith is newTestEnv with the store's options and, when config is not nil, a
// change to the engine's configuration.
func newTestEnvWith(t *testing.T, opts journal.Options, config func(*Config)) *testEnv {
	t.Helper()
	dir := t.TempDir()
	st, err := journal.Open(filepath.Join(dir, "state"), opts)
	if err != nil {
		t.Fatal(err)
	}
	te := &testEnv{t: t, dir: dir, store: st, env: map[string]string{}}
	runner := builtin.New(builtin.Options{})
	cfg := Config{
		Store: st, Tasks: task.ByKind{lang.UsesBuiltin: builtins.New(runner)},
		Artifacts: artifact.Dir{Root: filepath.Join(dir, "artifacts")},
		Getenv:    func(k string) string { return te.env[k] },
	}
	if config != nil {
		config(&cfg)
	}
	te.engine = New(cfg)
	t.Cleanup(func() {
		runner.Close()
		te.closeStore()
	})
	return te
}

// runDeadline bounds how long a test waits for a run that should end. It is a liveness bound,
// not a timing assertion: compiling a Go guest under -race on a busy 2-core machine alone can take
// well over 10 seconds.
const runDeadline = 2 * time.Minute

// closeStore waits for every run of the env's engine, then closes its store (once); the
// store's files may then be read directly.
func (te *testEnv) closeStore() {
	te.t.Helper()
	if te.closed {
		return
	}
	te.closed = true
	done := make(chan struct{})
	go func() { te.engine.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(runDeadline):
		te.t.Errorf("runs still active %s after the test; the store is left open", runDeadline)
		return
	}
	if err := te.store.Close(); err != nil {
		te.t.Errorf("close store: %v", err)
	}
}

// write puts a workflow file (and any extra files) in the env's directory.
func (te *testEnv) write(name, src string) string {
	te.t.Helper()
	p := filepath.Join(te.dir, name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		te.t.Fatal(err)
	}
	return p
}

// program loads, checks and snapshots a workflow file the way `fuscia apply` does.
func (te *testEnv) program(file string, vars ...string) *Program {
	te.t.Helper()
	p := lang.NewParser()
	w, diags := p.Load(file, lang.Options{Planning: true, Vars: lang.VarInputs{Flags: vars}})
	if diags.HasErrors() {
		te.t.Fatalf("load %s: %s", file, diags.Error())
	}
	res, rdiags := plan.Resolve(w, plan.Env{Home: te.dir}, hcl.DiagError)
	if rdiags.HasErrors() {
		te.t.Fatalf("resolve: %s", rdiags.Error())
	}
	sources := map[string][]byte{}
	for name, f := range p.Files() {
		sources[name] = f.Bytes
	}
	blob, err := plan.Encode(plan.Build(w, res), w, sources, w.VarValues().AsValueMap())
	if err != nil {
		te.t.Fatal(err)
	}
	return NewProgram(w, blob)
}

// apply runs a workflow source to its end and returns the execution.
func (te *testEnv) apply(src string, opts StartOptions, vars ...string) *journal.Execution {
	te.t.Helper()
	return te.wait(te.start(src, opts, vars...))
}

// start starts a run of a workflow source and returns it without waiting.
func (te *testEnv) start(src string, opts StartOptions, vars ...string) *Run {
	te.t.Helper()
	prog := te.program(te.write("wf.fsc.hcl", src), vars...)
	r, err := te.engine.Start(context.Background(), prog, opts)
	if err != nil {
		te.t.Fatal(err)
	}
	return r
}

func (te *testEnv) wait(r *Run) *journal.Execution {
	te.t.Helper()
	select {
	case <-r.Done():
	case <-time.After(runDeadline):
		te.t.Fatalf("run did not end within %s", runDeadline)
	}
	ex, err := r.Result()
	if err != nil {
		te.t.Fatal(err)
	}
	return ex
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
