// Package metrics holds the instruments of the engine and of fuscia serve.
//
// A [Recorder] is built on an OpenTelemetry [metric.Meter] (the API only:
// the SDK and the exporter are set up by package telemetry). Exported
// through the Prometheus exporter of telemetry.NewMetrics, the series are:
//
//	fuscia_runs_total{workflow,status}                   counter: runs ended with a final status
//	fuscia_active_runs{workflow}                         gauge: runs executing now
//	fuscia_node_attempts_total{workflow,kind,outcome}    counter: node attempts
//	fuscia_node_duration_seconds{workflow,kind,outcome}  histogram: node attempt durations (100µs..1h)
//	fuscia_queue_depth{workflow}                         gauge: runs queued behind max_concurrent_runs
//	fuscia_queue_depth{pool}                             gauge: in a cluster, task attempts waiting for a worker
//	fuscia_workers{pool}                                 gauge: in a cluster, live workers
//	fuscia_redeliveries_total                            counter: in a cluster, attempts given to another worker
//	fuscia_wasm_instantiate_seconds                      histogram: wasm instantiations (50µs..5s)
//	fuscia_plugin_restarts_total                         counter: plugin process restarts
//	fuscia_triggers_total{workflow,trigger,type,result}  counter: trigger firings
//
// Labels take values from small fixed sets (workflow and trigger names
// come from the loaded configuration); nothing per execution, such as an
// execution id, is ever a label.
//
// A nil *Recorder records nothing, so callers need no "metrics on?" checks.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Label keys.
const (
	keyWorkflow attribute.Key = "workflow"
	keyKind     attribute.Key = "kind"
	keyOutcome  attribute.Key = "outcome"
	keyTrigger  attribute.Key = "trigger"
	keyType     attribute.Key = "type"
	keyResult   attribute.Key = "result"
)

// finalStatuses are the run statuses counted by fuscia_runs_total.
var finalStatuses = map[string]bool{
	"succeeded":             true,
	"failed":                true,
	"completed_with_errors": true,
	"cancelled":             true,
	"timed_out":             true,
}

// Histogram bucket upper bounds, in seconds.
var (
	// nodeDurationBuckets covers a builtin node's 100µs up to an hour-long task.
	nodeDurationBuckets = []float64{
		0.0001, 0.00025, 0.0005,
		0.001, 0.0025, 0.005,
		0.01, 0.025, 0.05,
		0.1, 0.25, 0.5,
		1, 2.5, 5, 10, 30,
		60, 120, 300, 600, 1800, 3600,
	}
	// wasmInstantiateBuckets covers 50µs (a cached module) up to 5s.
	wasmInstantiateBuckets = []float64{
		0.00005, 0.0001, 0.00025, 0.0005,
		0.001, 0.0025, 0.005,
		0.01, 0.025, 0.05,
		0.1, 0.25, 0.5,
		1, 2.5, 5,
	}
)

// maxCachedSets bounds each cache of prebuilt attribute sets. Past it,
// sets are built per call (slower, still correct), so that a label that
// turns out to be unbounded cannot grow the process without limit.
const maxCachedSets = 4096

// Recorder records the engine's and serve's metrics. A nil *Recorder
// records nothing (every method is nil-safe), so code can call it
// unconditionally. A Recorder is safe for concurrent use.
type Recorder struct {
	meter metric.Meter

	runs           metric.Int64Counter
	activeRuns     metric.Int64UpDownCounter
	attempts       metric.Int64Counter
	duration       metric.Float64Histogram
	wasm           metric.Float64Histogram
	queueDepth     metric.Int64ObservableGauge
	workers        metric.Int64ObservableGauge
	redeliveries   metric.Int64Counter
	pluginRestarts metric.Int64ObservableCounter
	triggers       metric.Int64Counter

	workflowSets attrCache[string]
	runSets      attrCache[[2]string]
	attemptSets  attrCache[[3]string]
	triggerSets  attrCache[[4]string]
}

