package engine

import (
	"context"
	pluginrt "github.com/fuscia/fuscia/engine/internal/runtime/plugins"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/lang"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/plugin"
	"github.com/fuscia/fuscia/plugin/plugintest"
)

// Benchmarks of issue 5 (plugins) through the real engine and the real shell plugin; `make
// bench` runs them and docs/performance.md records the figures. plugin/bench_test.go measures
// the plugin host alone.

const shellForEach = `workflow "shell" {}
plugin "shell" { source = "shell" }
task "true" {
  uses        = plugin.shell.exec
  for_each    = range(1000)
  concurrency = 8
  inputs      = { command = "/bin/true", args = [] }
}
`

// BenchmarkShellForEach1000 runs 1,000 `shell exec /bin/true` nodes (one for_each, 8 at a
// time) through the engine, the plugin host and the shell plugin, and reports nodes per
// second. The plugin is started before the timer starts.
func BenchmarkShellForEach1000(b *testing.B) {
	be := newBenchEnv(b)
	bin := plugintest.Build(b, "plugins/shell", "shell")
	plugintest.Install(b, bin, filepath.Join(be.dir, "plugins"), "fuscia-plugin-shell")
	m := plugin.NewManager(plugin.Options{})
	pl := &pluginrt.Dispatcher{Manager: m, Env: plan.Env{Home: be.dir}, Store: be.store}
	be.engine.cfg.Tasks.(task.ByKind)[lang.UsesPlugin] = pl
	b.Cleanup(func() {
		be.engine.Wait()
		m.Close()
	})
	prog := be.program(b, "shell.fsc.hcl", shellForEach)
	pl.Preload(context.Background(), prog.Workflow, prog.Locks().Plugins)
	b.ResetTimer()
	for range b.N {
		runOnce(b, be, prog)
	}
	b.ReportMetric(float64(1000*b.N)/b.Elapsed().Seconds(), "nodes/s")
}

// BenchmarkSpawnTrue1000 is the baseline: 1,000 fork/exec/wait of /bin/true from Go, 8 at a
// time, with nothing else.
func BenchmarkSpawnTrue1000(b *testing.B) {
	for range b.N {
		var wg sync.WaitGroup
		next := make(chan struct{}, 1000)
		for range 1000 {
			next <- struct{}{}
		}
		close(next)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range next {
					if err := exec.Command("/bin/true").Run(); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	b.ReportMetric(float64(1000*b.N)/b.Elapsed().Seconds(), "spawns/s")
}

// BenchmarkShellChain100 runs a chain of 100 sequential `shell exec /bin/true` nodes through
// the engine, the plugin host and the shell plugin; compare its ms/node with
// BenchmarkSpawnTrueSeq100's ms/spawn measured in the same `go test` run. strict waits for
// the journal's fsync around each node (a shell node has effects); relaxed does not, which
// isolates what the plugin path itself costs.
func BenchmarkShellChain100(b *testing.B) {
	for _, d := range []string{"strict", "relaxed"} {
		b.Run(d, func(b *testing.B) { benchShellChain(b, d) })
	}
}

func benchShellChain(b *testing.B, durability string) {
	be := newBenchEnv(b)
	bin := plugintest.Build(b, "plugins/shell", "shell")
	plugintest.Install(b, bin, filepath.Join(be.dir, "plugins"), "fuscia-plugin-shell")
	m := plugin.NewManager(plugin.Options{})
	pl := &pluginrt.Dispatcher{Manager: m, Env: plan.Env{Home: be.dir}, Store: be.store}
	be.engine.cfg.Tasks.(task.ByKind)[lang.UsesPlugin] = pl
	b.Cleanup(func() {
		be.engine.Wait()
		m.Close()
	})
	prog := be.program(b, "shellchain.fsc.hcl", plugintest.ShellChain(100, durability))
	pl.Preload(context.Background(), prog.Workflow, prog.Locks().Plugins)
	b.ResetTimer()
	cpu0, sw0 := selfUsage()
	for range b.N {
		runOnce(b, be, prog)
	}
	cpu1, sw1 := selfUsage()
	nodes := float64(100 * b.N)
	b.ReportMetric(float64(b.Elapsed().Microseconds())/nodes/1000, "ms/node")
	// The engine's side alone (this process: engine, journal, plugin host; not the plugin or
	// its children), which a busy machine moves less than the wall time.
	b.ReportMetric(float64((cpu1-cpu0).Microseconds())/nodes, "host-cpu-µs/node")
	b.ReportMetric(float64(sw1-sw0)/nodes, "host-switches/node")
}

// BenchmarkSpawnTrueSeq100 is the sequential baseline: 100 fork/exec/wait of /bin/true from
// Go, one after another, with nothing else.
func BenchmarkSpawnTrueSeq100(b *testing.B) {
	for range b.N {
		plugintest.SpawnTrueSeq(b, 100)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(100*b.N)/1000, "ms/spawn")
}
