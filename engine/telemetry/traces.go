package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// newTracerProvider returns the tracer provider chosen by
// OTEL_TRACES_EXPORTER and its shutdown function (nil for "none").
func newTracerProvider(ctx context.Context, cfg Config) (trace.TracerProvider, func(context.Context) error, error) {
	name := strings.ToLower(strings.TrimSpace(cfg.Getenv("OTEL_TRACES_EXPORTER")))
	var (
		exp sdktrace.SpanExporter
		err error
	)
	switch name {
	case "", "none":
		return noop.NewTracerProvider(), nil, nil
	case "console":
		// One compact JSON object per span (pretty printing is off by default).
		exp, err = stdouttrace.New(stdouttrace.WithWriter(cfg.Stderr))
	case "otlp":
		exp, err = newOTLPExporter(ctx, cfg.Getenv)
	default:
		return nil, nil, configError{fmt.Errorf("OTEL_TRACES_EXPORTER=%s is not supported; use otlp, console or none", name)}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("telemetry: %s span exporter: %w", name, err)
	}
	res, err := newResource(cfg)
	if err != nil {
		_ = exp.Shutdown(ctx)
		return nil, nil, err
	}
	if cfg.Redact != nil {
		exp = scrubExporter{next: exp, set: cfg.Redact}
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
	)
	return tp, tp.Shutdown, nil
}

// newOTLPExporter builds an OTLP span exporter for the protocol named by
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL. The
// exporter reads the other OTEL_EXPORTER_OTLP_* variables from the process
// environment.
func newOTLPExporter(ctx context.Context, getenv func(string) string) (sdktrace.SpanExporter, error) {
	variable := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	proto := strings.TrimSpace(getenv(variable))
	if proto == "" {
		variable = "OTEL_EXPORTER_OTLP_PROTOCOL"
		proto = strings.TrimSpace(getenv(variable))
	}
	switch proto {
	case "", "http/protobuf":
		return otlptracehttp.New(ctx, otlptracehttp.WithEncoding(otlptracehttp.EncodingProtobuf))
	case "http/json":
		return otlptracehttp.New(ctx, otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON))
	case "grpc":
		return otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("%s=%s is not supported; use http/protobuf, http/json or grpc", variable, proto)
	}
}

// newResource describes this process: the SDK defaults plus service.name
// and service.version.
func newResource(cfg Config) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{semconv.ServiceName(cfg.ServiceName)}
	if cfg.Version != "" {
		attrs = append(attrs, semconv.ServiceVersion(cfg.Version))
	}
	res, err := resource.Merge(resource.Default(), resource.NewWithAttributes(semconv.SchemaURL, attrs...))
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	return res, nil
}

// ErrConfig is what Setup's error is when an environment variable names something it does not
// support: the user's setting to fix, not a failure of the store or the exporter.
var ErrConfig = errors.New("telemetry configuration")

// configError is an error of the telemetry settings: its text is the cause's, and it is
// ErrConfig.
type configError struct{ err error }

func (e configError) Error() string        { return e.err.Error() }
func (e configError) Unwrap() error        { return e.err }
func (e configError) Is(target error) bool { return target == ErrConfig }
