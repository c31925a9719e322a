package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/internal/runtime/builtins"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
)

// ownWith owns home with cfg (its Home set), closed at the test's end.
func ownWith(t *testing.T, home string, cfg OwnerConfig) *Owner {
	t.Helper()
	cfg.Home = home
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o, err := Own(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		o.Engine.Wait()
		if err := o.Close(); err != nil {
			t.Error(err)
		}
	})
	return o
}

// forgetter is an OwnerConfig.Forget that records what it is told, checks that the runs'
// records are still there when it is, and fails while fail is set.
type forgetter struct {
	st func() *journal.Store

	mu     sync.Mutex
	fail   error
	told   []string
	absent []string // told while their record was already deleted
}

func (f *forgetter) forget(_ context.Context, ids ...string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.told = append(f.told, ids...)
	for _, id := range ids {
		if _, err := f.st().Summary(id); err != nil {
			f.absent = append(f.absent, id)
		}
	}
	return f.fail
}

func (f *forgetter) failWith(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = err
}

func (f *forgetter) take() (told, absent []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	told, absent = f.told, f.absent
	f.told, f.absent = nil, nil
	slices.Sort(told)
	return told, absent
}

// TestPruneForgets: prune (through the API, as `fuscia executions prune` does, and the owner's
// own, as serve's retention does) tells Forget the runs it deletes while their records are
// still there; an error of Forget stops the prune with the records kept, and a later prune
// finishes the job.
func TestPruneForgets(t *testing.T) {
	home := shortHome(t)
	var o *Owner
	f := &forgetter{st: func() *journal.Store { return o.Store }}
	o = ownWith(t, home, OwnerConfig{Forget: f.forget})
	b := openBackend(t, home)
	ctx := context.Background()
	old := time.Now().Add(-48 * time.Hour)
	var olds []string
	for i := range 3 {
		id := startRun(t, o.Store, "a")
		finishRun(t, o.Store, id, journal.StatusSucceeded, old.Add(time.Duration(i)*time.Millisecond))
		olds = append(olds, id)
	}
	recent := startRun(t, o.Store, "a")
	finishRun(t, o.Store, recent, journal.StatusSucceeded, time.Time{})
	cutoff := time.Now().Add(-24 * time.Hour)

	f.failWith(errors.New("the NATS server does not answer"))
	if ids, err := b.Prune(ctx, cutoff); err == nil || !strings.Contains(err.Error(), "the NATS server does not answer") || len(ids) != 0 {
		t.Fatalf("prune with Forget failing = %v, %v; want Forget's error and nothing pruned", ids, err)
	}
	if told, absent := f.take(); !slices.Equal(told, olds) || len(absent) != 0 {
		t.Fatalf("Forget told %v (absent %v), want %v", told, absent, olds)
	}
	if runs, err := o.Store.List(journal.Filter{}); err != nil || len(runs) != 4 {
		t.Fatalf("after the failed prune: %d runs, %v; want the 4 kept", len(runs), err)
	}

	f.failWith(nil)
	ids, err := b.Prune(ctx, cutoff)
	slices.Sort(ids)
	if err != nil || !slices.Equal(ids, olds) {
		t.Fatalf("prune = %v, %v; want %v", ids, err, olds)
	}
	if told, absent := f.take(); !slices.Equal(told, olds) || len(absent) != 0 {
		t.Fatalf("Forget told %v (absent when told: %v), want %v before their deletion", told, absent, olds)
	}
	for _, id := range olds {
		if _, err := o.Store.Summary(id); !errors.Is(err, journal.ErrNotFound) {
			t.Errorf("pruned run %s: %v", id, err)
		}
	}

	// Nothing to prune: Forget is not called.
	if ids, err := b.Prune(ctx, cutoff); err != nil || len(ids) != 0 {
		t.Fatalf("second prune = %v, %v", ids, err)
	}
	if told, _ := f.take(); len(told) != 0 {
		t.Fatalf("Forget told %v with nothing pruned", told)
	}

	// The owner's own prune (serve's retention) calls it too.
	p, err := o.Prune(ctx, time.Now().Add(time.Hour))
	if err != nil || !slices.Equal(p.ExecutionIDs, []string{recent}) {
		t.Fatalf("owner prune = %v, %v", p.ExecutionIDs, err)
	}
	if told, absent := f.take(); !slices.Equal(told, []string{recent}) || len(absent) != 0 {
		t.Fatalf("Forget told %v (absent %v), want [%s]", told, absent, recent)
	}
}

