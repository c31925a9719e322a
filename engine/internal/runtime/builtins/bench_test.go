package builtins

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
)

// BenchmarkHTTPCall is one builtin.http attempt as a node makes it (the dispatcher's Call:
// input decoding, the request, the response's reading and its output), against a server on
// 127.0.0.1 over a kept-alive connection, without the engine or the journal. Each iteration
// also makes the same GET with a bare http.Client (bare-p50-µs), alternately, so that what
// builtin.http adds to the HTTP exchange itself (builtin-extra-µs, the difference of the two
// p50s) is measured under the same load.
func BenchmarkHTTPCall(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	runner := builtin.New(builtin.Options{})
	defer runner.Close()
	d := New(runner)
	ctx := context.Background()
	uses := lang.Uses{Kind: lang.UsesBuiltin, Name: "http"}
	bd, berr := d.Bind(ctx, task.Block{Uses: uses})
	if berr != nil {
		b.Fatal(berr)
	}
	call := task.Call{Uses: uses, Input: []byte(`{"url":"` + srv.URL + `/1?after=200"}`), Log: func(string, string) {}}
	node := func() {
		if res := d.Call(ctx, bd, call); res.Type != outcome.Success {
			b.Fatalf("builtin.http: %+v", res)
		}
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	bare := func() {
		resp, err := client.Get(srv.URL + "/1?after=200")
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
	}
	node() // opens the kept-alive connections
	bare()
	lat := make([]time.Duration, 0, b.N)
	bareLat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		node()
		t1 := time.Now()
		bare()
		lat = append(lat, t1.Sub(t0))
		bareLat = append(bareLat, time.Since(t1))
	}
	b.StopTimer()
	slices.Sort(lat)
	slices.Sort(bareLat)
	p50, bare50 := lat[len(lat)/2], bareLat[len(bareLat)/2]
	b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(bare50.Microseconds()), "bare-p50-µs")
	b.ReportMetric(float64((p50-bare50).Nanoseconds())/1e3, "builtin-extra-µs")
}
