// Package serve is `fuscia serve`: it keeps workflows loaded (reloading them when their files
// change), fires their schedule, poll and webhook triggers, bounds their concurrent runs,
// parks runs at their waits and resumes them when due or answered, and resumes unfinished runs
// at start. The store and its API socket are engine/local's; the process around it is
// engine/host's, which applies what a Server needs of its engine and owner (wiring.go).
package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/internal/metrics"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/local"
	"github.com/fuscia/fuscia/lang"
)

// Config is what a Server needs. Load is required.
type Config struct {
	// Load loads, checks and plans a workflow file whose content src the server has read; the
	// error carries its diagnostics as text.
	Load func(ctx context.Context, file string, src []byte) (*engine.Program, error)
	// Paths are the files and directories given to serve.
	Paths   []string
	Logger  *slog.Logger
	Metrics *metrics.Recorder
	// Now is the clock of schedules; nil means time.Now.
	Now func() time.Time
	// WebhookWait bounds a webhook's ?wait=true (default 60 s).
	WebhookWait time.Duration
	// WebhookTriggerTimeout bounds the call of a webhook's `uses` trigger (default 30 s).
	WebhookTriggerTimeout time.Duration
	// ReloadInterval is how often files are looked at for changes (default 1 s).
	ReloadInterval time.Duration
	// MissedWindow is how late a schedule occurrence missed while serve was down may still fire
	// at start (default 1 min).
	MissedWindow time.Duration
	// Retain, when above 0, prunes with Prune the runs that finished longer ago than it (by
	// Now), at Start and then every tenth of it (retention.go). 0 keeps every run.
	Retain time.Duration
	// Prune deletes the runs that finished before a time, with their artifacts, key-value
	// state and log lines (local.Owner.Prune); needed with Retain.
	Prune func(ctx context.Context, before time.Time) (local.Pruned, error)
	// Workers reports the cluster this serve coordinates (-nats): its live workers and the
	// attempts waiting for one, for GET /v1/workers (workers.go). nil when serve coordinates
	// none: the endpoint then answers 409 no_cluster.
	Workers func(ctx context.Context) (local.WorkerList, error)
}

// Server is a running `fuscia serve`.
type Server struct {
	cfg    Config
	eng    *engine.Engine
	store  *journal.Store
	logger *slog.Logger

	ctx    context.Context // ends at Stop: triggers, watcher and the wait index stop
	cancel context.CancelFunc
	bg     sync.WaitGroup // the watcher and the wait index

	mu        sync.Mutex
	files     map[string]*loaded // by file
	workflows map[string]*loaded // by workflow name
	gates     map[string]*gate   // by workflow name
	hooks     map[string]*hook   // webhook routes by path
	waiters   map[string][]chan struct{}
	// followers take the events of the runs a CLI's apply streams (applyPlan) once a run
	// parked and this server resumed it: the resumed run reports to them as the first did.
	followers map[string][]*eventQueue
	started   bool // Start loaded the workflows and resumed the runs: readiness.go
	stopped   bool

	// loadErrors are the diagnostics of the files whose last load failed, by file, until
	// they load or are gone (loaderrors.go). Under mu.
	loadErrors map[string][]Diagnostic
	// conflicted are the files refused because of another file (refusedLocked), tried again
	// when a file is loaded or unloaded. Guarded by mu.
	conflicted map[string]bool

	// front is what Handler serves once ServeAPI gave it the API; nil until then (readiness.go).
	front atomic.Pointer[http.Handler]
	// missing holds the files the watcher found gone at its last look (removed at the next one
	// if still gone). Owned by the watcher goroutine.
	missing map[string]bool

	parked *parkedIndex
	// bodies is how many bytes of webhook bodies are being read (webhook.go, bodyBudget).
	bodies atomic.Int64
	// web is what the API's token check and the web UI share: sessions, the failure limiter
	// (webui.go).
	web *webAuth
}

