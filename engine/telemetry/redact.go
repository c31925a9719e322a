package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/fuscia/fuscia/engine/redact"
)

// scrubExporter scrubs spans of the secrets of a redact.Set on their way to the exporter: the
// name, the status description (where the engine puts a failed attempt's error), string
// attributes, and events with their attributes (span.RecordError's exception.message) and
// links' attributes. It sits under the batcher, so spans exported after their run ended are
// scrubbed too: the set keeps every secret for the life of the process.
type scrubExporter struct {
	next sdktrace.SpanExporter
	set  *redact.Set
}

func (e scrubExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	sc := e.set.Scrubber()
	if sc == nil {
		return e.next.ExportSpans(ctx, spans)
	}
	out := make([]sdktrace.ReadOnlySpan, len(spans))
	for i, s := range spans {
		out[i] = scrubSpan(sc, s)
	}
	return e.next.ExportSpans(ctx, out)
}

func (e scrubExporter) Shutdown(ctx context.Context) error { return e.next.Shutdown(ctx) }

// scrubbedSpan is a span seen through the scrubber: the embedded span answers everything but
// the fields that carry text.
type scrubbedSpan struct {
	sdktrace.ReadOnlySpan
	name   string
	attrs  []attribute.KeyValue
	events []sdktrace.Event
	links  []sdktrace.Link
	status sdktrace.Status
}

func (s *scrubbedSpan) Name() string                     { return s.name }
func (s *scrubbedSpan) Attributes() []attribute.KeyValue { return s.attrs }
func (s *scrubbedSpan) Events() []sdktrace.Event         { return s.events }
func (s *scrubbedSpan) Links() []sdktrace.Link           { return s.links }
func (s *scrubbedSpan) Status() sdktrace.Status          { return s.status }

// scrubSpan returns s itself when it carries no secret, else a scrubbed view of it.
func scrubSpan(sc *redact.Scrubber, s sdktrace.ReadOnlySpan) sdktrace.ReadOnlySpan {
	v := &scrubbedSpan{ReadOnlySpan: s, name: sc.String(s.Name()), status: s.Status()}
	changed := v.name != s.Name()
	v.status.Description = sc.String(v.status.Description)
	changed = changed || v.status.Description != s.Status().Description
	var ch bool
	v.attrs, ch = scrubAttrs(sc, s.Attributes())
	changed = changed || ch
	for _, ev := range s.Events() {
		name := sc.String(ev.Name)
		attrs, ch := scrubAttrs(sc, ev.Attributes)
		changed = changed || ch || name != ev.Name
		ev.Name, ev.Attributes = name, attrs
		v.events = append(v.events, ev)
	}
	for _, l := range s.Links() {
		attrs, ch := scrubAttrs(sc, l.Attributes)
		changed = changed || ch
		l.Attributes = attrs
		v.links = append(v.links, l)
	}
	if !changed {
		return s
	}
	return v
}

// scrubAttrs returns attrs with their string values scrubbed (a new slice when any changed).
func scrubAttrs(sc *redact.Scrubber, attrs []attribute.KeyValue) ([]attribute.KeyValue, bool) {
	var out []attribute.KeyValue
	for i, kv := range attrs {
		nv, ok := scrubAttrValue(sc, kv.Value)
		if !ok {
			continue
		}
		if out == nil {
			out = append(make([]attribute.KeyValue, 0, len(attrs)), attrs...)
		}
		out[i] = attribute.KeyValue{Key: kv.Key, Value: nv}
	}
	if out == nil {
		return attrs, false
	}
	return out, true
}

func scrubAttrValue(sc *redact.Scrubber, v attribute.Value) (attribute.Value, bool) {
	switch v.Type() {
	case attribute.STRING:
		if s := sc.String(v.AsString()); s != v.AsString() {
			return attribute.StringValue(s), true
		}
	case attribute.STRINGSLICE:
		list := v.AsStringSlice()
		changed := false
		for i, s := range list {
			if c := sc.String(s); c != s {
				list[i], changed = c, true
			}
		}
		if changed {
			return attribute.StringSliceValue(list), true
		}
	}
	return v, false
}
