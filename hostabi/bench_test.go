package hostabi

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fuscia/fuscia/hostabi/guesttest"
)

// Benchmarks of issue 4's performance targets; `make bench` runs them and docs/performance.md
// records the figures. Latencies are collected per iteration and reported as percentiles.

// processCPU is this process's CPU time so far, user and system, every thread.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// latencies collects one duration per iteration and reports percentiles in unit (µs or ms).
type latencies []time.Duration

func (l latencies) report(b *testing.B, unit string, max bool) {
	b.Helper()
	if len(l) == 0 {
		return
	}
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	scale := map[string]float64{"µs": float64(time.Microsecond), "ms": float64(time.Millisecond)}[unit]
	b.ReportMetric(float64(l[len(l)/2])/scale, "p50-"+unit)
	b.ReportMetric(float64(l[len(l)*99/100])/scale, "p99-"+unit)
	if max {
		b.ReportMetric(float64(l[len(l)-1])/scale, "max-"+unit)
	}
}

// BenchmarkInvoke is the cost of one attempt: a fresh Store, instantiation, _initialize (Go
// guests not pre-initialized), fuscia_alloc, fuscia_call and closing the store.
func BenchmarkInvoke(b *testing.B) {
	run := func(b *testing.B, m *Module, h *testHost, req []byte) {
		ctx := context.Background()
		// Warm up: the first calls fault in the code and the host's lazily built state.
		for range 20 {
			if _, err := h.Invoke(ctx, m, nil, req); err != nil {
				b.Fatal(err)
			}
		}
		lat := make(latencies, 0, b.N)
		cpu0 := processCPU()
		b.ResetTimer()
		for range b.N {
			start := time.Now()
			if _, err := h.Invoke(ctx, m, nil, req); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		b.StopTimer()
		lat.report(b, "µs", false)
		// The CPU of every thread, the stores closed after an answer included (retire.go):
		// what an attempt costs the machine, besides how long its caller waits.
		b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	}
	b.Run("tiny", func(b *testing.B) {
		h := newTestHost(b, Options{})
		m := h.load(b, "t/ok", wat(b, "", packed(1024, len(okResponse)), okResponse, ""))
		run(b, m, h, []byte(`{"kind":"task"}`))
	})
	// The same answer from a component: the minimal one of testdata/wat echoes its input.
	b.Run("component-minimal", func(b *testing.B) {
		h := newTestHost(b, Options{})
		m := loadWAT(b, h, "minimal.wat")
		run(b, m, h, componentTask("echo", `{}`))
	})
	// The JavaScript example (componentize-js), when FUSCIA_JS_COMPONENT names its built
	// component.wasm (make bench builds it when node is present).
	b.Run("component-js-upper", func(b *testing.B) {
		path := os.Getenv("FUSCIA_JS_COMPONENT")
		if path == "" {
			b.Skip("FUSCIA_JS_COMPONENT is not set")
		}
		wasm, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		h := newTestHost(b, Options{})
		m := h.load(b, "examples/js-upper", wasm)
		run(b, m, h, componentTask("upper", `{"text":"x"}`))
	})
	// The Go SDK's fuscia/text component starts from its pre-initialized snapshot
	// (preinit.go); -as-installed runs the same module as installed, _initialize in every
	// attempt, as an attempt the snapshot cannot serve does (and every attempt did before).
	b.Run("go-text-upper", func(b *testing.B) {
		h := newTestHost(b, Options{})
		m := h.loadSnapshot(b, "fuscia/text@1.0.0", guesttest.Wasm(b, "text"))
		if m.plain == nil {
			b.Fatal("the Go text component was not pre-initialized")
		}
		run(b, m, h, taskRequest("upper", map[string]any{"text": "x"}))
	})
	b.Run("go-text-upper-as-installed", func(b *testing.B) {
		// A host that builds no snapshot (and has none in its empty cache).
		h := newTestHost(b, Options{Snapshots: SnapshotCachedOnly})
		m := h.load(b, "fuscia/text@1.0.0", guesttest.Wasm(b, "text"))
		if m.plain != nil || m.build != nil || !m.hasInit {
			b.Fatal("the Go text component was not loaded as installed")
		}
		run(b, m, h, taskRequest("upper", map[string]any{"text": "x"}))
	})
}

// BenchmarkInterruptLatency is how long after its deadline an endless loop returns from Invoke:
// up to one epoch tick, then the trap and unwinding. docs/reference/abi-v1.md promises 10 ms. Deadlines fall
// at every tenth of a tick after the call starts, as real ones fall anywhere between ticks.
func BenchmarkInterruptLatency(b *testing.B) {
	h := newTestHost(b, Options{})
	m := h.load(b, "t/spin", wat(b, "", spin, "", ""))
	lat := make(latencies, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		deadline := time.Now().Add(20*time.Millisecond + time.Duration(i%10)*DefaultEpochTick/10)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		_, err := h.Invoke(ctx, m, nil, []byte(`{}`))
		lat = append(lat, time.Since(deadline))
		cancel()
		if KindOf(err) != Timeout {
			b.Fatalf("spin: %v; want a timeout", err)
		}
	}
	b.StopTimer()
	lat.report(b, "ms", true)
}

// BenchmarkModuleLoad loads the Go text component three ways: compiled (a fresh Host and an
// empty cache: compile, then write the cache entry), from the disk cache (a fresh Host on a
// warm cache, as the next process would) and from memory (a second Load in one Host).
func BenchmarkModuleLoad(b *testing.B) {
	benchLoad(b, "fuscia/text@1.0.0", guesttest.Wasm(b, "text"))
}

// BenchmarkComponentLoad loads components the same three ways: the C test component, and the
// JavaScript example when FUSCIA_JS_COMPONENT names its built component.wasm.
func BenchmarkComponentLoad(b *testing.B) {
	b.Run("c-guest", func(b *testing.B) {
		wasm, err := os.ReadFile("testdata/components/cguest/cguest.wasm")
		if err != nil {
			b.Fatal(err)
		}
		benchLoad(b, "test/cguest@1.0.0", wasm)
	})
	b.Run("js-upper", func(b *testing.B) {
		path := os.Getenv("FUSCIA_JS_COMPONENT")
		if path == "" {
			b.Skip("FUSCIA_JS_COMPONENT is not set")
		}
		wasm, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		benchLoad(b, "examples/js-upper@1.0.0", wasm)
	})
}

func benchLoad(b *testing.B, name string, wasm []byte) {
	path := filepath.Join(b.TempDir(), "component.wasm")
	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		b.Fatal(err)
	}
	digest := digestOf(wasm)
	load := func(b *testing.B, h *Host, want string) {
		b.Helper()
		m, err := h.Load(name, path, digest)
		if err != nil {
			b.Fatal(err)
		}
		if m.Loaded != want {
			b.Fatalf("loaded from %s; want %s", m.Loaded, want)
		}
	}
	each := func(b *testing.B, cacheDir func() string, want string, prime bool) {
		lat := make(latencies, 0, b.N)
		for range b.N {
			b.StopTimer()
			h, err := New(Options{CacheDir: cacheDir()})
			if err != nil {
				b.Fatal(err)
			}
			if prime {
				load(b, h, "cache")
			}
			b.StartTimer()
			start := time.Now()
			load(b, h, want)
			lat = append(lat, time.Since(start))
			b.StopTimer()
			h.Close()
		}
		lat.report(b, "ms", false)
	}
	warm := b.TempDir()
	h, err := New(Options{CacheDir: warm})
	if err != nil {
		b.Fatal(err)
	}
	load(b, h, "compiled")
	h.Close()
	b.Run("compiled", func(b *testing.B) { each(b, func() string { return b.TempDir() }, "compiled", false) })
	b.Run("cache", func(b *testing.B) { each(b, func() string { return warm }, "cache", false) })
	b.Run("memory", func(b *testing.B) { each(b, func() string { return warm }, "memory", true) })
}

