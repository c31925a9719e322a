package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang/schema"
)

// snippetBytes is how much of an error response's body its message quotes.
const snippetBytes = 200

// httpOutput is builtin.http's output, and the partial output of its errors.
type httpOutput struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	// Body is parsed JSON (with json.Number for numbers) or a string; nil when the body was
	// too large to keep.
	Body any `json:"body,omitempty"`
}

// response reads resp's body and classifies it: 2xx succeeds, 429 and 5xx are retryable,
// anything else is fatal.
func (c *call) response(ctx, reqCtx context.Context, start time.Time, resp *http.Response) outcome.Result {
	out := httpOutput{Status: resp.StatusCode, Headers: joinHeaders(resp.Header)}
	// A declared length over the limit fails before reading anything. A HEAD response
	// declares the length of a body it does not have.
	tooBig := resp.ContentLength > c.limit && resp.Request.Method != http.MethodHead
	var body []byte
	if !tooBig {
		var err error
		body, tooBig, err = readLimited(resp.Body, c.limit)
		if err != nil {
			return c.failed(ctx, reqCtx, start, fmt.Errorf("reading the response body: %w", err),
				"did not send its whole body")
		}
	}
	if !tooBig {
		out.Body = bodyValue(resp.Header.Get("Content-Type"), body)
	}
	output, err := marshal(out)
	if err != nil {
		return outcome.Fail(outcome.Fatal, "builtin.http: %s: encoding the output: %v", c.what, err)
	}
	limitMsg := fmt.Sprintf("response body is larger than max_response_bytes (%s)", schema.FormatSize(c.limit))
	code := resp.StatusCode
	if code >= 200 && code <= 299 {
		if tooBig {
			res := outcome.Fail(outcome.DataLimitExceeded, "builtin.http: %s: %s", c.what, limitMsg)
			res.Output = output
			return res
		}
		return outcome.OK(output)
	}

	msg := fmt.Sprintf("HTTP %s from %s", statusText(resp), c.what)
	if resp.Request.Response != nil {
		if c.hide != nil {
			// The server chose the new URL from the sensitive one (a trailing slash added…).
			msg += " (redirected to " + sensitiveURL(resp.Request.URL) + ")"
		} else {
			msg += " (redirected to " + displayURL(resp.Request.URL) + ")"
		}
	}
	kind := outcome.Fatal
	switch {
	case code == http.StatusTooManyRequests, code >= 500 && code <= 599:
		kind = outcome.Retryable
	case code >= 300 && code <= 399:
		msg += " " + notFollowed(resp)
	case code < 200:
		msg += " (an informational status is not a final answer)"
	}
	if tooBig {
		msg += ": the " + limitMsg + "; it was not kept"
	} else if s := snippet(body); s != "" {
		if c.hide != nil {
			s = c.hide(s) // an error page often repeats the path it did not find
		}
		msg += ": " + s
	}
	res := outcome.Fail(kind, "%s", msg)
	res.Output = output
	if kind == outcome.Retryable {
		if d, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			res.BackoffHintMs = d.Milliseconds()
		}
	}
	return res
}

// notFollowed says why a 3xx response is the answer.
func notFollowed(resp *http.Response) string {
	if resp.Header.Get("Location") == "" {
		return "(a redirect without a Location is not followed)"
	}
	n := 0
	for r := resp.Request; r.Response != nil; r = r.Response.Request {
		n++
	}
	if n >= maxRedirects {
		return fmt.Sprintf("(not followed: redirects are followed up to %d times)", maxRedirects)
	}
	return "(this status is not followed as a redirect)"
}

// statusText is "503 Service Unavailable".
func statusText(resp *http.Response) string {
	text := http.StatusText(resp.StatusCode)
	if text == "" {
		text = strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)))
	}
	return strings.TrimSpace(strconv.Itoa(resp.StatusCode) + " " + text)
}

// joinHeaders maps canonical header names to their values joined with ", ".
func joinHeaders(h http.Header) map[string]string {
	m := make(map[string]string, len(h))
	for name, values := range h {
		name = http.CanonicalHeaderKey(name)
		if prev, ok := m[name]; ok {
			values = append([]string{prev}, values...)
		}
		m[name] = strings.Join(values, ", ")
	}
	return m
}

// bodyValue is the body in the output: parsed JSON when the media type is JSON and the body
// parses, else the text, with invalid UTF-8 replaced.
func bodyValue(contentType string, body []byte) any {
	if isJSONMedia(contentType) {
		if v, ok := parseJSON(body); ok {
			return v
		}
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

// isJSONMedia reports whether a Content-Type is application/json or a +json type.
func isJSONMedia(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		// A malformed parameter should not hide the media type.
		mt, _, _ = strings.Cut(contentType, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// parseJSON parses one JSON document, numbers as json.Number so that big integers and
// decimals keep every digit.
func parseJSON(b []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false // something after the document
	}
	return v, true
}

// marshal encodes v without HTML escaping: the output is data, not a web page.
func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// snippet is the start of an error response's body for its message, on one line.
func snippet(body []byte) string {
	cut := len(body) > snippetBytes
	if cut {
		n := snippetBytes
		for n > 0 && !utf8.RuneStart(body[n]) {
			n-- // do not split a character
		}
		body = body[:n]
	}
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(body), "\uFFFD")), " ")
	if cut && s != "" {
		s += "…"
	}
	return s
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(h string, now time.Time) (time.Duration, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(h, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		// Capped where milliseconds would overflow int64.
		return time.Duration(min(n, int64(time.Duration(1<<63-1)/time.Second))) * time.Second, true
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// readLimited reads r to its end, up to limit bytes. It reads at most one byte more than
// limit, to tell that there is more; tooBig is then true and the bytes are dropped.
func readLimited(r io.Reader, limit int64) (b []byte, tooBig bool, err error) {
	n := limit
	if n < math.MaxInt64 {
		n++
	}
	b, err = io.ReadAll(io.LimitReader(r, n))
	if err != nil {
		return nil, false, err
	}
	if int64(len(b)) > limit {
		return nil, true, nil
	}
	return b, false, nil
}
