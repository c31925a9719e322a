package cluster

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/fuscia/fuscia/engine/cluster/clusterkey"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/redact"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/hostabi/registry"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/internal/version"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/plugin/discover"
)

// WorkerOptions configure a Worker.
type WorkerOptions struct {
	// Pools are the pools whose attempts the worker takes; "default" when empty.
	Pools []string
	// Concurrency bounds the attempts running at once (all pools together); the number of
	// CPUs when 0.
	Concurrency int
	// Home is the worker's home: components fetched from the cluster are installed in
	// Home/components and compiled into its cache.
	Home string
	// PluginDirs are searched for plugin binaries (-plugin-dir), then Home/plugins.
	PluginDirs []string
	// Digests is the process's cache of plugin binaries' digests (the plugin manager's), which
	// the Tasks dispatcher reads through too; nil reads a binary each time.
	Digests *discover.Digests
	// Tasks runs the attempts: the process's runtimes, on Home/components, with the
	// cluster's KV and artifacts.
	Tasks  task.Dispatcher
	Logger *slog.Logger
	// Local: the worker runs inside the coordinator (-local-worker); only its record says so.
	Local bool
	// Redact, when set, gets the secret values of each call (from its sealed message), so that
	// the process's log (a plugin's or a guest's debug lines) is scrubbed of them.
	Redact *redact.Set
	// OnJoined, when set, is called once the worker has joined: bound to the work streams of
	// all its pools and about to take attempts.
	OnJoined func(id string)
	// ShutdownGrace is how long running attempts may go on once Run's context ended (30 s
	// when 0); those still running then are stopped and answered attempt_interrupted, a clean
	// stop that does not count towards worker_lost.
	ShutdownGrace time.Duration
}

// Worker takes the attempts of its pools, runs them and stores their results.
type Worker struct {
	conn *Conn
	opts WorkerOptions
	log  *slog.Logger
	id   string
	host string

	running atomic.Int64

	mu      sync.Mutex
	cancels map[string]context.CancelFunc // by attempt id
	// early are the cancels of attempts not running here when they came, by attempt id, with
	// when: one may have come between the taking of its message and its start (run stops it
	// at once). Kept for earlyCancelTTL.
	early       map[string]time.Time
	earlyPruned time.Time
	bindings    map[string]task.Binding // by block spec digest
	disabled    map[string]string       // pools the worker cannot run: why
	results     jetstream.Stream
	started     time.Time
	// stopTaking ends the takers (Run's ctx, or refuse); refused is why the worker stopped
	// on its own.
	stopTaking context.CancelFunc
	refused    error
	// infoOurs says whether the cluster's info record is the coordinator's, sealed with this
	// worker's key; infoOursUntil is when it last stopped being so (watchInfo).
	infoOurs      bool
	infoOursUntil time.Time
	// ackWait is each pool's consumer's, as the coordinator set it: heartbeats go at a
	// third of it. Set by Run before the first attempt.
	ackWait map[string]time.Duration
}

