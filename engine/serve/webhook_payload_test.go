package serve

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fuscia/fuscia/internal/bounds"
)

// TestWebhookPayloadNotUTF8: a body that is not UTF-8 reaches the run byte for byte, as
// body_base64 with body null, whatever its media type; a UTF-8 body has no body_base64.
func TestWebhookPayloadNotUTF8(t *testing.T) {
	type payload struct {
		Body       json.RawMessage `json:"body"`
		BodyBase64 *string         `json:"body_base64"`
	}
	decode := func(t *testing.T, raw json.RawMessage) payload {
		t.Helper()
		var p payload
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatalf("%v\n%s", err, raw)
		}
		return p
	}
	for _, tc := range []struct {
		name, contentType string
		body              []byte
	}{
		{"text with a Latin-1 byte", "text/plain", []byte("caf\xe9 \xff\xfe end")},
		{"binary without a type", "", []byte{0x00, 0x80, 0xc3, 0x28, 0xff, 'x'}},
		{"JSON whose string is not UTF-8", "application/json", []byte("{\"name\": \"caf\xe9\"}")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/hooks/in", nil)
			if tc.contentType != "" {
				r.Header.Set("Content-Type", tc.contentType)
			}
			raw, err := webhookPayload(r, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			p := decode(t, raw)
			if p.BodyBase64 == nil {
				t.Fatalf("no body_base64: %s", raw)
			}
			got, err := base64.StdEncoding.DecodeString(*p.BodyBase64)
			if err != nil || !bytes.Equal(got, tc.body) {
				t.Errorf("body_base64 decodes to %q (%v), want the exact body %q", got, err, tc.body)
			}
			if string(p.Body) != "null" {
				t.Errorf("body = %s, want null beside body_base64", p.Body)
			}
		})
	}
	r := httptest.NewRequest("POST", "/hooks/in", nil)
	r.Header.Set("Content-Type", "text/plain")
	raw, err := webhookPayload(r, []byte("café ✓"))
	if err != nil {
		t.Fatal(err)
	}
	if p := decode(t, raw); p.BodyBase64 != nil || string(p.Body) != `"café ✓"` {
		t.Errorf("a UTF-8 body: body %s, body_base64 %v; want the string and no body_base64", p.Body, p.BodyBase64)
	}
}

// payloadByEncodingJSON is webhookPayload as it was written with encoding/json: the reference
// the hand-appended bytes are held to.
func payloadByEncodingJSON(r *http.Request, body []byte) (json.RawMessage, error) {
	p := struct {
		Method     string            `json:"method"`
		Path       string            `json:"path"`
		Query      map[string]string `json:"query"`
		Headers    map[string]string `json:"headers"`
		Body       any               `json:"body"`
		BodyBase64 string            `json:"body_base64,omitempty"`
	}{Method: r.Method, Path: r.URL.Path, Query: joinValues(r.URL.Query()), Headers: requestHeaders(r)}
	jsonType := isJSON(r.Header.Get("Content-Type"))
	switch {
	case jsonType && len(strings.TrimSpace(string(body))) == 0:
		p.Body = nil
	case jsonType && !json.Valid(body):
		return nil, errNotJSON
	case !utf8.Valid(body):
		p.BodyBase64 = base64.StdEncoding.EncodeToString(body)
	case jsonType:
		if err := bounds.CheckJSON(body); err != nil {
			return nil, fmt.Errorf("the body is JSON that Fuscia does not take: %w", err)
		}
		p.Body = json.RawMessage(body)
	default:
		p.Body = string(body)
	}
	return json.Marshal(p)
}

// samePayload checks that webhookPayload gives encoding/json's bytes, or its error, for a
// request with these parts.
func samePayload(t *testing.T, target, contentType string, headers [][2]string, body []byte) {
	t.Helper()
	r := httptest.NewRequest("POST", "/", nil)
	u, err := url.ParseRequestURI(target)
	if err != nil {
		return // not a request a server would be handed
	}
	r.URL = u
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	for _, h := range headers {
		r.Header.Add(h[0], h[1])
	}
	got, gotErr := webhookPayload(r, body)
	want, wantErr := payloadByEncodingJSON(r, body)
	if (gotErr != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
		t.Errorf("target %q, type %q, headers %q, body %q:\n got %s (%v)\nwant %s (%v)",
			target, contentType, headers, body, got, gotErr, want, wantErr)
	}
}