// New returns a Server; Start starts it.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.WebhookWait <= 0 {
		cfg.WebhookWait = 60 * time.Second
	}
	if cfg.WebhookTriggerTimeout <= 0 {
		cfg.WebhookTriggerTimeout = defaultWebhookTriggerTimeout
	}
	if cfg.ReloadInterval <= 0 {
		cfg.ReloadInterval = time.Second
	}
	if cfg.MissedWindow <= 0 {
		cfg.MissedWindow = time.Minute
	}
	s := &Server{
		cfg: cfg, logger: cfg.Logger,
		files: map[string]*loaded{}, workflows: map[string]*loaded{}, gates: map[string]*gate{},
		hooks: map[string]*hook{}, waiters: map[string][]chan struct{}{}, followers: map[string][]*eventQueue{}, missing: map[string]bool{},
		loadErrors: map[string][]Diagnostic{}, conflicted: map[string]bool{},
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.parked = newParkedIndex(s.resumeParked)
	s.web = newWebAuth()
	return s
}

// Attach gives the server its engine and store, before its API is served. The engine must be
// built with EngineConfig's settings: NewEngine builds and attaches one that is.
func (s *Server) Attach(eng *engine.Engine, st *journal.Store) {
	s.eng, s.store = eng, st
}

// Start loads the workflows, resumes the unfinished runs, and starts the triggers, the file
// watcher and the wait index. It returns the number of workflows loaded; the files that failed
// are logged (and retried when they change). Until it returns, the webhooks, the manual-start
// API and the health check answer 503 "starting" (readiness.go).
func (s *Server) Start(ctx context.Context) (int, error) {
	files, err := workflowFiles(s.cfg.Paths)
	if err != nil {
		return 0, err
	}
	for _, f := range files {
		s.loadFile(ctx, f, true, false)
	}
	if s.cfg.Metrics != nil {
		_ = s.cfg.Metrics.ObserveQueueDepth(s.queueDepths)
	}
	if err := s.resumeUnfinished(ctx); err != nil {
		return 0, err
	}
	s.bg.Add(2)
	go func() { defer s.bg.Done(); s.watch() }()
	go func() { defer s.bg.Done(); s.parked.run(s.ctx) }()
	s.startRetention()
	s.mu.Lock()
	n := len(s.workflows)
	s.started = true
	s.mu.Unlock()
	return n, nil
}

// Stop stops the triggers, the watcher and the wait index, then drains the engine: running
// attempts get until grace ends to finish, the rest is journaled as interrupted.
func (s *Server) Stop(grace context.Context) {
	s.mu.Lock()
	s.stopped = true
	all := make([]*loaded, 0, len(s.files))
	for _, l := range s.files {
		all = append(all, l)
	}
	s.mu.Unlock()
	s.cancel()
	for _, l := range all {
		l.stopTriggers()
	}
	s.bg.Wait()
	s.eng.Drain(grace)
}

// gateOf returns the concurrency gate of workflow name.
func (s *Server) gateOf(name string) *gate {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gates[name]
	if g == nil {
		g = &gate{}
		s.gates[name] = g
	}
	return g
}

func (s *Server) queueDepths() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int64, len(s.gates))
	for name, g := range s.gates {
		out[name] = int64(g.depth())
	}
	return out
}

// Started is what a trigger's start of a run came to.
type Started struct {
	ID     string
	Queued bool   // held back by max_concurrent_runs with on_overlap = "queue"
	Skip   string // why on_overlap = "skip" refused it ("" when it started)
}

// ErrSkipped is the error start returns when on_overlap = "skip" refused a run.
var ErrSkipped = errors.New("skipped")

