package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"

	"github.com/oklog/ulid/v2"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/fuscia/fuscia/engine/internal/metrics"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/redact"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/internal/stackgrow"
	"github.com/fuscia/fuscia/lang"
)

// Config is what an Engine needs. Store and Tasks are required.
type Config struct {
	Store *journal.Store
	// Tasks runs every task and trigger; task.ByKind puts one runtime behind each kind of
	// `uses`. The engine binds each block once per run and never looks inside a binding.
	Tasks task.Dispatcher
	// Artifacts holds spilled outputs; nil refuses `on_exceed = "spill"` with an error.
	Artifacts ArtifactStore
	Tracer    trace.Tracer // nil: no spans
	Logger    *slog.Logger // nil: discard
	// Getenv reads secrets from the environment; nil means os.Getenv.
	Getenv func(string) string
	// ReadFile reads secrets from files; nil means os.ReadFile.
	ReadFile func(string) ([]byte, error)
	// ParkWaits lets a top-level run whose only unfinished work is waits leave memory: its loop
	// ends without finishing the run (Run.Detached is DetachedParked, Run.Due its earliest
	// deadline), and whoever parked it resumes it when a deadline or a signal comes (serve).
	// Off, a waiting run keeps its loop until the waits end (apply).
	ParkWaits bool
	// Metrics records task attempts (nil: none).
	Metrics *metrics.Recorder
	// OnRunEnd, when set, is called once per run (child runs included) after its loop ended,
	// finished or detached, from the run's goroutine.
	OnRunEnd func(*Run)
	// ResumeObserver, when set, gives the observer of a run resumed without one of its own (a
	// parked run resumed at its deadline, or only to be cancelled): serve hands its events to
	// the CLI streams that followed the run from its start.
	ResumeObserver func(id string) func(Event)
	// Redact is the process's secret values: the engine adds every secret and sensitive
	// variable value it reads, and scrubs the journal, node logs and events with it. Give the
	// same set to the logger, the span exporter and the API (telemetry.Config.Redact,
	// redact.HTTP) so that they scrub the same values. Nil: a set of the engine's own.
	Redact *redact.Set
	// Clock is the run's time (Clock); nil is the real clock. When it implements Activity, the
	// engine reports its work to it.
	Clock Clock
	// BeforeEffect, when set, is called in a strict run just before an attempt of a task that
	// is not pure passes its barrier (docs/engine.md, "Durability"): the pure results before
	// it are appended and not yet synced. It gets the execution id and the task's instance
	// ("task.send", "task.fan[2]"), on the attempt's goroutine. The crash tests kill the
	// process here (FUSCIA_TEST_CRASH); nil does nothing.
	BeforeEffect func(executionID, instance string)
	// Jitter is the factor a retry's backoff is multiplied by, drawn per retry; nil is a random
	// factor in [0.8, 1.2], so that retries of many runs spread out. `fuscia test` makes it 1,
	// so that a test's timeline is the same every time.
	Jitter func() float64
}

// Engine runs workflows against one store. It is safe for concurrent use.
type Engine struct {
	cfg   Config
	clock Clock    // cfg.Clock or the real clock
	act   Activity // the clock's Activity, or one that does nothing
	// tracking is set when the clock implements Activity: posts are then counted exactly.
	tracking bool
	// tracing is unset when cfg.Tracer is the no-op one (no OTEL_TRACES_EXPORTER): the run and
	// attempt spans are then not started at all, which saves building their names and
	// attributes for every attempt (docs/performance.md, "Issue 20", item 4).
	tracing bool
	jitter  func() float64 // cfg.Jitter or the random default

	mu       sync.Mutex
	signalMu sync.Mutex      // Signal of an inactive run vs Resume
	runs     map[string]*Run // active runs by id; guarded by mu
	draining bool            // Drain began: no run starts; guarded by mu
	wg       sync.WaitGroup  // one per active run

	// drainCtx ends when Drain begins: runs queued for admission stop waiting.
	drainCtx  context.Context
	drainStop context.CancelFunc
}

