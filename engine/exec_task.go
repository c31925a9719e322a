package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/zclconf/go-cty/cty"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/internal/stackgrow"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/addrs"
	"github.com/fuscia/fuscia/lang/builtin"
	"github.com/fuscia/fuscia/lang/schema"
)

// taskState is a task node: one instance, or one per for_each item.
type taskState struct {
	insts []*taskInst
	// for_each bookkeeping
	forEach         bool
	keys            []cty.Value
	vals            []cty.Value
	next            int // next item to start
	active          int // items started and not final
	finished        int
	failed          bool
	eachCondition   bool // `when` refers to each: evaluated per item
	concurrency     int
	policy          outcome.Policy
	timeout         time.Duration
	aggregateFailed *outcome.Error
	cancelling      bool // cancelPendingItems is on the stack
	filling         bool // fillItems is on the stack: items finishing now must not recurse into it
}

func (t *taskState) plain() *taskInst {
	if len(t.insts) == 0 || t.insts[0] == nil {
		return &taskInst{}
	}
	return t.insts[0]
}

// taskInst is one instance of a task: the node itself, or one for_each item.
type taskInst struct {
	ns      *nodeState
	item    int // -1 for a task without for_each
	index   []int
	key     json.RawMessage
	each    cty.Value
	taskID  string
	attempt int
	// calls counts the `continue` answers of the current attempt; state is the last one's.
	calls int
	state json.RawMessage
	input json.RawMessage
	inVal cty.Value // the coerced input, marks kept (builtin.transform's output)
	// sensitive are the JSON Pointers of the input's sensitive parts; nil when none. A task
	// that gets any has a sensitive output (see attemptJob.sensitive).
	sensitive []string
	// journaled is the input as each attempt_started entry holds it (journaledInput).
	journaled json.RawMessage
	status    string
	output    cty.Value
	err       *outcome.Error
	queued    bool
	cancel    context.CancelCauseFunc // of the running attempt
	timer     *parked                 // the wait before a retry or a `continue` call
	// startedAt is when the first attempt started.
	startedAt time.Time
	// interrupted counts attempts a crash cut short (resume): they do not count against
	// retry.attempts. retryAt is a journaled retry time still to wait for.
	interrupted int
	retryAt     time.Time
	// reattach: the next call is an attempt a previous process started (resumeInst); it is
	// not journaled as started again, and the dispatcher is told (task.Call.Reattach).
	reattach bool
}

func (r *Run) policy(n *lang.Node) outcome.Policy {
	rp := n.EffectiveRetry(r.wf)
	maxIter := n.Task.MaxIterations
	if maxIter <= 0 {
		maxIter = lang.DefaultMaxIterations
	}
	return outcome.Policy{
		Attempts: rp.Attempts, Backoff: rp.Backoff, InitialDelay: rp.InitialDelay, MaxDelay: rp.MaxDelay,
		MaxIterations: maxIter,
		Jitter:        r.e.jitter,
	}
}

// startTask starts a task node: its one instance, or its for_each items.
func (r *Run) startTask(ns *nodeState) {
	t := &taskState{policy: r.policy(ns.n), timeout: ns.n.EffectiveTimeout(r.wf)}
	ns.task = t
	ns.status = journal.StatusRunning
	if ns.n.Task.ForEach == nil {
		ti := &taskInst{ns: ns, item: -1, index: ns.s.index, key: ns.s.key, each: ns.s.each}
		ti.taskID = taskID(r.id, ns.instance(ti.index))
		t.insts = []*taskInst{ti}
		r.schedule(ti)
		return
	}
	r.startForEach(ns, t)
}

// taskID is the idempotency key of instance inst of run runID: `RUN_ID:task.x[3]`, the same for
// every attempt, and across resume, so part of the journal's format (docs/engine.md).
func taskID(runID string, inst addrs.Instance) string {
	return runID + ":" + inst.String()
}

