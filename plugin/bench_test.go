package plugin_test

import (
	"context"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fuscia/fuscia/plugin"
	"github.com/fuscia/fuscia/plugin/plugintest"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// Benchmarks of issue 5 (plugins) with the real greeter plugin subprocess; `make bench` runs
// them and docs/performance.md records the figures.

var benchRequest = plugin.Request{Task: "greet", Input: []byte(`{"name": "Ada"}`), Config: []byte("{}"),
	Context: &pluginv1.CallContext{ExecutionId: "x", Workflow: "w", Node: "task.a", Attempt: 1}}

// benchEnv serves the greet task's KV and log callbacks: part of every call's cost.
func benchEnv() *plugin.CallEnv {
	return &plugin.CallEnv{KV: &memKV{}, Log: func(string, string) {}}
}

// BenchmarkPluginStart is a plugin's start: fork/exec, digest check, go-plugin handshake with
// AutoMTLS, and the first Execute; then the process is stopped (not timed).
func BenchmarkPluginStart(b *testing.B) {
	tg := greeterTarget(b)
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
	tg := greeterTarget(b)
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
	tg := greeterTarget(b)
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
	tg := greeterTarget(b)
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

// BenchmarkShellExecTrue is one `exec /bin/true` call on the running shell plugin (no engine),
// alternated in the same loop with a bare os/exec Run of /bin/true, so that both see the same
// load: it reports each one's p50 and the ratio of the two means (what item 2 of issue 20
// bounds at 1.5× with the engine on top).
func BenchmarkShellExecTrue(b *testing.B) {
	bin := plugintest.Build(b, "plugins/shell", "shell")
	path := plugintest.Install(b, bin, b.TempDir(), "fuscia-plugin-shell")
	d, err := plugin.Digest(path)
	if err != nil {
		b.Fatal(err)
	}
	tg := plugin.Target{Name: "shell", Path: path, Digest: d}
	m := plugin.NewManager(plugin.Options{})
	defer m.Close()
	req := plugin.Request{Task: "exec", Input: []byte(`{"command": "/bin/true", "args": []}`), Config: []byte("{}"), Context: benchRequest.Context}
	call := func() {
		resp, err := m.Execute(context.Background(), tg, req, nil)
		if err != nil {
			b.Fatal(err)
		}
		if resp.GetType() != pluginv1.ExecuteResponse_TYPE_SUCCESS {
			b.Fatalf("exec: %v: %s", resp.GetType(), resp.GetReason())
		}
	}
	call()
	pid := childPlugin(b, "fuscia-plugin")
	plug, bare := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	var sumPlug, sumBare time.Duration
	var bareUsage, pluginUsage procUsage // the bare children's, and the plugin's, in this loop
	var ru0, ru1 syscall.Rusage
	u0 := readUsage(b, pid)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru0)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		call()
		t1 := time.Now()
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		plug, bare = append(plug, t1.Sub(t0)), append(bare, t2.Sub(t1))
		sumPlug, sumBare = sumPlug+t1.Sub(t0), sumBare+t2.Sub(t1)
	}
	b.StopTimer()
	u1 := readUsage(b, pid)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru1)
	pluginUsage = procUsage{cpuNs: u1.cpuNs - u0.cpuNs, switches: u1.switches - u0.switches, childTicks: u1.childTicks - u0.childTicks}
	bareUsage.cpuNs = (ru1.Utime.Nano() + ru1.Stime.Nano()) - (ru0.Utime.Nano() + ru0.Stime.Nano())
	perCall := func(ns int64) float64 { return float64(ns) / 1e3 / float64(b.N) }
	b.ReportMetric(perCall(pluginUsage.cpuNs), "plugin-cpu-µs/call")
	b.ReportMetric(float64(pluginUsage.switches)/float64(b.N), "plugin-blocks/call")
	b.ReportMetric(perCall(pluginUsage.childTicks*1e7), "child-cpu-µs/call") // USER_HZ 100
	b.ReportMetric(perCall(bareUsage.cpuNs), "bare-child-cpu-µs/call")
	slices.Sort(plug)
	slices.Sort(bare)
	b.ReportMetric(float64(plug[len(plug)/2].Microseconds()), "plugin-p50-µs")
	b.ReportMetric(float64(bare[len(bare)/2].Microseconds()), "bare-p50-µs")
	b.ReportMetric(float64(sumPlug)/float64(sumBare), "ratio")
}
