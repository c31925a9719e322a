package serve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/local"
)

const smallHook = `workflow "small" {}

trigger "webhook" "in" {
  path           = "/hooks/small"
  max_body_bytes = "1KiB"
}

task "echo" {
  uses   = builtin.transform
  inputs = { payload = trigger.payload }
}
`

// TestWebhookLimits: max_body_bytes bounds the query and headers as well as the body, and a
// body that stalls is not waited for; no refused request starts a run.
func TestWebhookLimits(t *testing.T) {
	dir := t.TempDir()
	writeWorkflow(t, filepath.Join(dir, "small.fsc.hcl"), smallHook)
	ts := newTestServer(t, dir, nil)
	ts.serveAPI()
	if _, err := ts.srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The listener serve uses, with a short read timeout.
	l := listenTest(t, ListenConfig{Handler: ts.srv.Handler(), ReadTimeout: 300 * time.Millisecond})
	url := "http://" + l.Addr().String() + "/hooks/small"

	post := func(query string, hdr http.Header, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, url+query, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, vs := range hdr {
			req.Header[k] = vs
		}
		req.Header.Set("Content-Type", "text/plain")
		resp, err := (&http.Client{Timeout: listenDeadline}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	runs := func() int {
		t.Helper()
		sums, err := ts.st.List(journal.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		return len(sums)
	}

	// A body of exactly max_body_bytes, with the usual few headers, is taken; and with headers
	// longer than max_body_bytes but ordinary (2 KiB).
	if code, b := post("", nil, strings.Repeat("x", 1024)); code != http.StatusAccepted {
		t.Fatalf("a body of exactly max_body_bytes: %d %s, want 202", code, b)
	}
	if code, b := post("?q="+strings.Repeat("a", 1024), http.Header{"X-Trace": {strings.Repeat("b", 1024)}}, "{}"); code != http.StatusAccepted {
		t.Fatalf("2 KiB of query and headers on a 1 KiB hook: %d %s, want 202", code, b)
	}
	refused := []struct {
		name  string
		query string
		hdr   http.Header
		body  string
		want  string
	}{
		// A 1 KiB hook still takes ordinary headers: they are held to 16 KiB at least.
		{name: "17 KiB query", query: "?q=" + strings.Repeat("a", 17<<10), body: "{}", want: "query and headers"},
		{name: "17 KiB header", hdr: http.Header{"X-Big": {strings.Repeat("a", 17<<10)}}, body: "{}", want: "query and headers"},
		{name: "many small headers", hdr: manyHeaders(600, 30), body: "{}", want: "query and headers"},
		{name: "body over", body: strings.Repeat("y", 1025), want: "body is over"},
	}
	for _, c := range refused {
		if code, b := post(c.query, c.hdr, c.body); code != http.StatusRequestEntityTooLarge || !strings.Contains(b, c.want) {
			t.Errorf("%s: %d %s, want 413 saying %q", c.name, code, b, c.want)
		}
	}

	// A body that stalls: the answer (if the sender still reads) is 408, the connection closes.
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "POST /hooks/small HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 500\r\n\r\n{\"partial\": "); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(listenDeadline))
	line, _ := bufio.NewReader(c).ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.1 408 ") {
		t.Errorf("a stalled body: %q, want 408", line)
	}
	closedWithin(t, c, listenDeadline)

	if n := runs(); n != 2 {
		t.Errorf("%d runs, want 2 (only the accepted requests)", n)
	}
}

func manyHeaders(n, size int) http.Header {
	h := http.Header{}
	for i := range n {
		h.Set("X-H"+strings.Repeat("x", i%5)+string(rune('a'+i%26))+string(rune('a'+i/26)), strings.Repeat("v", size))
	}
	return h
}

