package metrics_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/fuscia/fuscia/engine/internal/metrics"
	"github.com/fuscia/fuscia/engine/telemetry"
)

// newRecorder returns a Recorder on a real meter provider and Prometheus
// exporter, and the provider's metrics.
func newRecorder(t testing.TB) (*metrics.Recorder, *telemetry.Metrics) {
	t.Helper()
	m, err := telemetry.NewMetrics(telemetry.Config{Version: "1.2.3"})
	if err != nil {
		t.Fatalf("NewMetrics: %v", err)
	}
	t.Cleanup(func() {
		if err := m.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	r, err := metrics.New(m.Meter)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r, m
}

// scrape GETs the metrics handler and returns the body.
func scrape(t *testing.T, m *telemetry.Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type = %q, want the Prometheus text format", ct)
	}
	return string(body)
}

// families parses a scrape in the Prometheus text format.
func families(t *testing.T, body string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("scrape does not parse: %v\n%s", err, body)
	}
	return mfs
}

// wantLines fails for each of want that is not a line of body.
func wantLines(t *testing.T, body string, want ...string) {
	t.Helper()
	lines := strings.Split(body, "\n")
	for _, w := range want {
		if !slices.Contains(lines, w) {
			t.Errorf("scrape lacks the line\n\t%s", w)
		}
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", fuscia(body))
	}
}

