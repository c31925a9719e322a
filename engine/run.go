package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/funcs"
	"github.com/fuscia/fuscia/lang/schema"
)

// Run is one execution of a workflow.
type Run struct {
	e       *Engine
	id      string
	prog    *Program
	wf      *lang.Workflow
	info    journal.RunInfo
	opts    StartOptions
	durable bool
	span    trace.Span

	// ctx is cancelled when the run stops (cancel, timeout, critical failure, parent).
	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{}
	// inbox carries closures to run on the loop goroutine: the only way other goroutines act
	// on run state.
	inbox chan func()

	emitMu sync.Mutex // serializes Observer calls

	// cancelRequested is set by Cancel; admitStop (set before Admit is called) ends the wait
	// for admission, so that a queued run can be cancelled.
	cancelRequested atomic.Bool
	admitStop       context.CancelFunc
	admitMu         sync.Mutex
	// detachMu orders a Cancel against the loop's decision to detach: either Cancel sets
	// cancelRequested first (and the loop stays to process its stop), or the loop detached
	// first (hasDetached) and Cancel reports that its stop cannot be delivered.
	detachMu    sync.Mutex
	hasDetached bool

	// Everything below is owned by the loop goroutine.
	vars, secrets, trigger cty.Value
	// With triggerPaths set, trigger's payload holds only the parts the workflow reads, and
	// wholeTrigger builds the trigger with all of it (lang.Scope.WholeTrigger).
	triggerPaths   *schema.Paths
	wholeTrigger   func() cty.Value
	funcs          map[string]function.Function
	bindings       map[string]bound // by lang.Uses.Block, bound on first use
	top            *scope
	slots, running int
	ready          []*taskInst             // FIFO of attempts waiting for a slot
	inlineLeft     int                     // pure attempts pump may still run on the loop (dispatch)
	inflight       int                     // goroutines that will post back: workers, commits, children, timers
	timers         int                     // attempts waiting for a retry or a `continue` delay
	parkedWaits    int                     // wait nodes parked whose node_waiting entry is journaled
	armedWaits     int                     // wait deadline timers armed (counted in inflight)
	commits        int                     // durable journal writes under way (counted in inflight)
	waiting        map[*nodeState]struct{} // wait nodes parked
	draining       bool                    // a shutdown: no new attempt or sub-workflow starts
	detached       string                  // why the loop ended without finishing the run
	due            time.Time               // a parked run's earliest wait deadline
	status         string
	stopping       string // final status once the run was stopped; "" while it goes on
	stopErr        *outcome.Error
	journalErr     error // the journal failed: the run ends without writing more
	outputBytes    int64 // atomic: workers add their outputs' sizes
	finishSeq      uint64
	replay         *replay // of a resumed run; nil for a new one
	startedAt      time.Time
	// postMu and postClosed order posts with the run's end under an Activity clock
	// (postTracked, dropPosted).
	postMu     sync.Mutex
	postClosed bool
	// doneMu guards doneHooks and hooksRan (whenDone).
	doneMu       sync.Mutex
	doneHooks    []func()
	hooksRan     bool
	deadline     Timer
	result       *journal.Execution
	childOutputs cty.Value // a child run's outputs, for its parent's call node
	// reads names the nodes whose output something reads (an expression, a join, a loop's
	// default output); a for_each task nobody reads keeps no item outputs in memory.
	reads map[string]bool
	// toPrepare are tasks whose inputs the loop may evaluate ahead (prepare.go).
	toPrepare []*nodeState
	// attemptBegun is signalled by an attempt whose dependents' inputs wait for it to begin
	// before the loop evaluates them (awaitAttempt; Run.next).
	attemptBegun chan struct{}
	awaitAttempt bool
	finalErr     error
	finalStatus  string
	finalRunErr  *outcome.Error
	resultOnce   sync.Once
}

// ID is the execution id.
func (r *Run) ID() string { return r.id }

// Done is closed when the run has ended and its last entry is journaled.
func (r *Run) Done() <-chan struct{} { return r.done }

