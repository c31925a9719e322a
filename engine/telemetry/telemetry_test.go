package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// env returns a Getenv backed by m.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// endSpan starts and ends one node-attempt span carrying every attribute.
func endSpan(t *testing.T, tel *Telemetry) {
	t.Helper()
	_, span := tel.Tracer.Start(context.Background(), "node.attempt", trace.WithAttributes(
		AttrWorkflow.String("deploy"),
		AttrExecutionID.String("exec-123"),
		AttrNode.String("build.compile"),
		AttrKind.String("wasm"),
		AttrAttempt.Int(2),
		AttrOutcome.String("succeeded"),
	))
	span.End()
}

func shutdown(t *testing.T, tel *Telemetry) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

func TestNoneExporter(t *testing.T) {
	for _, value := range []string{"", "none", " NONE "} {
		var buf bytes.Buffer
		tel, err := Setup(context.Background(), Config{
			Getenv: env(map[string]string{"OTEL_TRACES_EXPORTER": value}),
			Stderr: &buf,
		})
		if err != nil {
			t.Fatalf("%q: Setup: %v", value, err)
		}
		_, span := tel.Tracer.Start(context.Background(), "x")
		if span.IsRecording() || span.SpanContext().IsValid() {
			t.Errorf("%q: span is recording or valid; want a no-op span", value)
		}
		span.End()
		shutdown(t, tel)
		shutdown(t, tel) // twice is fine
		if buf.Len() != 0 {
			t.Errorf("%q: unexpected output %q", value, buf.String())
		}
	}
	var nilTel *Telemetry
	if err := nilTel.Shutdown(context.Background()); err != nil {
		t.Errorf("nil Shutdown: %v", err)
	}
}

// TestNoneSpanIsCheap checks that a no-op span costs at most the one
// allocation of the context that carries it.
func TestNoneSpanIsCheap(t *testing.T) {
	tel, err := Setup(context.Background(), Config{Getenv: env(nil), Stderr: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		_, span := tel.Tracer.Start(ctx, "node.attempt")
		span.End()
	})
	if allocs > 1 {
		t.Errorf("no-op span allocates %v times; want at most 1", allocs)
	}
}

// consoleSpan is the part of stdouttrace's JSON the test looks at.
type consoleSpan struct {
	Name       string
	Attributes []struct {
		Key   string
		Value struct{ Value any }
	}
	Resource []struct {
		Key   string
		Value struct{ Value any }
	}
}

func TestConsoleExporter(t *testing.T) {
	var buf bytes.Buffer
	tel, err := Setup(context.Background(), Config{
		Getenv:      env(map[string]string{"OTEL_TRACES_EXPORTER": "console"}),
		Stderr:      &buf,
		LogFormat:   "json",
		ServiceName: "fuscia",
		Version:     "1.2.3",
	})
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	endSpan(t, tel)
	shutdown(t, tel)

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("want one JSON line per span, got %d:\n%s", len(lines), buf.String())
	}
	var got consoleSpan
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatalf("decoding %q: %v", lines[0], err)
	}
	if got.Name != "node.attempt" {
		t.Errorf("Name = %q, want node.attempt", got.Name)
	}
	attrs := map[string]any{}
	for _, a := range got.Attributes {
		attrs[a.Key] = a.Value.Value
	}
	want := map[string]any{
		"fuscia.workflow":     "deploy",
		"fuscia.execution_id": "exec-123",
		"fuscia.node":         "build.compile",
		"fuscia.kind":         "wasm",
		"fuscia.attempt":      float64(2),
		"fuscia.outcome":      "succeeded",
	}
	for k, v := range want {
		if attrs[k] != v {
			t.Errorf("attribute %s = %v, want %v", k, attrs[k], v)
		}
	}
	res := map[string]any{}
	for _, a := range got.Resource {
		res[a.Key] = a.Value.Value
	}
	if res["service.name"] != "fuscia" || res["service.version"] != "1.2.3" {
		t.Errorf("resource = %v, want service.name fuscia and service.version 1.2.3", res)
	}
}

func TestUnknownExporter(t *testing.T) {
	_, err := Setup(context.Background(), Config{
		Getenv: env(map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}),
		Stderr: &bytes.Buffer{},
	})
	want := "OTEL_TRACES_EXPORTER=zipkin is not supported; use otlp, console or none"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

func TestUnknownOTLPProtocol(t *testing.T) {
	_, err := Setup(context.Background(), Config{
		Getenv: env(map[string]string{
			"OTEL_TRACES_EXPORTER":        "otlp",
			"OTEL_EXPORTER_OTLP_PROTOCOL": "carrier-pigeon",
		}),
		Stderr: &bytes.Buffer{},
	})
	if err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_PROTOCOL=carrier-pigeon is not supported") {
		t.Fatalf("err = %v, want it to name OTEL_EXPORTER_OTLP_PROTOCOL", err)
	}
}

func TestLoggerLevel(t *testing.T) {
	var buf bytes.Buffer
	tel, err := Setup(context.Background(), Config{
		Getenv:    env(nil),
		Stderr:    &buf,
		LogFormat: "json",
		LogLevel:  slog.LevelWarn,
	})
	if err != nil {
		t.Fatal(err)
	}
	tel.Logger.Info("hidden")
	tel.Logger.Warn("shown")
	if out := buf.String(); strings.Contains(out, "hidden") || !strings.Contains(out, "shown") {
		t.Errorf("output %q: want only the warning", out)
	}
}
