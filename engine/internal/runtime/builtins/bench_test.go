package builtins

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fuscia/fuscia/engine/internal/runtime/internal/benchpair"
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
	benchpair.Measure(b, node, bare, "builtin-extra-µs")
}
