package host

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/internal/metrics"
	"github.com/fuscia/fuscia/engine/internal/runtime/plugins"
	"github.com/fuscia/fuscia/engine/internal/runtime/wasm"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/local"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/redact"
	"github.com/fuscia/fuscia/engine/serve"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/engine/telemetry"
	"github.com/fuscia/fuscia/hostabi"
	"github.com/fuscia/fuscia/internal/version"
	"github.com/fuscia/fuscia/lang/builtin"
	"github.com/fuscia/fuscia/plugin"
)

// Host is a running Fuscia process's engine and everything around it: telemetry, the task
// runtimes (builtins, the Wasm host, the plugin manager), the ownership of the state store
// with its API socket, the engine on that store, and, for `fuscia serve`, the serve.Server and
// its metrics. New, then Open, then Close; see the package documentation.
type Host struct {
	opts Options
	env  plan.Env

	// Set by New, read-only after it: the serve parts, nil unless Options.Serve.
	server   *serve.Server
	metrics  *telemetry.Metrics
	recorder *metrics.Recorder

	// Set by Open, read-only once it returned. Close releases the ones that are not nil.
	tel     *telemetry.Telemetry
	manager *plugin.Manager // Options.Plugins, or the one Open started
	runner  *builtin.Runner
	comps   *wasm.Dispatcher
	plugins *plugins.Dispatcher
	owner   *local.Owner
	cluster *clusterParts // Options.Cluster's, set by Open

	closeOnce sync.Once
	closeErr  error
}

// New prepares a host without touching the store. With Options.Serve it builds serve's
// metrics and its serve.Server (Server), whose Handler already answers 503 "starting", so
// that a listener can be bound before Open waits for the store. New fails only when serve's
// metrics cannot be set up; then it has closed Options.Plugins. After New, call Close once,
// whether Open is called or succeeds or not.
func New(opts Options) (*Host, error) {
	h := &Host{opts: opts, env: plan.Env{Home: opts.Home, PluginDirs: opts.PluginDirs, Digests: opts.Plugins.Digests()}, manager: opts.Plugins}
	if opts.Serve == nil {
		return h, nil
	}
	met, err := telemetry.NewMetrics(telemetry.Config{ServiceName: "fuscia", Version: version.Fuscia, Getenv: opts.Getenv})
	if err != nil {
		_ = h.Close()
		return nil, err
	}
	h.metrics = met
	if h.recorder, err = metrics.New(met.Meter); err != nil {
		_ = h.Close()
		return nil, err
	}
	s := opts.Serve
	cfg := serve.Config{
		Paths: s.Paths, Metrics: h.recorder, Now: s.Now, WebhookWait: s.WebhookWait,
		Retain: s.Retain, Prune: h.prune, Load: h.loadServed,
	}
	if opts.Cluster != nil {
		cfg.Workers = h.workers
	}
	h.server = serve.New(cfg)
	return h, nil
}

// Open sets up telemetry and the task runtimes, then takes ownership of the store under
// Options.Home and builds the engine on it. While another process holds the store it waits,
// telling Options.OnWait or Options.OnOwned once, until the store is free or ctx ends (the
// error then wraps ctx's). A failed Open leaves the releasing to Close.
func (h *Host) Open(ctx context.Context) error {
	o := h.opts
	tel, err := telemetry.Setup(ctx, telemetry.Config{
		Getenv: o.Getenv, Stderr: o.Stderr, LogFormat: o.LogFormat, LogLevel: o.LogLevel,
		ServiceName: "fuscia", Version: version.Fuscia, Redact: o.Redact,
	})
	if err != nil {
		return err
	}
	h.tel = tel
	if h.manager == nil {
		po := o.PluginOptions
		if po.Logger == nil {
			po.Logger = tel.Logger
		}
		if po.CacheDir == "" {
			po.CacheDir = filepath.Join(o.Home, "cache")
		}
		h.manager = plugin.NewManager(po)
	}
	components := filepath.Join(o.Home, "components")
	hostOpts := hostabi.Options{CacheDir: filepath.Join(o.Home, "cache"), Fuel: wasm.NeedsFuel(components, o.Workflows...)}
	if rec := h.recorder; rec != nil {
		hostOpts.OnInstantiate = func(d time.Duration) { rec.WasmInstantiate(context.Background(), d) }
	}
	if o.CompileElsewhere != nil {
		hostOpts.CompileElsewhere = loggedCompiler(o.CompileElsewhere, tel.Logger)
	}
	if h.server == nil {
		// A one-shot run would exit before a Go component's snapshot paid for its build: it
		// uses one a serve left in the cache, and builds none (hostabi.SnapshotCachedOnly).
		hostOpts.Snapshots = hostabi.SnapshotCachedOnly
	}
	h.runner = builtin.New(builtin.Options{})
	h.comps = &wasm.Dispatcher{Dir: components, HostOptions: hostOpts}
	h.plugins = &plugins.Dispatcher{Manager: h.manager, Env: h.env}

	ocfg := local.OwnerConfig{
		Home: o.Home, Command: o.Command, Logger: tel.Logger, StoreSizes: o.StoreSizes,
		StoreHoldRelaxed: o.StoreHoldRelaxed, OnWait: o.OnWait, NewEngine: h.newEngine,
	}
	if o.Cluster != nil {
		if err := h.openCluster(ctx); err != nil {
			return err
		}
		ocfg.Artifacts, ocfg.Forget = h.cluster.arts, h.forget
	}
	if h.server != nil {
		ocfg = h.server.OwnerConfig(ocfg)
	}
	if h.owner, err = own(ctx, ocfg, o.OnOwned); err != nil {
		return err
	}
	if h.cluster != nil {
		if err := h.startCluster(ctx); err != nil {
			return err
		}
		if o.Cluster.LocalWorker {
			h.startLocalWorker()
		}
	}
	if h.server != nil {
		h.server.SetLogger(tel.Logger)
		_ = h.recorder.ObservePluginRestarts(func() int64 { return int64(h.manager.Restarts()) })
	}
	return nil
}

