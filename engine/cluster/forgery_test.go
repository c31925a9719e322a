package cluster

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuscia/fuscia/internal/natstest"
)

// Tests of what a party that can publish on the cluster's subjects, without the cluster key,
// could do before: each fails on the code before its fix.

// forgedSealed is a payload that claims to be sealed with another cluster key (its key id is
// in clear) and is not: anyone can write one.
func forgedSealed() []byte {
	return append([]byte("fsc1\xde\xad\xbe\xef\xde\xad\xbe\xef"), make([]byte, 64)...)
}

// publishRaw publishes data with headers on subject, on a connection of its own.
func publishRaw(t *testing.T, urls, subject string, hdr nats.Header, data []byte) {
	t.Helper()
	nc := natstest.Connect(t, urls)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.PublishMsg(testCtx(t), &nats.Msg{Subject: subject, Header: hdr, Data: data}); err != nil {
		t.Fatalf("publish on %s: %v", subject, err)
	}
}

// TestForgedResults: a stored result copied from another attempt's subject (its headers with
// it) is no answer for the attempt it was copied to, nor is a result that claims another key
// id: the attempt's task runs, once, and its own result is the call's. Before, the coordinator
// opened a stored result with the attempt id of its headers and answered the call with the
// other attempt's output without running it; and a claimed key id stood for an interrupted
// attempt, which counted against nothing, so each attempt of a node could be stalled.
func TestForgedResults(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{})
	c.startWorker(t, WorkerOptions{})
	b := c.bindHTTP(t)
	n := c.conn.names

	ran := httpCall("task.ran", s.URL+"/ran", "", nil)
	wantSuccess(t, "the first call", c.call(t, b, ran))
	ranID := attemptID(ran)
	raw, err := c.coord.results.GetLastMsgForSubject(testCtx(t), n.resultSubject(execution, ranID))
	if err != nil {
		t.Fatal(err)
	}

	// Copied, headers and all, to the next attempt's subject; and that attempt's id taken on
	// its work subject, so that the coordinator's publish is a duplicate and looks for a
	// stored result.
	victim := httpCall("task.victim", s.URL+"/victim", "", nil)
	vid := attemptID(victim)
	publishRaw(t, srv.URL(), n.resultSubject(execution, vid), raw.Header, raw.Data)
	if _, ok := c.coord.stored(testCtx(t), n.resultSubject(execution, vid), vid); ok {
		t.Fatal("a result copied from another attempt's subject is an answer for the attempt it was copied to")
	}
	if _, ok := c.coord.stored(testCtx(t), n.resultSubject(execution, ranID), ranID); !ok {
		t.Fatal("the stored result of the attempt that ran is no answer for it")
	}
	hdr := nats.Header{}
	hdr.Set(jetstream.MsgIDHeader, vid)
	hdr.Set(hdrAttempt, vid)
	publishRaw(t, srv.URL(), n.workSubject(DefaultPool, vid), hdr, []byte("junk"))
	r := c.call(t, b, victim)
	wantSuccess(t, "the call whose subject holds a copied result", r)
	if got := s.count("/victim"); got != 1 {
		t.Fatalf("the victim's task ran %d times, want 1 (its output: %s)", got, r.Output)
	}

	// A result claiming another key id.
	forged := httpCall("task.forged", s.URL+"/forged", "", nil)
	fid := attemptID(forged)
	fh := nats.Header{}
	fh.Set(hdrAttempt, fid)
	publishRaw(t, srv.URL(), n.resultSubject(execution, fid), fh, forgedSealed())
	if _, ok := c.coord.stored(testCtx(t), n.resultSubject(execution, fid), fid); ok {
		t.Fatal("a result that only claims another key id is an answer")
	}
	wantSuccess(t, "the call whose subject holds a result claiming another key", c.call(t, b, forged))
	if got := s.count("/forged"); got != 1 {
		t.Fatalf("the forged-result attempt's task ran %d times, want 1", got)
	}
}

