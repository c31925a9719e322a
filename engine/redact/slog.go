package redact

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
)

// Handler is a slog.Handler that scrubs every record of the secrets of a Set before passing it
// on: the message, and the values of its attributes (strings, errors, Stringers, byte slices,
// and anything else that formats to text holding a secret), groups included.
//
// Attributes bound with WithAttrs are scrubbed when they are bound, with the secrets known
// then. Bind ids and names that way (the engine binds execution ids and node addresses), and
// pass anything that may carry a secret with the record.
type Handler struct {
	next slog.Handler
	set  *Set
}

// NewHandler wraps next; a nil set returns next itself.
func NewHandler(next slog.Handler, set *Set) slog.Handler {
	if set == nil {
		return next
	}
	return &Handler{next: next, set: set}
}

// Enabled is next's.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle passes a scrubbed copy of r to next (r itself when no secret is known).
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	sc := h.set.Scrubber()
	if sc == nil {
		return h.next.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, sc.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(scrubAttr(sc, a))
		return true
	})
	return h.next.Handle(ctx, out)
}

// WithAttrs scrubs attrs now and binds them on next.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	sc := h.set.Scrubber()
	scrubbed := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		scrubbed[i] = scrubAttr(sc, a)
	}
	return &Handler{next: h.next.WithAttrs(scrubbed), set: h.set}
}

// WithGroup is next's, wrapped.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), set: h.set}
}

func scrubAttr(sc *Scrubber, a slog.Attr) slog.Attr {
	if sc == nil {
		return a
	}
	a.Key = sc.String(a.Key)
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(sc.String(v.String()))
	case slog.KindGroup:
		group := v.Group()
		attrs := make([]slog.Attr, len(group))
		for i, g := range group {
			attrs[i] = scrubAttr(sc, g)
		}
		a.Value = slog.GroupValue(attrs...)
	case slog.KindAny:
		a.Value = scrubAny(sc, v)
	default:
		a.Value = v // numbers, times, durations, booleans: no text to leak
	}
	return a
}

// scrubAny scrubs a value of kind Any. Errors and Stringers become their scrubbed text (the
// text handlers print anyway). Other values keep their type unless their text holds a secret:
// then the scrubbed text replaces them.
func scrubAny(sc *Scrubber, v slog.Value) slog.Value {
	switch x := v.Any().(type) {
	case error:
		return slog.StringValue(sc.String(x.Error()))
	case fmt.Stringer:
		return slog.StringValue(sc.String(x.String()))
	case json.RawMessage:
		return slog.AnyValue(json.RawMessage(sc.JSON(x)))
	case []byte:
		return slog.AnyValue(sc.Bytes(x))
	default:
		// The JSON handler writes the JSON form (which escapes what %v does not), the text
		// handler the %+v form: check both.
		if b, err := json.Marshal(x); err == nil && sc.Contains(string(b)) {
			return slog.AnyValue(json.RawMessage(sc.JSON(b)))
		}
		if text := fmt.Sprintf("%+v", x); sc.Contains(text) {
			return slog.StringValue(sc.String(text))
		}
		return v
	}
}