// Result is the ended run as `show -json` prints it, and an error when the journal could not
// be written (the run then ended without its last entries; see the error). Call after Done.
func (r *Run) Result() (*journal.Execution, error) {
	// Read back lazily: an engine running thousands of runs (or one with 100,000 items) should
	// not rebuild every execution object nobody asks for.
	r.resultOnce.Do(func() {
		if r.result != nil {
			return
		}
		ex, err := r.e.cfg.Store.Execution(r.id)
		if err != nil && r.finalErr == nil {
			r.finalErr = fmt.Errorf("read back execution %s: %w", r.id, err)
		}
		r.result = ex
	})
	return r.result, r.finalErr
}

// Status is the ended run's status and error, and an error when its journal could not be
// written. Call after Done.
func (r *Run) Status() (string, *outcome.Error, error) {
	return r.finalStatus, r.finalRunErr, r.finalErr
}

// Cancel cancels the run: running attempts are interrupted and nothing new starts. A run whose
// loop already detached (parked) is not reached: Engine.Cancel cancels those.
func (r *Run) Cancel() { r.requestCancel() }

// requestCancel is Cancel, and reports false when the run's loop had already detached
// (parked or interrupted), so the cancel cannot reach it.
func (r *Run) requestCancel() bool {
	r.detachMu.Lock()
	r.cancelRequested.Store(true)
	detached := r.hasDetached
	r.detachMu.Unlock()
	if detached {
		return false
	}
	r.admitMu.Lock()
	if r.admitStop != nil {
		r.admitStop()
	}
	r.admitMu.Unlock()
	r.post(func() {
		r.stop(journal.StatusCancelled, outcome.Errorf(outcome.Cancelled, "the run was cancelled"))
	})
	return true
}

// inboxSize is a run's inbox buffer. Every post comes from another goroutine (an attempt's,
// a timer's, an API call's) and the loop never waits on one, so a full inbox only holds a
// sender until the loop's next turn. It was 256: 2 KiB per run, allocated by every webhook's
// run, where the loop rarely has more than a few messages waiting (docs/performance.md,
// "Issue 20", item 4).
const inboxSize = 16

// post runs f on the loop goroutine; it is dropped once the run has ended.
func (r *Run) post(f func()) {
	if r.e != nil && r.e.tracking {
		r.postTracked(f)
		return
	}
	select {
	case r.inbox <- f:
	case <-r.done:
	}
}

// postTracked is post under an Activity clock: f counts as busy until the loop has run it, or
// until it is dropped. The lock makes the drop exact: nothing lands in the inbox after the
// run's end drained it (dropPosted), where it would stay busy forever.
func (r *Run) postTracked(f func()) {
	r.e.act.Busy()
	r.postMu.Lock()
	defer r.postMu.Unlock()
	if r.postClosed {
		r.e.act.Idle()
		return
	}
	select {
	case r.inbox <- f:
	case <-r.done:
		r.e.act.Idle()
	}
}

// dropPosted ends posting once the run has ended (done is closed): what the loop never ran is
// dropped, and counted idle.
func (r *Run) dropPosted() {
	if r.e == nil || !r.e.tracking {
		return
	}
	r.postMu.Lock()
	defer r.postMu.Unlock()
	r.postClosed = true
	for {
		select {
		case <-r.inbox:
			r.e.act.Idle()
		default:
			return
		}
	}
}

// goAsync runs f on a new goroutine that will post back exactly once; the loop does not end
// while it is out.
func (r *Run) goAsync(f func()) {
	r.inflight++
	if r.e == nil || !r.e.tracking {
		go f() // the real clock: no accounting, no wrapper to allocate
		return
	}
	act := r.e.act
	act.Busy()
	go func() {
		defer act.Idle()
		f()
	}()
}

// activity is the engine's Activity (one that does nothing for a Run built without an engine
// in tests).
func (r *Run) activity() Activity {
	if r.e == nil {
		return noActivity{}
	}
	return r.e.act
}

