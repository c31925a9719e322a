package builtin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/fuscia/fuscia/lang/schema"
)

// parseCall makes the request of an input and applies the schema's defaults.
func parseCall(in httpInput) (*call, error) {
	c := &call{limit: defaultMaxResponse, allow: in.AllowHosts}
	method := in.Method
	if method == "" {
		method = http.MethodGet
	}
	u, err := url.Parse(in.URL)
	if err != nil {
		if in.sensitiveURL {
			// The cause quotes the bad part of the URL.
			return nil, errors.New("url: the URL, which is sensitive, does not parse as a URL")
		}
		// Only the cause: the *url.Error repeats the URL, query and all.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("url: it does not parse as a URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		if in.sensitiveURL {
			return nil, errors.New("url: the URL, which is sensitive, is not an absolute http or https URL")
		}
		return nil, fmt.Errorf("url: %s is not an absolute http or https URL", displayURL(u))
	}
	c.what = method + " " + displayURL(u)
	if in.sensitiveURL {
		c.what = method + " " + sensitiveURL(u)
		c.hide = urlHider(u)
	}
	if in.Timeout != "" {
		// "0s" adds no bound, as a zero http.Client.Timeout does; the node's timeout still
		// applies through ctx.
		if c.timeout, err = schema.ParseDuration(in.Timeout); err != nil {
			return nil, fmt.Errorf("timeout: %w", err)
		}
	}
	if c.limit, err = parseLimit(in.MaxResponseBytes); err != nil {
		return nil, fmt.Errorf("max_response_bytes: %w", err)
	}
	body, jsonBody := requestBody(in.Body)
	var rd io.Reader
	if body != nil {
		// A bytes.Reader lets the client send the body again on a 307 or 308 redirect.
		rd = bytes.NewReader(body)
	}
	c.req, err = http.NewRequest(method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	if err := setHeaders(c.req, in.Headers); err != nil {
		return nil, err
	}
	if jsonBody && c.req.Header.Get("Content-Type") == "" {
		c.req.Header.Set("Content-Type", "application/json")
	}
	return c, nil
}

// requestBody returns the bytes to send for a body input, and whether they are JSON. A
// string is sent as its text; null or no body sends nothing.
func requestBody(raw json.RawMessage) (body []byte, isJSON bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return []byte(s), false
		}
	}
	return raw, true
}

// parseLimit reads max_response_bytes: an integer or a size string.
func parseLimit(raw json.RawMessage) (int64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return defaultMaxResponse, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
		return schema.ParseSize(s)
	}
	var n int64
	if err := json.Unmarshal(raw, &n); err != nil || n < 0 {
		return 0, fmt.Errorf("must be a whole number of bytes or a size such as \"512KiB\"; got %s", raw)
	}
	return n, nil
}

// setHeaders sets the input's headers on req, in name order so that names differing only
// in case resolve the same way every time. Errors name the header, never its value: values
// may be secrets.
func setHeaders(req *http.Request, headers map[string]string) error {
	names := make([]string, 0, len(headers))
	for name := range headers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		v := headers[name]
		if !validHeaderName(name) {
			return fmt.Errorf("headers: %q is not a valid header name", name)
		}
		if !validHeaderValue(v) {
			return fmt.Errorf("headers: the value of %q has a line break or control character", name)
		}
		if http.CanonicalHeaderKey(name) == "Host" {
			// The client ignores a Host header; the request's Host field is what it sends.
			req.Host = v
			continue
		}
		req.Header.Set(name, v)
	}
	return nil
}

// validHeaderName reports whether s is a token (RFC 9110, section 5.1).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// validHeaderValue reports whether s can be sent as a field value: no control characters
// but tab, so that no value can start a new header line.
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
