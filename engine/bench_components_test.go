package engine

import (
	"github.com/fuscia/fuscia/engine/internal/runtime/wasm"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/lang"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/hostabi"
	"github.com/fuscia/fuscia/hostabi/guesttest"
)

// Benchmarks of issue 4 (Wasm components) through the real engine; `make bench` runs them and
// docs/performance.md records the figures. hostabi/bench_test.go measures the host alone.

const wasmForEach = `workflow "wasm" {}
component "text" { source = "fuscia/text" }
task "upper" {
  uses        = component.text.upper
  for_each    = range(1000)
  concurrency = 2
  inputs      = { text = format("item %d", each.value) }
}
output "done" { value = "yes" }
`

// BenchmarkComponentForEach1000 runs 1,000 attempts of the Go text component's upper task in
// one for_each, two at a time, strict, and reports tasks per second and the peak RSS. The
// module is compiled before the timer starts, as a cached module would be; start-RSS-MB is the
// resident set then (the compiler's heap included), before any attempt.
func BenchmarkComponentForEach1000(b *testing.B) {
	be := newBenchEnv(b)
	dir := filepath.Join(be.dir, "components")
	guesttest.Install(b, dir, "text")
	comps := &wasm.Dispatcher{Dir: dir, HostOptions: hostabi.Options{CacheDir: filepath.Join(be.dir, "cache")},
		Store: be.store, Artifacts: artifact.Dir{Root: filepath.Join(be.dir, "artifacts")}}
	be.engine.cfg.Tasks.(task.ByKind)[lang.UsesComponent] = comps
	b.Cleanup(func() {
		be.engine.Wait()
		comps.Close()
	})
	prog := be.program(b, "wasm.fsc.hcl", wasmForEach)
	comps.Preload(prog.Workflow)
	start := currentRSS()

	var peak, peakAnon atomic.Int64
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		for {
			if rss := currentRSS(); rss > peak.Load() {
				peak.Store(rss)
			}
			if a := anonRSS(); a > peakAnon.Load() {
				peakAnon.Store(a)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	b.ResetTimer()
	for range b.N {
		runOnce(b, be, prog)
	}
	b.StopTimer()
	close(stop)
	sampler.Wait()
	b.ReportMetric(float64(1000*b.N)/b.Elapsed().Seconds(), "tasks/s")
	b.ReportMetric(float64(start)/(1<<20), "start-RSS-MB")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-RSS-MB")
	b.ReportMetric(float64(peakAnon.Load())/(1<<20), "peak-anon-MB")
}