// whenDone calls f once the run has ended (after Done is closed), on the goroutine that ended
// it, before that goroutine counts itself idle (Activity): what f posts is busy without a gap.
// When the run has already ended, f runs at once on a goroutine of its own.
func (r *Run) whenDone(f func()) {
	r.doneMu.Lock()
	if !r.hooksRan {
		r.doneHooks = append(r.doneHooks, f)
		r.doneMu.Unlock()
		return
	}
	r.doneMu.Unlock()
	r.e.act.Busy()
	go func() {
		defer r.e.act.Idle()
		f()
	}()
}

// runDoneHooks runs the whenDone calls once the run has ended.
func (r *Run) runDoneHooks() {
	r.dropPosted()
	r.doneMu.Lock()
	hooks := r.doneHooks
	r.doneHooks, r.hooksRan = nil, true
	r.doneMu.Unlock()
	for _, f := range hooks {
		f()
	}
}

// back is what an async goroutine posts when it is done.
func (r *Run) back(f func()) {
	r.post(func() {
		r.inflight--
		f()
	})
}

func (e *Engine) newRun(ctx context.Context, prog *Program, opts StartOptions, id string) (*Run, error) {
	w := prog.Workflow
	secrets, err := e.readSecrets(w)
	if err != nil {
		return nil, err
	}
	if id == "" {
		id = newID()
	}
	consts := prog.runConsts()
	r := &Run{
		e: e, id: id, prog: prog, wf: w, opts: opts,
		durable: w.Settings.Durability != "relaxed",
		done:    make(chan struct{}),
		inbox:   make(chan func(), inboxSize),
		secrets: secrets,
		funcs:   funcs.Shared(),
		status:  journal.StatusRunning,
		vars:    w.VarValues(),
		reads:   consts.reads,
	}
	// Sensitive variables are secrets too (a child's are added by its call, which sets them).
	if consts.varsMarked {
		e.addSensitive(r.vars)
	}
	r.slots = w.Settings.MaxParallel
	if opts.Parallelism > 0 {
		r.slots = opts.Parallelism
	}
	if r.slots <= 0 {
		r.slots = lang.DefaultMaxParallel
	}
	tr := opts.Trigger
	if tr.Type == "" {
		tr.Type, tr.Name = lang.TriggerManual, "default"
		for _, t := range w.Triggers {
			if t.Type == lang.TriggerManual {
				tr.Name = t.Name
				break
			}
		}
	}
	if len(tr.Payload) == 0 || string(bytes.TrimSpace(tr.Payload)) == "null" {
		// No payload, or a null one, is {} (docs/reference/language.md).
		tr.Payload = json.RawMessage("{}")
	}
	// Only the parts of the payload the workflow reads are built (a webhook's payload is the
	// whole request); an expression that reads more gets all of it (wholeTrigger).
	paths := w.PayloadReads()
	payload, err := schema.ParseJSONPaths(tr.Payload, paths)
	if err != nil {
		return nil, fmt.Errorf("trigger payload: %w", err)
	}
	r.trigger = triggerValue(payload, tr)
	if !paths.Whole {
		r.triggerPaths = paths
		r.wholeTrigger = sync.OnceValue(func() cty.Value {
			whole, err := fromJSON(tr.Payload)
			if err != nil { // ParseJSONPaths took it: not expected
				return r.trigger
			}
			return triggerValue(whole, tr)
		})
	}
	r.info = journal.RunInfo{
		Workflow: w.Name, File: w.Filename, PlanDigest: prog.Digest, Trigger: tr,
		Vars: consts.varsJSON, Durability: w.Settings.Durability, Parallelism: opts.Parallelism,
		Nodes: consts.nodes, Bodies: consts.bodies,
	}
	if opts.parent != nil {
		r.info.Parent, r.info.ParentNode = opts.parent.id, opts.parentNode
	}
	var cause context.Context
	if opts.parent != nil {
		cause = opts.parent.ctx
	} else {
		cause = context.WithoutCancel(ctx)
	}
	r.ctx, r.cancel = context.WithCancelCause(cause)
	if opts.parent == nil && ctx.Done() != nil {
		// Cancelling the caller's context cancels the run, through the loop like any cancel.
		stop := context.AfterFunc(ctx, r.Cancel)
		go func() { <-r.done; stop() }()
	}
	return r, nil
}

