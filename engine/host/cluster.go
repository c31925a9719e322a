package host

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/fuscia/fuscia/engine/cluster"
	"github.com/fuscia/fuscia/engine/cluster/jsstore"
	"github.com/fuscia/fuscia/engine/internal/runtime/builtins"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/local"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/lang"
)

// ClusterOptions make a serving host the coordinator of a cluster on NATS JetStream
// (docs/cluster.md): the attempts of component, plugin and builtin.http tasks go to workers,
// and the host KV and artifacts are the cluster's.
type ClusterOptions struct {
	Config cluster.Config
	// LocalWorker runs a worker of the default pool in this process (-local-worker).
	LocalWorker bool
	// Concurrency is the local worker's (the number of CPUs when 0).
	Concurrency int
}

// ErrCluster is wrapped by Open's error when the cluster cannot be reached or set up.
var ErrCluster = errors.New("cluster")

// clusterErr is an error of the cluster: its text is the cause's, and it is ErrCluster.
type clusterErr struct{ err error }

func (e clusterErr) Error() string        { return e.err.Error() }
func (e clusterErr) Unwrap() error        { return e.err }
func (e clusterErr) Is(target error) bool { return target == ErrCluster }

// clusterParts are a coordinator's: the connection, the dispatcher, the cluster's stores and
// the local worker.
type clusterParts struct {
	conn  *cluster.Conn
	coord *cluster.Coordinator
	kv    *jsstore.KV
	arts  *jsstore.Artifacts

	stopWorker context.CancelFunc
	workerDone chan struct{}
	closeOnce  sync.Once
}

// openCluster connects to NATS, sets the cluster up and opens its stores; the runtimes keep
// their KV there.
func (h *Host) openCluster(ctx context.Context) error {
	o := h.opts.Cluster
	log := h.tel.Logger
	conn, err := cluster.Connect(ctx, o.Config, "fuscia serve (coordinator)", log)
	if err != nil {
		return clusterErr{err}
	}
	cp := &clusterParts{conn: conn}
	h.cluster = cp
	var onRedelivery func()
	if rec := h.recorder; rec != nil {
		onRedelivery = func() { rec.Redelivery(context.Background()) }
	}
	// Prepared, not started: startCluster starts it once the store is this process's.
	cp.coord, err = cluster.PrepareCoordinator(ctx, conn, cluster.CoordinatorOptions{
		Local: h.localTasks(), ComponentsDir: h.comps.Dir, Pools: poolsOf(h.opts.Workflows),
		Logger: log, OnRedelivery: onRedelivery, Redact: h.opts.Redact,
	})
	if err != nil {
		return clusterErr{err}
	}
	if cp.kv, cp.arts, err = conn.Stores(ctx); err != nil {
		return clusterErr{err}
	}
	h.comps.Store, h.comps.Artifacts = cp.kv, cp.arts
	h.plugins.Store, h.plugins.Artifacts = cp.kv, cp.arts
	return nil
}

// startCluster starts the coordinator openCluster prepared: it takes the cluster's results
// from now on, so only once this process owns the store (a serve waiting for another's store
// took that serve's results, and their runs waited for their attempts' timeouts).
func (h *Host) startCluster(ctx context.Context) error {
	cp := h.cluster
	if err := cp.coord.Start(ctx); err != nil {
		return clusterErr{err}
	}
	if h.recorder != nil {
		_ = h.recorder.ObserveCluster(cp.coord.WorkersByPool, cp.coord.QueueDepth)
	}
	h.tel.Logger.Info("coordinating a cluster on NATS", "prefix", cp.conn.Prefix(), "key_id", h.opts.Cluster.Config.Key.ID())
	return nil
}

// workersTimeout bounds the questions to NATS of one GET /v1/workers.
const workersTimeout = 10 * time.Second

// workers is serve.Config.Workers: the cluster's live workers and the attempts waiting for
// one, by pool. The server calls it from its API, which is served only after Open set up the
// cluster.
func (h *Host) workers(ctx context.Context) (local.WorkerList, error) {
	cp := h.cluster
	if cp == nil || cp.coord == nil {
		return local.WorkerList{}, errors.New("the cluster is not set up yet")
	}
	ctx, cancel := context.WithTimeout(ctx, workersTimeout)
	defer cancel()
	ws, err := cp.coord.Workers(ctx)
	if err != nil {
		return local.WorkerList{}, err
	}
	if ws == nil {
		ws = []cluster.WorkerInfo{}
	}
	return local.WorkerList{Workers: ws, QueueDepth: cp.coord.QueueDepth(ctx)}, nil
}

// localTasks are the process's own runtimes, one per kind of `uses`.
func (h *Host) localTasks() task.ByKind {
	return task.ByKind{lang.UsesBuiltin: builtins.New(h.runner), lang.UsesComponent: h.comps, lang.UsesPlugin: h.plugins}
}

// poolsOf lists the pools that workflows name.
func poolsOf(ws []*lang.Workflow) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range ws {
		for _, n := range w.Nodes {
			if n.Task != nil && n.Task.Pool != "" && !seen[n.Task.Pool] {
				seen[n.Task.Pool] = true
				out = append(out, n.Task.Pool)
			}
		}
	}
	return out
}

// startLocalWorker runs a worker of the default pool in this process, on the host's
// runtimes.
func (h *Host) startLocalWorker() {
	cp, o := h.cluster, h.opts.Cluster
	w := cluster.NewWorker(cp.conn, cluster.WorkerOptions{
		Pools: []string{cluster.DefaultPool}, Concurrency: o.Concurrency, Home: h.opts.Home,
		// No Redact: the engine of this process added the runs' secrets to its set already.
		PluginDirs: h.opts.PluginDirs, Digests: h.env.Digests, Tasks: h.localTasks(), Logger: h.tel.Logger, Local: true,
	})
	ctx, cancel := context.WithCancel(context.Background())
	cp.stopWorker, cp.workerDone = cancel, make(chan struct{})
	go func() {
		defer close(cp.workerDone)
		if err := w.Run(ctx); err != nil && ctx.Err() == nil {
			h.tel.Logger.Error("the coordinator's local worker stopped: " + err.Error())
		}
	}()
}

// forget deletes what the cluster keeps of pruned runs: their KV and results (their
// artifacts go through the owner's artifact store, which is the cluster's).
func (h *Host) forget(ctx context.Context, ids ...string) error {
	cp := h.cluster
	for _, id := range ids {
		if err := cp.kv.DeleteScope(ctx, journal.ExecutionScope(id)); err != nil {
			return err
		}
	}
	return cp.coord.PurgeResults(ctx, ids...)
}

// closeCluster stops the local worker (after the runs ended), the coordinator and the
// connection.
func (h *Host) closeCluster() {
	cp := h.cluster
	if cp == nil {
		return
	}
	cp.closeOnce.Do(func() {
		if cp.stopWorker != nil {
			cp.stopWorker()
			<-cp.workerDone
		}
		if cp.coord != nil {
			cp.coord.Close()
		}
		cp.conn.Close()
	})
}