// schedule evaluates an instance's inputs and queues its next attempt.
func (r *Run) schedule(ti *taskInst) {
	ns := ti.ns
	if ns.s.stopped != nil {
		r.instDone(ti, journal.StatusCancelled, nullValue, cancelledBy(ns.s.stopped), "", true)
		return
	}
	if rp := r.replayed(ns, ti.index); rp != nil {
		if rp.final() && !rp.rerun {
			r.restoreInst(ti, rp)
			return
		}
		rp.resumeInst(ti, rp.inflight && r.reattaches(ns.n.Task.Uses))
	}
	if p := ns.prepared; p != nil {
		ns.prepared = nil
		if ti.input == nil && ti.item < 0 {
			ti.input, ti.inVal, ti.sensitive, ti.journaled = p.input, p.inVal, p.sensitive, p.journaled
		}
	}
	if ti.input == nil {
		in, inVal, err := r.inputs(ns, ti.each)
		if err != nil {
			r.instDone(ti, journal.StatusFailed, nullValue, err, "", true)
			return
		}
		ti.input, ti.inVal = in, inVal
		ti.sensitive = sensitivePointers(inVal)
		ti.journaled = journaledInput(in, inVal, ti.sensitive)
	}
	if !ti.retryAt.IsZero() {
		d := r.e.until(ti.retryAt)
		ti.retryAt = time.Time{}
		r.requeueAfter(ti, d)
		return
	}
	ti.queued = true
	r.ready = append(r.ready, ti)
}

// inputs evaluates a task's inputs, coerces and validates them against its input schema, and
// encodes them for the task.
func (r *Run) inputs(ns *nodeState, each cty.Value) (json.RawMessage, cty.Value, *outcome.Error) {
	n := ns.n
	v := cty.EmptyObjectVal
	if n.Task.Inputs != nil {
		var err *outcome.Error
		v, err = ns.s.eval(n.Task.Inputs, each)
		if err != nil {
			return nil, cty.NilVal, err
		}
	}
	uv, _ := v.Unmark()
	if uv.IsNull() || !(uv.Type().IsObjectType() || uv.Type().IsMapType()) {
		return nil, cty.NilVal, outcome.Errorf(outcome.Validation, "the inputs of %s must be an object; got %s", ns.addr, uv.Type().FriendlyName())
	}
	b, berr := r.bind(n.Task.Uses)
	if berr != nil {
		return nil, cty.NilVal, berr
	}
	if sch := r.e.cfg.Tasks.InputSchema(b, n.Task.Uses.Name); sch != nil {
		cv, problems := sch.Check(v)
		if len(problems) > 0 {
			expr := n.Task.Inputs
			if expr == nil {
				return nil, cty.NilVal, outcome.Errorf(outcome.Validation, "%s", problems[0].String())
			}
			return nil, cty.NilVal, &outcome.Error{Kind: outcome.Validation, Message: diagMessage(lang.InputProblems(n, expr, problems))}
		}
		v = cv
	}
	raw, err := wireJSON(v)
	if err != nil {
		return nil, cty.NilVal, outcome.Errorf(outcome.Validation, "the inputs of %s cannot be sent: %v", ns.addr, err)
	}
	return raw, v, nil
}