// release frees what newRun took when the run never started.
func (r *Run) release() { r.cancel(errStopped); close(r.done) }

// triggerValue is the `trigger` object of a run started by tr, with payload as its payload.
func triggerValue(payload cty.Value, tr journal.Trigger) cty.Value {
	return cty.ObjectVal(map[string]cty.Value{
		"payload": payload, "name": cty.StringVal(tr.Name), "type": cty.StringVal(tr.Type),
	})
}

func topAddrs(w *lang.Workflow) []string {
	var out []string
	for _, stage := range w.Graph.Stages {
		for _, a := range stage {
			out = append(out, a.String())
		}
	}
	return out
}

func bodyAddrs(w *lang.Workflow) map[string][]string {
	if len(w.Graph.BodyStages) == 0 {
		return nil
	}
	out := map[string][]string{}
	for loop, stages := range w.Graph.BodyStages {
		key := lang.Addr{Kind: lang.KindLoop, Name: loop}.String()
		for _, stage := range stages {
			for _, a := range stage {
				out[key] = append(out[key], a.Local())
			}
		}
	}
	return out
}

// begin journals the run's start.
func (r *Run) begin(ctx context.Context) error {
	st := r.e.cfg.Store
	if err := st.PutPlan(r.prog.Digest, r.prog.Plan); err != nil {
		return fmt.Errorf("journal the plan: %w", err)
	}
	r.startedAt = r.e.now()
	err := r.e.append(ctx, r.id, true, journal.Entry{Type: journal.RunStarted, Time: r.startedAt, Run: &r.info, Status: journal.StatusRunning})
	if err != nil {
		return fmt.Errorf("journal the start of the run: %w", err)
	}
	return nil
}

// commit journals entries, then runs then on the loop. In strict mode the entries are durable
// before then runs (write-ahead); in relaxed mode then runs at once. When the journal fails
// the run is stopped first and then still runs: what it releases is cancelled at once, and
// the run can end.
func (r *Run) commit(then func(), entries ...journal.Entry) {
	if !r.durable {
		if err := r.e.append(context.Background(), r.id, false, entries...); err != nil {
			r.journalFailed(err)
		}
		if then != nil {
			then()
		}
		return
	}
	r.commits++
	r.goAsync(func() {
		err := r.e.append(context.WithoutCancel(r.ctx), r.id, true, entries...)
		r.back(func() {
			r.commits--
			if err != nil {
				r.journalFailed(err)
			}
			if then != nil {
				then()
			}
		})
	})
}

// logAt logs msg with the run's execution id and workflow before args. They are added to each
// line rather than kept in a Logger.With per run: at the default level a succeeded run logs
// nothing, and building that logger (its attributes scrubbed by the redacting handler) was
// 2% of serve's CPU (docs/performance.md, item 4, session 17). Safe from any goroutine.
func (r *Run) logAt(level slog.Level, msg string, args ...any) {
	l := r.e.cfg.Logger
	if !l.Enabled(context.Background(), level) {
		return
	}
	l.Log(context.Background(), level, msg, append([]any{"execution_id", r.id, "workflow", r.wf.Name}, args...)...)
}

// note journals entries without waiting: they are ordered before anything committed later.
func (r *Run) note(entries ...journal.Entry) {
	if err := r.e.append(context.Background(), r.id, false, entries...); err != nil {
		r.journalFailed(err)
	}
}

// maxErrText bounds the text of a journal error the run reports: a store's error may quote
// the whole value it refused (Badger dumps it in hex).
const maxErrText = 2 << 10

// boundedErr is an error whose text is cut to maxErrText; errors.Is and As still see the cause.
type boundedErr struct{ err error }

func (b boundedErr) Error() string {
	msg := b.err.Error()
	if len(msg) <= maxErrText {
		return msg
	}
	return msg[:maxErrText] + fmt.Sprintf("… (%d more bytes)", len(msg)-maxErrText)
}

