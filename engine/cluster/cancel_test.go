package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/fuscia/fuscia/internal/natstest"
	"github.com/fuscia/fuscia/internal/outcome"
)

// stopBound is how soon a worker must stop an attempt the coordinator gave up on
// (docs/cluster.md: within 1 s of the decision).
const stopBound = time.Second

// waitSlow waits for the site's next /slow request.
func (s *site) waitSlow(t *testing.T) {
	t.Helper()
	select {
	case <-s.slowStarted:
	case <-time.After(patience):
		t.Fatalf("the worker did not send the request within %s", patience)
	}
}

// slowStopped waits for the /slow request's context to end, and returns how long after
// from it ended.
func (s *site) slowStopped(t *testing.T, from time.Time) time.Duration {
	t.Helper()
	select {
	case at := <-s.slowEnded:
		return at.Sub(from)
	case <-time.After(patience):
		t.Fatalf("the worker's request was not cancelled within %s", patience)
		return 0
	}
}

// TestCancelReachesWorker: a cancelled call's attempt is stopped on its worker at once, and
// a timed-out one too.
func TestCancelReachesWorker(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{})
	c.startWorker(t, WorkerOptions{})
	b := c.bindHTTP(t)

	p := c.callAsync(b, httpCall("task.slow", s.URL+"/slow", "", nil))
	s.waitSlow(t)
	cancelled := time.Now()
	p.cancel(nil)
	wantKind(t, "the cancelled call", p.result(t), outcome.Cancelled)
	d := s.slowStopped(t, cancelled)
	t.Logf("the worker's request ended %s after the cancellation", d)
	if d > stopBound {
		t.Fatalf("the worker stopped the cancelled attempt %s after the cancellation; want within %s", d, stopBound)
	}

	// A timeout: the coordinator decides it and tells the worker.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	deadline, _ := ctx.Deadline()
	done := make(chan outcome.Result, 1)
	go func() { done <- c.coord.Call(ctx, b, httpCall("task.slow2", s.URL+"/slow", "", nil)) }()
	s.waitSlow(t)
	select {
	case r := <-done:
		wantKind(t, "the call that timed out", r, outcome.Timeout)
	case <-time.After(patience):
		t.Fatalf("the call did not time out")
	}
	d = s.slowStopped(t, deadline)
	t.Logf("the worker's request ended %s after the timeout", d)
	if d > stopBound {
		t.Fatalf("the worker stopped the attempt %s after its timeout; want within %s", d, stopBound)
	}
}

// TestCancelQueued: the queued attempt of a cancelled call is withdrawn: a worker that starts
// later does not run it.
func TestCancelQueued(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{Pools: []string{"batch"}})
	b := c.bindHTTP(t)

	p := c.callAsync(b, httpCall("task.gone", s.URL+"/gone", "batch", nil))
	eventually(t, "the attempt to be queued", func() bool { return c.queued("batch") == 1 })
	p.cancel(nil)
	wantKind(t, "the cancelled call", p.result(t), outcome.Cancelled)
	eventually(t, "the cancelled attempt to leave the queue", func() bool { return c.queued("batch") == 0 })

	// A worker of the pool runs the next attempt, and only it: the work queue is in order, so
	// the cancelled one would have come first.
	c.startWorker(t, WorkerOptions{Pools: []string{"batch"}, Concurrency: 1})
	wantSuccess(t, "the next call", c.call(t, b, httpCall("task.next", s.URL+"/next", "batch", nil)))
	if n := s.count("/gone"); n != 0 {
		t.Fatalf("the cancelled attempt ran %d times", n)
	}
}

// TestCancelBeforeStart: a cancel that reaches the worker before the attempt started there
// (the coordinator gave up on it as the worker took its message) stops the attempt as soon as
// it starts, instead of being lost.
func TestCancelBeforeStart(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{})
	w := c.startWorker(t, WorkerOptions{})
	b := c.bindHTTP(t)

	call := httpCall("task.early", s.URL+"/slow", "", nil)
	// The cancel message, as the worker's subscription gets it, before the attempt starts.
	w.cancel(attemptID(call))
	// The coordinator still waits for the worker's answer here, to see it.
	wantKind(t, "the attempt cancelled before it started", c.call(t, b, call), outcome.Cancelled)
}

// TestForgedCancelIgnored: a cancel the coordinator did not seal (the attempt's id in clear,
// as anyone who can publish on the cancel subject could send, or one sealed with another key)
// does not stop the attempt; the coordinator's own does.
func TestForgedCancelIgnored(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{})
	w := c.startWorker(t, WorkerOptions{})
	b := c.bindHTTP(t)

	call := httpCall("task.forged", s.URL+"/slow", "", nil)
	p := c.callAsync(b, call)
	s.waitSlow(t)
	id := attemptID(call)
	subject := c.conn.names.cancelSubject()
	for _, forged := range [][]byte{[]byte(id), newKey(t).Seal([]byte(id), cancelAAD), c.cfg.Key.Seal([]byte(id), []byte("other"))} {
		if err := c.conn.nc.Publish(subject, forged); err != nil {
			t.Fatal(err)
		}
	}
	// A sealed cancel of an attempt not running, published after the forged ones on the same
	// connection and subject, so it reaches the worker after them: once the worker remembers
	// it, it has handled the forged ones.
	marker := attemptID(httpCall("task.marker", s.URL+"/slow", "", nil))
	if err := c.conn.nc.Publish(subject, c.cfg.Key.Seal([]byte(marker), cancelAAD)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the worker to get the marker cancel", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		_, ok := w.early[marker]
		return ok
	})
	select {
	case <-s.slowEnded:
		t.Fatal("a forged cancel stopped the attempt")
	default:
	}
	if p.finished() {
		t.Fatalf("the call ended after forged cancels: %v", p.result(t))
	}
	p.cancel(nil)
	wantKind(t, "the cancelled call", p.result(t), outcome.Cancelled)
	s.slowStopped(t, time.Now())
}
