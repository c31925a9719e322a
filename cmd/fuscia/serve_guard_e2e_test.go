package main

// End-to-end tests of serve's TCP listener as an attacker meets it (docs/security.md, "HTTP
// listener"): browser protections on the API (Host, cross-origin, media type) and bounded
// requests (slow headers, big headers, stalled bodies, max_body_bytes over the query and
// headers, the connection cap). Requests go over raw HTTP on 127.0.0.1 to the real binary;
// runs are counted through the CLI (the socket), never through the API under test.

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
)

// guardWorkflow: a webhook with a 1 KiB max_body_bytes, no signature.
const guardWorkflow = `workflow "small" {}

trigger "webhook" "in" {
  path           = "/hooks/small"
  max_body_bytes = "1KiB"
}

task "echo" {
  uses   = builtin.transform
  inputs = { payload = trigger.payload }
}
`

// rawAnswer is one answer to a request of guardDo.
type rawAnswer struct {
	code int
	body string
	hdr  http.Header
}

// guardDo sends one request to serve on a connection of its own, with Host host ("" for the
// address) and headers hdr.
func guardDo(t *testing.T, sp *serveProc, method, path, host string, hdr http.Header, body string) rawAnswer {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, sp.base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	if host != "" {
		req.Host = host
	}
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", method, path, err, sp)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawAnswer{code: resp.StatusCode, body: string(b), hdr: resp.Header}
}

// apiToken creates an admin API token through the CLI and returns its Authorization header.
func apiToken(t *testing.T, h *harness, name string) http.Header {
	t.Helper()
	r := h.run("token", "create", name, "-scope", "admin", "-json")
	wantCode(t, r, 0)
	var v struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v.Token == "" {
		t.Fatalf("token create -json: %v\n%s", err, r)
	}
	return http.Header{"Authorization": {"Bearer " + v.Token}}
}

