// Package telemetry sets up the traces and logs of one fuscia process.
//
// Setup picks a span exporter from OTEL_TRACES_EXPORTER ("none" by default,
// "console" or "otlp") and a log/slog handler (text on a terminal, JSON
// otherwise). Nothing global is touched: the otel global tracer provider is
// left alone and the caller receives a [trace.Tracer] and a [*slog.Logger]
// to pass down explicitly.
//
// With the "none" exporter (the default) the tracer is the otel no-op
// tracer, so the per-node-attempt spans of the engine cost next to nothing.
//
// For OTLP, OTEL_TRACES_EXPORTER and the protocol
// (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, then OTEL_EXPORTER_OTLP_PROTOCOL;
// "http/protobuf" by default, "http/json" or "grpc") are read through
// Config.Getenv, but every other OTEL_EXPORTER_OTLP_* setting (endpoint,
// headers, TLS, timeout, compression, …) is read by the otel exporter itself
// from the process environment, not through Config.Getenv.
package telemetry