// NewWorker prepares a worker; Run runs it.
func NewWorker(conn *Conn, opts WorkerOptions) *Worker {
	if len(opts.Pools) == 0 {
		opts.Pools = []string{DefaultPool}
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = runtime.NumCPU()
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &Worker{conn: conn, opts: opts, log: log, host: host,
		id:      fmt.Sprintf("%s-%d-%s", token(host), os.Getpid(), hex.EncodeToString(b[:])),
		cancels: map[string]context.CancelFunc{}, early: map[string]time.Time{},
		bindings: map[string]task.Binding{}, disabled: map[string]string{}}
}

// ID is the worker's id in `fuscia workers list`.
func (w *Worker) ID() string { return w.id }

// ErrRefused is wrapped by Run's error when the cluster refuses the worker: another fuscia
// version, message ABI or cluster key than the coordinator's.
var ErrRefused = errors.New("this worker cannot join the cluster")

// Run joins the cluster and takes attempts until ctx ends. It waits for the coordinator to
// have set the cluster up, and fails with ErrRefused when the worker does not match it.
// Attempts still running when ctx ends run on for ShutdownGrace, then are stopped and answered
// attempt_interrupted.
func (w *Worker) Run(ctx context.Context) error {
	n := w.conn.names
	if err := WaitForCoordinator(ctx, w.conn, w.log); err != nil {
		return err
	}
	var err error
	if w.results, err = w.conn.js.Stream(ctx, n.resultsStream()); err != nil {
		return fmt.Errorf("bind the results stream %s: %w", n.resultsStream(), err)
	}
	consumers := map[string]jetstream.Consumer{}
	for _, pool := range w.opts.Pools {
		var cons jetstream.Consumer
		if _, err := w.waitFor(ctx, fmt.Sprintf("the coordinator to create the work stream %s of pool %q (a coordinator creates the pools its workflows use)", n.workStream(pool), pool), func() (bool, error) {
			c, err := w.conn.js.Consumer(ctx, n.workStream(pool), consumerName)
			if err != nil {
				return false, nil
			}
			cons = c
			return true, nil
		}); err != nil {
			return err
		}
		consumers[pool] = cons
	}
	w.ackWait = map[string]time.Duration{}
	for pool, cons := range consumers {
		aw := w.conn.cfg.AckWait
		if info := cons.CachedInfo(); info != nil && info.Config.AckWait > 0 {
			aw = info.Config.AckWait
		}
		w.ackWait[pool] = aw
	}
	workers, err := w.conn.js.KeyValue(ctx, n.workersBucket())
	if err != nil {
		return fmt.Errorf("bind the bucket %s: %w", n.workersBucket(), err)
	}
	sub, err := w.conn.nc.Subscribe(n.cancelSubject(), func(m *nats.Msg) {
		// Only a cancel the coordinator sealed stops an attempt: the attempt ids are in clear
		// on the work subjects, and anyone who can publish there must not be able to stop one.
		if id, err := w.conn.cfg.Key.Open(m.Data, cancelAAD); err == nil {
			w.cancel(string(id))
		}
	})
	if err != nil {
		return fmt.Errorf("subscribe to %s: %w", n.cancelSubject(), err)
	}
	defer func() { _ = sub.Unsubscribe() }()

	// The taking (and the heartbeat) stop when ctx ends, or when the worker finds that the
	// cluster moved on without it (refuse: a message sealed with another key).
	outer := ctx
	ctx, w.stopTaking = context.WithCancel(ctx)
	defer w.stopTaking()
	w.started = time.Now()
	w.mu.Lock()
	w.infoOurs = true // it joined on the coordinator's record (WaitForCoordinator)
	w.mu.Unlock()
	w.log.Info("worker joined the cluster", "worker", w.id, "pools", w.opts.Pools, "concurrency", w.opts.Concurrency)
	if w.opts.OnJoined != nil {
		w.opts.OnJoined(w.id)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		w.heartbeat(ctx, workers)
	}()
	go func() {
		defer wg.Done()
		w.watchInfo(ctx)
	}()
	// Attempts run on their own context: the worker's ending stops the taking at once, and
	// the running attempts after the grace.
	attempts, stopAttempts := context.WithCancel(context.WithoutCancel(outer))
	defer stopAttempts()
	grace := w.opts.ShutdownGrace
	if grace <= 0 {
		grace = 30 * time.Second
	}
	finished := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-finished:
			return
		}
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-t.C:
			stopAttempts()
		case <-finished:
		}
	}()
	// One taker per slot of the concurrency: each runs at most one attempt at a time, and
	// goes round the worker's pools so that none waits on an idle one.
	pools := slices.Sorted(maps.Keys(consumers))
	for i := range w.opts.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.take(ctx, attempts, pools, consumers, i)
		}()
	}
	wg.Wait()
	close(finished)
	dctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = workers.Delete(dctx, w.id)
	w.mu.Lock()
	refused := w.refused
	w.mu.Unlock()
	return refused
}

// refuse stops the worker: it cannot run this cluster's attempts any more.
func (w *Worker) refuse(err error) {
	w.mu.Lock()
	first := w.refused == nil
	if first {
		w.refused = fmt.Errorf("%w: %w", ErrRefused, err)
	}
	w.mu.Unlock()
	if first {
		w.log.Error("worker stops: " + err.Error())
		w.stopTaking()
	}
}

// otherKeyFor is how long the cluster's info record has not been the coordinator's (one that
// opens with this worker's key), as watchInfo saw it: 0 while it is. A record someone else
// wrote is replaced by the coordinator within patrolInterval, so only a coordinator that moved
// to another key leaves it so for long.
func (w *Worker) otherKeyFor() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.infoOurs {
		return 0
	}
	return max(time.Since(w.infoOursUntil), time.Nanosecond)
}

// holdsClusterKey says whether the cluster's info record, as watchInfo last saw it, is the
// coordinator's and names this worker's key.
func (w *Worker) holdsClusterKey() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.infoOurs
}

// watchInfo follows the cluster's info record until ctx ends: every version of it, so that one
// the coordinator writes back between two forged ones is seen. The worker joined on one that
// opened with its key.
func (w *Worker) watchInfo(ctx context.Context) {
	kv, err := w.conn.js.KeyValue(ctx, w.conn.names.clusterBucket())
	if err != nil {
		return
	}
	watcher, err := kv.Watch(ctx, infoKey)
	if err != nil {
		return
	}
	defer func() { _ = watcher.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-watcher.Updates():
			if !ok {
				return
			}
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue // the end of the initial values, or a delete
			}
			_, err := openInfo(e.Value(), w.conn.cfg.Key)
			w.mu.Lock()
			if err == nil {
				w.infoOurs = true
			} else if w.infoOurs {
				w.infoOurs, w.infoOursUntil = false, time.Now()
			}
			w.mu.Unlock()
		}
	}
}