// TestWebhookBodyBudget: webhook bodies being read are held in memory before their signature is
// checked, so their sum is bounded: senders that announce large bodies and stall take the
// budget, the next request is answered 503 with Retry-After at once, and the budget is free
// again when they are gone. A short body that stalls is cut after bodyGrace, well before the
// listener's read timeout.
func TestWebhookBodyBudget(t *testing.T) {
	dir := t.TempDir()
	writeWorkflow(t, filepath.Join(dir, "x.fsc.hcl"), hookSource("x", "/hooks/x", "v1")) // max_body_bytes 1 MiB
	ts := newTestServer(t, dir, nil)
	ts.serveAPI()
	if _, err := ts.srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	l := listenTest(t, ListenConfig{Handler: ts.srv.Handler(), ReadTimeout: time.Minute})
	addr := l.Addr().String()
	post := func(body string) (*http.Response, string) {
		t.Helper()
		resp, err := (&http.Client{Timeout: listenDeadline}).Post("http://"+addr+"/hooks/x", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	waitBodies := func(want int64) {
		t.Helper()
		deadline := time.Now().Add(listenDeadline)
		for ts.srv.bodies.Load() != want {
			if time.Now().After(deadline) {
				t.Fatalf("%d bytes of bodies being read, want %d", ts.srv.bodies.Load(), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	const mib = 1 << 20
	var stalled []net.Conn
	for range bodyBudget / mib {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		stalled = append(stalled, c)
		if _, err := fmt.Fprintf(c, "POST /hooks/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"a\":", mib); err != nil {
			t.Fatal(err)
		}
	}
	waitBodies(bodyBudget)
	resp, b := post("{}")
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(b, "too many webhook bodies") {
		t.Fatalf("with the budget taken: %d %q (Retry-After %q), want 503 with Retry-After", resp.StatusCode, b, resp.Header.Get("Retry-After"))
	}
	for _, c := range stalled {
		c.Close()
	}
	waitBodies(0)
	if resp, b := post("{}"); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("with the budget free again: %d %s, want 202", resp.StatusCode, b)
	}

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	began := time.Now()
	if _, err := io.WriteString(c, "POST /hooks/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"partial\": "); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	line, _ := bufio.NewReader(c).ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.1 408 ") {
		t.Errorf("a short body that stalls: %q, want 408", line)
	}
	if d := time.Since(began); d < bodyGrace || d > bodyGrace+20*time.Second {
		t.Errorf("the stalled short body was cut after %s; want after bodyGrace (%s), long before the read timeout (1m)", d, bodyGrace)
	}
}

const sleepyHook = `workflow "sleepy" {}

trigger "webhook" "in" {
  path = "/hooks/sleepy"
}

task "nap" {
  uses   = builtin.sleep
  inputs = { duration = "1s" }
}
`

// TestWebhookWaitOutlastsReadTimeout: ?wait=true answers with the execution once the run ends,
// though that is after the listener's read timeout (and the body's own deadline): the read
// deadline, which the server's watch for a closed connection ran into, is lifted while the
// answer waits. A request without a body got an empty 200 after 5 s, one with a body after the
// read timeout (30 s by default, less than -webhook-wait's 60 s).
func TestWebhookWaitOutlastsReadTimeout(t *testing.T) {
	dir := t.TempDir()
	writeWorkflow(t, filepath.Join(dir, "sleepy.fsc.hcl"), sleepyHook)
	ts := newTestServer(t, dir, nil)
	ts.serveAPI()
	if _, err := ts.srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	l := listenTest(t, ListenConfig{Handler: ts.srv.Handler(), ReadTimeout: 300 * time.Millisecond})
	for _, body := range []string{"", `{"a": 1}`} {
		resp, err := (&http.Client{Timeout: listenDeadline}).Post("http://"+l.Addr().String()+"/hooks/sleepy?wait=true", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"status":"succeeded"`) {
			t.Errorf("?wait=true with body %q: %d %q, want 200 with the succeeded execution", body, resp.StatusCode, b)
		}
	}
}

// TestFollowOutlastsReadTimeout: a follow of a run's events lasts until the run ends, though
// that is after the connection's read deadline (serve's -listen sets one at each request: its
// read timeout, 30 s), which cancelled it.
func TestFollowOutlastsReadTimeout(t *testing.T) {
	as := newAuthServerWith(t, map[string]string{"sleepy.fsc.hcl": sleepyHook}, func(s *Server) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// As the listener's ReadTimeout does (listen.go).
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			s.Handler().ServeHTTP(w, r)
		})
	}, false)
	a := as.do(http.MethodPost, "/hooks/sleepy", "", "{}")
	id := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(a.body), `{"execution_id":"`), `"}`)
	a = as.do(http.MethodGet, "/v1/executions/"+id+"/events?follow=1", as.token("reader", local.ScopeRead, 0), "")
	if a.code != http.StatusOK || !strings.Contains(a.body, `"execution_finished"`) {
		t.Errorf("a follow of run %s: %d, ended before the run did:\n%s", id, a.code, a.body)
	}
}
