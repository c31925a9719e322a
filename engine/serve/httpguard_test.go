package serve

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

func TestParseAllowedHost(t *testing.T) {
	cases := []struct {
		in   string
		want AllowedHost
		err  bool
	}{
		{in: "fuscia.example.com", want: AllowedHost{Host: "fuscia.example.com"}},
		{in: "Fuscia.Example.COM.", want: AllowedHost{Host: "fuscia.example.com"}},
		{in: "fuscia.example.com:8443", want: AllowedHost{Host: "fuscia.example.com", Port: "8443"}},
		{in: "10.0.0.5", want: AllowedHost{Host: "10.0.0.5"}},
		{in: "[::1]:8080", want: AllowedHost{Host: "::1", Port: "8080"}},
		{in: "[fe80::1]", want: AllowedHost{Host: "fe80::1"}},
		{in: "fe80::1", want: AllowedHost{Host: "fe80::1"}},
		{in: "*", want: AnyHost},
		{in: "", err: true},
		{in: "http://fuscia.example.com", err: true},
		{in: "fuscia.example.com/v1", err: true},
		{in: "fuscia.example.com:", err: true},
		{in: "fuscia.example.com:http", err: true},
		{in: "*.example.com", err: true},
		{in: "a:b:c", err: true},
		{in: ":8080", err: true},
	}
	for _, tc := range cases {
		got, err := ParseAllowedHost(tc.in)
		if tc.err {
			if err == nil {
				t.Errorf("ParseAllowedHost(%q) = %+v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseAllowedHost(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		// String gives back a value that parses to the same.
		if again, err := ParseAllowedHost(got.String()); err != nil || again != got {
			t.Errorf("ParseAllowedHost(%q.String() = %q) = %+v, %v; want %+v", tc.in, got.String(), again, err, got)
		}
	}
}

func TestHostPolicy(t *testing.T) {
	named := GuardConfig{ListenAddr: "fuscia.lan:8080", AllowedHosts: []AllowedHost{
		{Host: "fuscia.example.com"}, {Host: "proxy.example.com", Port: "443"},
	}}
	wildcard := GuardConfig{ListenAddr: "0.0.0.0:8080"}
	cases := []struct {
		name  string
		cfg   GuardConfig
		host  string
		local string // the address the connection came to
		want  bool
	}{
		{"loopback v4", named, "127.0.0.1:8080", "127.0.0.1:8080", true},
		{"loopback v4 other 127/8", named, "127.1.2.3", "127.0.0.1:8080", true},
		{"loopback v6", named, "[::1]:8080", "[::1]:8080", true},
		{"localhost any port", named, "localhost:9", "127.0.0.1:8080", true},
		{"LOCALHOST.", named, "LOCALHOST.:8080", "127.0.0.1:8080", true},
		{"no Host (HTTP/1.0)", named, "", "127.0.0.1:8080", true},
		{"the listen name", named, "fuscia.lan:8080", "10.0.0.5:8080", true},
		{"an allowed name", named, "fuscia.example.com", "10.0.0.5:8080", true},
		{"an allowed name, any port", named, "fuscia.example.com:1234", "10.0.0.5:8080", true},
		{"an allowed name and port", named, "proxy.example.com:443", "10.0.0.5:8080", true},
		{"an allowed name, other port", named, "proxy.example.com:8443", "10.0.0.5:8080", false},
		{"an allowed name, no port where one is required", named, "proxy.example.com", "10.0.0.5:8080", false},
		{"a re-bound name", named, "evil.example:8080", "127.0.0.1:8080", false},
		{"a subdomain of an allowed name", named, "x.fuscia.example.com", "10.0.0.5:8080", false},
		{"a name that resolves to loopback", named, "127.0.0.1.nip.io:8080", "127.0.0.1:8080", false},
		{"the address connected to", wildcard, "10.0.0.5:8080", "10.0.0.5:8080", true},
		{"another address", wildcard, "10.0.0.6:8080", "10.0.0.5:8080", false},
		{"0.0.0.0 is not a name", wildcard, "0.0.0.0:8080", "10.0.0.5:8080", false},
		{"any", GuardConfig{ListenAddr: "0.0.0.0:8080", AllowedHosts: []AllowedHost{AnyHost}}, "evil.example", "10.0.0.5:8080", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/v1/executions", nil)
			r.Host = tc.host
			local, err := net.ResolveTCPAddr("tcp", tc.local)
			if err != nil {
				t.Fatal(err)
			}
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, local))
			if got := newHostPolicy(tc.cfg).allows(r); got != tc.want {
				t.Errorf("Host %q on %s: allowed = %v, want %v", tc.host, tc.local, got, tc.want)
			}
		})
	}
}