// New returns an Engine.
func New(cfg Config) *Engine {
	if cfg.Tracer == nil {
		cfg.Tracer = noop.NewTracerProvider().Tracer("fuscia")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.ReadFile == nil {
		cfg.ReadFile = os.ReadFile
	}
	if cfg.Redact == nil {
		cfg.Redact = redact.NewSet()
	}
	e := &Engine{cfg: cfg, runs: map[string]*Run{}, clock: cfg.Clock, act: noActivity{}, jitter: cfg.Jitter}
	if e.jitter == nil {
		e.jitter = func() float64 { return 0.8 + 0.4*rand.Float64() }
	}
	if e.clock == nil {
		e.clock = realClock{}
	}
	if a, ok := e.clock.(Activity); ok {
		e.act, e.tracking = a, true
	}
	_, off := cfg.Tracer.(noop.Tracer)
	e.tracing = !off
	e.drainCtx, e.drainStop = context.WithCancel(context.Background())
	return e
}

// Store is the engine's journal.
func (e *Engine) Store() *journal.Store { return e.cfg.Store }

// Redact is the set of secret values the engine scrubs from what it writes (Config.Redact).
func (e *Engine) Redact() *redact.Set { return e.cfg.Redact }

// Wait blocks until every run started by e has ended.
func (e *Engine) Wait() { e.wg.Wait() }

// Program is what a run executes: a checked workflow and the saved plan it came from.
type Program struct {
	Workflow *lang.Workflow
	// Plan is the saved-plan bytes (plan.Encode); Digest their sha256. A resumed run reloads the
	// workflow from them.
	Plan   []byte
	Digest string
	// Called are the other workflow files the workflow's calls were made from, by absolute
	// path, with the sha256 of the content read, when the maker knew them (serve's host does):
	// serve loads the workflow again when one of them changes (docs/serve.md, "Workflows and
	// reloads").
	Called map[string][sha256.Size]byte

	locksOnce sync.Once
	locks     plan.Locks

	constsOnce sync.Once
	consts     runConsts
}

// runConsts is what every run of a program starts with that depends on its workflow alone:
// worked out at the program's first run rather than at each (a webhook run of serve spent ≈ 2%
// of its CPU on them, docs/performance.md, issue 20 item 4, session 24). Read-only.
type runConsts struct {
	reads      map[string]bool     // readOutputs
	varsJSON   json.RawMessage     // the journal's form of the workflow's variables
	varsMarked bool                // whether a variable is sensitive
	nodes      []string            // topAddrs
	bodies     map[string][]string // bodyAddrs
}

// runConsts returns the program's runConsts.
func (p *Program) runConsts() *runConsts {
	p.constsOnce.Do(func() {
		w := p.Workflow
		c := &p.consts
		c.reads = readOutputs(w)
		vars := w.VarValues()
		c.varsMarked = vars.ContainsMarked()
		var err error
		if c.varsJSON, _, err = journalJSON(vars); err != nil {
			c.varsJSON = json.RawMessage("{}")
		}
		c.nodes, c.bodies = topAddrs(w), bodyAddrs(w)
	})
	return &p.consts
}

// Locks are the component versions and plugin binaries the program's plan locked, by local
// name; empty when the plan has none for this workflow (a sub-workflow's blocks are not in its
// parent's plan, and a plan that cannot be read locks nothing: resolution then finds the
// newest match).
func (p *Program) Locks() plan.Locks {
	p.locksOnce.Do(func() {
		if len(p.Plan) == 0 {
			return
		}
		saved, err := plan.Decode("the run's plan", p.Plan)
		if err != nil || saved.Plan == nil || saved.Plan.Workflow != p.Workflow.Name {
			return
		}
		p.locks = plan.Locks{Components: saved.Components, Plugins: saved.Plugins}
	})
	return p.locks
}

// ProgramFromPlan rebuilds a program from a plan blob (plan.Encode: a saved plan file, or what
// `fuscia apply` sends to the serve that owns the store): the workflow is loaded from the
// plan's sources with the plan's variable values.
func ProgramFromPlan(blob []byte) (*Program, error) {
	return programFromPlan(blob, "", false)
}

// programFromPlan loads the workflow of plan blob: the file it names (file, when given, names
// the run's own file among the plan's sources), with the plan's variable values unless the run
// is a sub-workflow's (child), whose variables are its call's inputs.
func programFromPlan(blob []byte, file string, child bool) (*Program, error) {
	saved, err := plan.Decode("the plan", blob)
	if err != nil {
		return nil, err
	}
	if file == "" {
		file = saved.Workflow
	}
	w, _, diags, err := saved.LoadWorkflow(file, child)
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return nil, fmt.Errorf("load %s from the plan: %s", file, diagMessage(diags))
	}
	p := NewProgram(w, blob)
	// Locks would decode the blob a second time for what saved holds already.
	p.locksOnce.Do(func() {
		if saved.Plan != nil && saved.Plan.Workflow == w.Name {
			p.locks = plan.Locks{Components: saved.Components, Plugins: saved.Plugins}
		}
	})
	return p, nil
}

