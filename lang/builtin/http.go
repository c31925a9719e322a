package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/fuscia/fuscia/internal/outcome"
)

const (
	// defaultMaxResponse is max_response_bytes' default, the HTTP response body limit of
	// docs/reference/language.md.
	defaultMaxResponse = 10 << 20
	// maxRedirects is how many redirects a request follows; the response to the next one is
	// the answer (a fatal error, as a 3xx status).
	maxRedirects = 10
)

type httpInput struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	// Body stays raw: a JSON string is sent as its text, anything else as JSON.
	Body    json.RawMessage `json:"body"`
	Timeout string          `json:"timeout"`
	// MaxResponseBytes is an integer or a size string.
	MaxResponseBytes json.RawMessage `json:"max_response_bytes"`
	AllowHosts       []string        `json:"allow_hosts"`

	// sensitiveURL: the URL was derived from a secret, so messages name only its scheme and
	// host (sensitive_url.go).
	sensitiveURL bool
}

// newTransport returns a transport that connects through g.
func newTransport(g *guard) *http.Transport {
	return &http.Transport{
		// No proxy, not even from the environment: through a proxy the dialer would see the
		// proxy's address, and the SSRF guard could not check the real destination.
		Proxy:       nil,
		DialContext: g.dialContext,
		// A custom DialContext turns HTTP/2 off unless asked for.
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   16, // max_parallel's default
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: 1 * time.Second,
	}
}

// newClient returns a client without a cookie jar (attempts must not share state) that
// follows up to maxRedirects redirects.
func newClient(t http.RoundTripper) *http.Client {
	return &http.Client{Transport: t, CheckRedirect: checkRedirect}
}

// redirectError is a redirect that cannot be followed; it makes the attempt fatal.
type redirectError struct{ msg string }

func (e *redirectError) Error() string { return e.msg }

func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		// Answer with the redirect itself; call.response makes it a fatal error.
		return http.ErrUseLastResponse
	}
	if s := req.URL.Scheme; s != "http" && s != "https" {
		return &redirectError{fmt.Sprintf("redirected to a %s URL; only http and https are followed", s)}
	}
	// The guard checks the new destination when the transport dials it.
	return nil
}

// call is one builtin.http attempt, parsed.
type call struct {
	req     *http.Request
	what    string // "GET http://host/path", for messages
	timeout time.Duration
	limit   int64
	allow   []string
	// hide removes the sensitive URL's parts from text quoted in a message (the response
	// body); nil when the URL is not sensitive.
	hide func(string) string
}

func (r *Runner) http(ctx context.Context, q Request) outcome.Result {
	var in httpInput
	if bad := decodeInput("http", q.Input, &in); bad != nil {
		return *bad
	}
	in.sensitiveURL = q.sensitive("/url")
	c, err := parseCall(in)
	if err != nil {
		return outcome.Fail(outcome.Validation, "builtin.http: %v", err)
	}
	client := r.client
	if len(c.allow) > 0 && !r.replaced {
		// Its own transport, closed when done: a connection that allow_hosts let through must
		// not be reused by a request that does not list the host.
		t := newTransport(r.guard.with(c.allow))
		// A dial the transport finishes after the request gave up parks its connection in
		// the idle pool, which nobody closes once this function returns; let it expire soon.
		t.IdleConnTimeout = time.Second
		defer t.CloseIdleConnections()
		client = newClient(t)
	}
	reqCtx := ctx
	if c.timeout > 0 {
		var cancel context.CancelFunc
		reqCtx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	start := time.Now()
	resp, err := client.Do(c.req.WithContext(reqCtx))
	if err != nil {
		return c.failed(ctx, reqCtx, start, err, "did not answer")
	}
	defer resp.Body.Close()
	res := c.response(ctx, reqCtx, start, resp)
	q.logf("debug", "%s: %s in %s", c.what, resultSummary(resp, res), round(time.Since(start)))
	return res
}

// displayURL is u for messages and logs: without user info, query or fragment, which may
// hold credentials or tokens.
func displayURL(u *url.URL) string {
	v := *u
	v.User = nil
	v.RawQuery, v.ForceQuery = "", false
	v.Fragment, v.RawFragment = "", ""
	return v.String()
}

// failed is the result of an attempt that got no (whole) response: err is the client's or
// the body reader's error, doing what the request did not do in time.
func (c *call) failed(ctx, reqCtx context.Context, start time.Time, err error, doing string) outcome.Result {
	elapsed := round(time.Since(start))
	if ctx.Err() != nil {
		return ended(ctx,
			fmt.Sprintf("builtin.http: %s %s before the attempt's deadline, after %s (timeout)", c.what, doing, elapsed),
			fmt.Sprintf("builtin.http: %s cancelled after %s", c.what, elapsed))
	}
	if reqCtx.Err() != nil {
		return outcome.Fail(outcome.Timeout, "builtin.http: %s %s within %s (timeout)", c.what, doing, c.timeout)
	}
	// The client's *url.Error repeats the whole URL, query included; keep only its cause.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ref *refusal
	if errors.As(err, &ref) {
		return outcome.Fail(outcome.SandboxViolation, "builtin.http: %s refused: %v", c.what, ref)
	}
	var red *redirectError
	if errors.As(err, &red) {
		return outcome.Fail(outcome.Fatal, "builtin.http: %s: %v", c.what, red)
	}
	// Refused or reset connections, DNS and TLS failures may pass; let the retry policy decide.
	return outcome.Fail(outcome.Retryable, "builtin.http: %s failed: %v", c.what, err)
}

// resultSummary is the log line's account of a response.
func resultSummary(resp *http.Response, res outcome.Result) string {
	s := "HTTP " + statusText(resp)
	if res.Type == outcome.Failure {
		s += " (" + string(res.Kind) + ")"
	}
	return s
}
