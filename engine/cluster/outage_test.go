package cluster

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/internal/natstest"
	"github.com/fuscia/fuscia/internal/outcome"
)

// TestNATSRestart: a call made while the NATS server is down completes once it is back: the
// coordinator keeps trying to send the attempt, and the worker and the coordinator's results
// consumer reconnect.
func TestNATSRestart(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{})
	w := c.startWorker(t, WorkerOptions{})
	b := c.bindHTTP(t)
	wantSuccess(t, "the call before the outage", c.call(t, b, httpCall("task.before", s.URL+"/before", "", nil)))

	srv.Shutdown()
	eventually(t, "the coordinator to see the outage", func() bool { return c.conn.down.Load() })
	// Each says what the loss means for it.
	eventually(t, "the coordinator's and the worker's warnings", func() bool {
		return strings.Contains(c.log.String(), "serve keeps accepting and journaling runs") &&
			strings.Contains(w.log.String(), "the worker takes no attempts until it comes back")
	})
	if strings.Contains(w.log.String(), "serve keeps accepting") {
		t.Errorf("the worker's warning speaks of serve:\n%s", w.log.String())
	}
	p := c.callAsync(b, httpCall("task.during", s.URL+"/during", "", nil))
	srv.Restart(t)
	wantSuccess(t, "the call made during the outage", p.result(t))
	if n := s.count("/during"); n != 1 {
		t.Fatalf("the site got %d requests for the call made during the outage, want 1", n)
	}
	wantSuccess(t, "the call after the outage", c.call(t, b, httpCall("task.after", s.URL+"/after", "", nil)))
}

// TestThreeServers: on a NATS cluster of three servers the coordinator replicates its streams
// on all three, and calls keep completing when the server leading the work stream goes away.
func TestThreeServers(t *testing.T) {
	nc := natstest.StartCluster(t, 3)
	s := newSite(t)
	c := newCluster(t, nc.URLs(), clusterOptions{AckWait: 2 * time.Second})
	ctx := testCtx(t)
	for name := range c.conn.js.StreamNames(ctx).Name() {
		st, err := c.conn.js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if r := st.CachedInfo().Config.Replicas; r != 3 {
			t.Errorf("stream %s has %d replicas, want 3", name, r)
		}
	}
	st, err := c.conn.js.Stream(ctx, c.conn.names.workStream("default"))
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("the work stream's cluster info = %+v; want a leader and 2 replicas", info.Cluster)
	}
	c.startWorker(t, WorkerOptions{})
	b := c.bindHTTP(t)

	// run makes a task's attempts until one is not interrupted, as the scheduler does.
	run := func(node string) outcome.Result {
		call := httpCall(node, s.URL+"/"+node, "", nil)
		for {
			r := c.call(t, b, call)
			if r.Type != outcome.Failure || r.Kind != outcome.AttemptInterrupted {
				return r
			}
			call.Attempt++
		}
	}
	for i := range 3 {
		node := fmt.Sprintf("n%d", i)
		wantSuccess(t, node, run(node))
	}
	// The work stream's leader goes away while a call is on its way.
	done := make(chan outcome.Result, 1)
	go func() { done <- run("n3") }()
	leader := info.Cluster.Leader
	for i, srv := range nc.Servers() {
		if srv.Name() == leader {
			nc.Stop(i)
		}
	}
	select {
	case r := <-done:
		wantSuccess(t, "n3", r)
	case <-time.After(patience):
		t.Fatal("the call made while the leader went away did not finish")
	}
	for i := 4; i < 7; i++ {
		node := fmt.Sprintf("n%d", i)
		wantSuccess(t, node, run(node))
	}
	for i := range 7 {
		if n := s.count(fmt.Sprintf("/n%d", i)); n < 1 {
			t.Errorf("task n%d never reached the site", i)
		}
	}
	// Another server leads the work stream now.
	eventually(t, "a new leader of the work stream", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		info, err := st.Info(ctx)
		return err == nil && info.Cluster != nil && info.Cluster.Leader != "" && info.Cluster.Leader != leader
	})
}
