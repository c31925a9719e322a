package telemetry

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// spanNames returns the names of the spans in an OTLP export request.
func spanNames(req *collectortrace.ExportTraceServiceRequest) []string {
	var names []string
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				names = append(names, s.GetName())
			}
		}
	}
	return names
}

// clearOTLPEnv blanks the OTLP variables a developer's shell may have set.
func clearOTLPEnv(t *testing.T) {
	for _, k := range []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
		"OTEL_EXPORTER_OTLP_INSECURE", "OTEL_EXPORTER_OTLP_TRACES_INSECURE",
	} {
		t.Setenv(k, "")
	}
}

func TestOTLPHTTPExporter(t *testing.T) {
	var (
		mu       sync.Mutex
		requests []string
		names    []string
		header   string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		err := proto.Unmarshal(body, &req)
		mu.Lock()
		requests = append(requests, r.Method+" "+r.URL.Path)
		header = r.Header.Get("X-Token")
		if err == nil {
			names = append(names, spanNames(&req)...)
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()

	clearOTLPEnv(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-token=secret")

	tel, err := Setup(context.Background(), Config{Getenv: os.Getenv, Stderr: io.Discard, Version: "test"})
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	endSpan(t, tel)
	shutdown(t, tel)

	mu.Lock()
	defer mu.Unlock()
	if len(requests) == 0 || requests[0] != "POST /v1/traces" {
		t.Fatalf("requests = %v, want POST /v1/traces", requests)
	}
	if len(names) != 1 || names[0] != "node.attempt" {
		t.Errorf("exported spans = %v, want [node.attempt]", names)
	}
	if header != "secret" {
		t.Errorf("X-Token = %q, want secret from OTEL_EXPORTER_OTLP_HEADERS", header)
	}
}

// traceCollector is an OTLP/gRPC trace receiver that records span names.
type traceCollector struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string
}

func (c *traceCollector) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.names = append(c.names, spanNames(req)...)
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func TestOTLPGRPCExporter(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	col := &traceCollector{}
	collectortrace.RegisterTraceServiceServer(srv, col)
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	clearOTLPEnv(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+lis.Addr().String())
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")

	tel, err := Setup(context.Background(), Config{Getenv: os.Getenv, Stderr: io.Discard})
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	endSpan(t, tel)
	shutdown(t, tel)

	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.names) != 1 || col.names[0] != "node.attempt" {
		t.Errorf("exported spans = %v, want [node.attempt]", col.names)
	}
}