// start starts a run of l's program for trigger t, under its workflow's max_concurrent_runs,
// and under execution id id unless it is empty (engine.StartOptions.ID).
func (s *Server) start(l *loaded, t journal.Trigger, id string) (Started, error) {
	w := l.prog.Workflow
	g := s.gateOf(w.Name)
	tk, queued, ok := g.enter(w.Settings.OnOverlap == "skip")
	if !ok {
		reason := fmt.Sprintf("%s already has %d run(s) going (max_concurrent_runs = %d, on_overlap = \"skip\")", w.Name, w.Settings.MaxConcurrentRuns, w.Settings.MaxConcurrentRuns)
		s.cfg.Metrics.TriggerFired(s.ctx, w.Name, t.Name, t.Type, "skipped")
		return Started{Skip: reason}, ErrSkipped
	}
	opts := engine.StartOptions{Trigger: t, ID: id, Admit: tk.wait}
	if !queued {
		opts.Admit, opts.Admitted = nil, tk.granted()
	}
	r, err := s.eng.Start(context.Background(), l.prog, opts)
	if err != nil {
		tk.abandon()
		s.cfg.Metrics.TriggerFired(s.ctx, w.Name, t.Name, t.Type, "error")
		return Started{}, err
	}
	result := "started"
	if queued {
		result = "queued"
	}
	s.cfg.Metrics.TriggerFired(s.ctx, w.Name, t.Name, t.Type, result)
	// Debug: a line per run is noise at thousands of runs a second (docs/serve.md, Logs).
	s.logger.Debug("run started", "execution_id", r.ID(), "workflow", w.Name, "trigger", t.Type+"."+t.Name, "queued", queued)
	return Started{ID: r.ID(), Queued: queued}, nil
}

// RunEnded is the engine's OnRunEnd: a finished run wakes its waiters; a parked one goes to
// the wait index.
func (s *Server) RunEnded(r *engine.Run) {
	switch r.Detached() {
	case engine.DetachedParked:
		s.parked.add(r.ID(), r.Workflow(), r.Due())
		return
	case engine.DetachedInterrupted:
		return
	}
	s.parked.remove(r.ID()) // a parked run cancelled, or resumed by a signal, has ended
	s.mu.Lock()
	ws := s.waiters[r.ID()]
	delete(s.waiters, r.ID())
	s.mu.Unlock()
	for _, ch := range ws {
		close(ch)
	}
}

// awaitEnd returns a channel closed when run id finishes (not when it parks), and a func to
// stop waiting.
func (s *Server) awaitEnd(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.waiters[id] = append(s.waiters[id], ch)
	s.mu.Unlock()
	// It may have finished before the waiter was registered.
	if sum, err := s.store.Summary(id); err == nil && journal.Finished(sum.Status) {
		s.mu.Lock()
		s.dropWaiterLocked(id, ch)
		s.mu.Unlock()
		closed := make(chan struct{})
		close(closed)
		return closed, func() {}
	}
	return ch, func() {
		s.mu.Lock()
		s.dropWaiterLocked(id, ch)
		s.mu.Unlock()
	}
}

func (s *Server) dropWaiterLocked(id string, ch chan struct{}) {
	ws := s.waiters[id]
	for i, c := range ws {
		if c == ch {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(s.waiters, id)
	} else {
		s.waiters[id] = ws
	}
}

// resume continues run id (parked, interrupted, or signalled while nobody ran it) under its
// workflow's gate. A resumed run is never skipped: it was admitted once.
func (s *Server) resume(id, workflow string) error {
	r, err := s.eng.Resume(context.Background(), id, engine.ResumeOptions{Admit: s.gateOf(workflow).admit})
	if err != nil {
		return err
	}
	s.logger.Info("run resumed", "execution_id", r.ID(), "workflow", workflow)
	return nil
}

func (s *Server) resumeParked(id, workflow string) {
	if s.eng.Active(id) != nil {
		return // a signal resumed it meanwhile
	}
	if err := s.resume(id, workflow); err != nil && !errors.Is(err, engine.ErrDraining) && !errors.Is(err, engine.ErrFinished) {
		s.logger.Error("a parked run could not be resumed", "execution_id", id, "workflow", workflow, "error", err)
	}
}

// follow makes q take the events of run id's resumed runs until the returned func is called.
func (s *Server) follow(id string, q *eventQueue) (stop func()) {
	s.mu.Lock()
	s.followers[id] = append(s.followers[id], q)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		qs := slices.DeleteFunc(s.followers[id], func(f *eventQueue) bool { return f == q })
		if len(qs) == 0 {
			delete(s.followers, id)
		} else {
			s.followers[id] = qs
		}
	}
}

