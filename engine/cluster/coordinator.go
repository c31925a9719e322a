package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine/cluster/clusterkey"
	"github.com/fuscia/fuscia/engine/redact"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/hostabi/registry"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/internal/version"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schema"
)

// CoordinatorOptions configure a Coordinator.
type CoordinatorOptions struct {
	// Local runs what stays in the coordinator (builtins but builtin.http, triggers) and
	// answers input schemas; it binds every block first.
	Local task.Dispatcher
	// ComponentsDir is the coordinator's installed components: the ones its workflows use are
	// put into the cluster's object store for the workers.
	ComponentsDir string
	// Pools are created at start besides "default" (the pools the loaded workflows name);
	// others are created on first use.
	Pools  []string
	Logger *slog.Logger
	// Redact is the coordinator's set of secret values. A call's sensitive input and config
	// values that hold one of them travel (sealed) with the call, so that its worker scrubs
	// them from its own log; nil sends none.
	Redact *redact.Set
	// OnRedelivery is told of each attempt given to another worker after its worker stopped
	// answering (the fuscia_redeliveries_total metric).
	OnRedelivery func()
}

// Coordinator sends the attempts of component, plugin and builtin.http tasks to the workers
// of their pools and answers with their results. Everything else goes to Local. It is the
// task.Dispatcher of `fuscia serve -nats`.
type Coordinator struct {
	conn  *Conn
	opts  CoordinatorOptions
	log   *slog.Logger
	setup *setup

	results jetstream.Stream
	workers jetstream.KeyValue
	infoKV  jetstream.KeyValue // the cluster bucket, with the info record
	objects jetstream.ObjectStore

	// consuming is the subscription to the results stream; the mender (results_mend.go)
	// replaces it when the stream or its consumer was deleted, until done is closed.
	consumeMu sync.Mutex
	consuming jetstream.ConsumeContext
	mend      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	menderWG  sync.WaitGroup

	mu       sync.Mutex
	waiters  map[string]chan resultMsg
	lost     map[string]int // by task id: the attempts in a row whose workers stopped answering
	uploaded map[string]bool
	uploadMu sync.Mutex // held while a component is put into the object store
	// sendWarned rate-limits the warning of attempts that cannot be sent.
	sendWarned atomic.Int64
}

