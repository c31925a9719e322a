package serve

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"testing"
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
