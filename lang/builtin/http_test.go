package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuscia/fuscia/internal/outcome"
)

// netLog records what a Runner did on the network, through the Options seams.
type netLog struct {
	mu      sync.Mutex
	dials   []string // "ip:port" addresses dialled
	lookups []string // host names resolved
}

func (l *netLog) Dials() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.dials...)
}

func (l *netLog) Lookups() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lookups...)
}

// testRunner returns a Runner whose dials and lookups are recorded. redirect maps a dialled
// address to the one really dialled (to stand a test server in for a refused address);
// hosts answers lookups of names it holds, other names go to the real resolver.
func testRunner(t *testing.T, redirect map[string]string, hosts map[string][]string) (*Runner, *netLog) {
	t.Helper()
	l := &netLog{}
	var d net.Dialer
	r := New(Options{
		dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			l.mu.Lock()
			l.dials = append(l.dials, address)
			l.mu.Unlock()
			if to, ok := redirect[address]; ok {
				address = to
			}
			return d.DialContext(ctx, network, address)
		},
		lookup: func(ctx context.Context, network, host string) ([]netip.Addr, error) {
			l.mu.Lock()
			l.lookups = append(l.lookups, host)
			l.mu.Unlock()
			if ips, ok := hosts[host]; ok {
				var addrs []netip.Addr
				for _, s := range ips {
					addrs = append(addrs, netip.MustParseAddr(s))
				}
				return addrs, nil
			}
			return net.DefaultResolver.LookupNetIP(ctx, network, host)
		},
	})
	t.Cleanup(r.Close)
	return r, l
}