// NewCoordinator is PrepareCoordinator and Start.
func NewCoordinator(ctx context.Context, conn *Conn, opts CoordinatorOptions) (*Coordinator, error) {
	c, err := PrepareCoordinator(ctx, conn, opts)
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// PrepareCoordinator makes the cluster's buckets (Conn.Stores opens two of them) and returns a
// coordinator that does nothing else in NATS until Start. A serve builds its engine (which
// sends attempts through the coordinator) while it waits for its home's store, which another
// serve may hold: a coordinator started then took the results of that serve's attempts, which
// nobody there waited for, and changed the consumers' settings.
func PrepareCoordinator(ctx context.Context, conn *Conn, opts CoordinatorOptions) (*Coordinator, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Coordinator{conn: conn, opts: opts, log: log, setup: newSetup(conn),
		waiters: map[string]chan resultMsg{}, lost: map[string]int{}, uploaded: map[string]bool{},
		mend: make(chan struct{}, 1), done: make(chan struct{})}
	var err error
	if c.workers, c.infoKV, err = c.setup.buckets(ctx); err != nil {
		return nil, err
	}
	if c.objects, err = conn.js.ObjectStore(ctx, conn.names.componentsBucket()); err != nil {
		return nil, fmt.Errorf("open the object store %s: %w", conn.names.componentsBucket(), err)
	}
	return c, nil
}

// Start creates the streams and consumers the cluster needs (setup.go), says what a worker must
// match to join, and starts consuming results. Call it once, before any Call.
func (c *Coordinator) Start(ctx context.Context) error {
	conn, opts, log, info := c.conn, c.opts, c.log, c.infoKV
	results, cons, err := c.setup.results(ctx)
	if err != nil {
		return err
	}
	c.results = results
	if old, ok, err := readInfo(ctx, info, conn.cfg.Key); ok && errors.Is(err, clusterkey.ErrOtherKey) {
		log.Warn("the cluster's workers were using another cluster key; they must be restarted with this one",
			"old_key_id", old.KeyID, "key_id", conn.cfg.Key.ID())
	}
	if err := c.setup.publishInfo(ctx, info, c.info()); err != nil {
		return err
	}
	for _, p := range append([]string{DefaultPool}, opts.Pools...) {
		if _, err := c.setup.pool(ctx, p); err != nil {
			return err
		}
	}
	if c.consuming, err = c.consume(cons); err != nil {
		return err
	}
	c.menderWG.Add(1)
	go c.mender()
	return nil
}

// EnsurePools creates the work streams of pools (a served workflow's, when it is loaded), so
// that their workers can bind before the first attempt.
func (c *Coordinator) EnsurePools(ctx context.Context, pools ...string) error {
	for _, p := range pools {
		if _, err := c.setup.pool(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// Close stops consuming results. Calls still waiting end with their contexts.
func (c *Coordinator) Close() {
	c.closeOnce.Do(func() { close(c.done) })
	c.menderWG.Wait()
	c.consumeMu.Lock()
	defer c.consumeMu.Unlock()
	if c.consuming != nil {
		c.consuming.Stop()
	}
}

// binding is a block bound by the coordinator: the local binding (input schemas, triggers,
// and the calls that stay here) and, for remote tasks, what a worker needs.
type binding struct {
	local  task.Binding
	remote bool
	spec   *blockSpec
}

// Bind binds the block locally and, for a component or plugin block, evaluates its config
// for the workers. builtin.http is bound remote; the other builtins stay local.
func (c *Coordinator) Bind(ctx context.Context, block task.Block) (task.Binding, *outcome.Error) {
	lb, err := c.opts.Local.Bind(ctx, block)
	if err != nil {
		return nil, err
	}
	b := &binding{local: lb, remote: block.Uses.RunsOnWorker()}
	if !b.remote || block.Uses.Kind == lang.UsesBuiltin {
		return b, nil
	}
	spec := &blockSpec{Kind: block.Uses.Kind, Local: block.Uses.Local}
	var config hcl.Expression
	switch block.Uses.Kind {
	case lang.UsesComponent:
		for _, cb := range block.Workflow.Components {
			if cb.Name == spec.Local {
				spec.Source, spec.Constraint, config = cb.Source, cb.Version, cb.Config
				spec.AllowedHosts, spec.AllowedPaths, spec.MaxMemory, spec.MaxFuel = cb.AllowedHosts, cb.AllowedPaths, cb.MaxMemory, cb.MaxFuel
			}
		}
		if lock, ok := block.Locks.Components[spec.Local]; ok && lock.Source == spec.Source {
			spec.Version, spec.Digest = lock.Version, lock.Digest
		}
	case lang.UsesPlugin:
		spec.WorkflowFile = block.Workflow.Filename
		for _, pb := range block.Workflow.Plugins {
			if pb.Name == spec.Local {
				spec.Source, spec.Constraint, config = pb.Source, pb.Version, pb.Config
			}
		}
		if lock, ok := block.Locks.Plugins[spec.Local]; ok && lock.Source == spec.Source {
			spec.Version, spec.Digest = lock.Version, lock.Digest
		}
	}
	if config != nil {
		v, err := block.Eval(config)
		if err != nil {
			return nil, err
		}
		raw, jerr := configJSON(v)
		if jerr != nil {
			return nil, outcome.Errorf(outcome.Validation, "the config of %s %q cannot be sent to a worker: %v", spec.Kind, spec.Local, jerr)
		}
		spec.Config = raw
		spec.Secrets = c.secretsOnly(configSecrets(v))
	}
	b.spec = spec
	return b, nil
}

// secretsOnly keeps the values that hold a secret the coordinator knows: a value derived
// from a secret in a way no scrubber recognizes (a whole output marked sensitive, such as
// "completed") is not one, and would only scrub ordinary words from the worker's log.
func (c *Coordinator) secretsOnly(values []string) []string {
	if c.opts.Redact == nil {
		return nil
	}
	var out []string
	for _, v := range values {
		if c.opts.Redact.String(v) != v {
			out = append(out, v)
		}
	}
	return out
}

// configJSON encodes an evaluated config for the wire, marks dropped (the message is sealed).
func configJSON(v cty.Value) (json.RawMessage, error) {
	uv, _ := v.UnmarkDeep()
	if uv.IsNull() {
		return nil, nil
	}
	x, err := schema.ToJSON(uv)
	if err != nil {
		return nil, err
	}
	return json.Marshal(x)
}

// InputSchema asks the local runtime (the coordinator has the components installed; a plugin
// it does not have gives none, and the worker checks the input).
func (c *Coordinator) InputSchema(b task.Binding, name string) *schema.Schema {
	rb, ok := b.(*binding)
	if !ok {
		return nil
	}
	return c.opts.Local.InputSchema(rb.local, name)
}

// Trigger runs in the coordinator: polls and webhook validation are not attempts.
func (c *Coordinator) Trigger(ctx context.Context, b task.Binding, call task.TriggerCall) task.TriggerResult {
	rb, ok := b.(*binding)
	if !ok {
		return task.TriggerFailed(outcome.Fatal, fmt.Sprintf("trigger %s: not bound by the coordinator", call.Trigger))
	}
	return c.opts.Local.Trigger(ctx, rb.local, call)
}

// Reattaches: a remote attempt's result outlives this process (task.Reattacher).
func (c *Coordinator) Reattaches(b task.Binding) bool {
	rb, ok := b.(*binding)
	return ok && rb.remote
}

// Call sends a remote call to its pool's workers and waits for the answer; a local one runs
// here.
func (c *Coordinator) Call(ctx context.Context, b task.Binding, call task.Call) outcome.Result {
	rb, ok := b.(*binding)
	if !ok {
		return outcome.Fail(outcome.Fatal, "%s: not bound by the coordinator", call.Uses)
	}
	if !rb.remote {
		return c.opts.Local.Call(ctx, rb.local, call)
	}
	pool := call.Pool
	if pool == "" {
		pool = DefaultPool
	}
	msg := attemptMsg{
		ID: attemptID(call), Version: version.Fuscia,
		Kind: call.Uses.Kind, Local: call.Uses.Local, Name: call.Uses.Name,
		ExecutionID: call.ExecutionID, Workflow: call.Workflow, Node: call.Node, TaskID: call.TaskID,
		Attempt: call.Attempt, Seq: call.Seq, Iteration: call.Iteration,
		Input: call.Input, State: call.State, Sensitive: call.Sensitive,
		Reattach: call.Reattach, Pool: pool, Secrets: c.secretsOnly(inputSecrets(call.Input, call.Sensitive)),
	}
	if rb.spec != nil {
		spec := *rb.spec
		if spec.Kind == lang.UsesComponent {
			if err := c.distribute(ctx, &spec); err != nil {
				return outcome.Fail(outcome.Fatal, "%s", err)
			}
		}
		msg.Block = &spec
	}
	if dl, ok := ctx.Deadline(); ok {
		msg.TimeoutMs = time.Until(dl).Milliseconds()
	}
	r := c.send(ctx, &msg)
	if call.Log != nil {
		for _, l := range r.Logs {
			call.Log(l.Level, l.Message)
		}
	}
	return c.account(call, r)
}

// account turns the answers of attempts whose workers stopped answering into interrupted
// attempts, until -max-deliver of them in a row make worker_lost.
func (c *Coordinator) account(call task.Call, r resultMsg) outcome.Result {
	res := r.Result
	c.mu.Lock()
	defer c.mu.Unlock()
	if res.Type != outcome.Failure || res.Kind != outcome.AttemptInterrupted {
		delete(c.lost, call.TaskID)
		return res
	}
	if r.Clean {
		return res // a worker's shutdown, not a lost worker
	}
	c.lost[call.TaskID]++
	n := c.lost[call.TaskID]
	if c.opts.OnRedelivery != nil {
		c.opts.OnRedelivery()
	}
	if n >= c.conn.cfg.MaxDeliver {
		delete(c.lost, call.TaskID)
		return outcome.Fail(outcome.WorkerLost, "%s was delivered to workers %d times (-max-deliver) and each stopped answering while running it; last: %s", call.Node, n, res.Message)
	}
	return res
}

// send publishes the call and waits for its result. A call that ends without one answers a
// result of its own (the context's end, or why it could not be sent).
func (c *Coordinator) send(ctx context.Context, msg *attemptMsg) resultMsg {
	n := c.conn.names
	ch := make(chan resultMsg, 1)
	c.mu.Lock()
	c.waiters[msg.ID] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.waiters, msg.ID)
		c.mu.Unlock()
	}()
	stream, err := c.setup.pool(ctx, msg.Pool)
	for err != nil {
		if !c.retryLater(ctx, "create the pool's stream", msg, err) {
			return resultMsg{Result: ctxFailure(ctx)}
		}
		stream, err = c.setup.pool(ctx, msg.Pool)
	}
	subject := n.workSubject(msg.Pool, msg.ID)
	resultSubject := n.resultSubject(msg.ExecutionID, msg.ID)
	publish := true
	var seq uint64 // the message's, for withdrawing it
	if msg.Reattach {
		// Started by a previous coordinator: its result may be stored, or its message may be
		// still queued or running.
		if r, ok := c.stored(ctx, resultSubject, msg.ID); ok {
			return r
		}
		if raw, err := stream.GetLastMsgForSubject(ctx, subject); err == nil {
			publish, seq = false, raw.Sequence
		}
	}
	msg.SentAt = time.Now().UnixMilli()
	body, err := json.Marshal(msg)
	if err != nil {
		return resultMsg{Result: outcome.Fail(outcome.Fatal, "encode the attempt: %v", err)}
	}
	m := &nats.Msg{Subject: subject, Header: nats.Header{}, Data: c.conn.cfg.Key.Seal(body, []byte(msg.ID))}
	m.Header.Set(hdrAttempt, msg.ID)
	m.Header.Set(hdrKey, c.conn.cfg.Key.ID())
	msgID := msg.ID
	for publish {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ack, err := c.conn.js.PublishMsg(pctx, m, jetstream.WithMsgID(msgID), jetstream.WithExpectStream(n.workStream(msg.Pool)))
		cancel()
		if err == nil && ack.Duplicate {
			// Sent before (a re-attached call within the duplicate window): its result may be
			// stored already, or its message queued. The id is in clear and predictable, so
			// the message the server kept under it may also be someone else's.
			if r, ok := c.stored(ctx, resultSubject, msg.ID); ok {
				return r
			}
			if queued, ours := c.queued(ctx, stream, subject, msg.ID); ours {
				seq = queued
				break
			}
			// Not ours, or gone: sent again under an id the server has not seen. Should ours
			// have run meanwhile, its worker stored the result first, and the copy finds it.
			msgID = freshMsgID(msg.ID)
			continue
		}
		if err == nil {
			seq = ack.Sequence
			break
		}
		if subjectFull(err) {
			// The attempt's subject holds a message already: ours (a publish whose answer was
			// lost), or one put there by someone else, which is deleted.
			if queued, ours := c.queued(ctx, stream, subject, msg.ID); ours {
				seq = queued
				break
			}
			msgID = freshMsgID(msg.ID)
			continue
		}
		if errors.Is(err, nats.ErrMaxPayload) {
			return resultMsg{Result: outcome.Fail(outcome.DataLimitExceeded, "the attempt of %s is %d bytes sealed, more than the NATS server's max_payload; raise max_payload on the server or send less to the task", msg.Node, len(m.Data))}
		}
		if ctx.Err() != nil {
			// Cut short while publishing: the message may be stored (and taken) all the
			// same, so it is withdrawn like any other.
			c.withdraw(ctx, msg, stream, subject)
			return resultMsg{Result: ctxFailure(ctx)}
		}
		if !c.retryLater(ctx, "send the attempt", msg, err) {
			c.withdraw(ctx, msg, stream, subject)
			return resultMsg{Result: ctxFailure(ctx)}
		}
		if errors.Is(err, jetstream.ErrNoStreamResponse) {
			// NATS answers, and no stream takes the subject: the pool's stream was deleted
			// (by an operator, say). It is made again, as at start.
			if again, perr := c.setup.remake(ctx, msg.Pool); perr == nil {
				stream = again
				c.log.Warn("made the pool's work stream again: it had been deleted", "pool", msg.Pool, "stream", n.workStream(msg.Pool))
			}
		}
	}
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		if !errors.Is(context.Cause(ctx), task.ErrInterrupted) {
			c.stop(msg, stream, seq)
		}
		// A shutdown leaves the attempt running: its result is stored, and the next
		// coordinator re-attaches to it.
		return resultMsg{Result: ctxFailure(ctx)}
	}
}

// queued looks at the message on an attempt's work subject: ours when the cluster key opens it
// as attempt id (its sequence is returned); anything else there is deleted.
func (c *Coordinator) queued(ctx context.Context, stream jetstream.Stream, subject, id string) (seq uint64, ours bool) {
	raw, err := stream.GetLastMsgForSubject(ctx, subject)
	if err != nil {
		return 0, false
	}
	if raw.Header.Get(hdrAttempt) == id {
		if _, err := c.conn.cfg.Key.Open(raw.Data, []byte(id)); err == nil {
			return raw.Sequence, true
		}
	}
	c.log.Warn("deleted a message on an attempt's work subject that this coordinator did not seal; whoever can publish on the cluster's subjects put it there", "subject", subject)
	_ = stream.DeleteMsg(ctx, raw.Sequence)
	return 0, false
}

// freshMsgID is a message id for attempt id that no earlier publication used.
func freshMsgID(id string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return id + "-" + hex.EncodeToString(b[:])
}

// subjectFull reports the stream's refusal of a second message on a work subject.
func subjectFull(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && strings.Contains(apiErr.Description, "maximum messages per subject exceeded")
}

// retryLater waits before another try at what failed, warning at most every 10 s; false when
// ctx ended first.
func (c *Coordinator) retryLater(ctx context.Context, what string, msg *attemptMsg, err error) bool {
	now := time.Now().UnixNano()
	if last := c.sendWarned.Load(); now-last > int64(10*time.Second) && c.sendWarned.CompareAndSwap(last, now) {
		c.log.Warn("cannot "+what+" to the workers; trying again until NATS answers or the attempt's timeout",
			"node", msg.Node, "pool", msg.Pool, "error", err)
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(500 * time.Millisecond):
		return true
	}
}

// ctxFailure is the answer of a call whose context ended: the scheduler reports it as the
// timeout or the cancellation it is.
func ctxFailure(ctx context.Context) outcome.Result {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return outcome.Fail(outcome.Timeout, "the attempt did not finish in time")
	}
	return outcome.Fail(outcome.Cancelled, "cancelled")
}