// fuscia returns the lines of body about fuscia_ series.
func fuscia(body string) string {
	var out []string
	for l := range strings.SplitSeq(body, "\n") {
		if strings.Contains(l, "fuscia_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestScrape(t *testing.T) {
	r, m := newRecorder(t)
	ctx := context.Background()

	r.RunStarted(ctx, "deploy")
	r.RunStarted(ctx, "deploy")
	r.RunStarted(ctx, "deploy")
	r.RunStarted(ctx, "backup")
	r.RunEnded(ctx, "deploy", "succeeded")
	r.RunEnded(ctx, "deploy", "failed")
	r.RunEnded(ctx, "backup", "") // parked at a wait: not counted as ended

	r.Attempt(ctx, "deploy", "builtin", "succeeded", 300*time.Microsecond)
	r.Attempt(ctx, "deploy", "builtin", "succeeded", 2*time.Second)
	r.Attempt(ctx, "deploy", "plugin", "retryable", 2*time.Hour) // past the last bucket

	r.WasmInstantiate(ctx, 40*time.Microsecond)
	r.WasmInstantiate(ctx, 3*time.Millisecond)

	r.TriggerFired(ctx, "deploy", "nightly", "cron", "started")
	r.TriggerFired(ctx, "deploy", "nightly", "cron", "started")
	r.TriggerFired(ctx, "deploy", "hook", "webhook", "deduplicated")

	var (
		mu    sync.Mutex
		queue = map[string]int64{"deploy": 4, "backup": 0}
	)
	if err := r.ObserveQueueDepth(func() map[string]int64 {
		mu.Lock()
		defer mu.Unlock()
		return queue
	}); err != nil {
		t.Fatal(err)
	}
	var restarts int64 = 2
	if err := r.ObservePluginRestarts(func() int64 { return restarts }); err != nil {
		t.Fatal(err)
	}

	body := scrape(t, m)
	wantLines(t, body,
		"# TYPE fuscia_runs_total counter",
		`fuscia_runs_total{outcome="succeeded",workflow="deploy"} 1`,
		`fuscia_runs_total{outcome="failed",workflow="deploy"} 1`,

		"# TYPE fuscia_active_runs gauge",
		`fuscia_active_runs{workflow="deploy"} 1`,
		`fuscia_active_runs{workflow="backup"} 0`,

		"# TYPE fuscia_node_attempts_total counter",
		`fuscia_node_attempts_total{kind="builtin",outcome="succeeded",workflow="deploy"} 2`,
		`fuscia_node_attempts_total{kind="plugin",outcome="retryable",workflow="deploy"} 1`,

		"# TYPE fuscia_node_duration_seconds histogram",
		`fuscia_node_duration_seconds_bucket{kind="builtin",outcome="succeeded",workflow="deploy",le="0.0001"} 0`,
		`fuscia_node_duration_seconds_bucket{kind="builtin",outcome="succeeded",workflow="deploy",le="0.0005"} 1`,
		`fuscia_node_duration_seconds_bucket{kind="builtin",outcome="succeeded",workflow="deploy",le="1"} 1`,
		`fuscia_node_duration_seconds_bucket{kind="builtin",outcome="succeeded",workflow="deploy",le="2.5"} 2`,
		`fuscia_node_duration_seconds_bucket{kind="builtin",outcome="succeeded",workflow="deploy",le="3600"} 2`,
		`fuscia_node_duration_seconds_bucket{kind="builtin",outcome="succeeded",workflow="deploy",le="+Inf"} 2`,
		`fuscia_node_duration_seconds_sum{kind="builtin",outcome="succeeded",workflow="deploy"} 2.0003`,
		`fuscia_node_duration_seconds_count{kind="builtin",outcome="succeeded",workflow="deploy"} 2`,
		`fuscia_node_duration_seconds_bucket{kind="plugin",outcome="retryable",workflow="deploy",le="3600"} 0`,
		`fuscia_node_duration_seconds_bucket{kind="plugin",outcome="retryable",workflow="deploy",le="+Inf"} 1`,
		`fuscia_node_duration_seconds_sum{kind="plugin",outcome="retryable",workflow="deploy"} 7200`,
		`fuscia_node_duration_seconds_count{kind="plugin",outcome="retryable",workflow="deploy"} 1`,

		"# TYPE fuscia_wasm_instantiate_seconds histogram",
		`fuscia_wasm_instantiate_seconds_bucket{le="5e-05"} 1`,
		`fuscia_wasm_instantiate_seconds_bucket{le="0.0025"} 1`,
		`fuscia_wasm_instantiate_seconds_bucket{le="0.005"} 2`,
		`fuscia_wasm_instantiate_seconds_bucket{le="5"} 2`,
		`fuscia_wasm_instantiate_seconds_bucket{le="+Inf"} 2`,
		`fuscia_wasm_instantiate_seconds_sum 0.00304`,
		`fuscia_wasm_instantiate_seconds_count 2`,

		"# TYPE fuscia_queue_depth gauge",
		`fuscia_queue_depth{workflow="deploy"} 4`,
		`fuscia_queue_depth{workflow="backup"} 0`,

		"# TYPE fuscia_plugin_restarts_total counter",
		`fuscia_plugin_restarts_total 2`,

		"# TYPE fuscia_triggers_total counter",
		`fuscia_triggers_total{result="started",trigger="nightly",type="cron",workflow="deploy"} 2`,
		`fuscia_triggers_total{result="deduplicated",trigger="hook",type="webhook",workflow="deploy"} 1`,

		`target_info{service_name="fuscia",service_version="1.2.3",telemetry_sdk_language="go",telemetry_sdk_name="opentelemetry",telemetry_sdk_version="1.47.0"} 1`,
	)
	if strings.Contains(body, "otel_scope_") {
		t.Error("scrape carries otel_scope_* labels")
	}

	// The documented families, and no others.
	want := map[string]dto.MetricType{
		"fuscia_runs_total":               dto.MetricType_COUNTER,
		"fuscia_active_runs":              dto.MetricType_GAUGE,
		"fuscia_node_attempts_total":      dto.MetricType_COUNTER,
		"fuscia_node_duration_seconds":    dto.MetricType_HISTOGRAM,
		"fuscia_queue_depth":              dto.MetricType_GAUGE,
		"fuscia_wasm_instantiate_seconds": dto.MetricType_HISTOGRAM,
		"fuscia_plugin_restarts_total":    dto.MetricType_COUNTER,
		"fuscia_triggers_total":           dto.MetricType_COUNTER,
	}
	mfs := families(t, body)
	for name, typ := range want {
		mf, ok := mfs[name]
		if !ok {
			t.Errorf("family %s missing", name)
			continue
		}
		if mf.GetType() != typ {
			t.Errorf("family %s has type %v, want %v", name, mf.GetType(), typ)
		}
	}
	for name := range mfs {
		if _, ok := want[name]; strings.HasPrefix(name, "fuscia_") && !ok {
			t.Errorf("undocumented family %s", name)
		}
	}
	// The ended runs: only final statuses.
	for _, mt := range mfs["fuscia_runs_total"].GetMetric() {
		for _, l := range mt.GetLabel() {
			if l.GetName() == "status" && l.GetValue() == "" {
				t.Errorf("fuscia_runs_total has a series with an empty status")
			}
		}
	}
	if n := len(mfs["fuscia_runs_total"].GetMetric()); n != 2 {
		t.Errorf("fuscia_runs_total has %d series, want 2 (a run ended with \"\" is not counted)", n)
	}
	// The Go runtime and process collectors share the registry.
	if _, ok := mfs["go_goroutines"]; !ok {
		t.Error("go_goroutines missing")
	}
	if runtime.GOOS == "linux" {
		rss := mfs["process_resident_memory_bytes"]
		if rss == nil || len(rss.GetMetric()) != 1 || rss.GetMetric()[0].GetGauge().GetValue() <= 0 {
			t.Errorf("process_resident_memory_bytes = %v, want a positive gauge", rss)
		}
	}

	// Observable instruments are read at each scrape.
	mu.Lock()
	queue = map[string]int64{"deploy": 1}
	mu.Unlock()
	wantLines(t, scrape(t, m), `fuscia_queue_depth{workflow="deploy"} 1`)
}

// TestUnknownStatus checks that a status outside the final ones only
// decrements the active runs.
func TestUnknownStatus(t *testing.T) {
	r, m := newRecorder(t)
	ctx := context.Background()
	r.RunStarted(ctx, "deploy")
	r.RunEnded(ctx, "deploy", "waiting")
	body := scrape(t, m)
	wantLines(t, body, `fuscia_active_runs{workflow="deploy"} 0`)
	if strings.Contains(body, "fuscia_runs_total") {
		t.Errorf("fuscia_runs_total counted a non-final status:\n%s", fuscia(body))
	}
}

func TestNilRecorder(t *testing.T) {
	var r *metrics.Recorder
	ctx := context.Background()
	r.RunStarted(ctx, "deploy")
	r.RunEnded(ctx, "deploy", "succeeded")
	r.Attempt(ctx, "deploy", "builtin", "succeeded", time.Second)
	r.WasmInstantiate(ctx, time.Millisecond)
	r.TriggerFired(ctx, "deploy", "nightly", "cron", "started")
	if err := r.ObserveQueueDepth(func() map[string]int64 { return nil }); err != nil {
		t.Errorf("ObserveQueueDepth: %v", err)
	}
	if err := r.ObservePluginRestarts(func() int64 { return 0 }); err != nil {
		t.Errorf("ObservePluginRestarts: %v", err)
	}
	if allocs := testing.AllocsPerRun(100, func() {
		r.Attempt(ctx, "deploy", "builtin", "succeeded", time.Second)
	}); allocs != 0 {
		t.Errorf("nil Attempt allocates %v times", allocs)
	}
}

func TestNewNilMeter(t *testing.T) {
	if r, err := metrics.New(nil); err == nil || r != nil {
		t.Errorf("New(nil) = %v, %v; want an error", r, err)
	}
}

// TestConcurrent records from many goroutines while scraping (run with
// -race) and checks the totals.
func TestConcurrent(t *testing.T) {
	r, m := newRecorder(t)
	ctx := context.Background()
	const workers, n = 8, 200
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			wf := fmt.Sprintf("wf%d", w%2)
			for range n {
				r.RunStarted(ctx, wf)
				r.Attempt(ctx, wf, "component", "succeeded", time.Millisecond)
				r.TriggerFired(ctx, wf, "t", "cron", "started")
				r.RunEnded(ctx, wf, "succeeded")
			}
		})
	}
	wg.Go(func() {
		for range 5 {
			scrape(t, m)
		}
	})
	wg.Wait()
	total := workers / 2 * n
	body := scrape(t, m)
	wantLines(t, body,
		fmt.Sprintf(`fuscia_runs_total{outcome="succeeded",workflow="wf0"} %d`, total),
		fmt.Sprintf(`fuscia_runs_total{outcome="succeeded",workflow="wf1"} %d`, total),
		`fuscia_active_runs{workflow="wf0"} 0`,
		fmt.Sprintf(`fuscia_node_attempts_total{kind="component",outcome="succeeded",workflow="wf1"} %d`, total),
		fmt.Sprintf(`fuscia_node_duration_seconds_count{kind="component",outcome="succeeded",workflow="wf0"} %d`, total),
		fmt.Sprintf(`fuscia_triggers_total{result="started",trigger="t",type="cron",workflow="wf1"} %d`, total),
	)
}

// TestAttemptAllocs keeps the hot path free of allocations once a label
// combination has been seen.
func TestAttemptAllocs(t *testing.T) {
	r, _ := newRecorder(t)
	ctx := context.Background()
	r.Attempt(ctx, "deploy", "builtin", "succeeded", time.Millisecond)
	if allocs := testing.AllocsPerRun(1000, func() {
		r.Attempt(ctx, "deploy", "builtin", "succeeded", time.Millisecond)
	}); allocs > 0 {
		t.Errorf("Attempt allocates %v times per call", allocs)
	}
}

func BenchmarkAttempt(b *testing.B) {
	r, _ := newRecorder(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		r.Attempt(ctx, "deploy", "builtin", "succeeded", time.Millisecond)
	}
}

func BenchmarkAttemptParallel(b *testing.B) {
	r, _ := newRecorder(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.Attempt(ctx, "deploy", "builtin", "succeeded", time.Millisecond)
		}
	})
}
