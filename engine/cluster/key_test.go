package cluster

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/fuscia/fuscia/engine/cluster/clusterkey"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/natstest"
	"github.com/fuscia/fuscia/internal/outcome"
)

// storeResult stores a result of call as a worker would, sealed with key.
func (c *fixture) storeResult(t *testing.T, key *clusterkey.Key, worker string, call task.Call, res outcome.Result) {
	t.Helper()
	id := attemptID(call)
	body, err := json.Marshal(resultMsg{ID: id, Worker: worker, Result: res, Delivery: 1})
	if err != nil {
		t.Fatal(err)
	}
	m := &nats.Msg{Subject: c.conn.names.resultSubject(call.ExecutionID, id), Header: nats.Header{},
		Data: key.Seal(body, []byte(id))}
	m.Header.Set(hdrAttempt, id)
	m.Header.Set(hdrKey, key.ID())
	m.Header.Set(hdrWorker, worker)
	if _, err := c.conn.js.PublishMsg(testCtx(t), m); err != nil {
		t.Fatal(err)
	}
}

// TestClusterKey: a worker with another cluster key is refused, saying so; a result sealed
// with another key is refused by the coordinator, which logs it, and not delivered.
func TestClusterKey(t *testing.T) {
	srv := natstest.Start(t)
	c := newCluster(t, srv.URL(), clusterOptions{})
	other := c.cfg
	other.Key = newKey(t)
	conn := connect(t, other, "worker", nil)

	err := WaitForCoordinator(testCtx(t), conn, nil)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "cluster key") ||
		!strings.Contains(err.Error(), other.Key.ID()) || !strings.Contains(err.Error(), c.cfg.Key.ID()) {
		t.Fatalf("WaitForCoordinator with another key: %v; want ErrRefused naming the cluster key and both ids", err)
	}
	w := NewWorker(conn, WorkerOptions{Home: t.TempDir(), Tasks: task.ByKind{}})
	if err := w.Run(testCtx(t)); !errors.Is(err, ErrRefused) {
		t.Fatalf("Run with another key: %v; want ErrRefused", err)
	}
	if ws, err := c.coord.Workers(testCtx(t)); err != nil || len(ws) != 0 {
		t.Fatalf("workers = %+v, %v; want none", ws, err)
	}

	// A result sealed with another key.
	s := newSite(t)
	b := c.bindHTTP(t)
	call := httpCall("task.forged", s.URL+"/forged", "", nil)
	p := c.callAsync(b, call)
	eventually(t, "the attempt to be queued", func() bool { return c.queued("default") == 1 })
	c.storeResult(t, other.Key, "forger", call, outcome.OK(json.RawMessage(`{"forged":true}`)))
	eventually(t, "the coordinator to log the refusal", func() bool {
		l := c.log.String()
		return strings.Contains(l, "refused a result from worker forger") && strings.Contains(l, "-cluster-key-file")
	})
	if p.finished() {
		t.Fatalf("the call returned %+v: a result sealed with another key was delivered", p.result(t))
	}
	// The same result sealed with the cluster's key is the call's.
	c.storeResult(t, c.cfg.Key, "honest", call, outcome.OK(json.RawMessage(`{"honest":true}`)))
	r := p.result(t)
	wantSuccess(t, "the call", r)
	if string(r.Output) != `{"honest":true}` {
		t.Fatalf("the call's output = %s; want the result sealed with the cluster's key", r.Output)
	}
}