func (b boundedErr) Unwrap() error { return b.err }

func boundErr(err error) error {
	if err == nil || len(err.Error()) <= maxErrText {
		return err
	}
	return boundedErr{err}
}

// journalFailed stops the run at once: without a journal nothing may go on, and nothing more
// can be recorded. The store keeps what was written before.
func (r *Run) journalFailed(err error) {
	if r.journalErr != nil {
		return
	}
	err = boundErr(err)
	r.journalErr = err
	r.logAt(slog.LevelError, "journal write failed; stopping the run", "error", err)
	r.stop(journal.StatusFailed, outcome.Errorf(outcome.Fatal, "the journal could not be written: %v", err))
}

func (r *Run) emit(ev Event) {
	if r.opts.Observer == nil {
		return
	}
	ev.ExecutionID = r.id
	if sc := r.e.cfg.Redact.Scrubber(); sc != nil {
		// Events reach terminals and pipes: they get the journal's scrubbing.
		scrubEvent(sc, &ev)
	}
	if ev.Timestamp.IsZero() {
		ev.Timestamp = r.e.now()
	}
	r.emitMu.Lock()
	r.opts.Observer(ev)
	r.emitMu.Unlock()
}

// loop is the run's scheduler.
func (r *Run) loop() {
	defer func() {
		if r.detached == DetachedInterrupted {
			return // cancelled with errInterrupted already
		}
		r.cancel(errStopped)
	}()
	r.span = noSpan
	if r.e.tracing {
		_, r.span = r.e.cfg.Tracer.Start(context.Background(), "run "+r.wf.Name, trace.WithAttributes(
			attribute.String("fuscia.workflow", r.wf.Name), attribute.String("fuscia.execution_id", r.id)))
	}
	r.emit(Event{Type: EventExecutionStarted, Workflow: r.wf.Name})
	if d := r.wf.Settings.MaxDuration; d > 0 {
		left := r.e.until(r.startedAt.Add(d))
		r.deadline = r.e.clock.AfterFunc(max(left, 0), func() {
			r.post(func() {
				r.stop(journal.StatusTimedOut, outcome.Errorf(outcome.Timeout, "the run exceeded max_duration (%s)", d))
			})
		})
	}
	r.top = r.newScope(nil, flatten(r.wf.Graph.Stages), cty.NilVal, nil, nil, r.ctx)
	r.top.onDone = func() {}
	r.draining = r.e.isDraining()
	if r.opts.cancel {
		// Stopped before anything starts: journaled nodes are restored, the rest is cancelled
		// as its turn comes; no task, wait or sub-workflow starts.
		r.cancelRequested.Store(true)
		r.stop(journal.StatusCancelled, outcome.Errorf(outcome.Cancelled, "the run was cancelled"))
	}
	r.top.start()
	r.pump()
	r.updateStatus()
	for !(r.top.open == 0 && r.inflight == 0) {
		// A Cancel whose stop is still on its way to the inbox must not be lost to a park: the
		// run would leave the engine waiting and drop the stop (post drops once it ended).
		if why := r.detachReason(); why != "" && r.markDetached() {
			r.detach(why)
			return
		}
		if len(r.toPrepare) > 0 && len(r.inbox) == 0 && !r.awaitAttempt {
			r.prepareInputs() // while the attempts run: nothing else is due
		}
		r.activity().Idle() // the turn that ran the last message (or the first turn) ends here
		f := r.next()       // counted busy by post until its turn ends
		f()
		r.pump()
		r.updateStatus()
	}
	if r.deadline != nil {
		r.deadline.Stop()
	}
	r.finish()
}

// markDetached records that the loop detaches, unless a Cancel came first whose stop the loop
// has not processed yet: the run then stays to process it (its stop is on its way to the
// inbox), rather than leave the engine and drop it.
func (r *Run) markDetached() bool {
	r.detachMu.Lock()
	defer r.detachMu.Unlock()
	if r.cancelRequested.Load() && r.stopping == "" {
		return false
	}
	r.hasDetached = true
	return true
}

