package hostabi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/fuscia/fuscia/hostabi/capability"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/fuscia/fuscia/internal/netguard"
	"github.com/fuscia/fuscia/lang/schema"
)

// MaxHTTPResponseBytes bounds the body http_request hands a guest.
const MaxHTTPResponseBytes = 16 << 20

// maxRedirects is how many redirects http_request follows, each checked like the first URL.
const maxRedirects = 10

// HTTP is http_request for one component: its allowed hosts over the host's shared
// transport. A nil *HTTP refuses everything.
type HTTP struct {
	allowed []capability.HostPattern
	client  *http.Client
}

// httpRequest and httpResponse are the JSON of docs/reference/abi-v1.md's http_request.
type httpRequest struct {
	Method     string            `json:"method"`
	URL        string            `json:"url"`
	Headers    map[string]string `json:"headers"`
	BodyBase64 string            `json:"body_base64"`
	TimeoutMs  int64             `json:"timeout_ms"`
}

type httpResponse struct {
	Status     int               `json:"status"`
	Headers    map[string]string `json:"headers"`
	BodyBase64 string            `json:"body_base64"`
}

type httpFailure struct {
	Error string `json:"error"`
	Kind  string `json:"kind"`
}

// requestTimeout is the bound timeout_ms puts on an exchange; false for none: 0 or less, or
// more milliseconds than a time.Duration holds (292 years), which multiplied would wrap to a
// deadline already past.
func requestTimeout(ms int64) (time.Duration, bool) {
	if ms <= 0 || ms > math.MaxInt64/int64(time.Millisecond) {
		return 0, false
	}
	return time.Duration(ms) * time.Millisecond, true
}

// violationError is a refused destination: not in allowed_hosts, or never reachable.
type violationError struct{ msg string }

func (e *violationError) Error() string { return e.msg }

// HTTPFor returns the http_request of a component granted allowed (allowed_hosts patterns,
// already narrowed by the workflow).
func (h *Host) HTTPFor(allowed []string) (*HTTP, error) {
	x := &HTTP{}
	for _, s := range allowed {
		p, err := capability.ParseHostPattern(s)
		if err != nil {
			return nil, err
		}
		x.allowed = append(x.allowed, p)
	}
	x.client = &http.Client{
		Transport: h.transport(),
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			// A redirect is a new destination: checked like the first one.
			return x.check(req.URL)
		},
	}
	return x, nil
}

// transport is shared by every component: each request's destination is checked against
// its own component's patterns before it is sent, so a pooled connection carries only
// requests that were allowed.
func (h *Host) transport() *http.Transport {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.httpTransport == nil {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		h.httpTransport = &http.Transport{
			// No proxy: the dialer must see the real destination to refuse link-local and
			// metadata addresses.
			Proxy:                 nil,
			DialContext:           guardedDial(d),
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          64,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
		}
	}
	return h.httpTransport
}

// guardedDial resolves the name itself and connects only to addresses that are neither
// link-local nor cloud metadata, whatever allowed_hosts says: DNS answers that change
// between check and connect cannot get around it.
func guardedDial(d *net.Dialer) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		if netguard.MetadataName(host) {
			return nil, &violationError{fmt.Sprintf("%s is a cloud metadata host name, which components may never reach", host)}
		}
		var addrs []netip.Addr
		if a, err := netip.ParseAddr(host); err == nil {
			addrs = []netip.Addr{a}
		} else if addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host); err != nil {
			return nil, err
		}
		for _, a := range addrs {
			if why := netguard.Blocked(a); why != "" {
				return nil, &violationError{fmt.Sprintf("%s resolves to %s, %s, which components may never reach", host, a, why)}
			}
		}
		var first error
		for _, a := range addrs {
			c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
			if err == nil {
				return c, nil
			}
			if first == nil {
				first = err
			}
		}
		if first == nil {
			first = fmt.Errorf("lookup %s: no addresses", host)
		}
		return nil, first
	}
}

// check refuses a URL no pattern allows.
func (x *HTTP) check(u *url.URL) error {
	if x != nil {
		for _, p := range x.allowed {
			if p.Allows(u) {
				return nil
			}
		}
	}
	granted := "no hosts"
	if x != nil && len(x.allowed) > 0 {
		names := make([]string, len(x.allowed))
		for i, p := range x.allowed {
			names[i] = p.String()
		}
		granted = strings.Join(names, ", ")
	}
	return &violationError{fmt.Sprintf("http_request to %s://%s%s refused: host %q is not in allowed_hosts (granted: %s)",
		u.Scheme, u.Host, u.EscapedPath(), u.Hostname(), granted)}
}

// Do performs the request JSON of http_request and returns the response JSON. violation is
// set when a destination was refused; err only when the request JSON itself is malformed (a
// guest bug, which traps).
func (x *HTTP) Do(ctx context.Context, reqJSON []byte) (resp []byte, violation string, err error) {
	var q httpRequest
	if err := json.Unmarshal(reqJSON, &q); err != nil {
		return nil, "", fmt.Errorf("the request is not valid JSON: %v", err)
	}
	body, err := base64.StdEncoding.DecodeString(q.BodyBase64)
	if err != nil {
		return nil, "", fmt.Errorf("body_base64 is not base64: %v", err)
	}
	fail := func(kind, format string, args ...any) ([]byte, string, error) {
		msg := fmt.Sprintf(format, args...)
		b, _ := json.Marshal(httpFailure{Error: msg, Kind: kind})
		if kind == string(SandboxViolation) {
			return b, msg, nil
		}
		return b, "", nil
	}
	u, err := url.Parse(q.URL)
	if err != nil || u.Host == "" {
		return fail("network", "invalid url %q: an absolute http or https URL is needed", q.URL)
	}
	if err := x.check(u); err != nil {
		return fail(string(SandboxViolation), "%s", err)
	}
	method := strings.ToUpper(q.Method)
	if method == "" {
		method = http.MethodGet
	}
	if d, ok := requestTimeout(q.TimeoutMs); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), strings.NewReader(string(body)))
	if err != nil {
		return fail("network", "%s %s: %v", method, q.URL, err)
	}
	for k, v := range q.Headers {
		req.Header.Set(k, v)
	}
	r, err := x.client.Do(req)
	if err != nil {
		var v *violationError
		if errors.As(err, &v) {
			return fail(string(SandboxViolation), "%s", v.msg)
		}
		return fail("network", "%s %s: %v", method, q.URL, unwrapURLError(err))
	}
	defer r.Body.Close()
	data, err := io.ReadAll(io.LimitReader(r.Body, MaxHTTPResponseBytes+1))
	if err != nil {
		return fail("network", "%s %s: reading the response: %v", method, q.URL, err)
	}
	if len(data) > MaxHTTPResponseBytes {
		return fail("network", "%s %s: the response is larger than %s", method, q.URL, schema.FormatSize(MaxHTTPResponseBytes))
	}
	out := httpResponse{Status: r.StatusCode, Headers: make(map[string]string, len(r.Header)), BodyBase64: base64.StdEncoding.EncodeToString(data)}
	for k, vs := range r.Header {
		out.Headers[strings.ToLower(k)] = strings.Join(vs, ", ")
	}
	b, err := json.Marshal(out)
	return b, "", err
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