// NewProgram wraps a checked workflow and its saved-plan bytes.
func NewProgram(w *lang.Workflow, planBytes []byte) *Program {
	sum := sha256.Sum256(planBytes)
	return &Program{Workflow: w, Plan: planBytes, Digest: "sha256:" + hex.EncodeToString(sum[:])}
}

// NewProgramLocked is NewProgram for the caller that made planBytes from pl (plan.Encode): Locks
// returns pl's locks as Decode would read them back from planBytes, without inflating, checking
// and decoding the whole plan again, which cost a one-shot apply 10-15 µs per node
// (docs/performance.md, "Start-up and one-shot apply").
func NewProgramLocked(w *lang.Workflow, planBytes []byte, pl *plan.Plan) *Program {
	p := NewProgram(w, planBytes)
	if pl == nil || pl.Workflow != w.Name {
		return p
	}
	if locks, err := savedLocks(pl); err == nil {
		p.locksOnce.Do(func() { p.locks = locks })
	}
	return p
}

// savedLocks are pl's locks as a saved plan keeps them: plan.Encode writes them as JSON and
// Decode reads them back, which keeps only their JSON fields.
func savedLocks(pl *plan.Plan) (plan.Locks, error) {
	var saved, out struct {
		Components map[string]plan.ComponentLock `json:"components"`
		Plugins    map[string]plan.PluginLock    `json:"plugins"`
	}
	saved.Components = make(map[string]plan.ComponentLock, len(pl.Components))
	for name, c := range pl.Components {
		saved.Components[name] = *c
	}
	saved.Plugins = make(map[string]plan.PluginLock, len(pl.Plugins))
	for name, pg := range pl.Plugins {
		saved.Plugins[name] = *pg
	}
	raw, err := json.Marshal(saved)
	if err != nil {
		return plan.Locks{}, err
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return plan.Locks{}, err
	}
	return plan.Locks{Components: out.Components, Plugins: out.Plugins}, nil
}