// tellFollowers hands ev, an event of a resumed run id, to its followers. The run's
// execution_started is not news to them: they saw the run start.
func (s *Server) tellFollowers(id string, ev engine.Event) {
	if ev.Type == engine.EventExecutionStarted {
		return
	}
	s.mu.Lock()
	qs := s.followers[id]
	s.mu.Unlock()
	for _, q := range qs {
		q.push(ev)
	}
}

// errRunning: Resume of a run this engine is running already.
var errRunning = errors.New("already running")

// Resume continues run id on request (the API): a run parked at its waits, or one nobody runs.
func (s *Server) Resume(id string) error {
	sum, err := s.store.Summary(id)
	if err != nil {
		return err
	}
	if journal.Finished(sum.Status) {
		return fmt.Errorf("%w: %s is %s", engine.ErrFinished, id, sum.Status)
	}
	if s.eng.Active(id) != nil {
		return fmt.Errorf("execution %s is %w", id, errRunning)
	}
	s.parked.remove(id)
	return s.resume(id, sum.Workflow)
}

// Signaled is called when a signal was journaled for a run no process was running: the run
// continues now (unless it ended, or is running again, meanwhile).
func (s *Server) Signaled(id string) {
	err := s.Resume(id)
	if err != nil && !errors.Is(err, engine.ErrDraining) && !errors.Is(err, engine.ErrFinished) && !errors.Is(err, errRunning) {
		s.logger.Error("a signalled run could not be resumed", "execution_id", id, "error", err)
	}
}

// resumeUnfinished resumes, at start, every top-level run the journal has not seen finish:
// interrupted ones (a crash, a kill or a shutdown stopped their process; the store marked them
// when this process opened it) go on, waiting ones park again with their original deadlines
// (and those that fell due meanwhile fire at once). Sub-workflow runs are resumed by their
// parents.
func (s *Server) resumeUnfinished(ctx context.Context) error {
	runs, err := s.store.Unfinished() // newest first
	if err != nil {
		return err
	}
	// Oldest first: they were admitted first.
	for i := len(runs) - 1; i >= 0; i-- {
		sum := runs[i]
		if sum.Parent != nil && *sum.Parent != "" {
			continue
		}
		if err := s.resume(sum.ID, sum.Workflow); err != nil {
			s.logger.Error("an unfinished run could not be resumed", "execution_id", sum.ID, "workflow", sum.Workflow, "error", err)
			continue
		}
	}
	return nil
}

// startManual starts a run of workflow name from the API, with its manual trigger tname (""
// for its first one).
func (s *Server) startManual(name, tname string, payload json.RawMessage) (Started, error) {
	s.mu.Lock()
	l := s.workflows[name]
	s.mu.Unlock()
	if l == nil {
		return Started{}, fmt.Errorf("%w: no workflow %q is loaded", errUnknownWorkflow, name)
	}
	var trig *lang.Trigger
	for _, t := range l.prog.Workflow.Triggers {
		if t.Type == lang.TriggerManual && (tname == "" || t.Name == tname) {
			trig = t
			break
		}
	}
	if trig == nil {
		if tname != "" {
			return Started{}, fmt.Errorf("%w: workflow %s has no manual trigger %q", errNoTrigger, name, tname)
		}
		return Started{}, fmt.Errorf("%w: workflow %s has no manual trigger; add `trigger \"manual\" \"NAME\" {}` to start it from the API", errNoTrigger, name)
	}
	return s.start(l, journal.Trigger{Type: lang.TriggerManual, Name: trig.Name, Payload: payload}, "")
}

var (
	errUnknownWorkflow = errors.New("unknown workflow")
	errNoTrigger       = errors.New("no such trigger")
)

// SetLogger replaces the logger (the process's telemetry exists only once the store is owned).
func (s *Server) SetLogger(l *slog.Logger) { s.logger = l }
