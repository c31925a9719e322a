package plugin_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fuscia/fuscia/plugin"
	"github.com/fuscia/fuscia/plugin/plugintest"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// Benchmarks of issue 5 (plugins) with the real greeter plugin subprocess; `make bench` runs
// them and docs/performance.md records the figures.

func benchTarget(b *testing.B) plugin.Target {
	b.Helper()
	bin := plugintest.Build(b, "examples/plugins/greeter", "greeter")
	path := plugintest.Install(b, bin, b.TempDir(), "fuscia-plugin-greeter_v0.1.0")
	d, err := plugin.Digest(path)
	if err != nil {
		b.Fatal(err)
	}
	return plugin.Target{Name: "greeter", Path: path, Digest: d, Version: "0.1.0"}
}

var benchRequest = plugin.Request{Task: "greet", Input: []byte(`{"name": "Ada"}`), Config: []byte("{}"),
	Context: &pluginv1.CallContext{ExecutionId: "x", Workflow: "w", Node: "task.a", Attempt: 1}}

// benchEnv serves the greet task's KV and log callbacks: part of every call's cost.
func benchEnv() *plugin.CallEnv {
	return &plugin.CallEnv{KV: &memKV{}, Log: func(string, string) {}}
}

// BenchmarkPluginStart is a plugin's start: fork/exec, digest check, go-plugin handshake with
// AutoMTLS, and the first Execute; then the process is stopped (not timed).
func BenchmarkPluginStart(b *testing.B) {
	tg := benchTarget(b)
	for range b.N {
		m := plugin.NewManager(plugin.Options{})
		if _, err := m.Execute(context.Background(), tg, benchRequest, benchEnv()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		m.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/start")
}

// BenchmarkPluginExecute is one Execute round trip on a running plugin: a small input, the
// greet task's two Host callbacks (KV get and set) and a log line. p50 and p99 are reported.
func BenchmarkPluginExecute(b *testing.B) {
	tg := benchTarget(b)
	m := plugin.NewManager(plugin.Options{})
	defer m.Close()
	env := benchEnv()
	if _, err := m.Execute(context.Background(), tg, benchRequest, env); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := m.Execute(context.Background(), tg, benchRequest, env); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

// BenchmarkPluginExecuteNoCallbacks is the bare round trip: the fail task answers at once
// without calling the host.
func BenchmarkPluginExecuteNoCallbacks(b *testing.B) {
	tg := benchTarget(b)
	m := plugin.NewManager(plugin.Options{})
	defer m.Close()
	req := plugin.Request{Task: "fail", Input: []byte(`{"kind": "fatal", "message": "x"}`), Config: []byte("{}"), Context: benchRequest.Context}
	if _, err := m.Execute(context.Background(), tg, req, nil); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := m.Execute(context.Background(), tg, req, nil); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

// BenchmarkPluginExecute8 is calls per second with 8 concurrent callers (8 nodes) on one
// plugin process.
func BenchmarkPluginExecute8(b *testing.B) {
	tg := benchTarget(b)
	m := plugin.NewManager(plugin.Options{})
	defer m.Close()
	if _, err := m.Execute(context.Background(), tg, benchRequest, benchEnv()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var wg sync.WaitGroup
	per := (b.N + 7) / 8
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			env := benchEnv()
			for range per {
				if _, err := m.Execute(context.Background(), tg, benchRequest, env); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(per*8)/b.Elapsed().Seconds(), "calls/s")
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