// New creates the instruments on m.
func New(m metric.Meter) (*Recorder, error) {
	if m == nil {
		return nil, errors.New("metrics: nil meter")
	}
	r := &Recorder{meter: m}
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	var err error

	r.runs, err = m.Int64Counter("fuscia.runs",
		metric.WithUnit("{run}"),
		metric.WithDescription("Runs that ended with a final status."))
	add(err)
	r.activeRuns, err = m.Int64UpDownCounter("fuscia.active_runs",
		metric.WithUnit("{run}"),
		metric.WithDescription("Runs executing now."))
	add(err)
	r.attempts, err = m.Int64Counter("fuscia.node.attempts",
		metric.WithUnit("{attempt}"),
		metric.WithDescription("Node attempts by outcome."))
	add(err)
	r.duration, err = m.Float64Histogram("fuscia.node.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of node attempts."),
		metric.WithExplicitBucketBoundaries(nodeDurationBuckets...))
	add(err)
	r.wasm, err = m.Float64Histogram("fuscia.wasm.instantiate",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of wasm module instantiations."),
		metric.WithExplicitBucketBoundaries(wasmInstantiateBuckets...))
	add(err)
	r.queueDepth, err = m.Int64ObservableGauge("fuscia.queue_depth",
		metric.WithUnit("{run}"),
		metric.WithDescription("Runs queued behind max_concurrent_runs, by workflow; in a cluster, also task attempts waiting for a worker, by pool."))
	add(err)
	r.workers, err = m.Int64ObservableGauge("fuscia.workers",
		metric.WithUnit("{worker}"),
		metric.WithDescription("Live cluster workers, by pool."))
	add(err)
	r.redeliveries, err = m.Int64Counter("fuscia.redeliveries",
		metric.WithUnit("{attempt}"),
		metric.WithDescription("Task attempts given to another worker because theirs stopped answering."))
	add(err)
	r.pluginRestarts, err = m.Int64ObservableCounter("fuscia.plugin.restarts",
		metric.WithUnit("{restart}"),
		metric.WithDescription("Plugin process restarts."))
	add(err)
	r.triggers, err = m.Int64Counter("fuscia.triggers",
		metric.WithUnit("{firing}"),
		metric.WithDescription("Trigger firings by result."))
	add(err)

	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return r, nil
}

// RunStarted counts a run of workflow as active.
func (r *Recorder) RunStarted(ctx context.Context, workflow string) {
	if r == nil {
		return
	}
	r.activeRuns.Add(ctx, 1, r.workflowOpts(workflow).add...)
}

// RunEnded counts a run of workflow as no longer active and, when status
// is a final status ("succeeded", "failed", "completed_with_errors",
// "cancelled", "timed_out"), counts it by status. A run that merely stops
// being active (parked at a wait, interrupted by shutdown) passes "" and
// is only taken off the active runs.
func (r *Recorder) RunEnded(ctx context.Context, workflow, status string) {
	if r == nil {
		return
	}
	r.activeRuns.Add(ctx, -1, r.workflowOpts(workflow).add...)
	if !finalStatuses[status] {
		return
	}
	opts := r.runSets.get([2]string{workflow, status}, func(k [2]string) attribute.Set {
		return attribute.NewSet(keyWorkflow.String(k[0]), keyOutcome.String(k[1]))
	})
	r.runs.Add(ctx, 1, opts.add...)
}

// Attempt records one node attempt of workflow that took d. kind is
// "builtin", "component" or "plugin"; outcome is "succeeded" or the error
// kind ("retryable", "fatal", "timeout", …).
func (r *Recorder) Attempt(ctx context.Context, workflow, kind, outcome string, d time.Duration) {
	if r == nil {
		return
	}
	opts := r.attemptSets.get([3]string{workflow, kind, outcome}, func(k [3]string) attribute.Set {
		return attribute.NewSet(keyWorkflow.String(k[0]), keyKind.String(k[1]), keyOutcome.String(k[2]))
	})
	r.attempts.Add(ctx, 1, opts.add...)
	r.duration.Record(ctx, d.Seconds(), opts.record...)
}

// WasmInstantiate records one wasm module instantiation that took d.
func (r *Recorder) WasmInstantiate(ctx context.Context, d time.Duration) {
	if r == nil {
		return
	}
	r.wasm.Record(ctx, d.Seconds())
}

// TriggerFired counts one firing of trigger (of type typ) of workflow by
// result: "started", "queued", "skipped", "refused", "deduplicated" or
// "error".
func (r *Recorder) TriggerFired(ctx context.Context, workflow, trigger, typ, result string) {
	if r == nil {
		return
	}
	opts := r.triggerSets.get([4]string{workflow, trigger, typ, result}, func(k [4]string) attribute.Set {
		return attribute.NewSet(
			keyWorkflow.String(k[0]), keyTrigger.String(k[1]),
			keyType.String(k[2]), keyResult.String(k[3]))
	})
	r.triggers.Add(ctx, 1, opts.add...)
}