// TestWebhookPayloadJSON: the payload, appended by hand, is byte for byte what encoding/json
// made of it: key order, HTML escapes, non-ASCII and invalid UTF-8 in headers, compacted JSON
// bodies, base64 for bodies that are not UTF-8, and the same refusals.
func TestWebhookPayloadJSON(t *testing.T) {
	hs := [][2]string{{"X-B", "2"}, {"X-A", "1"}, {"X-A", "one & <two>"}, {"X-Ünï", "café\u2028"}, {"X-Bad", "\xff\xfe"}}
	for _, tc := range []struct {
		target, contentType string
		body                string
	}{
		{"/hooks/in", "application/json", `{"id": 7}`},
		{"/hooks/in?b=2&a=1&a=3&c=%3Cx%3E", "application/json", " {\n \"a\" : [1, 2, {\"<b>\": \"&\"}] }\n"},
		{"/hooks/in", "application/json", "   "},
		{"/hooks/in", "application/json", ""},
		{"/hooks/in", "application/json", `{"id": `},
		{"/hooks/in", "application/json", "{\"s\": \"caf\xe9\"}"},
		{"/hooks/in", "application/json", "{\"s\": \"caf\xe9\""},
		{"/hooks/in", "application/json", "\"line\u2028para\u2029\""},
		{"/hooks/in", "application/vnd.api+json; charset=utf-8", `[1,2,3]`},
		{"/hooks/in", "text/plain", "café ✓ <b>&</b> \"quoted\" \\ \t\n"},
		{"/hooks/in", "", "\x00\x80\xc3\x28\xffx"},
		{"/hooks/in", "", ""},
		{"/hooks/%C3%A9t%C3%A9", "application/x-www-form-urlencoded", "a=1&b=2"},
		// Refused with a 400 instead of a run that could not be read back (nested past what
		// the journal's reader takes) or would write a number out in ten million digits.
		{"/hooks/in", "application/json", strings.Repeat("[", 9999) + strings.Repeat("]", 9999)},
		{"/hooks/in", "application/json", `{"id": 1e10000000}`},
	} {
		samePayload(t, tc.target, tc.contentType, nil, []byte(tc.body))
		samePayload(t, tc.target, tc.contentType, hs, []byte(tc.body))
	}
}

func FuzzWebhookPayloadJSON(f *testing.F) {
	f.Add("/hooks/in?x=1", "application/json", "X-A", "v", []byte(`{"id": 7}`))
	f.Add("/h?a=%3C", "text/plain", "X-Z", "<&>", []byte("caf\xe9"))
	f.Add("/h", "application/json", "X-A", "\u2028", []byte("[\"\u2029\", 1.5e3 ]"))
	f.Fuzz(func(t *testing.T, target, contentType, hName, hValue string, body []byte) {
		// Any name and value: the encoding must match for whatever the header map holds.
		samePayload(t, target, contentType, [][2]string{{hName, hValue}}, body)
	})
}

// TestStartedAnswerJSON: a 202's body, appended by hand, is what writeJSON makes of
// {"execution_id", "queued" (omitted when false)}.
func TestStartedAnswerJSON(t *testing.T) {
	type startedAnswer struct {
		ID     string `json:"execution_id"`
		Queued bool   `json:"queued,omitempty"`
	}
	for _, st := range []Started{{ID: "ex-01JDQ8"}, {ID: "ex-01JDQ8", Queued: true}, {ID: "<odd & \"id\">\u2028é"}, {}} {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(startedAnswer{ID: st.ID, Queued: st.Queued}); err != nil {
			t.Fatal(err)
		}
		if got := appendStartedAnswer(nil, st); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%+v: %q, want %q", st, got, want.Bytes())
		}
	}
}