// StartOptions are the per-run choices of Start.
type StartOptions struct {
	// Trigger says what started the run; Type and Name default to the workflow's only manual
	// trigger, Payload to {}.
	Trigger journal.Trigger
	// Parallelism overrides the workflow's max_parallel when > 0.
	Parallelism int
	// ID, when set, is the execution id the run starts under, from NewExecutionID: a caller
	// that records the id before the run exists (a trigger's bookkeeping) can tell after a
	// crash whether the run was started. Start refuses an id the store already has; two
	// concurrent Starts with one id are the caller's bug.
	ID string
	// Observer receives progress events; it is called from the run's goroutines one at a time
	// and must not block for long.
	Observer func(Event)
	// cancel stops the run as soon as its state is rebuilt (Engine.Cancel of a run nobody runs).
	cancel bool

	// Admit, when set, is called on the run's goroutine before it schedules anything, and
	// blocks until the run may go on (max_concurrent_runs). Its ctx ends when the run is
	// cancelled or the engine drains; the run then goes on to end at once. release is called
	// when the run's loop has ended (finished or detached).
	Admit func(ctx context.Context) (release func())
	// Admitted, when set instead of Admit, is the release of a slot the caller holds already
	// (its gate granted the run at once): the run goes on without a wait, and Admitted is
	// called as a release from Admit would be. Without a wait there is nothing for a
	// cancellation or the drain to end, so the run saves Admit's context and its watch on the
	// drain (per run, a context and a registration among the drain's; docs/performance.md, item 4,
	// session 23).
	Admitted func()

	parent     *Run
	parentNode string
}

// ErrUnknownExecution is returned for an execution id the store does not have.
var ErrUnknownExecution = journal.ErrNotFound

// Start journals a new run of prog and starts it. The run goes on after ctx is done only if ctx
// is not cancelled: cancelling ctx cancels the run.
func (e *Engine) Start(ctx context.Context, prog *Program, opts StartOptions) (*Run, error) {
	if e.isDraining() {
		return nil, ErrDraining
	}
	if opts.ID != "" {
		if err := e.checkNewID(opts.ID); err != nil {
			return nil, err
		}
	}
	r, err := e.newRun(ctx, prog, opts, opts.ID)
	if err != nil {
		return nil, err
	}
	if err := r.begin(ctx); err != nil {
		r.release()
		return nil, err
	}
	e.launch(r)
	return r, nil
}

func (e *Engine) launch(r *Run) {
	e.mu.Lock()
	e.runs[r.id] = r
	e.mu.Unlock()
	e.wg.Add(1)
	e.act.Busy() // the loop's first turn; Idle when the run has ended, after its done hooks
	go func() {
		// Before anything, while the copy costs one frame: the loop's evaluation needs 16 KiB.
		stackgrow.Reserve8K()
		defer e.wg.Done()
		defer e.act.Idle()
		release := r.opts.Admitted
		if release == nil && r.opts.Admit != nil {
			actx, stop := context.WithCancel(r.ctx)
			r.admitMu.Lock()
			r.admitStop = stop
			r.admitMu.Unlock()
			unwatch := context.AfterFunc(e.drainCtx, stop)
			if r.cancelRequested.Load() {
				stop()
			}
			release = r.opts.Admit(actx)
			unwatch()
			stop()
		}
		top := r.opts.parent == nil
		if top {
			e.cfg.Metrics.RunStarted(context.Background(), r.wf.Name)
		}
		r.loop()
		if release != nil {
			release()
		}
		if top {
			final := r.finalStatus
			if r.detached != "" {
				final = ""
			}
			e.cfg.Metrics.RunEnded(context.Background(), r.wf.Name, final)
		}
		e.mu.Lock()
		delete(e.runs, r.id)
		e.mu.Unlock()
		// Done closes only once the run is no longer active here, so that whoever waited for it
		// finds it in the store, not in this engine (Cancel, Resume).
		close(r.done)
		r.runDoneHooks()
		if e.cfg.OnRunEnd != nil {
			e.cfg.OnRunEnd(r)
		}
	}()
}

// ErrDraining is returned by Start and Resume once Drain began.
var ErrDraining = errors.New("fuscia is shutting down: no run starts")

func (e *Engine) isDraining() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.draining
}