// dispatch starts an attempt (or, after `continue`, the next call of the same attempt).
func (r *Run) dispatch(ti *taskInst) {
	ns := ti.ns
	if ti.status != "" {
		return // cancelled while it waited for a slot
	}
	if ns.s.stopped != nil {
		r.instDone(ti, journal.StatusCancelled, nullValue, cancelledBy(ns.s.stopped), "", true)
		return
	}
	reattach := ti.reattach
	ti.reattach = false
	// An effect waits for the barrier, which journals its start (durability.go).
	pure := isPureNode(ns.n)
	barrier := r.durable && !pure
	// A pure builtin's attempt runs on the loop, here (maxInline).
	inline := pure && !reattach && r.inlineLeft > 0
	var started *journal.Entry
	var begun chan<- struct{}
	if ti.calls == 0 {
		ti.attempt++
		if ti.startedAt.IsZero() {
			ti.startedAt = r.e.clock.Now()
		}
		if !reattach {
			e := startedEntry(ti)
			switch {
			case barrier:
				started = &e
			case inline:
				// Appended with the result, in one write: nothing can happen in between.
				e.Time = time.Now().UTC()
				started = &e
			default:
				r.note(e)
			}
		}
		if ti.item < 0 && len(ti.index) == 0 {
			r.emit(Event{Type: EventNodeStarted, Node: ns.addr, Kind: "task", Attempt: ti.attempt})
		}
		if ti.attempt == 1 && ti.item < 0 && !inline {
			begun = r.noteDispatched(ns)
		}
	}
	r.running++
	call := task.Call{
		Uses: ns.n.Task.Uses, Input: ti.input, State: ti.state,
		ExecutionID: r.id, Workflow: r.wf.Name, Node: ns.addr, TaskID: ti.taskID, Attempt: ti.attempt,
		Iteration: iterationOf(ti), Sensitive: ti.sensitive,
		Pool: ns.n.Task.Pool, Seq: ti.calls + 1, Reattach: reattach,
	}
	call.Log = r.nodeLogger(ns.addr, ti.index, ti.attempt)
	binding, _ := r.bind(ns.n.Task.Uses) // inputs reported a binding's error before the first attempt
	job := attemptJob{
		r: r, binding: binding, call: call, timeout: ns.task.timeout, policy: ns.task.policy, calls: ti.calls + 1,
		node: ns.addr, index: ti.index, key: ti.key,
		interrupted: ti.interrupted,
		transform:   isIdentity(ns.n.Task.Uses),
		inVal:       ti.inVal, kind: string(ns.n.Addr.Kind),
		sensitive: len(ti.sensitive) > 0,
		pure:      pure, barrier: barrier, started: started,
		inst:  ns.instance(ti.index).String(),
		begun: begun, inline: inline,
	}
	if inline {
		r.inlineLeft--
		res := job.run(ns.s.ctx)
		r.running--
		r.attemptDone(ti, res)
		return
	}
	ctx, cancel := context.WithCancelCause(ns.s.ctx)
	ti.cancel = cancel
	deep := ns.n.Task.Uses.Kind == lang.UsesPlugin
	r.goAsync(func() {
		switch {
		case deep:
			// The call's path through gRPC is deeper than a new goroutine's stack, which
			// would grow in the middle of the call (a shell chain's profile: ~55 µs a
			// node at load 5, docs/performance.md).
			stackgrow.Reserve16K()
		case barrier:
			// A builtin's attempt is shallow but for its barrier's append (the entry's
			// JSON encoding, times formatted), where a strict chain of effects grew the
			// stack twice a node (5% of its CPU, docs/performance.md).
			stackgrow.Reserve8K()
		}
		res := job.run(ctx)
		cancel(nil)
		r.back(func() {
			r.running--
			ti.cancel = nil
			r.attemptDone(ti, res)
		})
	})
}

func iterationOf(ti *taskInst) *int {
	if len(ti.index) == 0 {
		return nil
	}
	i := ti.index[len(ti.index)-1]
	return &i
}

// attemptJob is what a worker goroutine needs: a copy, so that it never reads run state.
type attemptJob struct {
	r         *Run
	binding   task.Binding
	call      task.Call
	timeout   time.Duration
	policy    outcome.Policy
	calls     int
	node      string
	index     []int
	key       json.RawMessage
	transform bool
	inVal     cty.Value
	kind      string
	// sensitive: the task's inputs hold a sensitive value, so its output is sensitive as a
	// whole (docs/security.md, "Secrets"): the task may have derived from the secret what no
	// scrubber recognizes (base64 of "user:" + secret, a signature). It is marked in memory,
	// so dependents get the real value, and journaled as {"sensitive": true}. builtin.transform
	// is exempt: its output is its input, whose marks say exactly what is sensitive.
	sensitive bool
	// interrupted attempts of this instance do not count against retry.attempts.
	interrupted int
	// pure: the task is pure (isPureNode), and its result is appended without waiting in a
	// strict run. barrier: it is an effect in a strict run, which passes the barrier before
	// its call; started is then the attempt_started entry the barrier appends (nil when none
	// is due). inst is the instance's address.
	pure, barrier bool
	started       *journal.Entry
	inst          string
	// begun, when set, is signalled once the attempt runs: the loop then evaluates its
	// dependents' inputs ahead (Run.next).
	begun chan<- struct{}
	// inline: the attempt of a pure builtin, run on the loop (maxInline). It has no deadline
	// of its own (it cannot block), and its start, in started, is appended with its result.
	inline bool
}

// maxInline is how many attempts of pure builtins (builtin.transform, builtin.fail) one turn
// of the loop runs itself, in Run.dispatch, rather than on a goroutine of their own. Such an
// attempt is a few microseconds of CPU and cannot block, so a goroutine, its context and
// timer, and the hand-off back through the inbox cost more than the attempt; the bound keeps
// a long chain or a large for_each of them from holding off the loop's other messages (a
// cancellation, other attempts' results) for more than a moment.
const maxInline = 64