// server is a test server on 127.0.0.1 that counts its requests.
type server struct {
	*httptest.Server
	requests atomic.Int64
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// output decodes an http output, numbers as json.Number.
func output(t *testing.T, raw json.RawMessage) (status int, headers map[string]string, body any) {
	t.Helper()
	var out struct {
		Status  int               `json:"status"`
		Headers map[string]string `json:"headers"`
		Body    any               `json:"body"`
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("output %s: %v", raw, err)
	}
	return out.Status, out.Headers, out.Body
}

func TestHTTP(t *testing.T) {
	t.Parallel()
	future := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name    string
		handler http.HandlerFunc
		input   func(url string) map[string]any // url is the server's URL
		// want* check the result; wantBody is compared as JSON text.
		wantType   outcome.Type
		wantKind   outcome.Kind
		wantMsg    []string
		wantStatus int
		wantBody   string
		wantHeader map[string]string
		wantHint   [2]int64 // BackoffHintMs range
	}{
		{
			name: "GET JSON",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodGet || r.URL.Path != "/data" || r.Header.Get("Idempotency-Key") != "" {
					http.Error(w, "bad request "+r.Method+" "+r.URL.Path, 400)
					return
				}
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				fmt.Fprint(w, `{"big": 12345678901234567890, "dec": 1.50, "html": "<a&b>"}`+"\n")
			},
			input:      func(u string) map[string]any { return map[string]any{"url": u + "/data"} },
			wantType:   outcome.Success,
			wantStatus: 200,
			wantBody:   `{"big":12345678901234567890,"dec":1.50,"html":"<a&b>"}`,
		},
		{
			name: "problem+json",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/problem+json")
				fmt.Fprint(w, `[1, "two"]`)
			},
			input:      urlOnly,
			wantType:   outcome.Success,
			wantStatus: 200,
			wantBody:   `[1,"two"]`,
		},
		{
			name: "invalid JSON kept as text",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"a": 1} trailing`)
			},
			input:      urlOnly,
			wantType:   outcome.Success,
			wantStatus: 200,
			wantBody:   `"{\"a\": 1} trailing"`,
		},
		{
			name: "text body",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				fmt.Fprint(w, "hello\n\xff")
			},
			input:      urlOnly,
			wantType:   outcome.Success,
			wantStatus: 200,
			wantBody:   "\"hello\\n\uFFFD\"", // the replacement character, as UTF-8
		},
		{
			name: "headers canonical and joined",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header()["x-multi"] = []string{"a", "b"}
				w.Header().Add("X-Single", "one")
				w.WriteHeader(204)
			},
			input:      urlOnly,
			wantType:   outcome.Success,
			wantStatus: 204,
			wantBody:   `""`,
			wantHeader: map[string]string{"X-Multi": "a, b", "X-Single": "one"},
		},
		{
			name: "POST object as JSON, 201",
			handler: func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" ||
					r.Header.Get("X-Token") != "s3cret" || string(b) != `{"a":1,"b":[true]}` {
					http.Error(w, fmt.Sprintf("got %s %q %q", r.Method, r.Header.Get("Content-Type"), b), 400)
					return
				}
				w.WriteHeader(201)
				fmt.Fprint(w, "created")
			},
			input: func(u string) map[string]any {
				return map[string]any{"method": "POST", "url": u, "headers": map[string]string{"x-token": "s3cret"},
					"body": map[string]any{"a": 1, "b": []bool{true}}}
			},
			wantType:   outcome.Success,
			wantStatus: 201,
			wantBody:   `"created"`,
		},
		{
			name: "JSON body keeps the user's Content-Type",
			handler: func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				fmt.Fprintf(w, "%s %s", r.Header.Get("Content-Type"), b)
			},
			input: func(u string) map[string]any {
				return map[string]any{"method": "PUT", "url": u, "body": []int{1},
					"headers": map[string]string{"content-type": "application/vnd.x+json"}}
			},
			wantType:   outcome.Success,
			wantStatus: 200,
			wantBody:   `"application/vnd.x+json [1]"`,
		},
		{
			name: "string body as is",
			handler: func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				fmt.Fprintf(w, "%q %s", r.Header.Get("Content-Type"), b)
			},
			input: func(u string) map[string]any {
				return map[string]any{"method": "POST", "url": u, "body": `{"not": "re-encoded"}`}
			},
			wantType:   outcome.Success,
			wantStatus: 200,
			wantBody:   `"\"\" {\"not\": \"re-encoded\"}"`,
		},
		{
			name: "HEAD",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", "999999")
			},
			input: func(u string) map[string]any {
				return map[string]any{"method": "HEAD", "url": u, "max_response_bytes": 10}
			},
			wantType:   outcome.Success,
			wantStatus: 200,
			wantBody:   `""`,
		},
		{
			name: "404 is fatal with partial output",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(404)
				fmt.Fprint(w, `{"error": "no such thing"}`)
			},
			input: func(u string) map[string]any {
				return map[string]any{"url": u + "/missing?token=QUERYSECRET",
					"headers": map[string]string{"Authorization": "Bearer HEADERSECRET"}}
			},
			wantType:   outcome.Failure,
			wantKind:   outcome.Fatal,
			wantMsg:    []string{"HTTP 404 Not Found from GET http://127.0.0.1:", `/missing: {"error": "no such thing"}`},
			wantStatus: 404,
			wantBody:   `{"error":"no such thing"}`,
		},
		{
			name: "429 with Retry-After seconds",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "7")
				http.Error(w, "slow down", 429)
			},
			input:      urlOnly,
			wantType:   outcome.Failure,
			wantKind:   outcome.Retryable,
			wantMsg:    []string{"HTTP 429 Too Many Requests from GET", ": slow down"},
			wantStatus: 429,
			wantBody:   `"slow down\n"`,
			wantHint:   [2]int64{7000, 7000},
		},
		{
			name: "503 with Retry-After date",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", future)
				w.WriteHeader(503)
				fmt.Fprint(w, strings.Repeat("x", 300))
			},
			input:      urlOnly,
			wantType:   outcome.Failure,
			wantKind:   outcome.Retryable,
			wantMsg:    []string{"HTTP 503 Service Unavailable from GET", ": " + strings.Repeat("x", 200) + "…"},
			wantStatus: 503,
			wantHint:   [2]int64{25000, 30000},
		},
		{
			name:       "500 without Retry-After",
			handler:    func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) },
			input:      urlOnly,
			wantType:   outcome.Failure,
			wantKind:   outcome.Retryable,
			wantMsg:    []string{"HTTP 500 Internal Server Error from GET http://127.0.0.1:"},
			wantStatus: 500,
			wantBody:   `""`,
		},
		{
			name: "304 is fatal",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(304)
			},
			input:      urlOnly,
			wantType:   outcome.Failure,
			wantKind:   outcome.Fatal,
			wantMsg:    []string{"HTTP 304 Not Modified", "not followed"},
			wantStatus: 304,
		},
		{
			name: "timeout input",
			handler: func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
			},
			input: func(u string) map[string]any {
				return map[string]any{"url": u, "timeout": "50ms"}
			},
			wantType: outcome.Failure,
			wantKind: outcome.Timeout,
			wantMsg:  []string{"did not answer within 50ms (timeout)"},
		},
		{
			name: "slow body hits the timeout",
			handler: func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprint(w, "start")
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
			},
			input: func(u string) map[string]any {
				return map[string]any{"url": u, "timeout": "100ms"}
			},
			wantType: outcome.Failure,
			wantKind: outcome.Timeout,
			wantMsg:  []string{"did not send its whole body within 100ms (timeout)"},
		},
		{
			name: "response cap, streamed",
			handler: func(w http.ResponseWriter, r *http.Request) {
				chunk := strings.Repeat("y", 1024)
				for range 64 {
					if _, err := fmt.Fprint(w, chunk); err != nil {
						return // the client stopped reading
					}
					w.(http.Flusher).Flush()
				}
			},
			input: func(u string) map[string]any {
				return map[string]any{"url": u, "max_response_bytes": "1KiB"}
			},
			wantType:   outcome.Failure,
			wantKind:   outcome.DataLimitExceeded,
			wantMsg:    []string{"response body is larger than max_response_bytes (1 KiB)"},
			wantStatus: 200,
		},
		{
			name: "response cap, declared length",
			handler: func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprint(w, strings.Repeat("z", 101))
			},
			input: func(u string) map[string]any {
				return map[string]any{"url": u, "max_response_bytes": 100}
			},
			wantType:   outcome.Failure,
			wantKind:   outcome.DataLimitExceeded,
			wantMsg:    []string{"response body is larger than max_response_bytes (100 bytes)"},
			wantStatus: 200,
		},
		{
			name: "body exactly at the cap",
			handler: func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprint(w, strings.Repeat("z", 100))
			},
			input: func(u string) map[string]any {
				return map[string]any{"url": u, "max_response_bytes": 100}
			},
			wantType:   outcome.Success,
			wantStatus: 200,
			wantBody:   `"` + strings.Repeat("z", 100) + `"`,
		},
		{
			name: "invalid header value",
			input: func(u string) map[string]any {
				return map[string]any{"url": u, "headers": map[string]string{"Authorization": "HEADERSECRET\r\nX-Evil: 1"}}
			},
			wantType: outcome.Failure,
			wantKind: outcome.Validation,
			wantMsg:  []string{`the value of "Authorization" has a line break`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := tc.handler
			if h == nil {
				h = func(w http.ResponseWriter, r *http.Request) { t.Error("unexpected request") }
			}
			s := newServer(t, h)
			r, _ := testRunner(t, nil, nil)
			res := run(t, context.Background(), r, "http", tc.input(s.URL))
			if res.Type != tc.wantType || res.Kind != tc.wantKind {
				t.Fatalf("got %s %s %q, output %s; want %s %s", res.Type, res.Kind, res.Message, res.Output, tc.wantType, tc.wantKind)
			}
			if err := res.Check(); err != nil && res.Kind != outcome.Timeout && res.Kind != outcome.DataLimitExceeded {
				t.Errorf("result does not check: %v", err)
			}
			for _, p := range tc.wantMsg {
				if !strings.Contains(res.Message, p) {
					t.Errorf("message %q does not contain %q", res.Message, p)
				}
			}
			if strings.Contains(res.Message, "SECRET") {
				t.Errorf("message %q shows a secret", res.Message)
			}
			if res.BackoffHintMs < tc.wantHint[0] || res.BackoffHintMs > tc.wantHint[1] {
				t.Errorf("backoff hint %dms; want %d..%dms", res.BackoffHintMs, tc.wantHint[0], tc.wantHint[1])
			}
			if tc.wantStatus == 0 {
				return
			}
			status, headers, _ := output(t, res.Output)
			if status != tc.wantStatus {
				t.Errorf("status %d; want %d", status, tc.wantStatus)
			}
			if tc.wantBody != "" {
				var out struct{ Body json.RawMessage }
				if err := json.Unmarshal(res.Output, &out); err != nil {
					t.Fatal(err)
				}
				if string(out.Body) != tc.wantBody {
					t.Errorf("body %s; want %s", out.Body, tc.wantBody)
				}
			}
			for k, v := range tc.wantHeader {
				if headers[k] != v {
					t.Errorf("header %s = %q; want %q (headers %v)", k, headers[k], v, headers)
				}
			}
		})
	}
}

func urlOnly(u string) map[string]any { return map[string]any{"url": u} }

func TestHTTPConnectionRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r, log := testRunner(t, nil, nil)
	res := run(t, context.Background(), r, "http", map[string]any{"url": "http://" + addr + "/x?token=QUERYSECRET"})
	wantFailure(t, res, outcome.Retryable, "builtin.http: GET http://"+addr+"/x failed:", "connection refused")
	if strings.Contains(res.Message, "SECRET") {
		t.Errorf("message %q shows the query", res.Message)
	}
	if d := log.Dials(); len(d) != 1 || d[0] != addr {
		t.Errorf("dials %v; want [%s]", d, addr)
	}
}

func TestHTTPRedirects(t *testing.T) {
	t.Parallel()
	// /hop/N redirects to /hop/N-1; /hop/0 answers.
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(r.URL.Path, "/hop/%d", &n)
		if n > 0 {
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
			return
		}
		fmt.Fprint(w, "arrived")
	})
	r, _ := testRunner(t, nil, nil)
	res := run(t, context.Background(), r, "http", map[string]any{"url": s.URL + "/hop/10"})
	if res.Type != outcome.Success {
		t.Fatalf("10 redirects: got %+v; want success", res)
	}
	before := s.requests.Load()
	res = run(t, context.Background(), r, "http", map[string]any{"url": s.URL + "/hop/11"})
	wantFailure(t, res, outcome.Fatal, "HTTP 302 Found from GET "+s.URL+"/hop/11 (redirected to "+s.URL+"/hop/1)",
		"redirects are followed up to 10 times")
	if n := s.requests.Load() - before; n != 11 {
		t.Errorf("11 redirects: %d requests; want 11", n)
	}

	ftp := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://example.com/file", http.StatusFound)
	})
	res = run(t, context.Background(), r, "http", map[string]any{"url": ftp.URL})
	wantFailure(t, res, outcome.Fatal, "only http and https are followed")
}

func TestHTTPContext(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 2)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	r, _ := testRunner(t, nil, nil)

	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	res := run(t, ctx, r, "http", map[string]any{"url": s.URL})
	wantFailure(t, res, outcome.Cancelled, "builtin.http: GET "+s.URL+" cancelled after")

	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res = run(t, ctx, r, "http", map[string]any{"url": s.URL, "timeout": "10s"})
	wantFailure(t, res, outcome.Timeout, "did not answer before the attempt's deadline")
}

func TestHTTPLogsNoHeaderValues(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) })
	r, _ := testRunner(t, nil, nil)
	var mu sync.Mutex
	var lines []string
	in, _ := json.Marshal(map[string]any{"url": s.URL + "/?key=QUERYSECRET", "headers": map[string]string{"X-Api-Key": "HEADERSECRET"}})
	r.Run(context.Background(), Request{Name: "http", Input: in, Log: func(level, msg string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, level+" "+msg)
	}})
	mu.Lock()
	defer mu.Unlock()
	if len(lines) == 0 {
		t.Fatal("no log line")
	}
	for _, l := range lines {
		if strings.Contains(l, "SECRET") {
			t.Errorf("log line %q shows a secret", l)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		h    string
		want time.Duration
		ok   bool
	}{
		{"120", 2 * time.Minute, true},
		{" 0 ", 0, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"", 0, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"99999999999999999999", 0, false},
		{"9999999999999", time.Duration(1<<63-1) / time.Second * time.Second, true},
	}
	for _, tc := range tests {
		got, ok := retryAfter(tc.h, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("retryAfter(%q) = %s, %v; want %s, %v", tc.h, got, ok, tc.want, tc.ok)
		}
	}
}

func TestHTTPNetworkErrors(t *testing.T) {
	t.Parallel()
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer tls.Close()
	r, _ := testRunner(t, nil, map[string][]string{"empty.test": {}})
	// The test server's certificate is not trusted: a TLS failure, which may pass.
	res := run(t, context.Background(), r, "http", map[string]any{"url": tls.URL})
	wantFailure(t, res, outcome.Retryable, "builtin.http: GET "+tls.URL+" failed: ", "certificate")
	res = run(t, context.Background(), r, "http", map[string]any{"url": "http://empty.test/"})
	wantFailure(t, res, outcome.Retryable, "lookup empty.test: no addresses")
}
