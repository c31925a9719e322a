package cluster

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuscia/fuscia/internal/natstest"
	"github.com/fuscia/fuscia/internal/outcome"
)

// Someone who can publish on the cluster's subjects but has no cluster key sees the sealed
// work messages go by. These tests are that party: what it publishes must never run a task
// twice, nor keep one from running.

// captureWork subscribes to every work subject, as a core NATS client would.
func (c *fixture) captureWork(t *testing.T) *nats.Subscription {
	t.Helper()
	sub, err := c.conn.nc.SubscribeSync(c.conn.names.p + ".work.>")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := c.conn.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return sub
}

// nextWork returns the next captured work message.
func nextWork(t *testing.T, sub *nats.Subscription) *nats.Msg {
	t.Helper()
	m, err := sub.NextMsg(patience)
	if err != nil {
		t.Fatalf("no work message captured: %v", err)
	}
	return m
}

// replay publishes a copy of m on subject (m's own when empty), without the headers that
// speak to JetStream (its message id, its expected stream).
func (c *fixture) replay(t *testing.T, m *nats.Msg, subject string) error {
	t.Helper()
	if subject == "" {
		subject = m.Subject
	}
	h := nats.Header{}
	for k, v := range m.Header {
		if !strings.HasPrefix(k, "Nats-") {
			h[k] = v
		}
	}
	_, err := c.conn.js.PublishMsg(testCtx(t), &nats.Msg{Subject: subject, Header: h, Data: m.Data})
	return err
}

// TestReplayedAttemptNotRun: a copy of a work message published after its attempt ran finds
// the stored result and does not run the task again; a copy published while the attempt runs
// is refused by the stream.
func TestReplayedAttemptNotRun(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{})
	c.startWorker(t, WorkerOptions{})
	b := c.bindHTTP(t)
	sub := c.captureWork(t)

	wantSuccess(t, "the call", c.call(t, b, httpCall("task.once", s.URL+"/once", "", nil)))
	// The worker stores the result, then acknowledges the message: the call may return first.
	eventually(t, "the attempt to be acknowledged", func() bool { return c.workMsgs(t, DefaultPool) == 0 })
	if err := c.replay(t, nextWork(t, sub), ""); err != nil {
		t.Fatalf("publishing the copy of a finished attempt: %v", err)
	}
	nextWork(t, sub) // the copy, seen by the capture too
	eventually(t, "the copy to be handled", func() bool { return c.workMsgs(t, DefaultPool) == 0 })
	if n := s.count("/once"); n != 1 {
		t.Fatalf("the task ran %d times; want once", n)
	}

	p := c.callAsync(b, httpCall("task.slow", s.URL+"/slow", "", nil))
	s.waitSlow(t)
	err := c.replay(t, nextWork(t, sub), "")
	if !subjectFull(err) {
		t.Fatalf("publishing the copy of a running attempt: %v; want the stream's refusal", err)
	}
	p.cancel(nil)
	p.result(t)
	if n := s.count("/slow"); n != 1 {
		t.Fatalf("the slow task ran %d times; want once", n)
	}
}

// TestAttemptCopiedToAnotherPool: the seal binds an attempt's id, not its subject; a copy on
// another pool's subject is dropped by the worker that takes it.
func TestAttemptCopiedToAnotherPool(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{Pools: []string{"batch"}})
	c.startWorker(t, WorkerOptions{Pools: []string{DefaultPool, "batch"}})
	b := c.bindHTTP(t)
	sub := c.captureWork(t)

	p := c.callAsync(b, httpCall("task.slow", s.URL+"/slow", "", nil))
	s.waitSlow(t)
	m := nextWork(t, sub)
	id := m.Header.Get(hdrAttempt)
	if err := c.replay(t, m, c.conn.names.workSubject("batch", id)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the copy to be dropped", func() bool { return c.workMsgs(t, "batch") == 0 })
	if n := s.count("/slow"); n != 1 {
		t.Fatalf("the task ran %d times; want once", n)
	}
	p.cancel(nil)
	p.result(t)
}

// TestPreemptedAttemptSent: a message published on an attempt's subject under its message id
// before the coordinator (the id is predictable, the execution id public) does not keep the
// attempt from being sent: the coordinator deletes it and sends its own.
func TestPreemptedAttemptSent(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{})
	c.startWorker(t, WorkerOptions{})
	b := c.bindHTTP(t)

	call := httpCall("task.pre", s.URL+"/pre", "", nil)
	id := attemptID(call)
	junk := &nats.Msg{Subject: c.conn.names.workSubject(DefaultPool, id), Header: nats.Header{}, Data: []byte("fsc1 junk")}
	junk.Header.Set(hdrAttempt, id)
	if _, err := c.conn.js.PublishMsg(testCtx(t), junk, jetstream.WithMsgID(id)); err != nil {
		t.Fatal(err)
	}
	wantSuccess(t, "the preempted call", c.call(t, b, call))
	if n := s.count("/pre"); n != 1 {
		t.Fatalf("the task ran %d times; want once", n)
	}
}