// attemptResult is what a worker reports to the loop.
type attemptResult struct {
	// interrupted: a shutdown cut the attempt short; nothing was journaled about its end.
	interrupted bool
	// again (with interrupted): the attempt was cut short elsewhere, not by this process's
	// shutdown; the next attempt runs now.
	again    bool
	res      outcome.Result
	decision outcome.Decision
	output   cty.Value
	journal  error
}

// run performs one call of the task, decides what it means, and journals it before reporting.
func (j attemptJob) run(ctx context.Context) attemptResult {
	r := j.r
	span := noSpan
	if r.e.tracing {
		// Under the run's span, in its trace; the runtimes' spans (Wasm instantiate and call,
		// plugin RPCs) go under this one, through ctx.
		ctx, span = r.e.cfg.Tracer.Start(trace.ContextWithSpan(ctx, r.span), "attempt "+j.node, trace.WithAttributes(
			attribute.String("fuscia.workflow", r.wf.Name), attribute.String("fuscia.execution_id", r.id),
			attribute.String("fuscia.node", j.node), attribute.String("fuscia.kind", j.kind),
			attribute.Int("fuscia.attempt", j.call.Attempt)))
	}
	defer span.End()
	if j.barrier {
		if err := j.passBarrier(ctx); err != nil {
			return attemptResult{journal: err}
		}
	} else {
		signalBegun(j.begun)
	}
	actx, cancel := ctx, context.CancelFunc(func() {})
	if !j.inline {
		actx, cancel = r.e.attemptContext(ctx, j.timeout)
	}
	began := time.Now()
	j.call.Output = &task.DecodedOutput{}
	res := r.e.cfg.Tasks.Call(actx, j.binding, j.call)
	took := time.Since(began)
	cancel()
	if res.Type == outcome.Failure && errors.Is(context.Cause(ctx), errInterrupted) {
		span.SetAttributes(attribute.String("fuscia.outcome", DetachedInterrupted))
		return attemptResult{interrupted: true}
	}
	if res.Type == outcome.Failure && res.Kind == outcome.AttemptInterrupted && ctx.Err() == nil {
		// Cut short elsewhere (its worker died): journaled as interrupted, and the next
		// attempt runs at once (task.Reattacher). The loop journals it, in order with the
		// next attempt's start.
		span.SetAttributes(attribute.String("fuscia.outcome", DetachedInterrupted))
		r.e.cfg.Metrics.Attempt(ctx, r.wf.Name, string(j.call.Uses.Kind), string(outcome.AttemptInterrupted), took)
		return attemptResult{interrupted: true, again: true, res: res}
	}
	res = j.contextOutcome(ctx, actx, res)
	out := cty.NilVal
	spilled := false
	if res.Type == outcome.Success || res.Type == outcome.Branch || res.Type == outcome.Continue {
		var lerr *outcome.Error
		spill := func() []byte {
			// What goes to the artifact store is what the journal would hold: no secrets.
			if j.transform {
				if b, _, err := journalJSON(j.inVal); err == nil {
					return b
				}
			}
			return r.e.cfg.Redact.JSON(res.Output)
		}
		if j.sensitive && !j.transform {
			// An artifact would keep what the journal must not: no spilling.
			spill = nil
		}
		res.Output, spilled, lerr = r.limitOutput(ctx, j.node, res.Output, spill)
		if lerr != nil {
			res = outcome.Result{Type: outcome.Failure, Kind: lerr.Kind, Message: lerr.Message}
		}
	}
	if res.Type == outcome.Success || res.Type == outcome.Branch {
		if j.transform && !spilled {
			out = j.inVal
		} else if v, err := j.outputValue(res.Output, spilled); err != nil {
			res = outcome.Fail(outcome.Fatal, "%s returned an output that is not JSON: %v", j.call.Uses, err)
		} else {
			out = v
			if j.sensitive && !j.transform {
				out = out.Mark(lang.Sensitive) // a spilled transform's reference is not
			}
		}
	}
	dec := outcome.Decide(res, j.policy, j.call.Attempt-j.interrupted, j.calls)
	span.SetAttributes(attribute.String("fuscia.outcome", outcomeName(res, dec)))
	r.e.cfg.Metrics.Attempt(ctx, r.wf.Name, string(j.call.Uses.Kind), attemptOutcome(res), took)
	if dec.Err != nil {
		span.SetStatus(codes.Error, r.e.cfg.Redact.String(dec.Err.Message))
	}
	var buf [2]journal.Entry
	entries := buf[:0]
	if j.inline && j.started != nil {
		entries = append(entries, *j.started)
	}
	if entry := j.entry(res, dec, out, spilled); entry.Type != "" {
		entries = append(entries, entry)
	}
	var err error
	if len(entries) > 0 {
		durable := r.durable && !j.pure && (dec.Verdict != outcome.Done || res.Type != outcome.Skip)
		err = r.e.append(context.WithoutCancel(ctx), r.id, durable, entries...)
	}
	return attemptResult{res: res, decision: dec, output: out, journal: err}
}

