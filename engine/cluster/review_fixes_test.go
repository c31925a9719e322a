package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuscia/fuscia/engine/cluster/clusterkey"
	"github.com/fuscia/fuscia/engine/redact"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/natstest"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
)

// Tests of the review's findings: each fails on the code before its fix.

// restartWithKey is the coordinator's restart with another cluster key, on the same prefix:
// the new one rewrites the cluster's info, and seals its attempts with key.
func (c *fixture) restartWithKey(t *testing.T, key *clusterkey.Key) *fixture {
	t.Helper()
	c.coord.Close() // it must not take (and refuse) the new key's results
	cfg := c.cfg
	cfg.Key = key
	n := &fixture{cfg: cfg, home: c.home, log: &logBuffer{}}
	dumpOnFailure(t, "coordinator with the new key", n.log)
	n.conn = connect(t, cfg, "coordinator", n.log.logger())
	coord, err := NewCoordinator(testCtx(t), n.conn, CoordinatorOptions{
		Local: runtimes(t, nil, n.home), ComponentsDir: filepath.Join(n.home, "components"),
		Logger: n.log.logger(), OnRedelivery: func() { n.redeliveries.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(coord.Close)
	n.coord = coord
	return n
}

// takeAttempt fetches the next work message of pool on a connection of its own, and neither
// acknowledges nor renews it.
func (c *fixture) takeAttempt(t *testing.T, pool, id string) jetstream.Msg {
	t.Helper()
	js, err := jetstream.New(natstest.Connect(t, c.cfg.URLs))
	if err != nil {
		t.Fatal(err)
	}
	cons, err := js.Consumer(testCtx(t), c.conn.names.workStream(pool), consumerName)
	if err != nil {
		t.Fatal(err)
	}
	m, err := cons.Next(jetstream.FetchMaxWait(patience))
	if err != nil {
		t.Fatalf("no attempt to take: %v", err)
	}
	if got := m.Headers().Get(hdrAttempt); got != id {
		t.Fatalf("took attempt %s, want %s", got, id)
	}
	return m
}

// storedResult reads and opens the result stored for call.
func (c *fixture) storedResult(t *testing.T, call task.Call) resultMsg {
	t.Helper()
	raw, err := c.coord.results.GetLastMsgForSubject(testCtx(t), c.conn.names.resultSubject(call.ExecutionID, attemptID(call)))
	if err != nil {
		t.Fatalf("the stored result: %v", err)
	}
	plain, err := c.cfg.Key.Open(raw.Data, []byte(attemptID(call)))
	if err != nil {
		t.Fatal(err)
	}
	var r resultMsg
	if err := json.Unmarshal(plain, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// workMsgs is the number of messages in pool's work stream, taken or not.
func (c *fixture) workMsgs(t *testing.T, pool string) uint64 {
	t.Helper()
	st, err := c.conn.js.Stream(testCtx(t), c.conn.names.workStream(pool))
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// TestStaleKeyWorkerStops: a worker that joined with the cluster's old key, given an attempt
// sealed with the new one, gives it back and stops with ErrRefused naming the cluster key;
// a worker with the new key then runs the attempt, which succeeds.
func TestStaleKeyWorkerStops(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{})
	stale := c.startWorker(t, WorkerOptions{})

	n := c.restartWithKey(t, newKey(t))
	b := n.bindHTTP(t)
	call := httpCall("task.rekeyed", s.URL+"/rekeyed", "", nil)
	p := n.callAsync(b, call)

	var err error
	select {
	case err = <-stale.done:
	case <-time.After(patience):
		t.Fatalf("the worker with the old key still runs %s after the attempt of the new key was sent", patience)
	}
	stale.once.Do(func() {}) // its Run returned: the cleanup must not wait for it
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "cluster key") {
		t.Fatalf("Run of the worker with the old key: %v; want ErrRefused naming the cluster key", err)
	}
	if p.finished() {
		t.Fatalf("the call returned %+v before a worker with the new key ran it", p.result(t))
	}
	if got := s.count("/rekeyed"); got != 0 {
		t.Fatalf("the site got %d requests before a worker with the new key started", got)
	}

	n.startWorker(t, WorkerOptions{})
	r := p.result(t)
	wantSuccess(t, "the call, run by the worker with the new key", r)
	if got := s.count("/rekeyed"); got != 1 {
		t.Fatalf("the site got %d requests, want 1", got)
	}
}

// TestLostAckKeepsStoredResult: an attempt whose result was stored but whose ack was lost is
// redelivered; the worker that gets it does not overwrite the stored success with
// attempt_interrupted.
func TestLostAckKeepsStoredResult(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{AckWait: time.Second})
	b := c.bindHTTP(t)
	call := httpCall("task.acklost", s.URL+"/acklost", "", nil)
	p := c.callAsync(b, call)
	eventually(t, "the attempt to be queued", func() bool { return c.queued("default") == 1 })

	// A worker takes the attempt, stores its success, and its ack is lost.
	c.takeAttempt(t, "default", attemptID(call))
	c.storeResult(t, c.cfg.Key, "ack-lost", call, outcome.OK(json.RawMessage(`{"stored":true}`)))
	r := p.result(t)
	wantSuccess(t, "the call", r)
	if string(r.Output) != `{"stored":true}` {
		t.Fatalf("the call's output = %s, want the stored one", r.Output)
	}

	// Once the ack wait passed, a live worker gets the attempt again, and acknowledges it.
	c.startWorker(t, WorkerOptions{})
	eventually(t, "the redelivered attempt to be acknowledged", func() bool { return c.workMsgs(t, "default") == 0 })
	stored := c.storedResult(t, call)
	if stored.Result.Type != outcome.Success || string(stored.Result.Output) != `{"stored":true}` || stored.Worker != "ack-lost" {
		t.Fatalf("the stored result is now %+v from worker %s; want the success stored first", stored.Result, stored.Worker)
	}
	if got := s.count("/acklost"); got != 0 {
		t.Fatalf("the site got %d requests: the answered attempt ran again", got)
	}
}

// TestTwoPoolsOneSlot: a worker of two pools with one slot takes the attempts of the busy pool
// without waiting on the idle one.
func TestTwoPoolsOneSlot(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{Pools: []string{"a", "b"}})
	c.startWorker(t, WorkerOptions{Pools: []string{"a", "b"}, Concurrency: 1})
	b := c.bindHTTP(t)

	const calls = 20
	start := time.Now()
	for i := range calls {
		r := c.call(t, b, httpCall(fmt.Sprintf("task.b%d", i), s.URL+"/b", "b", nil))
		wantSuccess(t, fmt.Sprintf("call %d", i), r)
	}
	took := time.Since(start)
	t.Logf("%d calls of pool b, one after the other, took %s (%s each)", calls, took, took/calls)
	// The one timing bound of these tests. A worker that gives pool a its slot for a 2 s
	// wait in turn with b needs about 2 s a call (40 s); one that goes round the pools
	// every 250 ms needs about 0.25 s a call (5 s). 20 s is 4× that, for -race on two busy
	// cores, and still half the slow worker's time.
	if took > 20*time.Second {
		t.Fatalf("%d calls of pool b took %s; the idle pool a holds the worker's only slot", calls, took)
	}
	if got := s.count("/b"); got != calls {
		t.Fatalf("the site got %d requests, want %d", got, calls)
	}
}

// TestCancelMessages: a cancel is remembered only for an attempt id, and the memory of the
// cancels of attempts not running here is bounded; a running attempt is still stopped when
// the memory is full.
func TestCancelMessages(t *testing.T) {
	w := NewWorker(nil, WorkerOptions{})
	for _, id := range []string{"", "x", "not an attempt id at all, surely",
		strings.Repeat("a", 31), strings.Repeat("a", 33), strings.Repeat("A", 32), strings.Repeat("g", 32),
		strings.Repeat("a", 30) + "é"} {
		w.cancel(id)
		if len(w.early) != 0 {
			t.Fatalf("cancel(%q) was remembered: %v", id, w.early)
		}
	}
	id := func(i int) string { return fmt.Sprintf("%032x", i) }
	w.cancel(id(0))
	if _, ok := w.early[id(0)]; !ok {
		t.Fatalf("the cancel of attempt %s, not running here, was not remembered", id(0))
	}
	for i := range maxEarlyCancels + 500 {
		w.cancel(id(i))
	}
	if len(w.early) != maxEarlyCancels {
		t.Fatalf("%d early cancels remembered; want at most %d", len(w.early), maxEarlyCancels)
	}
	running := id(maxEarlyCancels + 1000)
	stopped := false
	w.cancels[running] = func() { stopped = true }
	w.cancel(running)
	if !stopped {
		t.Fatal("with the early cancels full, the cancel of a running attempt did not stop it")
	}
}

// TestSecretsOnly: only the sensitive values that hold a secret the coordinator knows travel
// with a call for the worker's scrubbing; without a secret set, none do.
func TestSecretsOnly(t *testing.T) {
	set := redact.NewSet()
	set.Add("s3cret")
	values := []string{"status completed", "Bearer s3cret", "200"}
	if got := (&Coordinator{opts: CoordinatorOptions{Redact: set}}).secretsOnly(values); !slices.Equal(got, []string{"Bearer s3cret"}) {
		t.Fatalf("secretsOnly = %q, want only the value holding the secret", got)
	}
	if got := (&Coordinator{}).secretsOnly(values); got != nil {
		t.Fatalf("without Redact, secretsOnly = %q, want none", got)
	}

	// On the wire: the sealed work message of a call with sensitive input.
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{})
	b := c.bindHTTP(t)
	for i, redactSet := range []*redact.Set{set, nil} {
		c.coord.opts.Redact = redactSet // no call runs: the next one's goroutine starts after
		call := newCall(fmt.Sprintf("task.secret%d", i), lang.Uses{Kind: lang.UsesBuiltin, Name: "http"},
			map[string]any{"url": s.URL + "/never", "headers": map[string]any{"Authorization": "Bearer s3cret"}, "note": "status completed"},
			"", nil)
		call.Sensitive = []string{"/headers/Authorization", "/note"}
		p := c.callAsync(b, call)
		m := c.takeAttempt(t, "default", attemptID(call))
		plain, err := c.cfg.Key.Open(m.Data(), []byte(attemptID(call)))
		if err != nil {
			t.Fatal(err)
		}
		var a attemptMsg
		if err := json.Unmarshal(plain, &a); err != nil {
			t.Fatal(err)
		}
		want := []string{"Bearer s3cret"}
		if redactSet == nil {
			want = nil
		}
		if !slices.Equal(a.Secrets, want) {
			t.Fatalf("with Redact %v, the attempt carries secrets %q; want %q", redactSet != nil, a.Secrets, want)
		}
		_ = m.Term()
		p.cancel(nil)
		if r := p.result(t); r.Type != outcome.Failure || r.Kind != outcome.Cancelled {
			t.Fatalf("the cancelled call: %+v", r)
		}
	}
}

// TestLogsOverMaxPayload: a result whose logs make it larger than the server's max_payload is
// stored without them, with a line that says so, and keeps its success.
func TestLogsOverMaxPayload(t *testing.T) {
	const maxPayload = 64 << 10
	srv := natstest.StartWith(t, func(o *server.Options) { o.MaxPayload = maxPayload })
	c := newCluster(t, srv.URL(), clusterOptions{})
	b := c.bindHTTP(t)
	logs := &logLines{}
	call := httpCall("task.chatty", "http://127.0.0.1:1/never", "", logs)
	p := c.callAsync(b, call)

	// A worker that ran the call: its logs are within what a call sends back (maxLogLines,
	// maxLogBytes), and more than the server takes in one message.
	conn := connect(t, c.cfg, "worker", nil)
	w := NewWorker(conn, WorkerOptions{Home: t.TempDir(), Tasks: task.ByKind{}})
	w.ackWait = map[string]time.Duration{DefaultPool: c.cfg.AckWait}
	m := c.takeAttempt(t, DefaultPool, attemptID(call))
	a, ok := w.open(m)
	if !ok {
		t.Fatal("the worker cannot open the attempt")
	}
	var lines []logLine
	for i := range 400 {
		lines = append(lines, logLine{Level: "info", Message: fmt.Sprintf("line %d %s", i, strings.Repeat("x", 500))})
	}
	w.store(testCtx(t), DefaultPool, m, a, resultMsg{ID: a.ID, Worker: w.ID(), Delivery: 1,
		Result: outcome.OK(json.RawMessage(`{"status":200}`)), Logs: lines})

	r := p.result(t)
	wantSuccess(t, "the call", r)
	if string(r.Output) != `{"status":200}` {
		t.Fatalf("the call's output = %s", r.Output)
	}
	got := logs.String()
	if strings.Count(got, "\n") != 0 || !strings.Contains(got, "400 log lines") || !strings.Contains(got, "dropped") || !strings.Contains(got, "max_payload") {
		t.Fatalf("the call's log:\n%s\nwant one line saying its 400 lines were dropped for max_payload", got)
	}
	stored := c.storedResult(t, call)
	if stored.Result.Type != outcome.Success || len(stored.Logs) != 1 || !strings.Contains(stored.Logs[0].Message, "dropped") {
		t.Fatalf("the stored result: %+v, logs %+v; want the success with one line saying the logs were dropped", stored.Result, stored.Logs)
	}
	if n := c.workMsgs(t, DefaultPool); n != 0 {
		t.Fatalf("the work stream holds %d messages: the attempt was not acknowledged", n)
	}
}
