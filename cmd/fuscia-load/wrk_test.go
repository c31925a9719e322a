package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"
)

// A report of wrk 4.1.0 (Debian bookworm) with --latency, with the lines it adds on errors.
const wrkReport = `Running 20s test @ http://127.0.0.1:18080/hooks/in
  1 threads and 256 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    57.04ms   36.12ms    1.27s    75.20%
    Req/Sec     4.73k     1.83k    9.14k    65.83%
  Latency Distribution
     50%   48.78ms
     75%   72.40ms
     90%  105.46ms
     99%  179.00ms
  94007 requests in 20.01s, 14.34MB read
  Socket errors: connect 0, read 2, write 0, timeout 3
  Non-2xx or 3xx responses: 7
Requests/sec:   4698.03
Transfer/sec:    734.07KB
`

func TestParseWrk(t *testing.T) {
	lr, err := parseWrk(wrkReport, 21, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if lr.sent != 94007 || lr.non202 != 7 || lr.accepted != 94000 || lr.errs != 5 {
		t.Errorf("sent %d non-202 %d accepted %d errors %d, want 94007 7 94000 5", lr.sent, lr.non202, lr.accepted, lr.errs)
	}
	if lr.loadSecs != 20.01 {
		t.Errorf("load seconds %v, want wrk's 20.01", lr.loadSecs)
	}
	want := pcts{p50: 48780 * time.Microsecond, p90: 105460 * time.Microsecond, p99: 179 * time.Millisecond, max: 1270 * time.Millisecond}
	if lr.lat != want {
		t.Errorf("latencies %+v, want %+v", lr.lat, want)
	}
	if _, err := parseWrk("unable to connect to 127.0.0.1:1 Connection refused\n", 1, time.Time{}); err == nil {
		t.Error("a report without a request count parsed")
	}
}

// Paced, wrk sends at -rate, not as fast as the server answers: 100 requests/s for 3 s is
// about 300 requests, where closed-loop connections to this handler send thousands.
func TestWrkPaced(t *testing.T) {
	if _, err := exec.LookPath("wrk"); err != nil {
		t.Skip("wrk is not installed")
	}
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	cfg := config{duration: 3 * time.Second, concurrency: 8, rate: 100, paced: true}
	lr, err := wrkLoad(context.Background(), cfg, srv.URL, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// Generous bounds: the schedule allows 300 in 3 s; wrk's start and end add or drop a few.
	if got := n.Load(); got < 100 || got > 450 || lr.sent < 100 || lr.sent > 450 {
		t.Errorf("the server saw %d requests, wrk reports %d; want about 300 at 100/s for 3 s", got, lr.sent)
	}
}
