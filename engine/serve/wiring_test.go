package serve

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/internal/metrics"
	"github.com/fuscia/fuscia/engine/internal/runtime/builtins"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/local"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
	"go.opentelemetry.io/otel/metric/noop"
)

// TestEngineConfig: what a Server needs of its engine is set whatever the caller gave, and
// the caller's own OnRunEnd and Metrics are kept.
func TestEngineConfig(t *testing.T) {
	rec, err := metrics.New(noop.NewMeterProvider().Meter("test"))
	if err != nil {
		t.Fatal(err)
	}
	own, err := metrics.New(noop.NewMeterProvider().Meter("own"))
	if err != nil {
		t.Fatal(err)
	}
	srv := New(Config{Metrics: rec})
	cfg := srv.EngineConfig(engine.Config{})
	if !cfg.ParkWaits || cfg.OnRunEnd == nil || cfg.Metrics != rec {
		t.Fatalf("ParkWaits %v, OnRunEnd set %v, Metrics the server's %v; want all", cfg.ParkWaits, cfg.OnRunEnd != nil, cfg.Metrics == rec)
	}
	if cfg := srv.EngineConfig(engine.Config{Metrics: own}); cfg.Metrics != own {
		t.Fatal("the caller's recorder was replaced")
	}
	ocfg := srv.OwnerConfig(local.OwnerConfig{Home: "h"})
	if ocfg.Extend == nil || ocfg.Signaled == nil || ocfg.Home != "h" {
		t.Fatalf("owner config %+v: want serve's Extend and Signaled, and the caller's Home", ocfg)
	}
}

// TestNewEngineParks: an engine from NewEngine, given a config without ParkWaits, parks a run
// at its wait, tells the caller's OnRunEnd and then the server, whose wait index holds the run.
func TestNewEngineParks(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "w.fsc.hcl")
	if err := os.WriteFile(file, []byte(`workflow "w" {}
wait "approve" {
  approval { message = "ok?" }
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := journal.Open(filepath.Join(t.TempDir(), "state"), journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runner := builtin.New(builtin.Options{})
	srv := New(Config{Paths: []string{dir}, ReloadInterval: time.Hour})
	var mu sync.Mutex
	var ended []string
	eng := srv.NewEngine(engine.Config{Store: st, Tasks: task.ByKind{lang.UsesBuiltin: builtins.New(runner)},
		OnRunEnd: func(r *engine.Run) {
			mu.Lock()
			defer mu.Unlock()
			ended = append(ended, r.ID())
		}})
	t.Cleanup(func() {
		eng.Wait()
		runner.Close()
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	if srv.eng != eng || srv.store != st {
		t.Fatal("NewEngine did not attach the engine and its store")
	}
	prog, err := loadProgram(file)
	if err != nil {
		t.Fatal(err)
	}
	r, err := eng.Start(context.Background(), prog, engine.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Wait, unlike Done, returns once OnRunEnd has returned too.
	waited := make(chan struct{})
	go func() { eng.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(30 * time.Second):
		t.Fatal("the run's loop did not end at its wait")
	}
	if r.Detached() != engine.DetachedParked {
		t.Fatalf("detached %q, want parked", r.Detached())
	}
	mu.Lock()
	got := ended
	mu.Unlock()
	if len(got) != 1 || got[0] != r.ID() {
		t.Fatalf("the caller's OnRunEnd saw %v, want the run", got)
	}
	if srv.parked.len() != 1 {
		t.Fatalf("the wait index holds %d runs, want the parked one", srv.parked.len())
	}
}