func TestMediaTypeProblem(t *testing.T) {
	cases := []struct {
		method, ct, body string
		chunked          bool
		ok               bool
	}{
		{method: "GET", ct: "text/plain", body: "x", ok: true},
		{method: "POST", ct: "application/json", body: "{}", ok: true},
		{method: "POST", ct: "application/json; charset=utf-8", body: "{}", ok: true},
		{method: "POST", ct: "Application/JSON", body: "{}", ok: true},
		{method: "POST", ok: true}, // no body, no Content-Type: cancel, resume
		{method: "POST", ct: "text/plain", body: "{}"},
		{method: "POST", ct: "text/plain"}, // a form with no fields still says what it is
		{method: "POST", ct: "application/x-www-form-urlencoded", body: "a=b"},
		{method: "POST", ct: "multipart/form-data; boundary=x", body: "--x--"},
		{method: "POST", body: "{}"},
		{method: "POST", body: "{}", chunked: true},
		{method: "POST", ct: "application/json-seq", body: "{}"},
		{method: "POST", ct: "application/json;;", body: "{}"},
		{method: "DELETE", ct: "text/plain", body: "x"},
		{method: "PUT", ct: "text/plain", body: "x"},
		{method: "PATCH", ct: "text/plain", body: "x"},
	}
	for _, tc := range cases {
		r := httptest.NewRequest(tc.method, "/v1/prune", strings.NewReader(tc.body))
		if tc.chunked {
			r.ContentLength = -1
		}
		if tc.ct != "" {
			r.Header.Set("Content-Type", tc.ct)
		}
		if got := mediaTypeProblem(r); (got == "") != tc.ok {
			t.Errorf("%s Content-Type %q body %q: problem %q, want ok = %v", tc.method, tc.ct, tc.body, got, tc.ok)
		}
	}
}

