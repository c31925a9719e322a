package cluster

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/natstest"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/internal/version"
)

// TestRemoteCall: a builtin.http attempt goes to a worker and its result and log lines come
// back; the worker is listed with its pools; attempts of a pool without a worker wait, counted
// by QueueDepth, and run once a worker of the pool starts.
func TestRemoteCall(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{Pools: []string{"gpu"}})
	w := c.startWorker(t, WorkerOptions{Concurrency: 3})
	b := c.bindHTTP(t)

	logs := &logLines{}
	r := c.call(t, b, httpCall("task.get", s.URL+"/hello", "", logs))
	wantSuccess(t, "the call", r)
	var out struct {
		Status int            `json:"status"`
		Body   map[string]any `json:"body"`
	}
	if err := json.Unmarshal(r.Output, &out); err != nil || out.Status != 200 || out.Body["path"] != "/hello" {
		t.Fatalf("output %s (%v); want status 200 and the site's answer", r.Output, err)
	}
	if n := s.count("/hello"); n != 1 {
		t.Fatalf("the site got %d requests, want 1", n)
	}
	if l := logs.String(); !strings.Contains(l, "/hello") || !strings.Contains(l, "HTTP 200") {
		t.Fatalf("the call's log lines = %q; want the worker's builtin.http line", l)
	}

	info, err := c.worker(w.ID())
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if !slices.Equal(info.Pools, []string{"default"}) || info.Concurrency != 3 || info.Version != version.Fuscia ||
		info.KeyID != c.cfg.Key.ID() || info.Host != host || info.Local || time.Since(info.LastHeartbeat) > time.Minute {
		t.Fatalf("the worker's record = %+v", info)
	}
	ctx := testCtx(t)
	if got := c.coord.WorkersByPool(ctx); got["default"] != 1 || got["gpu"] != 0 {
		t.Fatalf("WorkersByPool = %v; want default 1, gpu 0", got)
	}

	// Pool gpu has no worker: its attempts wait, and are counted.
	gpu1 := c.callAsync(b, httpCall("task.gpu1", s.URL+"/gpu", "gpu", nil))
	gpu2 := c.callAsync(b, httpCall("task.gpu2", s.URL+"/gpu", "gpu", nil))
	eventually(t, "2 attempts queued in pool gpu", func() bool { return c.queued("gpu") == 2 })
	if d := c.queued("default"); d != 0 {
		t.Fatalf("QueueDepth of pool default = %d, want 0", d)
	}
	if n := s.count("/gpu"); n != 0 {
		t.Fatalf("the site got %d requests of pool gpu with no worker of it", n)
	}
	// A worker of gpu drains the queue.
	c.startWorker(t, WorkerOptions{Pools: []string{"gpu"}})
	wantSuccess(t, "gpu call 1", gpu1.result(t))
	wantSuccess(t, "gpu call 2", gpu2.result(t))
	if n := s.count("/gpu"); n != 2 {
		t.Fatalf("the site got %d requests of pool gpu, want 2", n)
	}
	eventually(t, "the gpu queue to drain", func() bool { return c.queued("gpu") == 0 })
	if got := c.coord.WorkersByPool(ctx); got["default"] != 1 || got["gpu"] != 1 {
		t.Fatalf("WorkersByPool = %v; want default 1, gpu 1", got)
	}
}

// TestPoolsAreSeparate: a worker of pool default does not take the attempts of pool gpu,
// while it keeps running those of its own.
func TestPoolsAreSeparate(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{Pools: []string{"gpu"}})
	c.startWorker(t, WorkerOptions{Concurrency: 1})
	b := c.bindHTTP(t)

	gpu := c.callAsync(b, httpCall("task.gpu", s.URL+"/gpu", "gpu", nil))
	eventually(t, "the gpu attempt to be queued", func() bool { return c.queued("gpu") == 1 })
	// The default worker is taking its pool's attempts meanwhile.
	for i, node := range []string{"task.a", "task.b", "task.c"} {
		wantSuccess(t, node, c.call(t, b, httpCall(node, s.URL+"/default", "", nil)))
		if n := s.count("/default"); n != i+1 {
			t.Fatalf("the site got %d requests of pool default, want %d", n, i+1)
		}
	}
	if gpu.finished() || c.queued("gpu") != 1 || s.count("/gpu") != 0 {
		t.Fatalf("the attempt of pool gpu was taken by the worker of pool default (finished %v, queued %d, requests %d)",
			gpu.finished(), c.queued("gpu"), s.count("/gpu"))
	}
	gpu.cancel(nil)
	wantKind(t, "the cancelled gpu call", gpu.result(t), outcome.Cancelled)
}

// TestDuplicateCalls: a call sent twice (a coordinator re-attaching to it) runs once and both
// get its result; after a restart, a re-attached call gets a stored result without running
// the task again, and waits for a queued one.
func TestDuplicateCalls(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{})
	w := c.startWorker(t, WorkerOptions{})
	b := c.bindHTTP(t)

	call := httpCall("task.dup", s.URL+"/dup", "", nil)
	first := c.call(t, b, call)
	wantSuccess(t, "the first call", first)
	second := c.call(t, b, call)
	wantSuccess(t, "the same call again", second)
	if n := s.count("/dup"); n != 1 {
		t.Fatalf("the site got %d requests for one attempt sent twice, want 1", n)
	}
	if !bytes.Equal(first.Output, second.Output) {
		t.Fatalf("the second call's output %s differs from the first's %s: not the stored result", second.Output, first.Output)
	}

	// The coordinator restarts; no worker runs: a re-attached call finds the stored result.
	w.stop(t)
	c = c.restart(t)
	b = c.bindHTTP(t)
	call.Reattach = true
	again := c.call(t, b, call)
	wantSuccess(t, "the re-attached call", again)
	if !bytes.Equal(again.Output, first.Output) || s.count("/dup") != 1 {
		t.Fatalf("the re-attached call's output %s (site requests %d); want the stored result %s and no new request",
			again.Output, s.count("/dup"), first.Output)
	}

	// An attempt still queued when its coordinator shuts down stays queued...
	queued := httpCall("task.queued", s.URL+"/queued", "", nil)
	p := c.callAsync(b, queued)
	eventually(t, "the attempt to be queued", func() bool { return c.queued("default") == 1 })
	p.cancel(task.ErrInterrupted)
	wantKind(t, "the call interrupted by the shutdown", p.result(t), outcome.Cancelled)
	if d := c.queued("default"); d != 1 {
		t.Fatalf("after the coordinator's shutdown, %d attempts are queued; want the interrupted one left", d)
	}
	// ...and the next coordinator's re-attached call waits for it, without sending it again.
	c = c.restart(t)
	b = c.bindHTTP(t)
	queued.Reattach = true
	p = c.callAsync(b, queued)
	c.startWorker(t, WorkerOptions{})
	wantSuccess(t, "the re-attached queued call", p.result(t))
	if n := s.count("/queued"); n != 1 {
		t.Fatalf("the site got %d requests for the re-attached attempt, want 1", n)
	}
	eventually(t, "the queue to drain", func() bool { return c.queued("default") == 0 })
}