// ObserveQueueDepth makes f the source of fuscia_queue_depth: at each
// collection f returns the number of runs queued behind
// max_concurrent_runs, by workflow. f is called from the collecting
// goroutine and must be safe for that. Call it once per Recorder.
func (r *Recorder) ObserveQueueDepth(f func() map[string]int64) error {
	if r == nil {
		return nil
	}
	_, err := r.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for workflow, n := range f() {
			o.ObserveInt64(r.queueDepth, n, r.workflowOpts(workflow).observe...)
		}
		return nil
	}, r.queueDepth)
	if err != nil {
		return fmt.Errorf("metrics: queue depth: %w", err)
	}
	return nil
}

// Redelivery counts an attempt given to another worker (fuscia_redeliveries_total).
func (r *Recorder) Redelivery(ctx context.Context) {
	if r == nil {
		return
	}
	r.redeliveries.Add(ctx, 1)
}

// ObserveCluster makes workers and queue the sources of fuscia_workers{pool} and
// fuscia_queue_depth{pool}: the live workers and the attempts waiting for one, by pool. They
// ask NATS, so each collection gives them a context of a few seconds. It also makes
// fuscia_redeliveries_total appear at 0: a counter is exported from its first change, and
// a series that exists from the start is one a rate or an alert can be written on. Call it
// once.
func (r *Recorder) ObserveCluster(workers, queue func(ctx context.Context) map[string]int64) error {
	if r == nil {
		return nil
	}
	r.redeliveries.Add(context.Background(), 0)
	_, err := r.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		for pool, n := range workers(ctx) {
			o.ObserveInt64(r.workers, n, metric.WithAttributes(attribute.String("pool", pool)))
		}
		for pool, n := range queue(ctx) {
			o.ObserveInt64(r.queueDepth, n, metric.WithAttributes(attribute.String("pool", pool)))
		}
		return nil
	}, r.workers, r.queueDepth)
	if err != nil {
		return fmt.Errorf("metrics: cluster: %w", err)
	}
	return nil
}

// ObservePluginRestarts makes f the source of fuscia_plugin_restarts_total:
// at each collection f returns the number of plugin restarts since the
// process started (a monotonic count). Call it once per Recorder.
func (r *Recorder) ObservePluginRestarts(f func() int64) error {
	if r == nil {
		return nil
	}
	_, err := r.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveInt64(r.pluginRestarts, f())
		return nil
	}, r.pluginRestarts)
	if err != nil {
		return fmt.Errorf("metrics: plugin restarts: %w", err)
	}
	return nil
}

// workflowOpts returns the {workflow} attribute options.
func (r *Recorder) workflowOpts(workflow string) *attrOpts {
	return r.workflowSets.get(workflow, func(w string) attribute.Set {
		return attribute.NewSet(keyWorkflow.String(w))
	})
}

// attrOpts are the measurement options carrying one attribute set, as the
// slices passed to the instruments' variadic parameters: passing a
// prebuilt slice costs no allocation, while a one-option argument list
// escapes to the heap through the instrument interfaces.
type attrOpts struct {
	add     []metric.AddOption
	record  []metric.RecordOption
	observe []metric.ObserveOption
}

// attrCache maps label values to their prebuilt attribute options, so that
// recording neither builds an attribute set nor allocates on every call.
type attrCache[K comparable] struct {
	mu sync.RWMutex
	m  map[K]*attrOpts
}

// get returns the options for k, building its set with build on a miss.
func (c *attrCache[K]) get(k K, build func(K) attribute.Set) *attrOpts {
	c.mu.RLock()
	opts, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return opts
	}
	opt := metric.WithAttributeSet(build(k))
	opts = &attrOpts{
		add:     []metric.AddOption{opt},
		record:  []metric.RecordOption{opt},
		observe: []metric.ObserveOption{opt},
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.m[k]; ok {
		return prev
	}
	if len(c.m) < maxCachedSets {
		if c.m == nil {
			c.m = make(map[K]*attrOpts)
		}
		c.m[k] = opts
	}
	return opts
}