// Drain prepares a shutdown: no run starts any more, and the active ones start no new task
// attempt or sub-workflow; attempts under way may finish until ctx ends, after which they are
// interrupted (journaled as such, not as failures). Every run then ends detached
// (DetachedInterrupted) unless it finished first; resume continues them. Drain returns when
// every run's loop has ended.
func (e *Engine) Drain(ctx context.Context) {
	e.mu.Lock()
	e.draining = true
	runs := e.activeLocked()
	e.mu.Unlock()
	e.drainStop()
	for _, r := range runs {
		r.post(r.drain)
	}
	done := make(chan struct{})
	go func() {
		e.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	e.mu.Lock()
	runs = e.activeLocked()
	e.mu.Unlock()
	for _, r := range runs {
		r.post(r.interrupt)
	}
	<-done
}

func (e *Engine) activeLocked() []*Run {
	runs := make([]*Run, 0, len(e.runs))
	for _, r := range e.runs {
		runs = append(runs, r)
	}
	return runs
}

// Active returns the run with id if this engine is running it.
func (e *Engine) Active(id string) *Run {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.runs[id]
}

// Cancel cancels a run this engine is running. A run that is not active here but unfinished in
// the store (parked at its waits, interrupted, or its process died) is resumed only to be
// cancelled at once — its waits and pending nodes end cancelled and the run finishes as a
// cancelled run does — or, if it cannot be resumed, marked cancelled in the journal.
func (e *Engine) Cancel(ctx context.Context, id string) error {
	for {
		if r := e.Active(id); r != nil {
			if r.requestCancel() {
				return nil
			}
			// Its loop detached (parked) just before: once it has left the engine, cancel it
			// the way a parked run is cancelled, below.
			select {
			case <-r.Done():
			case <-ctx.Done():
				return fmt.Errorf("cancel execution %s: %w", id, ctx.Err())
			}
		}
		sum, err := e.cfg.Store.Summary(id)
		if err != nil {
			return err
		}
		if journal.Finished(sum.Status) {
			return fmt.Errorf("execution %s already ended: %s", id, sum.Status)
		}
		if sum.Parent == nil || *sum.Parent == "" {
			r, err := e.Resume(ctx, id, ResumeOptions{cancel: true})
			if err == nil {
				select {
				case <-r.Done():
					return nil
				case <-ctx.Done():
					return fmt.Errorf("cancel execution %s: %w", id, ctx.Err())
				}
			}
			if e.Active(id) != nil {
				// Resumed by someone else meanwhile: cancel that run, which may itself detach
				// before it takes the cancel, when the next round resumes it here.
				continue
			}
			e.cfg.Logger.Warn("the run cannot be resumed to cancel it; marking it cancelled", "execution_id", id, "error", err)
		}
		return e.append(ctx, id, true, journal.Entry{Type: journal.RunFinished, Status: journal.StatusCancelled,
			Error: &outcome.Error{Kind: outcome.Cancelled, Message: "cancelled while no process was running it"}})
	}
}

func newID() string { return ulid.Make().String() }

// NewExecutionID mints an execution id for StartOptions.ID.
func NewExecutionID() string { return newID() }

// ErrExecutionExists is returned by Start for a StartOptions.ID the store already has.
var ErrExecutionExists = errors.New("an execution with this id already exists")

// checkNewID accepts id for a new run: a well-formed id the store does not have. The journal
// takes a run_started entry as the first of a fresh id, so reusing one would overwrite a run.
func (e *Engine) checkNewID(id string) error {
	if _, err := ulid.ParseStrict(id); err != nil {
		return fmt.Errorf("execution id %q: %w", id, err)
	}
	_, err := e.cfg.Store.Summary(id)
	switch {
	case err == nil:
		return fmt.Errorf("execution %s: %w", id, ErrExecutionExists)
	case errors.Is(err, journal.ErrNotFound):
		return nil
	default:
		return fmt.Errorf("execution %s: %w", id, err)
	}
}

// marshal encodes v for the journal; v is always a plain value built here, so an error is a bug
// reported as such rather than a panic.
func marshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": "unencodable value: " + err.Error()})
	}
	return b
}

var errStopped = errors.New("run stopped")

// ActiveCount is the number of runs this engine is running.
func (e *Engine) ActiveCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.runs)
}

// noSpan is a run's or an attempt's span while tracing is off: it records nothing.
var noSpan = trace.SpanFromContext(context.Background())
