package host

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/fuscia/fuscia/engine/cluster"
	"github.com/fuscia/fuscia/engine/internal/runtime/builtins"
	"github.com/fuscia/fuscia/engine/internal/runtime/plugins"
	"github.com/fuscia/fuscia/engine/internal/runtime/wasm"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/redact"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/engine/telemetry"
	"github.com/fuscia/fuscia/hostabi"
	"github.com/fuscia/fuscia/internal/version"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
	"github.com/fuscia/fuscia/plugin"
)

// WorkerOptions are `fuscia worker`'s choices.
type WorkerOptions struct {
	// Home holds the worker's installed components (fetched from the cluster), its compile
	// and schema caches and its plugins (Home/plugins). A worker has no state store.
	Home       string
	PluginDirs []string
	Cluster    cluster.Config
	// Pools, Concurrency and ShutdownGrace: cluster.WorkerOptions.
	Pools         []string
	Concurrency   int
	ShutdownGrace time.Duration

	LogFormat     string
	LogLevel      slog.Level
	Stderr        io.Writer
	Getenv        func(string) string
	Redact        *redact.Set
	PluginOptions plugin.Options
	// CompileElsewhere is Options.CompileElsewhere for the worker's Wasm host. It also bounds
	// the worker's stop: a Go component's snapshot, built in the background after its first
	// load, is built in that child, which the stop kills; built in this process, a compile
	// under way cannot be stopped and the stop waits for it.
	CompileElsewhere func(hostabi.CompileJob) error
	// OnJoined is told the worker's id once it joined the cluster (bound to its pools' work
	// streams), not before.
	OnJoined func(id string)
}

// RunWorker runs a worker until ctx ends: it connects to NATS (an error wrapping ErrCluster
// when it cannot, or when the coordinator refuses it: cluster.ErrRefused), waits for the
// coordinator to have set the cluster up, and takes the attempts of its pools with the
// process's runtimes, whose KV and artifacts are the cluster's.
func RunWorker(ctx context.Context, o WorkerOptions) error {
	tel, err := telemetry.Setup(ctx, telemetry.Config{
		Getenv: o.Getenv, Stderr: o.Stderr, LogFormat: o.LogFormat, LogLevel: o.LogLevel,
		ServiceName: "fuscia-worker", Version: version.Fuscia, Redact: o.Redact,
	})
	if err != nil {
		return err
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()
	log := tel.Logger
	conn, err := cluster.Connect(ctx, o.Cluster, "fuscia worker", log)
	if err != nil {
		return clusterErr{err}
	}
	defer conn.Close()
	if err := cluster.WaitForCoordinator(ctx, conn, log); err != nil {
		return clusterErr{err}
	}
	kv, arts, err := conn.Stores(ctx)
	if err != nil {
		return clusterErr{err}
	}
	po := o.PluginOptions
	if po.Logger == nil {
		po.Logger = log
	}
	if po.CacheDir == "" {
		po.CacheDir = filepath.Join(o.Home, "cache")
	}
	manager := plugin.NewManager(po)
	defer func() { _ = manager.Close() }()
	runner := builtin.New(builtin.Options{})
	defer runner.Close()
	components := filepath.Join(o.Home, "components")
	comps := &wasm.Dispatcher{Dir: components, Store: kv, Artifacts: arts,
		// Fuel is always metered: the components a worker will run are not known at its start.
		HostOptions: hostabi.Options{CacheDir: filepath.Join(o.Home, "cache"), Fuel: true}}
	if o.CompileElsewhere != nil {
		comps.HostOptions.CompileElsewhere = loggedCompiler(o.CompileElsewhere, log)
	}
	defer func() { _ = comps.Close() }()
	env := plan.Env{Home: o.Home, PluginDirs: o.PluginDirs, Digests: manager.Digests()}
	plugs := &plugins.Dispatcher{Manager: manager, Env: env, Store: kv, Artifacts: arts}
	w := cluster.NewWorker(conn, cluster.WorkerOptions{
		Pools: o.Pools, Concurrency: o.Concurrency, Home: o.Home, PluginDirs: o.PluginDirs, Digests: env.Digests,
		ShutdownGrace: o.ShutdownGrace, Logger: log, Redact: o.Redact, OnJoined: o.OnJoined,
		Tasks: task.ByKind{lang.UsesBuiltin: builtins.New(runner), lang.UsesComponent: comps, lang.UsesPlugin: plugs},
	})
	if err := w.Run(ctx); err != nil && ctx.Err() == nil {
		return clusterErr{err}
	}
	return nil
}
