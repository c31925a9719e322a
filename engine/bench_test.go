package engine

import (
	"context"
	"fmt"
	"github.com/fuscia/fuscia/engine/internal/runtime/builtins"
	"github.com/fuscia/fuscia/engine/task"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
)

// Benchmarks of issue 3's performance targets; `make bench` runs them and docs/performance.md
// records the figures. Each uses a real Badger journal in a temporary directory.

func chainWorkflow(n int, durability string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "workflow \"chain\" {\n  durability = %q\n  max_parallel = 64\n}\n", durability)
	b.WriteString("task \"t0\" {\n  uses = builtin.transform\n  inputs = { n = 0 }\n}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "task \"t%d\" {\n  uses = builtin.transform\n  inputs = { n = task.t%d.output.n + 1 }\n}\n", i, i-1)
	}
	fmt.Fprintf(&b, "output \"n\" { value = task.t%d.output.n }\n", n-1)
	return b.String()
}

func fanOutWorkflow(n int) string {
	var b strings.Builder
	b.WriteString("workflow \"fan\" {\n  max_parallel = 64\n}\n")
	var after []string
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "task \"t%d\" {\n  uses = builtin.transform\n  inputs = { i = %d }\n}\n", i, i)
		after = append(after, fmt.Sprintf("task.t%d", i))
	}
	fmt.Fprintf(&b, "join \"all\" {\n  after = [%s]\n  merge = \"append\"\n}\n", strings.Join(after, ", "))
	b.WriteString("output \"n\" { value = length(join.all.output) }\n")
	return b.String()
}

const threeSteps = `workflow "three" {}
task "a" {
  uses   = builtin.transform
  inputs = { v = 1 }
}
task "b" {
  uses   = builtin.transform
  inputs = { v = task.a.output.v + 1 }
}
task "c" {
  uses   = builtin.transform
  inputs = { v = task.b.output.v + 1 }
}
output "v" { value = task.c.output.v }
`

// benchEnv is a real store in a temporary directory and an engine on it, for benchmarks.
type benchEnv struct {
	dir    string
	store  *journal.Store
	engine *Engine
}

func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	dir := b.TempDir()
	st, err := journal.Open(filepath.Join(dir, "state"), journal.Options{})
	if err != nil {
		b.Fatal(err)
	}
	runner := builtin.New(builtin.Options{})
	be := &benchEnv{dir: dir, store: st, engine: New(Config{Store: st, Tasks: task.ByKind{lang.UsesBuiltin: builtins.New(runner)}})}
	b.Cleanup(func() {
		be.engine.Wait()
		runner.Close()
		st.Close()
	})
	return be
}

func (be *benchEnv) program(b *testing.B, name, src string) *Program {
	b.Helper()
	file := filepath.Join(be.dir, name)
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	p := lang.NewParser()
	w, diags := p.Load(file, lang.Options{Planning: true})
	if diags.HasErrors() {
		b.Fatal(diags.Error())
	}
	res, rdiags := plan.Resolve(w, plan.Env{Home: be.dir}, hcl.DiagError)
	if rdiags.HasErrors() {
		b.Fatal(rdiags.Error())
	}
	sources := map[string][]byte{}
	for n, f := range p.Files() {
		sources[n] = f.Bytes
	}
	blob, err := plan.Encode(plan.Build(w, res), w, sources, w.VarValues().AsValueMap())
	if err != nil {
		b.Fatal(err)
	}
	return NewProgram(w, blob)
}

func runOnce(b *testing.B, te *benchEnv, prog *Program) {
	r, err := te.engine.Start(context.Background(), prog, StartOptions{})
	if err != nil {
		b.Fatal(err)
	}
	<-r.Done()
	status, runErr, err := r.Status()
	if err != nil || status != "succeeded" {
		b.Fatalf("run: %v %s %v", err, status, runErr)
	}
}

// BenchmarkChain1000 reports the engine's overhead per node on a 1,000-node chain of
// builtin.transform, strict and relaxed.
func BenchmarkChain1000(b *testing.B) {
	for _, d := range []string{"strict", "relaxed"} {
		b.Run(d, func(b *testing.B) {
			te := newBenchEnv(b)
			prog := te.program(b, "chain.fsc.hcl", chainWorkflow(1000, d))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				runOnce(b, te, prog)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*1000), "µs/node")
		})
	}
}

// BenchmarkFanOut1000 is a 1,000-node wide fan-out joined by one join, strict.
func BenchmarkFanOut1000(b *testing.B) {
	te := newBenchEnv(b)
	prog := te.program(b, "fan.fsc.hcl", fanOutWorkflow(1000))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runOnce(b, te, prog)
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/run")
}

// BenchmarkThreeStepLatency reports p50 and p99 of one 3-step run at a time, strict.
func BenchmarkThreeStepLatency(b *testing.B) {
	te := newBenchEnv(b)
	prog := te.program(b, "three.fsc.hcl", threeSteps)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		runOnce(b, te, prog)
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkThroughput runs many 3-step runs at once in one process, strict, and reports runs per
// second and the peak RSS of the process.
func BenchmarkThroughput(b *testing.B) {
	te := newBenchEnv(b)
	prog := te.program(b, "three.fsc.hcl", threeSteps)
	const inFlight = 256
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
	sem := make(chan struct{}, inFlight)
	var wg sync.WaitGroup
	for i := 0; i < b.N; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			runOnce(b, te, prog)
		}()
	}
	wg.Wait()
	b.StopTimer()
	close(stop)
	sampler.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-RSS-MB")
	b.ReportMetric(float64(peakAnon.Load())/(1<<20), "peak-anon-MB")
}

// BenchmarkForEach100k runs one for_each over 100,000 items of 1 KiB, relaxed, and reports the
// peak RSS.
func BenchmarkForEach100k(b *testing.B) {
	te := newBenchEnv(b)
	src := `workflow "big" {
  durability   = "relaxed"
  max_parallel = 64
  data {
    max_node_output = "1GiB"
    max_total       = "1GiB"
  }
}
task "items" {
  uses     = builtin.transform
  for_each = setproduct(range(1000), range(100))
  inputs   = { i = each.index, pad = format("%01024d", each.index) }
}
output "done" { value = "yes" }
`
	prog := te.program(b, "big.fsc.hcl", src)
	var peak, peakHeap atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if rss := currentRSS(); rss > peak.Load() {
				peak.Store(rss)
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if h := int64(ms.HeapInuse); h > peakHeap.Load() {
				peakHeap.Store(h)
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runOnce(b, te, prog)
	}
	b.StopTimer()
	close(stop)
	<-done
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-RSS-MB")
	b.ReportMetric(float64(peakHeap.Load())/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/run")
}

// currentRSS reads the resident set size of this process (Linux), or the Go heap elsewhere.
func currentRSS() int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err == nil {
		var size, rss int64
		if _, err := fmt.Sscanf(string(data), "%d %d", &size, &rss); err == nil {
			return rss * int64(os.Getpagesize())
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.Sys)
}

// anonRSS is the anonymous part of the resident set (RssAnon in /proc/self/status): the Go heap,
// stacks and Badger's allocations, without the reclaimable page cache of Badger's memory-mapped
// files that RSS also counts. 0 where it cannot be read.
func anonRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb)
			return kb << 10
		}
	}
	return 0
}