// outputValue is a call's output as a value: converted from what the dispatcher decoded for
// its output_schema check when it did (the output was not spilled since), else decoded here.
func (j attemptJob) outputValue(raw json.RawMessage, spilled bool) (cty.Value, error) {
	if d := j.call.Output; d != nil && d.Set && !spilled {
		return schema.FromJSON(d.Doc)
	}
	return fromJSON(raw)
}

// attemptOutcome is the metrics' outcome of a call: "succeeded", or its error kind.
func attemptOutcome(res outcome.Result) string {
	if res.Type == outcome.Failure {
		return string(res.Kind)
	}
	return "succeeded"
}

func outcomeName(res outcome.Result, dec outcome.Decision) string {
	if dec.Err != nil {
		return string(dec.Err.Kind)
	}
	return string(res.Type)
}

// contextOutcome turns an attempt that ended with its context into timeout or cancelled,
// whatever the task answered after that.
func (j attemptJob) contextOutcome(runCtx, attemptCtx context.Context, res outcome.Result) outcome.Result {
	if runCtx.Err() != nil {
		msg := "cancelled"
		if cause := context.Cause(runCtx); cause != nil {
			var oe *outcome.Error
			if errors.As(cause, &oe) {
				msg = cancelledBy(oe).Message
			}
		}
		return outcome.Result{Type: outcome.Failure, Kind: outcome.Cancelled, Message: msg}
	}
	// A task that reports its own timeout at the attempt's deadline saw that deadline first: a
	// plugin's gRPC server resets the call a moment before our own timer fires. It is the
	// attempt's timeout all the same, and says so the same way.
	if res.Type == outcome.Failure && (errors.Is(context.Cause(attemptCtx), context.DeadlineExceeded) ||
		res.Kind == outcome.Timeout && atDeadline(attemptCtx)) {
		return outcome.Result{Type: outcome.Failure, Kind: outcome.Timeout,
			Message: fmt.Sprintf("the attempt did not finish within its timeout (%s)", j.timeout)}
	}
	return res
}

// atDeadline reports whether ctx's deadline has (all but) passed.
func atDeadline(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && time.Until(d) < 100*time.Millisecond
}

// entry is the journal entry of a call's result; spilled: its output is an artifact's
// reference.
func (j attemptJob) entry(res outcome.Result, dec outcome.Decision, out cty.Value, spilled bool) journal.Entry {
	e := journal.Entry{Node: j.node, Index: j.index, Key: j.key, Attempt: j.call.Attempt}
	switch dec.Verdict {
	case outcome.Done:
		e.Type = journal.NodeFinished
		switch res.Type {
		case outcome.Skip:
			e.Status, e.Reason = journal.StatusSkipped, res.Reason
		default:
			e.Status, e.Selected = journal.StatusSucceeded, res.Selected
			switch {
			case j.transform && !j.sensitive && !spilled:
				// Its output is its input, which holds no sensitive part: the bytes it was
				// given (wireJSON of that value), which journalJSON would make again.
				e.Output = j.call.Input
			case j.transform || j.sensitive:
				e.Output, _, _ = journalJSON(out) // marks become {"sensitive": true}
			default:
				e.Output = res.Output
			}
		}
	case outcome.Again:
		e.Type, e.State, e.Progress, e.Output = journal.AttemptContinued, res.State, res.Progress, res.Output
		if j.sensitive {
			// The state stays (scrubbed): the next call and resume need it.
			e.Output = redactedJSON
		}
	case outcome.Retry:
		e.Type, e.Error, e.RetryAt = journal.AttemptFailed, dec.Err, j.r.e.now().Add(dec.Delay)
	case outcome.Failed:
		e.Type, e.Status, e.Error = journal.NodeFinished, journal.StatusFailed, dec.Err
		if dec.Err.Kind == outcome.Cancelled {
			e.Status = journal.StatusCancelled
		}
	}
	return e
}

