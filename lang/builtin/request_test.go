package builtin

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func TestParseCall(t *testing.T) {
	tests := []struct {
		input   string
		wantErr string
		check   func(t *testing.T, c *call)
	}{
		{input: `{"url": "https://example.com/a?b=c"}`, check: func(t *testing.T, c *call) {
			if c.req.Method != "GET" || c.limit != 10<<20 || c.timeout != 0 || c.req.Body != nil {
				t.Errorf("defaults: method %s, limit %d, timeout %s, body %v", c.req.Method, c.limit, c.timeout, c.req.Body)
			}
			if c.what != "GET https://example.com/a" {
				t.Errorf("what = %q", c.what)
			}
		}},
		{input: `{"url": "http://u:pw@example.com/", "body": null, "max_response_bytes": "512KiB", "timeout": "1m",
			"headers": {"host": "virtual.example", "X-A": "1"}}`, check: func(t *testing.T, c *call) {
			if c.req.Body != nil || c.limit != 512<<10 || c.timeout.String() != "1m0s" {
				t.Errorf("body %v, limit %d, timeout %s", c.req.Body, c.limit, c.timeout)
			}
			if c.req.Host != "virtual.example" || c.req.Header.Get("Host") != "" || c.req.Header.Get("X-A") != "1" {
				t.Errorf("host %q, headers %v", c.req.Host, c.req.Header)
			}
			if strings.Contains(c.what, "pw") {
				t.Errorf("what = %q shows the password", c.what)
			}
		}},
		{input: `{"url": "http://example.com/", "method": "PATCH", "body": 12.50}`, check: func(t *testing.T, c *call) {
			b, _ := io.ReadAll(c.req.Body)
			if string(b) != "12.50" || c.req.Header.Get("Content-Type") != "application/json" {
				t.Errorf("body %q, content type %q", b, c.req.Header.Get("Content-Type"))
			}
		}},
		{input: `{"url": "http://example.com/", "max_response_bytes": 0}`, check: func(t *testing.T, c *call) {
			if c.limit != 0 {
				t.Errorf("limit %d; want 0", c.limit)
			}
		}},
		{input: `{"url": "ftp://example.com/"}`, wantErr: "url: ftp://example.com/ is not an absolute http or https URL"},
		{input: `{"url": "/relative"}`, wantErr: "not an absolute http or https URL"},
		{input: `{"url": "http://example.com/", "timeout": "soon"}`, wantErr: `timeout: invalid duration "soon"`},
		{input: `{"url": "http://example.com/", "max_response_bytes": "10 parsecs"}`, wantErr: "max_response_bytes: invalid size"},
		{input: `{"url": "http://example.com/", "max_response_bytes": -1}`, wantErr: "max_response_bytes: must be a whole number"},
		{input: `{"url": "http://example.com/", "headers": {"Bad Name": "v"}}`, wantErr: `headers: "Bad Name" is not a valid header name`},
	}
	for _, tc := range tests {
		var in httpInput
		if err := json.Unmarshal([]byte(tc.input), &in); err != nil {
			t.Fatal(err)
		}
		c, err := parseCall(in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("parseCall(%s): error %v; want one containing %q", tc.input, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseCall(%s): %v", tc.input, err)
			continue
		}
		tc.check(t, c)
	}
}
