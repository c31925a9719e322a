package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
)

// Metrics is the process's meter provider exporting to a Prometheus
// registry. The registry is private to this Metrics (never the prometheus
// default registry) and also carries the Go runtime (go_*) and process
// (process_*, e.g. process_resident_memory_bytes) collectors.
//
// Instruments are exported under Prometheus names: dots become
// underscores, the unit is appended ("s" gives _seconds; curly-brace units
// such as "{run}" add nothing) and monotonic counters get _total. No
// otel_scope_* labels are added; the resource (service.name,
// service.version, …) is exported once, as target_info.
type Metrics struct {
	// Meter creates the instruments of the process.
	Meter metric.Meter

	provider *sdkmetric.MeterProvider
	registry *prometheus.Registry

	shutdownOnce sync.Once
	shutdownErr  error
}

// NewMetrics builds a meter provider whose only reader is a Prometheus
// exporter registered on a private registry, with the same resource as the
// tracer provider of Setup (service.name and service.version from cfg).
// Only cfg.ServiceName and cfg.Version are used. Call Shutdown when done.
func NewMetrics(cfg Config) (*Metrics, error) {
	if cfg.ServiceName == "" {
		cfg.ServiceName = "fuscia"
	}
	res, err := newResource(cfg)
	if err != nil {
		return nil, err
	}
	registry := prometheus.NewRegistry()
	if err := registry.Register(collectors.NewGoCollector()); err != nil {
		return nil, fmt.Errorf("telemetry: go collector: %w", err)
	}
	if err := registry.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, fmt.Errorf("telemetry: process collector: %w", err)
	}
	exp, err := otelprom.New(
		otelprom.WithRegisterer(registry),
		// Spelled out rather than left to the exporter's default, which
		// has changed between releases: the scraped names are a contract.
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes),
		// The scope is always fuscia's own; otel_scope_* labels on every
		// series would only add noise to the documented label sets.
		otelprom.WithoutScopeInfo(),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: prometheus exporter: %w", err)
	}
	provider := sdkmetric.NewMeterProvider(
		sdkmetric.WithReader(exp),
		sdkmetric.WithResource(res),
		// The Prometheus text format carries no exemplars: sampling them
		// would only slow every measurement down.
		sdkmetric.WithExemplarFilter(exemplar.AlwaysOffFilter),
	)
	return &Metrics{
		Meter:    provider.Meter(instrumentationName, metric.WithInstrumentationVersion(cfg.Version)),
		provider: provider,
		registry: registry,
	}, nil
}

// Handler serves the registry in the Prometheus text exposition format.
// A collector that fails does not fail the scrape: the other series are
// still served.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// Shutdown shuts the meter provider down, within ctx's deadline. The
// instruments record nothing afterwards and Handler then serves only the
// Go runtime and process series. Later calls return the first one's
// result. It is safe on a nil Metrics.
func (m *Metrics) Shutdown(ctx context.Context) error {
	if m == nil {
		return nil
	}
	m.shutdownOnce.Do(func() { m.shutdownErr = m.provider.Shutdown(ctx) })
	return m.shutdownErr
}
