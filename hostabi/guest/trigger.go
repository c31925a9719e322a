package guest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
)

// Event types of a trigger request.
const (
	// EventPoll: the poll interval elapsed; look for something new.
	EventPoll = "poll"
	// EventWebhook: a request arrived at the workflow's webhook; Event.Request is set.
	EventWebhook = "webhook"
)

// Event is what woke a trigger.
type Event struct {
	// Type is EventPoll or EventWebhook.
	Type string
	// Request is the webhook's HTTP request; nil unless Type is EventWebhook.
	Request *WebhookRequest
}

// WebhookRequest is the HTTP request that reached a webhook trigger.
type WebhookRequest struct {
	Method string
	Path   string
	Query  url.Values
	// Headers maps each header name, as the host spelled it, to its value; several values of
	// one header are joined with ", ". Use Header to look one up regardless of case.
	Headers map[string]string
	// Body is the request body, decoded from base64.
	Body []byte
}

// Header returns the value of the header name, matched case-insensitively; "" when absent.
func (r *WebhookRequest) Header(name string) string { return lookupHeader(r.Headers, name) }

// Trigger registers fn as the handler of the component's trigger name, for poll and webhook
// events alike. Call it from an init function. fn's KV is the trigger's own scope, kept across
// invocations. An error fails the invocation; a validation error answers a webhook with 4xx.
//
// Trigger panics if name is empty or already registered.
func Trigger(name string, fn func(ctx Context, ev Event) (TriggerResult, error)) {
	if fn == nil {
		panic("guest: Trigger " + strconv.Quote(name) + " with a nil handler")
	}
	handlers.addTrigger(name, fn)
}

// eventJSON is an event on the wire.
type eventJSON struct {
	Type    string       `json:"type"`
	Request *webhookJSON `json:"request"`
}

type webhookJSON struct {
	Method     string      `json:"method"`
	Path       string      `json:"path"`
	Query      queryJSON   `json:"query"`
	Headers    headersJSON `json:"headers"`
	BodyBase64 string      `json:"body_base64"`
}

func (e *eventJSON) event() (Event, error) {
	ev := Event{Type: e.Type}
	if e.Request == nil && e.Type != EventWebhook {
		return ev, nil
	}
	ev.Request = &WebhookRequest{Query: url.Values{}, Headers: map[string]string{}}
	if w := e.Request; w != nil {
		body, err := decodeBase64(w.BodyBase64)
		if err != nil {
			return ev, errors.New("webhook body_base64: " + err.Error())
		}
		ev.Request.Method, ev.Request.Path, ev.Request.Body = w.Method, w.Path, body
		if w.Query != nil {
			ev.Request.Query = url.Values(w.Query)
		}
		if w.Headers != nil {
			ev.Request.Headers = w.Headers
		}
	}
	return ev, nil
}

// queryJSON decodes a query given as a raw string ("a=1&b=2"), or as an object whose values are
// strings or arrays of strings.
type queryJSON url.Values

func (q *queryJSON) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	var raw string
	if json.Unmarshal(b, &raw) == nil {
		v, err := url.ParseQuery(strings.TrimPrefix(raw, "?"))
		*q = queryJSON(v)
		return err
	}
	var m map[string]stringsJSON
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*q = make(queryJSON, len(m))
	for k, v := range m {
		(*q)[k] = v
	}
	return nil
}

// headersJSON decodes headers given as an object whose values are strings or arrays of
// strings; several values are joined with ", ".
type headersJSON map[string]string

func (h *headersJSON) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	var m map[string]stringsJSON
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*h = make(headersJSON, len(m))
	for k, v := range m {
		(*h)[k] = strings.Join(v, ", ")
	}
	return nil
}

// stringsJSON is a string or an array of strings.
type stringsJSON []string

func (s *stringsJSON) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*s = []string{one}
		return nil
	}
	return json.Unmarshal(b, (*[]string)(s))
}

func lookupHeader(h map[string]string, name string) string {
	if v, ok := h[name]; ok {
		return v
	}
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// decodeBase64 accepts standard base64 with or without padding.
func decodeBase64(s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
}