// withdraw stops a call whose publication was cut short by its context: its message, if the
// server stored it, is found by subject. A shutdown leaves it, as it leaves a sent one.
func (c *Coordinator) withdraw(ctx context.Context, msg *attemptMsg, stream jetstream.Stream, subject string) {
	if errors.Is(context.Cause(ctx), task.ErrInterrupted) {
		return
	}
	var seq uint64
	lctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if raw, err := stream.GetLastMsgForSubject(lctx, subject); err == nil {
		seq = raw.Sequence
	}
	c.stop(msg, stream, seq)
}

// stop withdraws a call the coordinator gave up on: the queued message is deleted, and the
// worker running it (if any) is told to stop.
func (c *Coordinator) stop(msg *attemptMsg, stream jetstream.Stream, seq uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = c.conn.nc.Publish(c.conn.names.cancelSubject(), c.conn.cfg.Key.Seal([]byte(msg.ID), cancelAAD))
	if seq != 0 {
		_ = stream.DeleteMsg(ctx, seq)
	}
	_ = c.conn.nc.FlushWithContext(ctx)
}

// info is the cluster's info record as this coordinator writes it.
func (c *Coordinator) info() clusterInfo {
	return clusterInfo{Version: version.Fuscia, ABI: wireABI, KeyID: c.conn.cfg.Key.ID()}
}