// limitOutput enforces max_node_output (failing or spilling to an artifact) and max_total.
// spill gives the bytes to store when the output is spilled (the output with its secrets
// redacted), nil when it must not be (a sensitive output); spilled reports that out is now
// the artifact's reference.
func (r *Run) limitOutput(ctx context.Context, node string, out json.RawMessage, spill func() []byte) (_ json.RawMessage, spilled bool, _ *outcome.Error) {
	lim := r.wf.Settings.Data
	if lim.MaxNodeOutput > 0 && int64(len(out)) > lim.MaxNodeOutput {
		if lim.OnExceed == "spill" && r.e.cfg.Artifacts != nil && spill == nil {
			return nil, false, outcome.Errorf(outcome.DataLimitExceeded, "the output of %s is %d bytes; max_node_output is %d bytes; it is not spilled to an artifact because the task received a sensitive value (an artifact would keep what the journal must not); raise max_node_output", node, len(out), lim.MaxNodeOutput)
		}
		if lim.OnExceed != "spill" || r.e.cfg.Artifacts == nil {
			return nil, false, outcome.Errorf(outcome.DataLimitExceeded, "the output of %s is %d bytes; max_node_output is %d bytes", node, len(out), lim.MaxNodeOutput)
		}
		ref, err := r.e.cfg.Artifacts.Put(ctx, r.id, "application/json", spill())
		if err != nil {
			return nil, false, outcome.Errorf(outcome.Fatal, "spill the output of %s to an artifact: %v", node, err)
		}
		out, spilled = marshal(ref), true
	}
	if lim.MaxTotal > 0 {
		if total := atomic.AddInt64(&r.outputBytes, int64(len(out))); total > lim.MaxTotal {
			return nil, false, outcome.Errorf(outcome.DataLimitExceeded, "the outputs of this run reached %d bytes with %s; max_total is %d bytes", total, node, lim.MaxTotal)
		}
	}
	return out, spilled, nil
}

// attemptDone acts on a worker's report, on the loop.
func (r *Run) attemptDone(ti *taskInst, ar attemptResult) {
	if ar.interrupted {
		if !ar.again && r.reattaches(ti.ns.n.Task.Uses) {
			// A shutdown stopped the wait, not the attempt: its dispatcher leaves it running
			// elsewhere (task.ErrInterrupted). Left in flight in the journal, as after a
			// crash, so that resume re-attaches to it instead of running it a second time.
			return
		}
		// The instance stays in flight; resume runs it again with the next attempt number.
		e := journal.Entry{Type: journal.AttemptInterrupted, Node: ti.ns.addr, Index: ti.index, Key: ti.key, Attempt: ti.attempt}
		if ar.again {
			e.Error = ar.res.Err()
		}
		r.note(e)
		if ar.again {
			ti.interrupted++
			ti.calls = 0
			// Said like a retry (it is one, that does not count): an observer sees why the
			// attempt ended, as the journal does.
			now := r.e.now()
			r.emit(Event{Type: EventNodeRetrying, Node: ti.ns.addr, Kind: "task", Index: ti.index, Attempt: ti.attempt, Error: e.Error, RetryAt: &now})
			r.requeueAfter(ti, 0)
		}
		return
	}
	if ar.journal != nil {
		r.journalFailed(ar.journal)
		r.instDone(ti, journal.StatusFailed, nullValue, outcome.Errorf(outcome.Fatal, "journal: %v", ar.journal), "", false)
		return
	}
	res, dec := ar.res, ar.decision
	switch dec.Verdict {
	case outcome.Done:
		ti.calls, ti.state = 0, nil
		if res.Type == outcome.Skip {
			r.instDone(ti, journal.StatusSkipped, nullValue, nil, res.Reason, false)
			return
		}
		if res.Type == outcome.Branch && ti.item < 0 {
			ti.ns.selected = res.Selected
		}
		r.instDone(ti, journal.StatusSucceeded, ar.output, nil, "", false)
	case outcome.Again:
		ti.calls++
		ti.state = res.State
		if ti.item < 0 && len(ti.index) == 0 && res.Progress > 0 {
			r.emit(Event{Type: EventNodeProgress, Node: ti.ns.addr, Kind: "task", Done: int(res.Progress * 100), Total: 100})
		}
		r.requeueAfter(ti, dec.Delay)
	case outcome.Retry:
		ti.calls, ti.state = 0, nil
		at := r.e.now().Add(dec.Delay)
		r.emit(Event{Type: EventNodeRetrying, Node: ti.ns.addr, Kind: "task", Index: ti.index, Attempt: ti.attempt, Error: dec.Err, RetryAt: &at})
		r.requeueAfter(ti, dec.Delay)
	case outcome.Failed:
		status := journal.StatusFailed
		if dec.Err.Kind == outcome.Cancelled {
			status = journal.StatusCancelled
		}
		r.instDone(ti, status, nullValue, dec.Err, "", false)
	}
}

