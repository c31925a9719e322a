package sdk

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// TriggerDef is a trigger of a plugin, made by Trigger and listed in Plugin.Triggers.
type TriggerDef struct {
	name          string
	description   string
	payloadSchema []byte // nil: none
	run           func(ctx context.Context, call *Call, ev Event) (TriggerResult, error)
	err           error // what is wrong with the definition; Serve reports it
}

// Name returns the trigger's name.
func (t TriggerDef) Name() string { return t.name }

// Trigger defines the trigger name, served by fn for poll and webhook events alike. fn's KV is
// the trigger's own scope, kept across invocations (for state such as "last row seen"); a
// trigger has no artifacts. An error fails the invocation; a validation error answers a
// webhook with 4xx. Of the options, Description and PayloadSchema apply.
func Trigger(name string, fn func(ctx context.Context, call *Call, ev Event) (TriggerResult, error), opts ...Option) TriggerDef {
	o := collect(opts)
	o.notFor("trigger", "InputSchema", "OutputSchema", "Validate")
	if name == "" {
		o.errs = append(o.errs, errors.New("a trigger needs a name"))
	}
	if fn == nil {
		o.errs = append(o.errs, errors.New("nil handler"))
	}
	t := TriggerDef{name: name, description: o.description, payloadSchema: o.payloadSchema, run: fn}
	if len(o.errs) > 0 {
		t.err = fmt.Errorf("trigger %s: %w", strconv.Quote(name), errors.Join(o.errs...))
	}
	return t
}

// Event types.
const (
	// EventPoll: the poll interval elapsed; look for something new.
	EventPoll = "poll"
	// EventWebhook: a request arrived at the workflow's webhook; Event.Request is set.
	EventWebhook = "webhook"
)

// Event is what woke a trigger.
type Event struct {
	// Type is EventPoll or EventWebhook.
	Type string `json:"type"`
	// Request is the webhook's HTTP request; nil unless Type is EventWebhook.
	Request *WebhookRequest `json:"request,omitempty"`
}

// WebhookRequest is the HTTP request that reached a webhook trigger, as Fuscia sends it.
type WebhookRequest struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	// Query maps each query parameter to its value; several values are joined with ", ".
	Query map[string]string `json:"query"`
	// Headers maps each header name, as the host spelled it, to its value; several values of
	// one header are joined with ", ". Use Header to look one up regardless of case.
	Headers map[string]string `json:"headers"`
	// BodyBase64 is the body in standard base64; Body decodes it.
	BodyBase64 string `json:"body_base64"`
}

// Body returns the request body, decoded from base64 (with or without padding).
func (r *WebhookRequest) Body() ([]byte, error) {
	if r.BodyBase64 == "" {
		return nil, nil
	}
	if b, err := base64.StdEncoding.DecodeString(r.BodyBase64); err == nil {
		return b, nil
	}
	b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(r.BodyBase64, "="))
	if err != nil {
		return nil, fmt.Errorf("webhook body: %w", err)
	}
	return b, nil
}

// Header returns the value of the header name, matched case-insensitively; "" when absent.
func (r *WebhookRequest) Header(name string) string {
	if v, ok := r.Headers[name]; ok {
		return v
	}
	for k, v := range r.Headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// UnmarshalJSON reads a request leniently, as the Wasm guest SDK does, so that a host that
// sends a query as a raw string ("a=1&b=2") or several values of a header as an array is
// understood too.
func (r *WebhookRequest) UnmarshalJSON(b []byte) error {
	var w struct {
		Method     string                     `json:"method"`
		Path       string                     `json:"path"`
		Query      json.RawMessage            `json:"query"`
		Headers    map[string]json.RawMessage `json:"headers"`
		BodyBase64 string                     `json:"body_base64"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = WebhookRequest{Method: w.Method, Path: w.Path, BodyBase64: w.BodyBase64,
		Query: map[string]string{}, Headers: map[string]string{}}
	if !isNull(w.Query) {
		var raw string
		if json.Unmarshal(w.Query, &raw) == nil {
			q, err := url.ParseQuery(strings.TrimPrefix(raw, "?"))
			if err != nil {
				return fmt.Errorf("webhook query: %w", err)
			}
			for k, v := range q {
				r.Query[k] = strings.Join(v, ",")
			}
		} else {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(w.Query, &m); err != nil {
				return fmt.Errorf("webhook query: %w", err)
			}
			for k, v := range m {
				s, err := stringOrStrings(v, ",")
				if err != nil {
					return fmt.Errorf("webhook query %s: %w", strconv.Quote(k), err)
				}
				r.Query[k] = s
			}
		}
	}
	for k, v := range w.Headers {
		s, err := stringOrStrings(v, ", ")
		if err != nil {
			return fmt.Errorf("webhook header %s: %w", strconv.Quote(k), err)
		}
		r.Headers[k] = s
	}
	return nil
}

// stringOrStrings reads a string, or an array of strings joined with sep.
func stringOrStrings(b []byte, sep string) (string, error) {
	var one string
	if json.Unmarshal(b, &one) == nil {
		return one, nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return "", errors.New("must be a string or an array of strings")
	}
	return strings.Join(many, sep), nil
}

// parseEvent reads a request's event; an absent one is a poll.
func parseEvent(raw []byte) (Event, error) {
	if isNull(raw) {
		return Event{Type: EventPoll}, nil
	}
	var ev Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return Event{}, fmt.Errorf("malformed event: %w", err)
	}
	if ev.Type == EventWebhook && ev.Request == nil {
		ev.Request = &WebhookRequest{Query: map[string]string{}, Headers: map[string]string{}}
	}
	return ev, nil
}