// stored reads the result stored for attempt id under subject, if any. It opens with id, not
// with what the message's headers say: a result copied from another attempt's subject (its
// headers with it) does not open here, and is no answer. Nor is one sealed with another key:
// its key id is in clear, so anyone who can publish on the results subjects could claim one
// to keep the attempt from running, and an attempt answered before a key change cannot be told
// from that; it runs again, as an interrupted attempt does after a crash.
func (c *Coordinator) stored(ctx context.Context, subject, id string) (resultMsg, bool) {
	raw, err := c.results.GetLastMsgForSubject(ctx, subject)
	if err != nil {
		return resultMsg{}, false
	}
	r, err := c.open(id, raw.Header.Get(hdrWorker), raw.Data)
	return r, err == nil
}

// open unseals a result; a result sealed with another key is refused, saying why.
func (c *Coordinator) open(id, worker string, data []byte) (resultMsg, error) {
	plain, err := c.conn.cfg.Key.Open(data, []byte(id))
	switch {
	case errors.Is(err, clusterkey.ErrOtherKey):
		c.log.Error("refused a result from worker "+worker+": "+err.Error()+"; start every worker with the coordinator's -cluster-key-file",
			"worker", worker, "attempt", id)
		return resultMsg{}, err
	case err != nil:
		// Sealed with this key for another attempt (copied from another subject, headers
		// and all: the worker named may not be the sender), or damaged.
		c.log.Error("refused a result that does not open for its attempt: "+err.Error(), "worker", worker, "attempt", id)
		return resultMsg{}, err
	}
	var r resultMsg
	if err := json.Unmarshal(plain, &r); err != nil || r.ID != id {
		c.log.Error("refused a malformed result", "worker", worker, "attempt", id, "error", err)
		return resultMsg{}, fmt.Errorf("malformed result")
	}
	return r, nil
}