// runsInStore lists the runs through the CLI.
func runsInStore(t *testing.T, h *harness) []journal.Summary {
	t.Helper()
	r := h.run("executions", "list", "-json")
	wantCode(t, r, 0)
	var v struct {
		Executions []journal.Summary `json:"executions"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("executions list -json: %v\n%s", err, r)
	}
	return v.Executions
}

func withHeaders(hs ...http.Header) http.Header {
	out := http.Header{}
	for _, h := range hs {
		for k, vs := range h {
			out[k] = vs
		}
	}
	return out
}

// TestServeBrowserGuard: a web page cannot change state through the API (a cross-origin
// text/plain POST to /v1/prune prunes nothing), a re-bound name cannot read it (a foreign
// Host is refused), and the names serve answers to still work.
func TestServeBrowserGuard(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("flows/small.fsc.hcl", guardWorkflow)

	// Flags are checked before anything starts.
	for _, bad := range []string{"http://fuscia.test", "fuscia.test/v1", "fuscia.test:port"} {
		r := h.run("serve", "flows", "-listen", "127.0.0.1:0", "-allowed-host", bad)
		wantCode(t, r, 2)
		if !strings.Contains(r.stderr, "-allowed-host") || !strings.Contains(r.stderr, bad) {
			t.Errorf("-allowed-host %s: the error does not name the flag and the value:\n%s", bad, r)
		}
	}
	r := h.run("serve", "flows", "-listen", "127.0.0.1:0", "-max-connections", "0")
	wantCode(t, r, 2)

	sp := startServe(t, h, nil, "flows", "-allowed-host", "fuscia.test")
	port := sp.base[strings.LastIndex(sp.base, ":")+1:]
	auth := apiToken(t, h, "guard")

	// A finished run for prune to find.
	a := guardDo(t, sp, "POST", "/hooks/small", "", http.Header{"Content-Type": {"text/plain"}}, "hello")
	if a.code != http.StatusAccepted {
		t.Fatalf("webhook: %d %s, want 202", a.code, a.body)
	}
	id := executionID(t, []byte(a.body))
	deadline := time.Now().Add(serveDeadline)
	for showJSON(t, h, id).Status != "succeeded" {
		if time.Now().After(deadline) {
			t.Fatalf("run %s did not succeed within %s", id, serveDeadline)
		}
		time.Sleep(50 * time.Millisecond)
	}

	prune := `{"completed_before": "2999-01-01T00:00:00Z"}`
	refused := []struct {
		name, host string
		hdr        http.Header
		want       int
		code       string
	}{
		{"cross-origin text/plain (a page's simple POST)", "",
			http.Header{"Content-Type": {"text/plain"}, "Origin": {"http://evil.example"}, "Sec-Fetch-Site": {"cross-site"}}, 403, "cross_origin"},
		{"cross-origin JSON from an old browser (Origin only)", "",
			http.Header{"Content-Type": {"application/json"}, "Origin": {"http://evil.example"}}, 403, "cross_origin"},
		{"same-site", "localhost:" + port,
			http.Header{"Content-Type": {"application/json"}, "Sec-Fetch-Site": {"same-site"}, "Origin": {"http://localhost:3000"}}, 403, "cross_origin"},
		{"text/plain without Origin", "", http.Header{"Content-Type": {"text/plain"}}, 415, "unsupported_media_type"},
		{"a form", "", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, 415, "unsupported_media_type"},
		{"a re-bound name", "evil.example:" + port,
			http.Header{"Content-Type": {"application/json"}, "Origin": {"http://evil.example:" + port}}, 421, "misdirected"},
	}
	for _, c := range refused {
		a := guardDo(t, sp, "POST", "/v1/prune", c.host, withHeaders(auth, c.hdr), prune)
		var body map[string]string
		_ = json.Unmarshal([]byte(a.body), &body)
		if a.code != c.want || body["code"] != c.code {
			t.Errorf("POST /v1/prune, %s: %d %s, want %d %s", c.name, a.code, a.body, c.want, c.code)
		}
	}
	if runs := runsInStore(t, h); len(runs) != 1 {
		t.Fatalf("after the refused prunes: %d runs, want 1 (nothing pruned)", len(runs))
	}

	// Reading: a foreign Host is refused even for GET; the names serve answers to work.
	for _, c := range []struct {
		path, host string
		want       int
	}{
		{"/v1/executions", "evil.example:" + port, 421},
		{"/v1/executions/" + id + "/logs", "evil.example:" + port, 421},
		{"/v1/health", "evil.example", 421},
		{"/v1/health", "", 200},
		{"/v1/health", "localhost:" + port, 200},
		{"/v1/health", "fuscia.test:" + port, 200},
		{"/v1/health", "FUSCIA.TEST", 200},
		{"/v1/executions", "fuscia.test", 200},
		{"/v1/executions/" + id, "127.0.0.1:" + port, 200},
	} {
		if a := guardDo(t, sp, "GET", c.path, c.host, auth, ""); a.code != c.want {
			t.Errorf("GET %s with Host %q: %d %s, want %d", c.path, c.host, a.code, a.body, c.want)
		} else if a.hdr.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no X-Content-Type-Options: nosniff in %v", c.path, a.hdr)
		}
	}

	// Webhooks come through proxies and tunnels under any name, from anywhere: not refused.
	a = guardDo(t, sp, "POST", "/hooks/small", "hooks.example.net",
		http.Header{"Content-Type": {"text/plain"}, "Origin": {"http://evil.example"}, "Sec-Fetch-Site": {"cross-site"}}, "again")
	if a.code != http.StatusAccepted {
		t.Errorf("webhook with a foreign Host and Origin: %d %s, want 202", a.code, a.body)
	}

	// The same prune, from a program, with a JSON body: it prunes (the refusals were the guard).
	a = guardDo(t, sp, "POST", "/v1/prune", "", withHeaders(auth, http.Header{"Content-Type": {"application/json"}}), prune)
	if a.code != http.StatusOK || !strings.Contains(a.body, id) {
		t.Errorf("POST /v1/prune from a program: %d %s, want 200 with %s deleted", a.code, a.body, id)
	}
	sp.stopOK()
}

// TestServeBoundedRequests: a slow header and a stalled body are disconnected, a 300 KiB header
// is refused with 431, and max_body_bytes bounds the body of a webhook, and its query and
// headers (held to at least 16 KiB); no refused request starts a run.
func TestServeBoundedRequests(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("flows/small.fsc.hcl", guardWorkflow)
	sp := startServe(t, h, nil, "flows")
	addr := strings.TrimPrefix(sp.base, "http://")
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	// closed waits for serve to close c: within its timeout (10 s for a header, 30 s for a
	// body) and a margin for a busy machine.
	closed := func(what string, c net.Conn, limit time.Duration) {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(limit))
		b, err := io.ReadAll(c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("%s: the connection is still open after %s (read %q)", what, limit, b)
		}
	}

	// Started first, checked last: they take the timeouts to be cut.
	slow := dial()
	if _, err := io.WriteString(slow, "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1"); err != nil {
		t.Fatal(err)
	}
	stalled := dial()
	if _, err := io.WriteString(stalled, "POST /hooks/small HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 600\r\n\r\n{\"half\": "); err != nil {
		t.Fatal(err)
	}

	// Header size: 60 KiB passes, 300 KiB is 431.
	if a := guardDo(t, sp, "GET", "/v1/health", "", http.Header{"X-Big": {strings.Repeat("a", 60<<10)}}, ""); a.code != http.StatusOK {
		t.Errorf("a 60 KiB header: %d %s, want 200", a.code, a.body)
	}
	big := dial()
	go func() {
		_, _ = io.WriteString(big, "POST /hooks/small HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "+strings.Repeat("a", 300<<10)+"\r\nContent-Length: 2\r\n\r\n{}")
	}()
	_ = big.SetReadDeadline(time.Now().Add(30 * time.Second))
	if line, err := bufio.NewReader(big).ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.1 431 ") {
		t.Errorf("a 300 KiB header: %q %v, want 431", line, err)
	}

	// max_body_bytes = 1KiB: the body; the query and headers together to 16 KiB, the least they
	// are held to.
	plain := http.Header{"Content-Type": {"text/plain"}}
	for _, c := range []struct {
		name, path string
		hdr        http.Header
		body       string
	}{
		{"a 17 KiB query", "/hooks/small?q=" + strings.Repeat("a", 17<<10), plain, "x"},
		{"a 17 KiB header", "/hooks/small", withHeaders(plain, http.Header{"X-Big": {strings.Repeat("a", 17<<10)}}), "x"},
		{"a 1,025-byte body", "/hooks/small", plain, strings.Repeat("b", 1025)},
	} {
		if a := guardDo(t, sp, "POST", c.path, "", c.hdr, c.body); a.code != http.StatusRequestEntityTooLarge {
			t.Errorf("webhook with %s: %d %s, want 413", c.name, a.code, a.body)
		}
	}
	if runs := runsInStore(t, h); len(runs) != 0 {
		t.Errorf("refused webhooks started %d runs, want none", len(runs))
	}
	// A body of exactly max_body_bytes, with a small query and the usual headers, is taken.
	if a := guardDo(t, sp, "POST", "/hooks/small?source=test", "", plain, strings.Repeat("x", 1024)); a.code != http.StatusAccepted {
		t.Errorf("a body of exactly max_body_bytes: %d %s, want 202", a.code, a.body)
	}

	closed("a header never finished", slow, 10*time.Second+30*time.Second)
	closed("a body that stalls", stalled, 30*time.Second+30*time.Second)
	if runs := runsInStore(t, h); len(runs) != 1 {
		t.Errorf("%d runs, want 1: the stalled body started one", len(runs))
	}
	// Still serving.
	if a := guardDo(t, sp, "GET", "/v1/health", "", nil, ""); a.code != http.StatusOK {
		t.Errorf("GET /v1/health after all that: %d %s", a.code, a.body)
	}
	sp.stopOK()
}

// TestServeConnectionCap: with -max-connections 4 held by idle keep-alive connections and
// clients that never finish their header, a new client is still answered — within far less
// than the 60 s idle timeout that would otherwise free a slot.
func TestServeConnectionCap(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("flows/small.fsc.hcl", guardWorkflow)
	sp := startServe(t, h, nil, "flows", "-max-connections", "4")
	addr := strings.TrimPrefix(sp.base, "http://")

	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			_ = c.Close()
		}
	})
	for i := range 4 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := io.WriteString(c, "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if line, err := bufio.NewReader(c).ReadString('\n'); !strings.Contains(line, " 200 ") {
			t.Fatalf("keep-alive connection %d: %q %v", i, line, err)
		}
	}
	// Over the cap: these wait in the accept queue, half-sent.
	for range 4 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		_, _ = io.WriteString(c, "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	}
	var wg sync.WaitGroup
	codes := make([]int, 3)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
			resp, err := c.Get(sp.base + "/v1/health")
			if err != nil {
				t.Errorf("GET /v1/health over the cap: %v (the server is not responsive)", err)
				return
			}
			_ = resp.Body.Close()
			codes[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	for i, code := range codes {
		if code != 0 && code != http.StatusOK {
			t.Errorf("client %d over the cap: %d, want 200", i, code)
		}
	}
	// Room was made by closing the connection idle longest, long before its idle timeout.
	_ = conns[0].SetReadDeadline(time.Now().Add(30 * time.Second))
	var ne net.Error
	if _, err := io.ReadAll(conns[0]); errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("the oldest idle keep-alive connection is still open at the cap")
	}
	sp.stopOK()
}