// TestForeignKeyMessageDropped: a message whose clear key id is not the cluster's (a leftover
// of a key change, or anyone's 60 bytes) does not stop a worker that holds the coordinator's
// key: it is dropped, and the worker goes on taking attempts.
func TestForeignKeyMessageDropped(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{})
	w := c.startWorker(t, WorkerOptions{})
	b := c.bindHTTP(t)

	id := attemptID(httpCall("task.forged", s.URL+"/forged", "", nil))
	m := &nats.Msg{Subject: c.conn.names.workSubject(DefaultPool, id), Header: nats.Header{},
		Data: newKey(t).Seal([]byte(`{}`), []byte(id))}
	m.Header.Set(hdrAttempt, id)
	if _, err := c.conn.js.PublishMsg(testCtx(t), m); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the foreign message to be dropped", func() bool { return c.workMsgs(t, DefaultPool) == 0 })
	select {
	case err := <-w.done:
		w.once.Do(func() {})
		t.Fatalf("the worker stopped: %v", err)
	default:
	}
	wantSuccess(t, "a call after the foreign message", c.call(t, b, httpCall("task.after", s.URL+"/after", "", nil)))
}

// TestResultUnderOldKey: an attempt answered under the cluster's previous key cannot be read,
// and its key id cannot be checked (anyone can claim one): it is no answer, and the attempt runs
// again, as an interrupted attempt does after a crash; its new result, under the new key, is
// the answer of a call sent again.
func TestResultUnderOldKey(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{})
	call := httpCall("task.rotated", s.URL+"/rotated", "", nil)
	c.storeResult(t, c.cfg.Key, "old-worker", call, outcome.OK(json.RawMessage(`{"old":true}`)))

	n := c.restartWithKey(t, newKey(t))
	n.startWorker(t, WorkerOptions{})
	b := n.bindHTTP(t)
	reattached := call
	reattached.Reattach = true
	wantSuccess(t, "the re-attached call", n.call(t, b, reattached))
	if got := s.count("/rotated"); got != 1 {
		t.Fatalf("the attempt answered under the old key ran %d times again, want 1", got)
	}
	wantSuccess(t, "the call sent again", n.call(t, b, call))
	if got := s.count("/rotated"); got != 1 {
		t.Fatalf("the attempt answered under the new key ran %d times, want 1", got)
	}
}

// TestDeletedWorkStreamRemade: a pool's work stream deleted under a running coordinator (by an
// operator, or anyone with the JetStream API's rights) is made again at the next attempt, and
// the pool's worker takes it.
func TestDeletedWorkStreamRemade(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{})
	c.startWorker(t, WorkerOptions{})
	b := c.bindHTTP(t)
	wantSuccess(t, "the first call", c.call(t, b, httpCall("task.first", s.URL+"/first", "", nil)))

	if err := c.conn.js.DeleteStream(testCtx(t), c.conn.names.workStream(DefaultPool)); err != nil {
		t.Fatal(err)
	}
	wantSuccess(t, "a call after the stream's deletion", c.call(t, b, httpCall("task.second", s.URL+"/second", "", nil)))
	if !strings.Contains(c.log.String(), "made the pool's work stream again") {
		t.Fatalf("the coordinator's log does not say it made the stream again:\n%s", c.log.String())
	}
}

// TestDeletedResultsStreamRemade: the results stream deleted while the coordinator runs, and
// then the coordinator's consumer of it alone, are made again, and the calls after each get
// their results (before, the coordinator's subscription ended with the consumer and no result
// reached a call until serve restarted).
func TestDeletedResultsStreamRemade(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{})
	c.startWorker(t, WorkerOptions{})
	b := c.bindHTTP(t)
	wantSuccess(t, "the first call", c.call(t, b, httpCall("task.first", s.URL+"/first", "", nil)))

	name := c.conn.names.resultsStream()
	if err := c.conn.js.DeleteStream(testCtx(t), name); err != nil {
		t.Fatal(err)
	}
	wantSuccess(t, "a call after the stream's deletion", c.call(t, b, httpCall("task.second", s.URL+"/second", "", nil)))
	if !strings.Contains(c.log.String(), "the results stream was deleted; made it again") {
		t.Fatalf("the coordinator's log does not say it made the stream again:\n%s", c.log.String())
	}

	st, err := c.conn.js.Stream(testCtx(t), name)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteConsumer(testCtx(t), coordinatorConsumer); err != nil {
		t.Fatal(err)
	}
	wantSuccess(t, "a call after the consumer's deletion", c.call(t, b, httpCall("task.third", s.URL+"/third", "", nil)))
	if !strings.Contains(c.log.String(), "consumer of the results stream was deleted; made it again") {
		t.Fatalf("the coordinator's log does not say it made the consumer again:\n%s", c.log.String())
	}
}
