package cluster

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/cluster/clusterkey"
	"github.com/fuscia/fuscia/engine/internal/runtime/builtins"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/natstest"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
)

// Benchmarks of the cluster's dispatch (docs/performance.md, "Cluster (NATS JetStream)"):
// `make bench` runs them. The scaling and redelivery benchmarks, which need worker processes,
// are in cmd/fuscia/cluster_bench_test.go.

// BenchmarkDispatchOverhead is one builtin.http attempt to a loopback server at a time, made
// locally (the worker's task.ByKind, called directly) and through the cluster (Coordinator →
// work stream → Worker → results stream → Coordinator), on a real in-process NATS server
// with JetStream on disk. Each sub-benchmark reports the p50 and p99 of one attempt; the
// remote one also the p50 and p99 it adds to the local one's.
func BenchmarkDispatchOverhead(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	b.Cleanup(srv.Close)
	runner := builtin.New(builtin.Options{})
	b.Cleanup(runner.Close)
	local := task.ByKind{lang.UsesBuiltin: builtins.New(runner)}
	uses := lang.Uses{Kind: lang.UsesBuiltin, Name: "http"}
	input := []byte(fmt.Sprintf(`{"method":"GET","url":%q}`, srv.URL))
	ctx := context.Background()

	// call makes attempt i of a fresh task (its id names the attempt on the wire).
	call := func(b *testing.B, d task.Dispatcher, bind task.Binding, i int) time.Duration {
		start := time.Now()
		res := d.Call(ctx, bind, task.Call{Uses: uses, Input: input, ExecutionID: "bench", Workflow: "bench",
			Node: "task.get", TaskID: fmt.Sprintf("bench-%d", i), Attempt: 1, Seq: 1, Log: func(string, string) {}})
		took := time.Since(start)
		if res.Type != outcome.Success {
			b.Fatalf("attempt %d: %s %s: %s", i, res.Type, res.Kind, res.Message)
		}
		return took
	}
	// measure makes b.N attempts one after the other, after a warm-up, and returns their
	// sorted durations.
	measure := func(b *testing.B, d task.Dispatcher) []time.Duration {
		bind, err := d.Bind(ctx, task.Block{Uses: uses, Workflow: &lang.Workflow{Name: "bench"}})
		if err != nil {
			b.Fatal(err.Message)
		}
		for i := range 50 {
			call(b, d, bind, -1-i)
		}
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := range b.N {
			lat = append(lat, call(b, d, bind, i))
		}
		b.StopTimer()
		slices.Sort(lat)
		return lat
	}
	var localLat []time.Duration
	b.Run("local", func(b *testing.B) {
		localLat = measure(b, local)
		reportLatency(b, localLat, "")
	})
	b.Run("cluster", func(b *testing.B) {
		coord := benchCluster(b, local)
		lat := measure(b, coord)
		reportLatency(b, lat, "")
		if len(localLat) > 0 {
			b.ReportMetric(ms(percentile(lat, 50)-percentile(localLat, 50)), "added-p50-ms")
			b.ReportMetric(ms(percentile(lat, 99)-percentile(localLat, 99)), "added-p99-ms")
		}
	})
}

// benchCluster starts a NATS server with JetStream, a coordinator and one worker of
// concurrency 8 running attempts with tasks, each on its own connection, and returns the
// coordinator once the worker has joined.
func benchCluster(b *testing.B, tasks task.Dispatcher) *Coordinator {
	b.Helper()
	srv := natstest.Start(b)
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	key, err := clusterkey.New(raw)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	connect := func(name string) *Conn {
		c, err := Connect(ctx, Config{URLs: srv.URL(), Key: key}, name, nil)
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	cc, wc := connect("bench coordinator"), connect("bench worker")
	coord, err := NewCoordinator(ctx, cc, CoordinatorOptions{Local: tasks})
	if err != nil {
		b.Fatal(err)
	}
	w := NewWorker(wc, WorkerOptions{Concurrency: 8, Home: b.TempDir(), Tasks: tasks})
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	// Registered after natstest's cleanup, so it runs before the server stops.
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("worker: %v", err)
		}
		coord.Close()
		wc.Close()
		cc.Close()
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		ws, err := coord.Workers(ctx)
		if err == nil && len(ws) == 1 {
			return coord
		}
		if time.Now().After(deadline) {
			b.Fatalf("the worker did not join within 30s (last error: %v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// percentile is the p-th percentile of sorted durations.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := len(sorted) * p / 100
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// reportLatency reports the p50 and p99 of sorted durations, their unit prefixed by prefix.
func reportLatency(b *testing.B, sorted []time.Duration, prefix string) {
	b.ReportMetric(ms(percentile(sorted, 50)), prefix+"p50-ms")
	b.ReportMetric(ms(percentile(sorted, 99)), prefix+"p99-ms")
}