// Why a run's loop ended without finishing it (Run.Detached).
const (
	// DetachedParked: only waits were left; the run is resumed when one is due or answered.
	DetachedParked = "parked"
	// DetachedInterrupted: a shutdown (Engine.Drain) stopped it; resume continues it.
	DetachedInterrupted = "interrupted"
)

// errInterrupted is the cause of the contexts a shutdown cancels: attempts that end with it
// are journaled as interrupted, not as failed or cancelled.
var errInterrupted = task.ErrInterrupted

// Detached says why the run's loop ended without finishing the run ("" when it finished).
// Call after Done.
func (r *Run) Detached() string { return r.detached }

// Due is a parked run's earliest wait deadline; zero when its waits have none (approvals and
// callbacks without timeout). Call after Done.
func (r *Run) Due() time.Time { return r.due }

// Workflow is the name of the run's workflow.
func (r *Run) Workflow() string { return r.wf.Name }

// Parent is the id of the run that started this one as a sub-workflow, or "".
func (r *Run) Parent() string { return r.info.Parent }

// detachReason says whether the loop may end now without finishing the run.
func (r *Run) detachReason() string {
	if r.stopping != "" || r.journalErr != nil || r.commits > 0 || r.cancelRequested.Load() {
		return "" // a stopping run finishes; journal writes under way land first
	}
	if r.draining && r.running == 0 {
		return DetachedInterrupted
	}
	if r.e.cfg.ParkWaits && r.opts.parent == nil && r.status == journal.StatusWaiting &&
		r.inflight == r.armedWaits && len(r.ready) == 0 && !r.dueSoon() {
		return DetachedParked
	}
	return ""
}

// parkMinimum is the least time to a wait's deadline for which a run leaves memory: parking
// and resuming cost a journal read, and a deadline already past must fire here (its timer's
// report may be on its way).
const parkMinimum = time.Second

// dueSoon reports whether a parked wait's deadline is less than parkMinimum away.
func (r *Run) dueSoon() bool {
	for ns := range r.waiting {
		if d := ns.wait.deadline; !d.IsZero() && r.e.until(d) < parkMinimum {
			return true
		}
	}
	return false
}

// drain starts no new attempt or sub-workflow from now on (Engine.Drain).
func (r *Run) drain() { r.draining = true }

// interrupt cuts the attempts under way short (Engine.Drain after its grace).
func (r *Run) interrupt() {
	r.draining = true
	r.cancel(errInterrupted)
}

// detach ends the loop without finishing the run: its wait timers are stopped (a parked run
// holds no memory but its index entry elsewhere), and a durable entry says why.
func (r *Run) detach(why string) {
	if r.deadline != nil {
		r.deadline.Stop()
	}
	for ns := range r.waiting {
		if ws := ns.wait; ws != nil {
			if !ws.deadline.IsZero() && (r.due.IsZero() || ws.deadline.Before(r.due)) {
				r.due = ws.deadline
			}
			r.stopTimer(ws)
		}
	}
	r.detached = why
	entry := journal.Entry{Type: journal.RunStatus, Status: journal.StatusWaiting, Reason: "parked"}
	if why == DetachedInterrupted {
		entry = journal.Entry{Type: journal.RunStatus, Status: journal.StatusInterrupted, Reason: "interrupted by a shutdown"}
		// Children started through calls derive their contexts from this one: they are
		// interrupted too (they drain on their own), never cancelled.
		r.cancel(errInterrupted)
	}
	if err := r.e.append(context.Background(), r.id, true, entry); err != nil {
		r.finalErr = fmt.Errorf("journal that execution %s stopped: %w", r.id, boundErr(err))
	}
	if r.span != nil {
		r.span.SetAttributes(attribute.String("fuscia.outcome", why))
		r.span.End()
	}
	r.e.cfg.Store.Forget(r.id)
	r.finalStatus = journal.StatusInterrupted
	if why == DetachedParked {
		r.finalStatus = journal.StatusWaiting
	}
	r.logAt(slog.LevelInfo, "run left memory", "why", why)
}

