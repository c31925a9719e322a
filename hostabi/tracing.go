package hostabi

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the spans Invoke records.
const tracerName = "github.com/fuscia/fuscia/hostabi"

// invokeTimes are when an attempt's instantiation began and ended (zero when it was not
// reached), for its spans.
type invokeTimes struct {
	start, instantiated time.Time
}

// instantiating and instantiatedAt note the instantiation's times; t may be nil (not traced).
func (t *invokeTimes) instantiating() {
	if t != nil {
		t.start = time.Now()
	}
}

func (t *invokeTimes) instantiatedAt(at time.Time) {
	if t != nil {
		t.instantiated = at
	}
}

// recordInvokeSpans records an attempt's "wasm instantiate" and "wasm call" spans under ctx's
// span, from the times noted while it ran: made after the fact, so that an attempt that is not
// traced pays nothing but one check of its context.
func recordInvokeSpans(ctx context.Context, parent trace.Span, module string, t invokeTimes, end time.Time, err error) {
	if t.start.IsZero() {
		return // failed before its instance was made: the attempt's span says why
	}
	tracer := parent.TracerProvider().Tracer(tracerName)
	attrs := trace.WithAttributes(attribute.String("fuscia.component", module))
	callStart := t.instantiated
	if callStart.IsZero() {
		callStart = end // the instantiation failed: no call
	}
	_, inst := tracer.Start(ctx, "wasm instantiate", attrs, trace.WithTimestamp(t.start))
	if t.instantiated.IsZero() && err != nil {
		inst.SetStatus(codes.Error, err.Error())
	}
	inst.End(trace.WithTimestamp(callStart))
	if t.instantiated.IsZero() {
		return
	}
	_, call := tracer.Start(ctx, "wasm call", attrs, trace.WithTimestamp(callStart))
	if err != nil {
		call.SetStatus(codes.Error, err.Error())
	}
	call.End(trace.WithTimestamp(end))
}
