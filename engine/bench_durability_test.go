package engine

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Benchmarks of issue 20's item 1 (durability where it matters): the cost of one more node in
// a strict chain, measured as (chain100 − chain10) / 90 so that what a run costs once (its
// start, its end, its plan) cancels out. Each uses a real journal on disk; `make bench` runs
// them and docs/performance.md records the figures.

// transformChain is a strict chain of n builtin.transform nodes, each reading the one before.
func transformChain(n int) string {
	var b strings.Builder
	b.WriteString("workflow \"chain\" {\n  durability = \"strict\"\n}\n")
	b.WriteString("task \"t0\" {\n  uses = builtin.transform\n  inputs = { n = 0 }\n}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "task \"t%d\" {\n  uses = builtin.transform\n  inputs = { n = task.t%d.output.n + 1 }\n}\n", i, i-1)
	}
	fmt.Fprintf(&b, "output \"n\" { value = task.t%d.output.n }\n", n-1)
	return b.String()
}

// httpChain is a strict chain of n builtin.http nodes against base, each reading the one
// before: the cheapest effect there is, a request to a server on this machine.
func httpChain(n int, base string) string {
	var b strings.Builder
	b.WriteString("workflow \"chain\" {\n  durability = \"strict\"\n}\n")
	fmt.Fprintf(&b, "task \"t0\" {\n  uses = builtin.http\n  inputs = { url = \"%s/0\" }\n}\n", base)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "task \"t%d\" {\n  uses = builtin.http\n  inputs = { url = \"%s/%d?after=${task.t%d.output.status}\" }\n}\n", i, base, i, i-1)
	}
	fmt.Fprintf(&b, "output \"status\" { value = task.t%d.output.status }\n", n-1)
	return b.String()
}

// sleepChain is a strict chain of n builtin.sleep nodes of 0s: the cheapest effect there is,
// which isolates what the durability of an effect costs (its barrier and its synced result).
func sleepChain(n int) string {
	var b strings.Builder
	b.WriteString("workflow \"chain\" {\n  durability = \"strict\"\n}\n")
	b.WriteString("task \"t0\" {\n  uses = builtin.sleep\n  inputs = { duration = \"0s\" }\n}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "task \"t%d\" {\n  uses = builtin.sleep\n  after = [task.t%d]\n  inputs = { duration = \"0s\" }\n}\n", i, i-1)
	}
	fmt.Fprintf(&b, "output \"slept\" { value = task.t%d.output.slept }\n", n-1)
	return b.String()
}

// mixedChain alternates a pure node and an effect: transform, http, transform, http…, so that
// every effect has a barrier to pass.
func mixedChain(n int, base string) string {
	var b strings.Builder
	b.WriteString("workflow \"chain\" {\n  durability = \"strict\"\n}\n")
	b.WriteString("task \"t0\" {\n  uses = builtin.transform\n  inputs = { n = 0 }\n}\n")
	for i := 1; i < n; i++ {
		if i%2 == 1 {
			fmt.Fprintf(&b, "task \"t%d\" {\n  uses = builtin.http\n  inputs = { url = \"%s/%d?n=${task.t%d.output.n}\" }\n}\n", i, base, i, i-1)
		} else {
			fmt.Fprintf(&b, "task \"t%d\" {\n  uses = builtin.transform\n  inputs = { n = task.t%d.output.status + %d }\n}\n", i, i-1, i)
		}
	}
	fmt.Fprintf(&b, "output \"last\" { value = task.t%d.output }\n", n-1)
	return b.String()
}

// pureSleepChain alternates a pure node and the cheapest effect: transform, sleep0,
// transform, sleep0…, so that every effect's barrier has a pure node's result to sync, and
// nothing but the barrier and the effect's own durability differs from the transform chain.
func pureSleepChain(n int) string {
	var b strings.Builder
	b.WriteString("workflow \"chain\" {\n  durability = \"strict\"\n}\n")
	b.WriteString("task \"t0\" {\n  uses = builtin.transform\n  inputs = { n = 0 }\n}\n")
	last := 0 // the last transform
	for i := 1; i < n; i++ {
		if i%2 == 1 {
			fmt.Fprintf(&b, "task \"t%d\" {\n  uses = builtin.sleep\n  after = [task.t%d]\n  inputs = { duration = \"0s\" }\n}\n", i, i-1)
		} else {
			fmt.Fprintf(&b, "task \"t%d\" {\n  uses = builtin.transform\n  after = [task.t%d]\n  inputs = { n = task.t%d.output.n + 1 }\n}\n", i, i-1, last)
			last = i
		}
	}
	fmt.Fprintf(&b, "output \"n\" { value = task.t%d.output.n }\n", last)
	return b.String()
}

// BenchmarkStrictChainPerNode reports what one more node costs a strict chain, in µs, and the
// WAL syncs it costs: transform (pure), sleep0 (the cheapest effect), http (an effect that
// reaches a server), mixed (a pure node before each HTTP effect) and pure-sleep0 (a pure node
// before each sleep0: the barrier that has something to sync).
func BenchmarkStrictChainPerNode(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	for _, c := range []struct {
		name  string
		chain func(n int) string
	}{
		{"transform", transformChain},
		{"sleep0", sleepChain},
		{"http", func(n int) string { return httpChain(n, srv.URL) }},
		{"mixed", func(n int) string { return mixedChain(n, srv.URL) }},
		{"pure-sleep0", pureSleepChain},
	} {
		b.Run(c.name, func(b *testing.B) {
			te := newBenchEnv(b)
			short := te.program(b, "short.fsc.hcl", c.chain(10))
			long := te.program(b, "long.fsc.hcl", c.chain(100))
			runOnce(b, te, short) // warm the HTTP connection and the store
			var shortTook, longTook, shortSync, longSync, shortCPU, longCPU time.Duration
			var shortSyncs, longSyncs uint64
			var shortSwitches, longSwitches int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c0, w0 := selfUsage()
				s0, d0, t0 := te.store.Syncs(), te.store.SyncTime(), time.Now()
				runOnce(b, te, short)
				c1, w1 := selfUsage()
				s1, d1, t1 := te.store.Syncs(), te.store.SyncTime(), time.Now()
				runOnce(b, te, long)
				c2, w2 := selfUsage()
				s2, d2, t2 := te.store.Syncs(), te.store.SyncTime(), time.Now()
				shortTook += t1.Sub(t0)
				longTook += t2.Sub(t1)
				shortSync += d1 - d0
				longSync += d2 - d1
				shortSyncs += s1 - s0
				longSyncs += s2 - s1
				shortCPU += c1 - c0
				longCPU += c2 - c1
				shortSwitches += w1 - w0
				longSwitches += w2 - w1
			}
			b.StopTimer()
			n := float64(b.N * 90)
			b.ReportMetric(float64((longTook-shortTook).Microseconds())/n, "µs/node")
			b.ReportMetric((float64(longSyncs)-float64(shortSyncs))/n, "syncs/node")
			// The same less the time spent in the WAL's fdatasyncs: the engine's and the
			// journal's own part, which the disk's noise on a shared machine does not move.
			beyond := (longTook - longSync) - (shortTook - shortSync)
			b.ReportMetric(float64(beyond.Microseconds())/n, "µs/node-beyond-sync")
			// The process's CPU time and context switches per node (the engine, the journal,
			// Badger, every goroutine): a shared machine's load moves them less than the wall.
			b.ReportMetric(float64((longCPU-shortCPU).Microseconds())/n, "cpu-µs/node")
			b.ReportMetric(float64(longSwitches-shortSwitches)/n, "switches/node")
		})
	}
}