// TestForgedInfoAndWork: the cluster's info record rewritten again and again to name another
// key (a plain publish on the bucket's subject), while a work message claiming that key waits,
// makes no worker leave: the record is sealed, the coordinator writes its own back (patrol),
// and the worker, which sees every version of it, acts only on a record of the coordinator's
// that stays away longer than infoRecheck. Before, one rewrite and one message stopped every
// worker of the pool; then, a rewrite kept up past the recheck did. A message that is not
// sealed is dropped too (it went round the pool for ever).
func TestForgedInfoAndWork(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{})
	w := c.startWorker(t, WorkerOptions{})
	b := c.bindHTTP(t)
	n := c.conn.names

	kv, err := c.conn.js.KeyValue(testCtx(t), n.clusterBucket())
	if err != nil {
		t.Fatal(err)
	}
	forgedInfo, _ := json.Marshal(clusterInfo{Version: "0.0.0", ABI: wireABI, KeyID: "deadbeefdeadbeef"})
	hdr := nats.Header{}
	hdr.Set(hdrAttempt, strings.Repeat("ab", 16))
	publishRaw(t, srv.URL(), n.workSubject(DefaultPool, strings.Repeat("ab", 16)), hdr, forgedSealed())
	junk := nats.Header{}
	junk.Set(hdrAttempt, strings.Repeat("cd", 16))
	publishRaw(t, srv.URL(), n.workSubject(DefaultPool, strings.Repeat("cd", 16)), junk, []byte("not sealed"))

	// The forger keeps at it for longer than a worker's recheck.
	nc := natstest.Connect(t, srv.URL())
	for end := time.Now().Add(infoRecheck + 3*time.Second); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
		if err := nc.Publish("$KV."+n.clusterBucket()+"."+infoKey, forgedInfo); err != nil {
			t.Fatal(err)
		}
		wantRunning(t, w, "while the record was forged")
	}
	eventually(t, "the coordinator to write its info record back", func() bool {
		info, ok, err := readInfo(testCtx(t), kv, c.cfg.Key)
		return err == nil && ok && info.KeyID == c.cfg.Key.ID()
	})
	eventually(t, "the forged and the junk messages to be dropped", func() bool { return c.queued(DefaultPool) == 0 })
	wantSuccess(t, "a call after the forgeries", c.call(t, b, httpCall("task.after", s.URL+"/after", "", nil)))
	wantRunning(t, w, "after the forgeries")
	if !strings.Contains(c.log.String(), "the cluster's info record had been changed by someone else") {
		t.Errorf("the coordinator did not say it wrote its info record back:\n%s", c.log.String())
	}
	// A worker that starts while the record is forged joins on the coordinator's next one.
	if _, err := kv.Put(testCtx(t), infoKey, forgedInfo); err != nil {
		t.Fatal(err)
	}
	c.startWorker(t, WorkerOptions{})
}

// wantRunning fails the test if w's Run has returned.
func wantRunning(t *testing.T, w *runningWorker, when string) {
	t.Helper()
	select {
	case err := <-w.done:
		w.once.Do(func() {}) // its Run returned: the cleanup must not wait for it
		t.Fatalf("the worker stopped %s: %v", when, err)
	default:
	}
}

// TestDeletedWorkersConsumerRemade: a pool's `workers` consumer deleted alone (its stream
// kept) is made again by the coordinator's patrol, and the next attempt runs. Before, every
// attempt sent to the pool waited for its timeout until serve restarted.
func TestDeletedWorkersConsumerRemade(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	c := newCluster(t, srv.URL(), clusterOptions{})
	c.startWorker(t, WorkerOptions{})
	b := c.bindHTTP(t)
	wantSuccess(t, "a call before", c.call(t, b, httpCall("task.before", s.URL+"/before", "", nil)))

	st, err := c.conn.js.Stream(testCtx(t), c.conn.names.workStream(DefaultPool))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteConsumer(testCtx(t), consumerName); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	wantSuccess(t, "a call after the consumer was deleted", c.call(t, b, httpCall("task.after", s.URL+"/after", "", nil)))
	if !strings.Contains(c.log.String(), "the workers' consumer of a pool's work stream was deleted; made it again") {
		t.Errorf("the coordinator did not say it made the consumer again:\n%s", c.log.String())
	}
	t.Logf("the call after the deletion took %s", time.Since(start).Round(time.Millisecond))
}