// match refuses to join a cluster of another version, ABI or key.
func (w *Worker) match(ci clusterInfo) error {
	if ci.KeyID != w.conn.cfg.Key.ID() {
		return fmt.Errorf("%w: its cluster key differs from the coordinator's (key id %s here, %s there): give the worker the coordinator's -cluster-key-file", ErrRefused, w.conn.cfg.Key.ID(), ci.KeyID)
	}
	if ci.Version != version.Fuscia {
		return fmt.Errorf("%w: this worker is fuscia %s and the coordinator is fuscia %s; run the same version on every machine", ErrRefused, version.Fuscia, ci.Version)
	}
	if ci.ABI != wireABI {
		return fmt.Errorf("%w: the coordinator speaks cluster ABI %d and this worker %d; run the same fuscia on every machine", ErrRefused, ci.ABI, wireABI)
	}
	return nil
}

// waitFor polls ready every second until it is true, saying once what the worker waits for.
func (w *Worker) waitFor(ctx context.Context, what string, ready func() (bool, error)) (bool, error) {
	said := false
	for {
		ok, err := ready()
		if err != nil {
			return false, err
		}
		if ok {
			return true, nil
		}
		if !said {
			w.log.Info("worker waiting for " + what)
			said = true
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// WorkerInfo is a worker's presence record (`fuscia workers list -json`).
type WorkerInfo struct {
	ID            string    `json:"id"`
	Host          string    `json:"host"`
	Pools         []string  `json:"pools"`
	Concurrency   int       `json:"concurrency"`
	Running       int64     `json:"running"`
	LastHeartbeat time.Time `json:"last_heartbeat"`
	Version       string    `json:"version"`
	// Disabled are the pools the worker stopped taking (plugin_missing), with why.
	Disabled map[string]string `json:"disabled,omitempty"`
	KeyID    string            `json:"key_id,omitempty"`
	Local    bool              `json:"local,omitempty"`
	Started  time.Time         `json:"started"`
}

// heartbeat renews the worker's record every heartbeatEvery until ctx ends.
func (w *Worker) heartbeat(ctx context.Context, kv jetstream.KeyValue) {
	t := time.NewTicker(heartbeatEvery)
	defer t.Stop()
	for {
		w.mu.Lock()
		disabled := map[string]string{}
		for k, v := range w.disabled {
			disabled[k] = v
		}
		w.mu.Unlock()
		rec := WorkerInfo{ID: w.id, Host: w.host, Pools: w.opts.Pools, Concurrency: w.opts.Concurrency,
			Running: w.running.Load(), LastHeartbeat: time.Now().UTC(), Version: version.Fuscia,
			Disabled: disabled, KeyID: w.conn.cfg.Key.ID(), Local: w.opts.Local, Started: w.started.UTC()}
		b, _ := json.Marshal(rec)
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if _, err := kv.Put(pctx, w.id, b); err != nil && ctx.Err() == nil {
			w.log.Warn("worker heartbeat not stored", "error", err)
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// take is one slot of the worker's concurrency: it takes an attempt from its pools in turn
// and runs it, until ctx ends or every pool is disabled. With one pool it waits on it; with
// several it waits a little on each, so that an attempt of any pool is taken within about
// that.
func (w *Worker) take(ctx, attempts context.Context, pools []string, consumers map[string]jetstream.Consumer, start int) {
	wait := 2 * time.Second
	if len(pools) > 1 {
		wait = 250 * time.Millisecond
	}
	for i := start; ctx.Err() == nil; i++ {
		pool := pools[i%len(pools)]
		if w.poolDisabled(pool) {
			if w.allDisabled(pools) {
				return
			}
			continue
		}
		msg, err := consumers[pool].Next(jetstream.FetchMaxWait(wait))
		switch {
		case err == nil && ctx.Err() == nil && !w.poolDisabled(pool):
			w.handle(attempts, pool, msg)
		case err == nil:
			// Taken while stopping: answered as interrupted by a clean stop, so the
			// coordinator sends the next attempt to another worker at once.
			w.stopped(attempts, pool, msg)
		case !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) && ctx.Err() == nil:
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

func (w *Worker) allDisabled(pools []string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range pools {
		if _, ok := w.disabled[p]; !ok {
			return false
		}
	}
	return true
}

func (w *Worker) poolDisabled(pool string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.disabled[pool]
	return ok
}

// maxEarlyCancels bounds the cancels remembered for attempts not running here.
const maxEarlyCancels = 10000

// validID reports whether id has the form of an attemptID (32 hex digits).
func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for _, c := range id {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// earlyCancelTTL is how long a worker remembers the cancel of an attempt it does not run:
// far longer than an attempt takes from its message's taking to its start.
const earlyCancelTTL = 2 * time.Minute

// cancel stops a running attempt the coordinator gave up on. Every worker gets every cancel:
// one for an attempt not running here is remembered a while, should the attempt be starting.
func (w *Worker) cancel(id string) {
	if !validID(id) {
		return // not an attempt id: nothing this worker would run
	}
	w.mu.Lock()
	stop := w.cancels[id]
	if stop == nil && len(w.early) < maxEarlyCancels {
		now := time.Now()
		if now.Sub(w.earlyPruned) > earlyCancelTTL/4 {
			for k, at := range w.early {
				if now.Sub(at) > earlyCancelTTL {
					delete(w.early, k)
				}
			}
			w.earlyPruned = now
		}
		w.early[id] = now
	}
	w.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// handle runs one work message and stores its result. ctx is the attempts' context: it ends
// when the worker stops them at the end of its shutdown grace.
func (w *Worker) handle(ctx context.Context, pool string, m jetstream.Msg) {
	ap, ok := w.open(m)
	if !ok {
		return
	}
	a := *ap
	delivery := uint64(1)
	if md, err := m.Metadata(); err == nil {
		delivery = md.NumDelivered
	}
	switch raw, err := w.answered(ctx, &a); {
	case err == nil:
		// Answered already: its worker's ack was lost, a restarted coordinator sent it again,
		// or the message is a copy of one that ran, published again by someone who can
		// publish on the work subjects. The stored result stands; the task does not run again.
		w.republish(ctx, pool, m, raw)
		return
	}
	// A stored result this worker's key does not open is no answer (Coordinator.stored says
	// why): the attempt runs.
	if age := time.Since(time.UnixMilli(a.SentAt)); delivery == 1 && age > maxAttemptAge {
		// Older than the results are kept: no stored result would show that it ran. Only a
		// copy published again so long after can be that old.
		w.log.Error("dropped an attempt sent too long ago to be the coordinator's", "attempt", a.ID, "age", age.Round(time.Second))
		_ = m.TermWithReason("too old")
		return
	}
	if delivery > 1 {
		// A worker took it before and stopped answering (it died, or lost NATS for longer
		// than the ack wait): the attempt is interrupted; the coordinator starts the next
		// one, or gives up after -max-deliver.
		w.store(ctx, pool, m, &a, resultMsg{ID: a.ID, Worker: w.id, Delivery: delivery, Result: outcome.Fail(outcome.AttemptInterrupted,
			"the worker running the attempt stopped answering for longer than the ack wait (%s); delivery %d", w.ackWait[pool], delivery)})
		return
	}
	if a.Version != version.Fuscia {
		w.store(ctx, pool, m, &a, resultMsg{ID: a.ID, Worker: w.id, Delivery: delivery,
			Result: outcome.Fail(outcome.Fatal, "worker %s is fuscia %s and the coordinator fuscia %s; run the same version everywhere", w.id, version.Fuscia, a.Version)})
		return
	}
	w.running.Add(1)
	defer w.running.Add(-1)
	res, logs := w.run(ctx, m, pool, &a)
	if ctx.Err() != nil {
		// Stopped at the end of the worker's shutdown grace.
		w.store(context.WithoutCancel(ctx), pool, m, &a, resultMsg{ID: a.ID, Worker: w.id, Delivery: delivery, Clean: true,
			Result: outcome.Fail(outcome.AttemptInterrupted, "worker %s stopped (its shutdown grace ended) while running the attempt", w.id)})
		return
	}
	w.store(ctx, pool, m, &a, resultMsg{ID: a.ID, Worker: w.id, Delivery: delivery, Result: res, Logs: logs})
}

// answered returns the result stored for attempt a, if the cluster key opens it. Anything else
// on the subject (or nothing) is not an answer, and an error.
func (w *Worker) answered(ctx context.Context, a *attemptMsg) (*jetstream.RawStreamMsg, error) {
	raw, err := w.results.GetLastMsgForSubject(ctx, w.conn.names.resultSubject(a.ExecutionID, a.ID))
	if err != nil {
		return nil, err
	}
	if _, err := w.conn.cfg.Key.Open(raw.Data, []byte(a.ID)); err != nil {
		return nil, err
	}
	return raw, nil
}

// open unseals a work message; a message it cannot open is handed back (sealed with another
// key while the coordinator's key may have changed) or dropped, and ok is false.
func (w *Worker) open(m jetstream.Msg) (*attemptMsg, bool) {
	id := m.Headers().Get(hdrAttempt)
	plain, err := w.conn.cfg.Key.Open(m.Data(), []byte(id))
	if errors.Is(err, clusterkey.ErrOtherKey) {
		if w.holdsClusterKey() {
			// This worker has the key the coordinator says it uses: the message is a leftover
			// of a key change, or was put there by someone without the key. Its key id is in
			// clear, so it is no reason to stop.
			w.log.Warn("dropped an attempt sealed with another cluster key than the coordinator's: "+err.Error(), "attempt", id)
			_ = m.TermWithReason("sealed with another cluster key")
			return nil, false
		}
		// The coordinator changed its key since this worker joined, or someone who can write
		// the unsealed info record made it say so. The attempt goes back as it came,
		// undelivered (a Nak would count a delivery, and the next worker would take it for an
		// interrupted one); the worker stops only once the record has said so for longer than
		// the coordinator takes to write a forged one back.
		w.handBack(m)
		if since := w.otherKeyFor(); since > infoRecheck {
			w.refuse(fmt.Errorf("an attempt is %w: the coordinator's cluster key changed since this worker joined; restart it with the coordinator's -cluster-key-file", err))
		} else {
			if since == 0 {
				w.log.Warn("handed back an attempt sealed with another cluster key; this worker stops if the cluster's info record still names another key in "+infoRecheck.String(), "attempt", id, "error", err)
			}
			// Not at once again: the next message this slot takes is likely the same one.
			time.Sleep(time.Second)
		}
		return nil, false
	}
	if err != nil {
		// Not sealed, or sealed with this very key and not for this attempt id (copied from
		// another subject's message), or damaged: no worker of this key can open it, and a
		// Nak only handed it round the pool for ever.
		w.log.Error("dropped an attempt that does not open with the cluster key: "+err.Error(), "attempt", id)
		_ = m.TermWithReason("does not open with the cluster key")
		return nil, false
	}
	var a attemptMsg
	if err := json.Unmarshal(plain, &a); err != nil || a.ID != id {
		w.log.Error("dropped a malformed attempt", "attempt", id, "error", err)
		_ = m.Term()
		return nil, false
	}
	if want := w.conn.names.workSubject(a.Pool, a.ID); m.Subject() != want {
		// The seal binds the attempt's id, not its subject: a copy on another subject (another
		// pool's, say) is not where the coordinator sent it.
		w.log.Error("dropped an attempt found on another subject than the coordinator's", "attempt", id, "subject", m.Subject(), "want", want)
		_ = m.Term()
		return nil, false
	}
	return &a, true
}

// handBack puts a message this worker cannot open back in its stream as a new message with
// the same sealed body, so that its next delivery is a first one. The taken one is terminated
// first: a work subject holds one message at a time (the stream refuses a second, which is what
// keeps a copy from running beside the original). Should the publish fail, the attempt is lost
// to this worker's mistake and the coordinator's timeout ends it.
func (w *Worker) handBack(m jetstream.Msg) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h := nats.Header{}
	for k, v := range m.Headers() {
		if k != jetstream.MsgIDHeader {
			h[k] = v
		}
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	copied := &nats.Msg{Subject: m.Subject(), Header: h, Data: m.Data()}
	if err := m.TermWithReason("handed back: sealed with another cluster key"); err != nil {
		_ = m.Nak()
		return
	}
	for {
		_, err := w.conn.js.PublishMsg(ctx, copied, jetstream.WithMsgID(h.Get(hdrAttempt)+"-back-"+hex.EncodeToString(b[:])))
		if err == nil {
			return
		}
		// The terminate is an acknowledgement the server applies on its own: until it has,
		// the subject still holds the taken message.
		if !subjectFull(err) || ctx.Err() != nil {
			w.log.Error("cannot hand back an attempt this worker cannot open; the coordinator's timeout will end it", "attempt", h.Get(hdrAttempt), "error", err)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stopped answers an attempt taken while the worker stops: interrupted, cleanly.
func (w *Worker) stopped(ctx context.Context, pool string, m jetstream.Msg) {
	a, ok := w.open(m)
	if !ok {
		return
	}
	w.store(ctx, pool, m, a, resultMsg{ID: a.ID, Worker: w.id, Clean: true,
		Result: outcome.Fail(outcome.AttemptInterrupted, "worker %s was stopping when it took the attempt", w.id)})
}

// maxLogLines and maxLogBytes bound the log lines one call sends back.
const (
	maxLogLines = 1000
	maxLogBytes = 256 << 10
)

// run performs the call.
func (w *Worker) run(ctx context.Context, m jetstream.Msg, pool string, a *attemptMsg) (outcome.Result, []logLine) {
	timeout := time.Duration(a.TimeoutMs) * time.Millisecond
	if a.TimeoutMs <= 0 {
		timeout = 24 * time.Hour
	}
	// The coordinator decides the timeout and says so; this bound only catches a worker the
	// cancel did not reach.
	actx, cancel := context.WithTimeout(ctx, timeout+time.Second)
	defer cancel()
	w.mu.Lock()
	w.cancels[a.ID] = cancel
	if _, ok := w.early[a.ID]; ok {
		delete(w.early, a.ID)
		cancel() // cancelled while it was being taken
	}
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.cancels, a.ID)
		w.mu.Unlock()
	}()

	// Heartbeat: the message stays ours while the attempt runs.
	done := make(chan struct{})
	var hb sync.WaitGroup
	hb.Add(1)
	go func() {
		defer hb.Done()
		t := time.NewTicker(w.ackWait[pool] / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = m.InProgress()
			}
		}
	}()
	defer func() { close(done); hb.Wait() }()

	if w.opts.Redact != nil {
		w.opts.Redact.Add(a.Secrets...)
		if a.Block != nil {
			w.opts.Redact.Add(a.Block.Secrets...)
		}
	}
	var logs []logLine
	var logBytes, dropped int
	var logMu sync.Mutex
	logf := func(level, msg string) {
		logMu.Lock()
		defer logMu.Unlock()
		if len(logs) >= maxLogLines || logBytes+len(msg) > maxLogBytes {
			dropped++
			return
		}
		logBytes += len(msg)
		logs = append(logs, logLine{Level: level, Message: msg})
	}
	b, oerr := w.bind(actx, pool, a)
	if oerr != nil {
		if actx.Err() != nil {
			// Cancelled (or out of time) while fetching its component, say: that is the answer.
			return ctxFailure(actx), nil
		}
		return outcome.Result{Type: outcome.Failure, Kind: oerr.Kind, Message: oerr.Message}, nil
	}
	res := w.opts.Tasks.Call(actx, b, task.Call{
		Uses: a.uses(), Input: a.Input, State: a.State, ExecutionID: a.ExecutionID, Workflow: a.Workflow,
		Node: a.Node, TaskID: a.TaskID, Attempt: a.Attempt, Seq: a.Seq, Iteration: a.Iteration,
		Sensitive: a.Sensitive, Pool: a.Pool, Log: logf,
	})
	logMu.Lock()
	defer logMu.Unlock()
	if dropped > 0 {
		logs = append(logs, logLine{Level: "warn", Message: fmt.Sprintf("%d more log lines of this call were dropped: a call on a worker sends back at most %d lines or %d KiB", dropped, maxLogLines, maxLogBytes>>10)})
	}
	return res, logs
}

// bind binds the call's block on this worker: a workflow of that one block, whose config is
// the value the coordinator evaluated. Bindings are kept by block (a plugin is configured
// once).
func (w *Worker) bind(ctx context.Context, pool string, a *attemptMsg) (task.Binding, *outcome.Error) {
	if a.Block == nil {
		if a.Kind != lang.UsesBuiltin {
			return nil, outcome.Errorf(outcome.Fatal, "%s: the attempt names no block", a.uses())
		}
		return w.bindSpec(ctx, a, "builtin", task.Block{Uses: a.uses(), Workflow: &lang.Workflow{Name: a.Workflow}})
	}
	s := a.Block
	raw, _ := json.Marshal(s)
	sum := sha256.Sum256(raw)
	key := hex.EncodeToString(sum[:])
	w.mu.Lock()
	b, ok := w.bindings[key]
	w.mu.Unlock()
	if ok {
		return b, nil
	}
	config, err := staticConfig(s.Config)
	if err != nil {
		return nil, outcome.Errorf(outcome.Fatal, "%s %q: the config sent by the coordinator: %v", s.Kind, s.Local, err)
	}
	wf := &lang.Workflow{Name: a.Workflow, Filename: filepath.Join(w.opts.Home, "cluster.fsc.hcl")}
	if s.WorkflowFile != "" {
		wf.Filename = s.WorkflowFile
	}
	locks := plan.Locks{}
	switch s.Kind {
	case lang.UsesComponent:
		if err := w.install(ctx, s); err != nil {
			return nil, outcome.Errorf(outcome.Fatal, "worker %s: %v", w.id, err)
		}
		wf.Components = []*lang.Component{{Name: s.Local, Source: s.Source, Version: s.Constraint, Config: config,
			AllowedHosts: s.AllowedHosts, AllowedPaths: s.AllowedPaths, MaxMemory: s.MaxMemory, MaxFuel: s.MaxFuel}}
		locks.Components = map[string]plan.ComponentLock{s.Local: {Source: s.Source, Version: s.Version, Digest: s.Digest}}
	case lang.UsesPlugin:
		if why := w.findPlugin(s); why != "" {
			w.mu.Lock()
			w.disabled[pool] = why
			w.mu.Unlock()
			w.log.Error("worker stops taking the attempts of pool "+pool+": "+why, "pool", pool)
			return nil, outcome.Errorf(outcome.PluginMissing, "%s", why)
		}
		wf.Plugins = []*lang.Plugin{{Name: s.Local, Source: s.Source, Version: s.Constraint, Config: config}}
		if s.Digest != "" {
			locks.Plugins = map[string]plan.PluginLock{s.Local: {Source: s.Source, Version: s.Version, Digest: s.Digest}}
		}
	default:
		return nil, outcome.Errorf(outcome.Fatal, "%s: a worker does not run %s blocks", a.uses(), s.Kind)
	}
	return w.bindSpec(ctx, a, key, task.Block{Uses: a.uses(), Workflow: wf, Locks: locks,
		Eval: func(e hcl.Expression) (cty.Value, *outcome.Error) {
			v, diags := e.Value(nil)
			if diags.HasErrors() {
				return cty.NilVal, outcome.Errorf(outcome.Fatal, "%s", diags.Error())
			}
			return v, nil
		}})
}

func (w *Worker) bindSpec(ctx context.Context, a *attemptMsg, key string, block task.Block) (task.Binding, *outcome.Error) {
	if key == "builtin" {
		key = "builtin:" + a.Workflow
	}
	w.mu.Lock()
	b, ok := w.bindings[key]
	w.mu.Unlock()
	if ok {
		return b, nil
	}
	b, err := w.opts.Tasks.Bind(ctx, block)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	w.bindings[key] = b
	w.mu.Unlock()
	return b, nil
}

// staticConfig is the coordinator's evaluated config as an expression of its value.
func staticConfig(raw json.RawMessage) (hcl.Expression, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	ty, err := ctyjson.ImpliedType(raw)
	if err != nil {
		return nil, err
	}
	v, err := ctyjson.Unmarshal(raw, ty)
	if err != nil {
		return nil, err
	}
	return hcl.StaticExpr(v, hcl.Range{Filename: "(config sent by the coordinator)"}), nil
}

// findPlugin reports why the worker cannot run the plugin a spec names ("" when it can).
func (w *Worker) findPlugin(s *blockSpec) string {
	dirs := append(slices.Clone(w.opts.PluginDirs), filepath.Join(w.opts.Home, "plugins"))
	if s.WorkflowFile != "" {
		// ./plugins beside the workflow, where the coordinator's plan looked first: found
		// only on the coordinator's machine (its local worker).
		dirs = append([]string{filepath.Join(filepath.Dir(s.WorkflowFile), "plugins")}, dirs...)
	}
	constraint := s.Constraint
	if s.Version != "" && s.Digest != "" {
		constraint = ""
	}
	bin, err := discover.Find(dirs, s.Source, constraint)
	if err != nil {
		return fmt.Sprintf("worker %s does not have plugin %s%s (looked in %v): %v; install it in the worker's -plugin-dir and restart the worker", w.id, s.Source, digestNote(s.Digest), dirs, err)
	}
	if s.Digest == "" {
		return ""
	}
	if d, err := w.opts.Digests.Digest(bin.Path); err == nil && d == s.Digest {
		return ""
	}
	// Another version may be the locked one.
	all, _ := discover.Discover(dirs)
	for _, b := range all {
		if b.Name != s.Source && !sameSource(b.Name, s.Source) {
			continue
		}
		if d, err := w.opts.Digests.Digest(b.Path); err == nil && d == s.Digest {
			return ""
		}
	}
	return fmt.Sprintf("worker %s does not have plugin %s with digest %s (looked in %v); install that build in the worker's -plugin-dir and restart the worker", w.id, s.Source, s.Digest, dirs)
}

func digestNote(d string) string {
	if d == "" {
		return ""
	}
	return " with digest " + d
}

func sameSource(name, source string) bool {
	return filepath.Base(source) == name
}

// fetchTimeout bounds the fetch of a component package from the object store.
const fetchTimeout = 2 * time.Minute

// install makes sure the component a spec names is installed in the worker's home: fetched
// from the cluster's object store by digest on first use, verified, and installed (the
// first call compiles it into the worker's cache).
func (w *Worker) install(ctx context.Context, s *blockSpec) error {
	dir := filepath.Join(w.opts.Home, "components")
	if inst, err := registry.Find(dir, s.Source, "= "+s.Version); err == nil && inst.Digest == s.Digest {
		return nil
	}
	obs, err := w.conn.js.ObjectStore(ctx, w.conn.names.componentsBucket())
	if err != nil {
		return fmt.Errorf("open the object store %s: %w", w.conn.names.componentsBucket(), err)
	}
	// Its own bound too: a fetch must not take an attempt's whole timeout (a day by default).
	fctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	sealed, err := obs.GetBytes(fctx, s.Digest)
	if err != nil {
		return fmt.Errorf("fetch component %s@%s (digest %s) from the object store %s: %w", s.Source, s.Version, s.Digest, w.conn.names.componentsBucket(), err)
	}
	// The coordinator sealed the package for this digest: one that does not open was put there
	// by someone else, with a manifest (its grants) the coordinator never saw.
	data, err := w.conn.cfg.Key.Open(sealed, componentAAD(s.Digest))
	if err != nil {
		return fmt.Errorf("component %s@%s (digest %s) in the object store %s was not put there by this cluster's coordinator (%w); restart the coordinator to put it again", s.Source, s.Version, s.Digest, w.conn.names.componentsBucket(), err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".fetch-*.fcpkg")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	inst, err := registry.Install(dir, tmp.Name())
	if err != nil {
		return fmt.Errorf("install component %s@%s fetched from the cluster: %w", s.Source, s.Version, err)
	}
	if inst.Digest != s.Digest {
		return fmt.Errorf("component %s@%s fetched from the cluster has digest %s, not %s", s.Source, s.Version, inst.Digest, s.Digest)
	}
	w.log.Info("worker installed a component from the cluster", "component", inst.Ref(), "digest", inst.Digest)
	return nil
}

// store stores a result in the results stream and only then acknowledges the attempt: an
// acknowledged attempt always has its result stored. A result that cannot be stored within
// the ack wait is left: JetStream gives the attempt to another worker.
func (w *Worker) store(ctx context.Context, pool string, m jetstream.Msg, a *attemptMsg, r resultMsg) {
	body, err := json.Marshal(r)
	if err != nil {
		r = resultMsg{ID: r.ID, Worker: r.Worker, Delivery: r.Delivery, Result: outcome.Fail(outcome.Fatal, "the result cannot be encoded: %v", err)}
		body, _ = json.Marshal(r)
	}
	if max := w.conn.nc.MaxPayload(); max > 0 && int64(len(body)) > max-1024 && len(r.Logs) > 0 {
		// The logs must not cost the result: they go first.
		r.Logs = []logLine{{Level: "warn", Message: fmt.Sprintf("the %d log lines of this call were dropped: with them the result was more than the NATS server's max_payload (%d bytes)", len(r.Logs), max)}}
		body, _ = json.Marshal(r)
	}
	out := &nats.Msg{Subject: w.conn.names.resultSubject(a.ExecutionID, a.ID), Header: nats.Header{},
		Data: w.conn.cfg.Key.Seal(body, []byte(a.ID))}
	out.Header.Set(hdrAttempt, a.ID)
	out.Header.Set(hdrKey, w.conn.cfg.Key.ID())
	out.Header.Set(hdrWorker, w.id)
	if !w.publish(ctx, w.ackWait[pool], m, out) {
		return
	}
	actx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.DoubleAck(actx); err != nil {
		w.log.Warn("attempt result stored but not acknowledged; the attempt may be given to another worker, whose result will be ignored", "attempt", a.ID, "error", err)
	}
}

// republish stores a result found for a re-attached call again, so the coordinator's
// consumer sees it, then acknowledges the attempt.
func (w *Worker) republish(ctx context.Context, pool string, m jetstream.Msg, raw *jetstream.RawStreamMsg) {
	out := &nats.Msg{Subject: raw.Subject, Header: raw.Header, Data: raw.Data}
	if !w.publish(ctx, w.ackWait[pool], m, out) {
		return
	}
	actx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = m.DoubleAck(actx)
}

// publish stores out, trying again until it is stored or the attempt's ack wait is near.
func (w *Worker) publish(ctx context.Context, ackWait time.Duration, m jetstream.Msg, out *nats.Msg) bool {
	deadline := time.Now().Add(ackWait)
	for {
		pctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := w.conn.js.PublishMsg(pctx, out)
		cancel()
		if err == nil {
			return true
		}
		if errors.Is(err, nats.ErrMaxPayload) {
			r := resultMsg{ID: out.Header.Get(hdrAttempt), Worker: w.id, Result: outcome.Fail(outcome.DataLimitExceeded,
				"the result is %d bytes sealed, more than the NATS server's max_payload; raise max_payload on the server or have the task return less (or write an artifact)", len(out.Data))}
			body, _ := json.Marshal(r)
			out = &nats.Msg{Subject: out.Subject, Header: out.Header, Data: w.conn.cfg.Key.Seal(body, []byte(r.ID))}
			continue
		}
		if time.Now().After(deadline) {
			w.log.Error("cannot store an attempt's result; JetStream will give the attempt to another worker", "error", err)
			return false
		}
		_ = m.InProgress()
		select {
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// WaitForCoordinator waits until a coordinator has set the cluster up, then checks that this
// process may join it (ErrRefused when its version, message ABI or cluster key differ).
func WaitForCoordinator(ctx context.Context, conn *Conn, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Worker{conn: conn, log: log}
	n := conn.names
	var kv jetstream.KeyValue
	_, err := w.waitFor(ctx, "the coordinator to set the cluster up (its bucket "+n.clusterBucket()+")", func() (bool, error) {
		var err error
		if kv, err = conn.js.KeyValue(ctx, n.clusterBucket()); err != nil {
			return false, nil
		}
		_, ok, err := readInfo(ctx, kv, conn.cfg.Key)
		if errors.Is(err, clusterkey.ErrOtherKey) || errors.Is(err, errInfoUnsealed) {
			err = nil // judged below
		}
		return ok, err
	})
	if err != nil {
		return err
	}
	// Anyone who can publish on the bucket's subject can write the record, but only the
	// coordinator one that opens with the key, and it writes its own back within
	// patrolInterval: the worker joins on the first record of the coordinator it sees, and
	// refuses to join only when none came for infoRecheck.
	watcher, err := kv.Watch(ctx, infoKey)
	if err != nil {
		return fmt.Errorf("watch the cluster's info record: %w", err)
	}
	defer func() { _ = watcher.Stop() }()
	deadline := time.NewTimer(infoRecheck)
	defer deadline.Stop()
	var last error
	said := false
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return last
		case e, ok := <-watcher.Updates():
			if !ok {
				return fmt.Errorf("watch the cluster's info record: it ended")
			}
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue
			}
			ci, err := openInfo(e.Value(), conn.cfg.Key)
			switch {
			case err == nil:
				return w.match(ci) // the coordinator's: its version and ABI are what they say
			case errors.Is(err, clusterkey.ErrOtherKey):
				last = fmt.Errorf("%w: its cluster key differs from the coordinator's (key id %s here, %s there): give the worker the coordinator's -cluster-key-file", ErrRefused, conn.cfg.Key.ID(), ci.KeyID)
			default:
				last = fmt.Errorf("%w: the cluster's info record does not open with this worker's cluster key (%v); give the worker the coordinator's -cluster-key-file", ErrRefused, err)
			}
			if !said {
				said = true
				log.Warn("the cluster's info record does not open with this worker's key; waiting up to "+infoRecheck.String()+" for the coordinator's before refusing to join", "error", last)
			}
		}
	}
}

// infoRecheck is how long a worker waits before it believes an info record that says it may
// not join, or that the coordinator's key changed: more than two of the coordinator's patrols,
// which write a forged record back.
const infoRecheck = 2*patrolInterval + 2*time.Second