func TestIsAPIPath(t *testing.T) {
	for p, want := range map[string]bool{
		"/v1": true, "/v1/": true, "/v1/prune": true, "//v1/prune": true, "/hooks/../v1/prune": true,
		"/v1/../hooks/in": false, "/hooks/in": false, "/": false, "/v10/x": false, "/V1/prune": false, "": false,
	} {
		if got := isAPIPath(p); got != want {
			t.Errorf("isAPIPath(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestGuardHTTP drives the guard through a real listener on 127.0.0.1: what it refuses never
// reaches the handler behind it.
func TestGuardHTTP(t *testing.T) {
	var reached atomic.Int64
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		writeJSON(w, http.StatusOK, map[string]string{"path": r.URL.Path})
	})
	l, err := Listen(ListenConfig{Addr: "127.0.0.1:0", Handler: Guard(GuardConfig{ListenAddr: "127.0.0.1:0",
		AllowedHosts: []AllowedHost{{Host: "fuscia.test"}}}, inner)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	port := l.Addr().(*net.TCPAddr).Port
	cases := []struct {
		name, method, path, host, body string
		hdr                            map[string]string
		want                           int
		code                           string
	}{
		{name: "same origin JSON", method: "POST", path: "/v1/prune", body: "{}",
			hdr: map[string]string{"Content-Type": "application/json", "Origin": "http://127.0.0.1:PORT", "Sec-Fetch-Site": "same-origin"}, want: 200},
		{name: "program without Origin", method: "POST", path: "/v1/prune", body: "{}", hdr: map[string]string{"Content-Type": "application/json"}, want: 200},
		{name: "cross-origin text/plain POST", method: "POST", path: "/v1/prune", body: `{"completed_before":"2100-01-01T00:00:00Z"}`,
			hdr: map[string]string{"Content-Type": "text/plain", "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, want: 403, code: "cross_origin"},
		{name: "cross-origin, old browser (Origin only)", method: "POST", path: "/v1/executions/x/signal", body: "{}",
			hdr: map[string]string{"Content-Type": "application/json", "Origin": "http://evil.example"}, want: 403, code: "cross_origin"},
		{name: "same-site is not same-origin", method: "POST", path: "/v1/workflows/w/runs", body: "{}",
			hdr: map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "same-site"}, want: 403, code: "cross_origin"},
		{name: "cross-site DELETE", method: "DELETE", path: "/v1/executions/x/artifacts",
			hdr: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: 403, code: "cross_origin"},
		{name: "cross-site GET reads (the browser keeps the answer from the page)", method: "GET", path: "/v1/executions",
			hdr: map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}, want: 200},
		{name: "text/plain without Origin", method: "POST", path: "/v1/prune", body: "{}", hdr: map[string]string{"Content-Type": "text/plain"}, want: 415, code: "unsupported_media_type"},
		{name: "form", method: "POST", path: "/v1/executions/x/cancel", body: "a=b", hdr: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, want: 415, code: "unsupported_media_type"},
		{name: "no body", method: "POST", path: "/v1/executions/x/cancel", want: 200},
		{name: "foreign Host", method: "GET", path: "/v1/executions", host: "evil.example:PORT", want: 421, code: "misdirected"},
		{name: "foreign Host, cleaned path", method: "GET", path: "/hooks/../v1/executions", host: "evil.example", want: 421, code: "misdirected"},
		// Escaped slashes are no step up for the mux, which routes these to the API: the guard
		// must see them as the API's too (their decoded paths clean to "/").
		{name: "foreign Host, escaped path", method: "GET", path: "/v1/executions/x%2F..%2F..%2F..", host: "evil.example", want: 421, code: "misdirected"},
		{name: "cross-site POST, escaped path", method: "POST", path: "/v1/executions/x%2F..%2F..%2F../cancel", body: "{}",
			hdr: map[string]string{"Content-Type": "text/plain", "Sec-Fetch-Site": "cross-site"}, want: 403, code: "cross_origin"},
		{name: "foreign Host, escaped UI path", method: "GET", path: "/ui/x%2F..%2F..", host: "evil.example", want: 421, code: "misdirected"},
		{name: "allowed name", method: "GET", path: "/v1/executions", host: "fuscia.test:PORT", want: 200},
		{name: "localhost", method: "GET", path: "/v1/health", host: "localhost:PORT", want: 200},
		{name: "webhook: any Host, any origin, any type", method: "POST", path: "/hooks/in", host: "hooks.example.net", body: "a=b",
			hdr: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, want: 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := reached.Load()
			req, err := http.NewRequest(tc.method, "http://"+l.Addr().String()+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.body == "" {
				req.Body, req.ContentLength = http.NoBody, 0
			}
			for k, v := range tc.hdr {
				req.Header.Set(k, strings.ReplaceAll(v, "PORT", strconv.Itoa(port)))
			}
			if tc.host != "" {
				req.Host = strings.ReplaceAll(tc.host, "PORT", strconv.Itoa(port))
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body map[string]string
			b, _ := io.ReadAll(resp.Body)
			_ = json.Unmarshal(b, &body)
			if resp.StatusCode != tc.want || body["code"] != tc.code {
				t.Fatalf("%d %s, want %d with code %q", resp.StatusCode, b, tc.want, tc.code)
			}
			passed := reached.Load() > before
			if passed != (tc.want == 200) {
				t.Errorf("the handler behind the guard was reached: %v, want %v", passed, tc.want == 200)
			}
			if (isAPIPath(tc.path) || isAPIPath(req.URL.EscapedPath())) && resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("an API answer without X-Content-Type-Options: nosniff: %v", resp.Header)
			}
		})
	}
}