// updateStatus keeps the journal's run status in step: `waiting` while only waits are left
// (no attempt runs, is queued, or waits for its retry).
func (r *Run) updateStatus() {
	if r.stopping != "" || r.journalErr != nil {
		return
	}
	want := journal.StatusRunning
	if r.parkedWaits > 0 && r.running == 0 && len(r.ready) == 0 && r.timers == 0 {
		want = journal.StatusWaiting
	}
	if want != r.status {
		r.status = want
		r.note(journal.Entry{Type: journal.RunStatus, Status: want})
	}
}

// stop ends the run with status: running attempts are cancelled and nothing new starts. The
// first stop wins.
func (r *Run) stop(status string, err *outcome.Error) {
	if r.stopping != "" {
		return
	}
	r.stopping, r.stopErr = status, err
	r.cancel(err)
	r.top.stopScope(err)
}

// finish journals the end of the run.
func (r *Run) finish() {
	status := r.stopping
	if status == "" {
		status = r.top.outcomeStatus()
	}
	var runErr *outcome.Error
	if status != journal.StatusSucceeded && status != journal.StatusCompletedWithErrors {
		runErr = r.stopErr
		if runErr == nil {
			runErr = r.top.firstError()
		}
	}
	outputs := r.evalOutputs()
	r.childOutputs = outputs
	outJSON, _, err := journalJSON(outputs)
	if err != nil {
		outJSON = json.RawMessage("{}")
	}
	if r.span != nil {
		r.span.SetAttributes(attribute.String("fuscia.outcome", status))
		if runErr != nil {
			r.span.SetStatus(codes.Error, r.e.cfg.Redact.String(runErr.Message))
		}
		r.span.End()
	}
	if r.journalErr == nil {
		entry := journal.Entry{Type: journal.RunFinished, Status: status, Error: runErr, Outputs: outJSON}
		if err := r.e.append(context.Background(), r.id, true, entry); err != nil {
			r.journalErr = boundErr(err)
		}
	}
	r.e.cfg.Store.Forget(r.id)
	if r.journalErr != nil {
		r.finalErr = fmt.Errorf("the run stopped because its journal could not be written (%w); what was journaled before is intact: resume it with `fuscia resume %s` once the cause is fixed", r.journalErr, r.id)
	}
	r.finalStatus, r.finalRunErr = status, runErr
	// A succeeded run is a debug line: a service runs thousands a second, and the journal,
	// the API and the metrics have them. Any other end is worth an operator's attention.
	level := slog.LevelInfo
	if status == journal.StatusSucceeded {
		level = slog.LevelDebug
	}
	r.logAt(level, "run finished", "status", status)
	if r.opts.Observer != nil {
		ex, _ := r.Result()
		r.emit(Event{Type: EventExecutionFinished, Workflow: r.wf.Name, Status: status, Error: runErr, Execution: ex})
	}
}

// evalOutputs evaluates the workflow's output blocks with the final node values. An output that
// cannot be evaluated (it reads a node that did not run) is null; the reason goes to the log.
func (r *Run) evalOutputs() cty.Value {
	if len(r.wf.Outputs) == 0 {
		return cty.EmptyObjectVal
	}
	m := make(map[string]cty.Value, len(r.wf.Outputs))
	for _, o := range r.wf.Outputs {
		v, err := r.top.eval(o.Value, cty.NilVal)
		if err != nil {
			r.logAt(slog.LevelWarn, "output could not be evaluated", "output", o.Name, "error", err.Message)
			v = nullValue
		}
		if o.Sensitive {
			v = v.Mark(lang.Sensitive)
		}
		m[o.Name] = v
	}
	return cty.ObjectVal(m)
}

// pump starts queued attempts while slots are free.
func (r *Run) pump() {
	r.inlineLeft = maxInline
	for !r.draining && r.running < r.slots && len(r.ready) > 0 {
		ti := r.ready[0]
		r.ready[0] = nil
		r.ready = r.ready[1:]
		ti.queued = false
		r.dispatch(ti)
	}
}
