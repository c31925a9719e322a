package telemetry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"
)

// scrapeMetrics GETs m's handler and returns the body.
func scrapeMetrics(t *testing.T, m *Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
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
	return string(body)
}

// hasLine reports whether body has a line equal to line.
func hasLine(body, line string) bool {
	return slices.Contains(strings.Split(body, "\n"), line)
}

// hasFamily reports whether body has a series of the metric family name.
func hasFamily(body, name string) bool {
	for l := range strings.SplitSeq(body, "\n") {
		if strings.HasPrefix(l, name+" ") || strings.HasPrefix(l, name+"{") {
			return true
		}
	}
	return false
}

func TestMetrics(t *testing.T) {
	m, err := NewMetrics(Config{Version: "9.9.9"})
	if err != nil {
		t.Fatalf("NewMetrics: %v", err)
	}
	// A second provider in the same process: each has its own registry,
	// so nothing collides.
	other, err := NewMetrics(Config{ServiceName: "other"})
	if err != nil {
		t.Fatalf("second NewMetrics: %v", err)
	}
	defer other.Shutdown(context.Background())

	c, err := m.Meter.Int64Counter("test.widgets", metric.WithUnit("{widget}"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := m.Meter.Float64Histogram("test.latency", metric.WithUnit("s"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c.Add(ctx, 3)
	h.Record(ctx, 0.2)

	body := scrapeMetrics(t, m)
	for _, line := range []string{
		"# TYPE test_widgets_total counter",
		"test_widgets_total 3",
		"# TYPE test_latency_seconds histogram",
		"test_latency_seconds_count 1",
		`target_info{service_name="fuscia",service_version="9.9.9",telemetry_sdk_language="go",telemetry_sdk_name="opentelemetry",telemetry_sdk_version="1.47.0"} 1`,
	} {
		if !hasLine(body, line) {
			t.Errorf("scrape lacks %q", line)
		}
	}
	if strings.Contains(body, "otel_scope_") {
		t.Error("scrape carries otel_scope_* labels")
	}
	if !hasFamily(body, "go_goroutines") {
		t.Error("scrape lacks the Go collector's go_goroutines")
	}
	if runtime.GOOS == "linux" {
		// Every family of the process collector, which reads /proc through procfs (the
		// repository's copy compiles procfs's regexps at first use: process_max_fds and
		// process_virtual_memory_max_bytes come from parsing /proc/self/limits with one).
		for _, family := range []string{
			"process_cpu_seconds_total", "process_open_fds", "process_max_fds",
			"process_virtual_memory_bytes", "process_virtual_memory_max_bytes",
			"process_resident_memory_bytes", "process_start_time_seconds",
			"process_network_receive_bytes_total", "process_network_transmit_bytes_total",
		} {
			if !hasFamily(body, family) {
				t.Errorf("scrape lacks the process collector's %s", family)
			}
		}
		var nofile syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile); err != nil {
			t.Fatal(err)
		}
		if line := "process_max_fds " + strconv.FormatFloat(float64(nofile.Cur), 'g', -1, 64); !hasLine(body, line) {
			t.Errorf("scrape lacks %q (getrlimit's RLIMIT_NOFILE)", line)
		}
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", body)
	}

	otherBody := scrapeMetrics(t, other)
	if hasFamily(otherBody, "test_widgets_total") {
		t.Error("the second provider's registry serves the first one's counter")
	}
	if !strings.Contains(otherBody, `service_name="other"`) {
		t.Error("the second provider's target_info lacks service_name=\"other\"")
	}

	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := m.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := m.Shutdown(sctx); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
	c.Add(ctx, 1) // recorded nowhere, and no panic
	body = scrapeMetrics(t, m)
	if hasFamily(body, "test_widgets_total") {
		t.Error("the counter is still served after Shutdown")
	}
	if !hasFamily(body, "go_goroutines") {
		t.Error("the Go collector is no longer served after Shutdown")
	}

	var nilMetrics *Metrics
	if err := nilMetrics.Shutdown(ctx); err != nil {
		t.Errorf("nil Shutdown: %v", err)
	}
}