// newEngine is local.OwnerConfig.NewEngine: the engine on the opened store, with a runtime
// for each kind of `uses`. A serving host's engine is the server's (serve.Server.NewEngine),
// which adds what serving needs of it.
func (h *Host) newEngine(st *journal.Store, arts artifact.Store) *engine.Engine {
	var tasks task.Dispatcher = h.localTasks()
	if h.cluster != nil {
		// The runtimes keep their KV and artifacts in the cluster (openCluster); the
		// coordinator sends remote attempts to workers and the rest to them.
		tasks = h.cluster.coord
	} else {
		h.comps.Store, h.comps.Artifacts = st, arts
		h.plugins.Store, h.plugins.Artifacts = st, arts
	}
	cfg := engine.Config{
		Store: st, Artifacts: arts,
		Tasks:  tasks,
		Tracer: h.tel.Tracer, Logger: h.tel.Logger, Getenv: h.opts.Getenv, Redact: h.opts.Redact,
		BeforeEffect: h.opts.BeforeEffect,
	}
	if h.server != nil {
		return h.server.NewEngine(cfg)
	}
	return engine.New(cfg)
}

// own takes the store. While another apply, resume or serve owns it (it answers on the
// socket), this one waits its turn, saying so once through onOwned, rather than failing: runs
// of one home are serialized, and a second terminal can still read and cancel through the
// owner's socket.
func own(ctx context.Context, cfg local.OwnerConfig, onOwned func(why string)) (*local.Owner, error) {
	said := false
	for {
		owner, err := local.Own(ctx, cfg)
		if !errors.Is(err, local.ErrOwned) {
			return owner, err
		}
		if !said && onOwned != nil {
			said = true
			onOwned(strings.TrimPrefix(err.Error(), local.ErrOwned.Error()+": "))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Engine is the engine on the owned store; nil before Open succeeded.
func (h *Host) Engine() *engine.Engine {
	if h.owner == nil {
		return nil
	}
	return h.owner.Engine
}

// Store is the owned state store; nil before Open succeeded.
func (h *Host) Store() *journal.Store {
	if h.owner == nil {
		return nil
	}
	return h.owner.Store
}

// Owner is the ownership of the store, with its API (Owner.Handler); nil before Open
// succeeded.
func (h *Host) Owner() *local.Owner { return h.owner }

// Logger is the process's log; nil before Open set up telemetry.
func (h *Host) Logger() *slog.Logger {
	if h.tel == nil {
		return nil
	}
	return h.tel.Logger
}

// Server is the serve.Server of a serving host (Options.Serve); nil otherwise.
func (h *Host) Server() *serve.Server { return h.server }

// MetricsHandler serves a serving host's Prometheus metrics, scrubbed of the process's
// secrets (Options.Redact); nil when the host does not serve.
func (h *Host) MetricsHandler() http.Handler {
	if h.metrics == nil {
		return nil
	}
	return redact.HTTP(h.metrics.Handler(), h.opts.Redact)
}

// Preload compiles prog's components and starts its plugins before its runs start, so that a
// first compile, seconds long, counts against no task's or poll's timeout. Call it after Open.
func (h *Host) Preload(ctx context.Context, prog *engine.Program) {
	h.comps.Preload(prog.Workflow)
	h.plugins.Preload(ctx, prog.Workflow, prog.Locks().Plugins)
}

// Close waits for every run of the engine, releases the store, stops the runtimes (plugin
// processes included), flushes the spans and stops the metrics. Runs are not cancelled: end
// them first (a run's own end, or serve.Server.Stop). It releases whatever New and Open
// made, so it is right after a failed Open too; later calls return the first's result.
func (h *Host) Close() error {
	h.closeOnce.Do(func() {
		var errs []error
		keep := func(err error) {
			if err != nil {
				errs = append(errs, err)
			}
		}
		if h.owner != nil {
			h.owner.Engine.Wait()
		}
		// The local worker stops after the runs ended: their attempts may be its own.
		h.closeCluster()
		if h.owner != nil {
			keep(h.owner.Close())
		}
		if h.runner != nil {
			h.runner.Close()
		}
		if h.comps != nil {
			keep(h.comps.Close())
		}
		if h.manager != nil {
			keep(h.manager.Close())
		}
		keep(h.tel.Shutdown(context.Background()))
		if h.metrics != nil {
			// Nothing is exported from it (Prometheus reads it): nothing to lose.
			_ = h.metrics.Shutdown(context.Background())
		}
		if len(errs) > 0 {
			h.closeErr = errs[0]
		}
	})
	return h.closeErr
}
