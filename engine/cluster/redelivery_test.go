package cluster

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuscia/fuscia/internal/natstest"
	"github.com/fuscia/fuscia/internal/outcome"
)

// dieWithAttempt takes the next attempt of pool as a worker that dies at once would: a fetch
// of the work message that is never acknowledged nor renewed. It checks that the message is
// the attempt id's first delivery.
func (c *fixture) dieWithAttempt(t *testing.T, pool, id string) {
	t.Helper()
	js, err := jetstream.New(natstest.Connect(t, c.cfg.URLs))
	if err != nil {
		t.Fatal(err)
	}
	cons, err := js.Consumer(testCtx(t), c.conn.names.workStream(pool), consumerName)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(patience))
	if err != nil {
		t.Fatal(err)
	}
	var got jetstream.Msg
	for m := range batch.Messages() {
		got = m
	}
	if got == nil {
		t.Fatalf("no attempt to take: %v", batch.Error())
	}
	md, err := got.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	if got.Headers().Get(hdrAttempt) != id || md.NumDelivered != 1 {
		t.Fatalf("took attempt %s, delivery %d; want %s, delivery 1", got.Headers().Get(hdrAttempt), md.NumDelivered, id)
	}
}

// TestRedelivery: the attempt of a worker that died mid-attempt goes to another worker once
// the ack wait passed, which answers attempt_interrupted without running it; the
// -max-deliver-th such attempt of a task in a row fails with worker_lost, and a success in
// between starts the count again.
func TestRedelivery(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{AckWait: time.Second, MaxDeliver: 2})
	b := c.bindHTTP(t)

	call := httpCall("task.flaky", s.URL+"/flaky", "", nil)
	steps := []struct {
		die  bool         // the first worker to take the attempt dies with it
		want outcome.Kind // "" for success
	}{
		{die: true, want: outcome.AttemptInterrupted},
		{die: false},
		{die: true, want: outcome.AttemptInterrupted},
		{die: true, want: outcome.WorkerLost},
	}
	redelivered := int64(0)
	for i, step := range steps {
		call.Attempt = i + 1
		what := fmt.Sprintf("attempt %d", call.Attempt)
		p := c.callAsync(b, call)
		if step.die {
			eventually(t, what+" to be queued", func() bool { return c.queued("default") == 1 })
			c.dieWithAttempt(t, "default", attemptID(call))
			redelivered++
		}
		// A live worker gets the attempt once the dead one's ack wait passed.
		w := c.startWorker(t, WorkerOptions{})
		r := p.result(t)
		if step.want == "" {
			wantSuccess(t, what, r)
		} else {
			wantKind(t, what, r, step.want)
		}
		if step.want == outcome.WorkerLost && !strings.Contains(r.Message, "-max-deliver") {
			t.Fatalf("worker_lost message %q does not name -max-deliver", r.Message)
		}
		if n := c.redeliveries.Load(); n != redelivered {
			t.Fatalf("after %s, OnRedelivery was called %d times; want %d", what, n, redelivered)
		}
		w.stop(t)
	}
	// Only the attempt no worker died with ran.
	if n := s.count("/flaky"); n != 1 {
		t.Fatalf("the site got %d requests, want 1: a redelivered attempt ran again", n)
	}
	eventually(t, "the queue to drain", func() bool { return c.queued("default") == 0 })
}
