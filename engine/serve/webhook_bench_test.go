package serve

import (
	"net/http"
	"net/http/httptest"
	"testing"
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
