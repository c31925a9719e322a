package serve

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkWebhookRequest is what serve itself does per webhook request around starting the
// run (the engine's Start has the engine's benchmarks): the size check, the payload, the 202.
// The request is the bench's (fuscia-load -mode bench: a small JSON body through wrk).
func BenchmarkWebhookRequest(b *testing.B) {
	body := []byte(`{"id":12345}`)
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/hooks/in", nil)
	r.Header.Set("Content-Type", "application/json")
	s := &Server{}
	w := &countingWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		if n := queryAndHeaderBytes(r); n > 1<<20 {
			b.Fatal(n)
		}
		if _, err := webhookPayload(r, body); err != nil {
			b.Fatal(err)
		}
		s.answerStarted(w, r, Started{ID: "01JDXK3V9Q8ZL6W7Y5T4R3S2P1"})
		if w.code != http.StatusAccepted {
			b.Fatal(w.code)
		}
	}
}

// countingWriter is a ResponseWriter that keeps the status and counts the bytes.
type countingWriter struct {
	h    http.Header
	code int
	n    int
}

func (w *countingWriter) Header() http.Header         { return w.h }
func (w *countingWriter) WriteHeader(code int)        { w.code = code }
func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// BenchmarkWebhookRun is a whole webhook run in serve, in process: the request through serve's
// handler (no TCP), the run's start, its transform node and its end, all journaled in a real
// store with strict durability — fuscia-load's hook workflow. Its allocations per run are a
// steadier measure of serve's work per run than the rate on a shared machine (item 4 of the
// performance issue), and so is its CPU per run (cpu-µs/run: the whole process, journal and
// Badger included); ns/op is the inverse of the rate, 64 requests in flight, without TCP.
func BenchmarkWebhookRun(b *testing.B) {
	dir := b.TempDir()
	// cmd/fuscia-load's hookWorkflow (a program's constant, which a test cannot import): keep
	// the two the same, so that this measures what fuscia-load's rate does.
	writeWorkflow(b, filepath.Join(dir, "hook.fsc.hcl"), `workflow "hook" {}

trigger "webhook" "in" {
  path = "/hooks/in"
}

task "shape" {
  uses   = builtin.transform
  inputs = { id = trigger.payload.body.id }
}

output "id" {
  value = task.shape.output.id
}
`)
	ts := newTestServer(b, dir, nil)
	ts.startServing()
	h := ts.srv.Handler()
	body := []byte(`{"id":12345}`)
	post := func() {
		// Not httptest.NewRequest, which parses a request's text with a reader of its own
		// each time: net/http's server reuses its readers, and so is serve measured.
		r, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:8080/hooks/in", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		r.RemoteAddr = "127.0.0.1:40000"
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusAccepted {
			b.Fatalf("POST /hooks/in: %d %s", w.Code, w.Body)
		}
	}
	idle := func() {
		deadline := time.Now().Add(time.Minute)
		for ts.srv.eng.ActiveCount() > 0 {
			if time.Now().After(deadline) {
				b.Fatalf("%d runs still going after a minute", ts.srv.eng.ActiveCount())
			}
			time.Sleep(time.Millisecond)
		}
	}
	for range 200 { // the store's and the runtime's first allocations, off the count
		post()
	}
	idle()
	b.ReportAllocs()
	b.SetParallelism(32) // 64 requests in flight on 2 Ps, as fuscia-load's wrk -c64
	cpu0 := processCPU(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			post()
		}
	})
	idle() // the runs' own work is in the figures
	b.StopTimer()
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/run")
}

// processCPU is the CPU time this process has used, user and system.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