// requeueAfter queues the instance again after d, without holding a slot meanwhile.
func (r *Run) requeueAfter(ti *taskInst, d time.Duration) {
	s := ti.ns.s
	requeue := func() {
		ti.timer = nil
		if ti.status != "" {
			return
		}
		ti.queued = true
		r.ready = append(r.ready, ti)
	}
	if d <= 0 {
		requeue()
		return
	}
	ti.timer = s.after(d, requeue, func(cause *outcome.Error) {
		ti.timer = nil
		r.instDone(ti, journal.StatusCancelled, nullValue, cancelledBy(cause), "", true)
	})
}

// cancelInst cancels an instance that has not finished: a running attempt is interrupted (it
// reports cancelled), one waiting for a retry, a slot or its first start ends cancelled now.
func (r *Run) cancelInst(ti *taskInst, cause *outcome.Error) {
	if ti == nil || ti.status != "" {
		return
	}
	switch {
	case ti.cancel != nil:
		ti.cancel(cause)
	case ti.timer != nil && ti.ns.s.cancelParked(ti.timer, cause):
	default:
		r.dropQueued(ti)
		r.instDone(ti, journal.StatusCancelled, nullValue, cancelledBy(cause), "", true)
	}
}

// instDone records a final instance; journaled says whether its entry is still to be written.
func (r *Run) instDone(ti *taskInst, status string, out cty.Value, err *outcome.Error, reason string, journalIt bool) {
	if ti.status != "" {
		return
	}
	ti.status, ti.output, ti.err = status, out, err
	ns := ti.ns
	if ti.item < 0 {
		if err != nil && err.Kind == outcome.Cancelled {
			status = journal.StatusCancelled
		}
		r.finishNodeWith(ns, status, out, err, reason, journalIt)
		return
	}
	if journalIt {
		entry := journal.Entry{Type: journal.NodeFinished, Node: ns.addr, Index: ti.index, Key: ti.key, Status: status, Error: err, Reason: reason}
		r.note(entry)
	}
	r.itemDone(ns, ti)
}

// nodeLogger returns the Log function a task gets: lines go to the journal's logs and to the
// observer.
func (r *Run) nodeLogger(node string, index []int, attempt int) func(level, msg string) {
	return func(level, msg string) {
		msg = r.e.cfg.Redact.String(msg)
		line := journal.LogLine{Time: r.e.now(), Node: node, Index: index, Attempt: attempt, Level: level, Message: msg}
		if err := r.e.appendLog(r.id, line); err != nil {
			r.logAt(slog.LevelWarn, "node log line lost", "node", node, "error", err)
		}
		r.emit(Event{Type: EventNodeLog, Node: node, Index: index, Attempt: attempt, Level: level, Message: msg})
	}
}

// isIdentity reports whether uses is a builtin whose output is its input (builtin.transform):
// its output keeps the input's value, marks included (lang/builtin's table says which).
func isIdentity(uses lang.Uses) bool {
	return uses.Kind == lang.UsesBuiltin && builtin.IsIdentity(uses.Name)
}