// program loads and plans a workflow file as `fuscia apply` does.
func program(t *testing.T, file string) *engine.Program {
	t.Helper()
	p := lang.NewParser()
	w, diags := p.Load(file, lang.Options{Planning: true})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	res, rdiags := plan.Resolve(w, plan.Env{Home: filepath.Dir(file)}, hcl.DiagError)
	if rdiags.HasErrors() {
		t.Fatal(rdiags.Error())
	}
	sources := map[string][]byte{}
	for name, f := range p.Files() {
		sources[name] = f.Bytes
	}
	blob, err := plan.Encode(plan.Build(w, res), w, sources, w.VarValues().AsValueMap())
	if err != nil {
		t.Fatal(err)
	}
	return engine.NewProgram(w, blob)
}

// TestOwnerArtifactsElsewhere: OwnerConfig.Artifacts replaces the home's artifact directory
// for the engine (a run's spilled output lands there), the API and prune.
func TestOwnerArtifactsElsewhere(t *testing.T) {
	home := shortHome(t)
	elsewhere := artifact.NewDir(filepath.Join(t.TempDir(), "elsewhere"))
	runner := builtin.New(builtin.Options{})
	t.Cleanup(runner.Close)
	var given artifact.Store
	o := ownWith(t, home, OwnerConfig{
		Artifacts: elsewhere,
		NewEngine: func(st *journal.Store, arts artifact.Store) *engine.Engine {
			given = arts
			return engine.New(engine.Config{Store: st, Artifacts: arts, Tasks: task.ByKind{lang.UsesBuiltin: builtins.New(runner)}})
		},
	})
	if given != artifact.Store(elsewhere) || o.Artifacts != artifact.Store(elsewhere) {
		t.Fatalf("the engine got %#v and the owner has %#v; want the configured store", given, o.Artifacts)
	}
	file := filepath.Join(t.TempDir(), "wf.fsc.hcl")
	if err := os.WriteFile(file, []byte(`
workflow "spill" {
  data {
    max_node_output = "64"
    on_exceed       = "spill"
  }
}
task "big" {
  uses   = builtin.transform
  inputs = { text = "${join("", [for i in range(20) : "abcdefgh"])}" }
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := o.Engine.Start(ctx, program(t, file), engine.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Done():
	case <-time.After(time.Minute):
		t.Fatal("the run did not end")
	}
	ex, err := r.Result()
	if err != nil || ex.Status != journal.StatusSucceeded {
		t.Fatalf("run %v, %v", ex, err)
	}
	refs, err := elsewhere.List(ctx, r.ID())
	if err != nil || len(refs) != 1 {
		t.Fatalf("artifacts in the configured store: %v, %v; want the spilled output", refs, err)
	}
	if _, err := os.Stat(filepath.Join(home, artifactsName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the home's artifact directory: %v; want none", err)
	}

	// The API reads them from there.
	b := openBackend(t, home)
	listed, err := b.Artifacts(ctx, r.ID())
	if err != nil || len(listed.Artifacts) != 1 {
		t.Fatalf("API artifacts: %+v, %v", listed, err)
	}
	data, _, err := b.Artifact(ctx, r.ID(), refs[0].ID)
	if err != nil || !strings.Contains(string(data), "abcdefgh") {
		t.Fatalf("API artifact: %q, %v", data, err)
	}

	// And prune deletes them there.
	ids, err := b.Prune(ctx, time.Now().Add(time.Hour))
	if err != nil || !slices.Equal(ids, []string{r.ID()}) {
		t.Fatalf("prune = %v, %v", ids, err)
	}
	if refs, err := elsewhere.List(ctx, r.ID()); err != nil || len(refs) != 0 {
		t.Fatalf("artifacts after the prune: %v, %v", refs, err)
	}
}