// onResult hands a result to the call waiting for it. A result nobody waits for (a duplicate,
// or one for a run not resumed yet) stays in the stream, where a re-attached call finds it.
func (c *Coordinator) onResult(m jetstream.Msg) {
	h := m.Headers()
	r, err := c.open(h.Get(hdrAttempt), h.Get(hdrWorker), m.Data())
	if err != nil {
		_ = m.Term()
		return
	}
	c.mu.Lock()
	ch := c.waiters[r.ID]
	c.mu.Unlock()
	if ch != nil {
		select {
		case ch <- r:
		default:
		}
	}
	_ = m.Ack()
}

// distribute puts the component a spec names into the object store once, and pins the spec
// to its version and digest (the lock, or the newest installed match).
func (c *Coordinator) distribute(ctx context.Context, spec *blockSpec) error {
	constraint := spec.Constraint
	if spec.Version != "" {
		constraint = "= " + spec.Version
	}
	inst, err := registry.Find(c.opts.ComponentsDir, spec.Source, constraint)
	if err != nil {
		return fmt.Errorf("component %q: %w; install it on the coordinator with `fuscia component install FILE.fcpkg`", spec.Local, err)
	}
	if spec.Digest != "" && inst.Digest != spec.Digest {
		return fmt.Errorf("component %q: %s is installed with digest %s, but the plan locked %s; run `fuscia plan` again", spec.Local, inst.Ref(), inst.Digest, spec.Digest)
	}
	spec.Version, spec.Digest = inst.Version, inst.Digest
	c.mu.Lock()
	done := c.uploaded[inst.Digest]
	c.mu.Unlock()
	if done {
		return nil
	}
	// One upload at a time: two concurrent puts of one object interleave their chunks, and a
	// worker fetching it meanwhile could wait on a half-written object. Uploads are rare (once
	// per component version and coordinator).
	c.uploadMu.Lock()
	defer c.uploadMu.Unlock()
	c.mu.Lock()
	done = c.uploaded[inst.Digest]
	c.mu.Unlock()
	if done {
		return nil
	}
	if c.sealedThere(ctx, inst.Digest) {
		c.mu.Lock()
		c.uploaded[inst.Digest] = true
		c.mu.Unlock()
		return nil
	}
	tmp, err := os.MkdirTemp("", "fuscia-pack-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	pkg := filepath.Join(tmp, "component.fcpkg")
	if _, err := registry.Pack(inst.Dir, pkg); err != nil {
		return fmt.Errorf("component %q: pack %s for the workers: %w", spec.Local, inst.Ref(), err)
	}
	data, err := os.ReadFile(pkg)
	if err != nil {
		return err
	}
	// Sealed: the digest covers component.wasm but not the manifest (its capabilities), and
	// anyone who can write the object store could otherwise widen a component's grants on the
	// workers. A worker opens it with the cluster key, bound to the digest.
	if _, err := c.objects.PutBytes(ctx, inst.Digest, c.conn.cfg.Key.Seal(data, componentAAD(inst.Digest))); err != nil {
		return fmt.Errorf("component %q: put %s into the object store %s: %w", spec.Local, inst.Ref(), c.conn.names.componentsBucket(), err)
	}
	c.mu.Lock()
	c.uploaded[inst.Digest] = true
	c.mu.Unlock()
	return nil
}

// sealedThere says whether the object store holds a package under digest that this cluster
// key sealed for that digest; one put there by anyone else (or under another key) is replaced.
func (c *Coordinator) sealedThere(ctx context.Context, digest string) bool {
	if _, err := c.objects.GetInfo(ctx, digest); err != nil {
		return false
	}
	data, err := c.objects.GetBytes(ctx, digest)
	if err != nil {
		return false
	}
	_, err = c.conn.cfg.Key.Open(data, componentAAD(digest))
	if err != nil {
		c.log.Warn("the component package in the object store does not open with the cluster key; putting it again", "digest", digest, "error", err)
	}
	return err == nil
}

// PurgeResults deletes the results of executions (prune).
func (c *Coordinator) PurgeResults(ctx context.Context, executions ...string) error {
	for _, x := range executions {
		if err := c.results.Purge(ctx, jetstream.WithPurgeSubject(c.conn.names.executionResults(x))); err != nil {
			return fmt.Errorf("purge the results of %s: %w", x, err)
		}
	}
	return nil
}

// QueueDepth is the number of attempts waiting for a worker, by pool.
func (c *Coordinator) QueueDepth(ctx context.Context) map[string]int64 {
	c.setup.mu.Lock()
	pools := make([]string, 0, len(c.setup.pools))
	for p := range c.setup.pools {
		pools = append(pools, p)
	}
	c.setup.mu.Unlock()
	sort.Strings(pools)
	out := map[string]int64{}
	for _, p := range pools {
		cons, err := c.conn.js.Consumer(ctx, c.conn.names.workStream(p), consumerName)
		if err != nil {
			continue
		}
		info, err := cons.Info(ctx)
		if err != nil {
			continue
		}
		out[p] = int64(info.NumPending)
	}
	return out
}
