package telemetry

import (
	"context"
	"io"
	"log/slog"
	"os"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/fuscia/fuscia/engine/redact"
)

// instrumentationName is the instrumentation scope of fuscia's spans.
const instrumentationName = "github.com/fuscia/fuscia"

// Config says where traces and logs go.
type Config struct {
	// Getenv looks up environment variables; nil means os.Getenv.
	Getenv func(string) string
	// Stderr receives the console span exporter's output and the logs;
	// nil means os.Stderr. Never stdout: stdout carries -json output.
	Stderr io.Writer
	// LogFormat is "text", "json", or "" for text when Stderr is a
	// terminal and JSON otherwise.
	LogFormat string
	// LogLevel is the minimum level logged.
	LogLevel slog.Level
	// ServiceName is the service.name resource attribute; "" means "fuscia".
	ServiceName string
	// Version is the service.version resource attribute and the
	// instrumentation version of the tracer.
	Version string
	// Redact, when set, scrubs its secrets from every log record and every
	// exported span (names, status descriptions, attributes, events).
	Redact *redact.Set
}

// Telemetry owns the tracer provider and logger of one process.
type Telemetry struct {
	// Tracer creates spans; a no-op tracer when tracing is off.
	Tracer trace.Tracer
	// Logger is the process logger.
	Logger *slog.Logger

	shutdown func(context.Context) error // nil when tracing is off
}

// Setup builds the logger and the tracer described by cfg and the
// environment. Call Shutdown before the process exits to flush spans.
func Setup(ctx context.Context, cfg Config) (*Telemetry, error) {
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	if cfg.ServiceName == "" {
		cfg.ServiceName = "fuscia"
	}
	logger, err := newLogger(cfg)
	if err != nil {
		return nil, err
	}
	tp, shutdown, err := newTracerProvider(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if shutdown != nil {
		// OpenTelemetry reports what goes wrong in its SDK (an exporter that cannot reach its
		// endpoint) through one handler for the process, the standard logger's plain lines by
		// default: they go to this log instead, in its format. The handler is the SDK's global
		// state, so the last Setup's logger takes them.
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			logger.Warn("telemetry: "+err.Error(), "component", "opentelemetry")
		}))
	}
	return &Telemetry{
		Tracer:   tp.Tracer(instrumentationName, trace.WithInstrumentationVersion(cfg.Version)),
		Logger:   logger,
		shutdown: shutdown,
	}, nil
}

// Shutdown flushes pending spans and stops the exporter, within ctx's
// deadline. It does nothing when tracing is off and is safe on a nil
// Telemetry.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil || t.shutdown == nil {
		return nil
	}
	return t.shutdown(ctx)
}
