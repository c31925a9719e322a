package engine

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
)

// counter is an httptest server that counts the requests it sees and answers each with
// answer(n), n being the 1-based number of the request.
type counter struct {
	URL  string
	hits atomic.Int64
}

func (c *counter) n() int { return int(c.hits.Load()) }

// countingServer answers with status codes in turn (the last one repeats) and a JSON body
// {"n": request number}.
func countingServer(t *testing.T, statuses ...int) *counter {
	t.Helper()
	c := &counter{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(c.hits.Add(1))
		code := statuses[min(n, len(statuses))-1]
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(`{"n":` + itoa(n) + `}`))
	}))
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// gauge is an httptest server that holds each request for delay and records how many were
// in flight at most; it echoes the request's headers and path. With a target, each request is
// first held until target requests are in flight at once (or gaugeWait passes), so that a test
// of a concurrency bound sees the bound reached however slowly a loaded machine starts them;
// the delay after it gives a request past the bound the time to arrive and be counted.
type gauge struct {
	URL      string
	target   int
	mu       sync.Mutex
	cur, max int
	total    int
	headers  []http.Header
	reached  chan struct{} // closed when max reaches target
}

// gaugeWait bounds how long a request waits for the gauge's target: a liveness bound, reached
// only when the engine starts fewer requests at once than the test expects (and then fails).
const gaugeWait = 30 * time.Second

func gaugeServer(t *testing.T, delay time.Duration) *gauge {
	t.Helper()
	return gaugeServerUntil(t, 0, delay)
}

// gaugeServerUntil is gaugeServer holding requests until target of them are in flight.
func gaugeServerUntil(t *testing.T, target int, delay time.Duration) *gauge {
	t.Helper()
	g := &gauge{target: target, reached: make(chan struct{})}
	if target <= 1 {
		close(g.reached)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.cur++
		g.total++
		if g.cur > g.max {
			g.max = g.cur
			if g.max == g.target && g.target > 1 {
				close(g.reached)
			}
		}
		g.headers = append(g.headers, r.Header.Clone())
		g.mu.Unlock()
		select {
		case <-g.reached:
		case <-time.After(gaugeWait):
		case <-r.Context().Done():
		}
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
		}
		g.mu.Lock()
		g.cur--
		g.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"path":` + jsonString(r.URL.Path) + `}`))
	}))
	t.Cleanup(srv.Close)
	g.URL = srv.URL
	return g
}

func (g *gauge) stats() (maxConcurrent, total int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.max, g.total
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// node returns the view of addr, failing the test when it is missing.
func node(t *testing.T, ex *journal.Execution, addr string) *journal.NodeView {
	t.Helper()
	n := ex.Nodes[addr]
	if n == nil {
		t.Fatalf("no node %s in %s", addr, jsonOf(t, ex))
	}
	return n
}

// wantRun checks the run's status.
func wantRun(t *testing.T, ex *journal.Execution, status string) {
	t.Helper()
	if ex.Status != status {
		t.Fatalf("run status %s, want %s: %s", ex.Status, status, jsonOf(t, ex))
	}
}

// wantNode checks a node's status and returns its view.
func wantNode(t *testing.T, ex *journal.Execution, addr, status string) *journal.NodeView {
	t.Helper()
	n := node(t, ex, addr)
	if n.Status != status {
		t.Fatalf("%s: status %s, want %s: %s", addr, n.Status, status, jsonOf(t, ex))
	}
	return n
}

// wantErr checks a node's error kind and that its message contains every fragment.
func wantErr(t *testing.T, addr string, n *journal.NodeView, kind string, fragments ...string) {
	t.Helper()
	if n.Error == nil {
		t.Fatalf("%s: no error, want kind %s: %s", addr, kind, jsonOf(t, n))
	}
	if string(n.Error.Kind) != kind {
		t.Fatalf("%s: error kind %s, want %s: %s", addr, n.Error.Kind, kind, n.Error.Message)
	}
	for _, f := range fragments {
		if !strings.Contains(n.Error.Message, f) {
			t.Fatalf("%s: error message %q does not contain %q", addr, n.Error.Message, f)
		}
	}
}

// wantJSON checks that got is the JSON document want (compared as values).
func wantJSON(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: not JSON: %q", what, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad expectation %q", what, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s = %s, want %s", what, got, want)
	}
}

// within fails when d is not below limit: what was meant to be quick was not.
func within(t *testing.T, what string, d, limit time.Duration) {
	t.Helper()
	if d >= limit {
		t.Fatalf("%s took %s; want under %s", what, d, limit)
	}
}