// BenchmarkTrap is the cost of a call whose guest traps (unreachable), with and without the
// Rust backtrace variables. Rust's std and anyhow read them once per process, so each setting
// runs in a child process: this test binary again, running BenchmarkTrapHere.
func BenchmarkTrap(b *testing.B) {
	settings := []struct{ name, env string }{
		{"unset", ""},
		{"RUST_BACKTRACE=1", "RUST_BACKTRACE=1"},
		{"RUST_BACKTRACE=1,RUST_LIB_BACKTRACE=0", "RUST_BACKTRACE=1 RUST_LIB_BACKTRACE=0"},
	}
	for _, s := range settings {
		b.Run(s.name, func(b *testing.B) {
			var env []string
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "RUST_BACKTRACE=") && !strings.HasPrefix(kv, "RUST_LIB_BACKTRACE=") {
					env = append(env, kv)
				}
			}
			env = append(env, strings.Fields(s.env)...)
			cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^BenchmarkTrapHere$",
				"-test.benchtime="+strconv.Itoa(b.N)+"x", "-test.count=1")
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil {
				b.Fatalf("child: %v\n%s", err, out)
			}
			metrics := benchMetrics(out, "BenchmarkTrapHere")
			if len(metrics) == 0 {
				b.Fatalf("no result from the child:\n%s", out)
			}
			for _, unit := range []string{"p50-µs", "p99-µs"} {
				b.ReportMetric(metrics[unit], unit)
			}
		})
	}
}

// BenchmarkTrapHere measures trapping calls in this process, under its environment.
func BenchmarkTrapHere(b *testing.B) {
	h := newTestHost(b, Options{})
	m := h.load(b, "t/trap", wat(b, "", `(unreachable)`, "", ""))
	ctx := context.Background()
	for range 20 {
		if _, err := h.Invoke(ctx, m, nil, []byte(`{}`)); err == nil {
			b.Fatal("no trap")
		}
	}
	lat := make(latencies, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		_, err := h.Invoke(ctx, m, nil, []byte(`{}`))
		lat = append(lat, time.Since(start))
		if err == nil {
			b.Fatal("no trap")
		}
	}
	b.StopTimer()
	lat.report(b, "µs", false)
}

// benchMetrics reads the custom metrics of benchmark name from `go test -bench` output.
func benchMetrics(out []byte, name string) map[string]float64 {
	metrics := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || !strings.HasPrefix(f[0], name) {
			continue
		}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				metrics[f[i+1]] = v
			}
		}
	}
	return metrics
}
