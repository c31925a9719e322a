package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/cluster/clusterkey"
	"github.com/fuscia/fuscia/engine/internal/runtime/builtins"
	"github.com/fuscia/fuscia/engine/internal/runtime/plugins"
	"github.com/fuscia/fuscia/engine/internal/runtime/wasm"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/hostabi"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/internal/syncbuf"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
	"github.com/fuscia/fuscia/plugin"
)

// patience bounds every wait of these tests: generous, for -race on two busy cores. A test
// that passes never waits for it.
const patience = 60 * time.Second

// testCtx is a context that ends with the test, or after patience.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond until it holds, failing the test after patience.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			// The workers run in this process: where each goroutine waits says which part
			// did not answer (a wait this long is a hang, not a slow machine).
			var stacks bytes.Buffer
			_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
			t.Fatalf("still waiting after %s for %s; this process's goroutines:\n%s", patience, what, stacks.String())
		}
		time.Sleep(20 * time.Millisecond) // a poll's interval
	}
}

func newKey(t testing.TB) *clusterkey.Key {
	t.Helper()
	raw := make([]byte, clusterkey.Size)
	_, _ = rand.Read(raw)
	k, err := clusterkey.New(raw)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// logBuffer collects a process's log lines; safe for concurrent use.
type logBuffer struct{ syncbuf.Buffer }

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// dumpOnFailure prints a process's log when the test fails.
func dumpOnFailure(t testing.TB, who string, l *logBuffer) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log of the %s:\n%s", who, l.String())
		}
	})
}

// connect is a process's connection to the cluster, closed when the test ends.
func connect(t testing.TB, cfg Config, name string, log *slog.Logger) *Conn {
	t.Helper()
	c, err := Connect(testCtx(t), cfg, name, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// runtimes are a process's real task runtimes, as engine/host wires them: builtins, Wasm
// components on home/components and plugins, with the cluster's KV and artifacts. They are
// closed when the test ends, after the workers that use them (cleanups run last first). The
// coordinator's have no stores: it creates them, and runs no component or plugin itself.
func runtimes(t testing.TB, conn *Conn, home string) task.ByKind {
	t.Helper()
	var kv task.KVStore
	var arts artifact.Store
	if conn != nil {
		k, a, err := conn.Stores(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		kv, arts = k, a
	}
	runner := builtin.New(builtin.Options{})
	t.Cleanup(runner.Close)
	comps := &wasm.Dispatcher{Dir: filepath.Join(home, "components"), Store: kv, Artifacts: arts,
		HostOptions: hostabi.Options{CacheDir: filepath.Join(home, "cache"), Fuel: true}}
	t.Cleanup(func() { _ = comps.Close() })
	manager := plugin.NewManager(plugin.Options{CacheDir: filepath.Join(home, "cache")})
	t.Cleanup(func() { _ = manager.Close() })
	plugs := &plugins.Dispatcher{Manager: manager, Env: plan.Env{Home: home}, Store: kv, Artifacts: arts}
	return task.ByKind{lang.UsesBuiltin: builtins.New(runner), lang.UsesComponent: comps, lang.UsesPlugin: plugs}
}

// fixture is a coordinator on a NATS server (or cluster), and the workers a test starts.
type fixture struct {
	cfg   Config
	home  string // the coordinator's home (components/)
	conn  *Conn
	coord *Coordinator
	log   *logBuffer
	// redeliveries counts the coordinator's OnRedelivery calls.
	redeliveries atomic.Int64
}

type clusterOptions struct {
	AckWait    time.Duration
	MaxDeliver int
	Pools      []string
	// Home is the coordinator's home, with its installed components; a new one when empty.
	Home string
}

// newCluster starts a coordinator on the NATS servers at urls.
func newCluster(t testing.TB, urls string, o clusterOptions) *fixture {
	t.Helper()
	c := &fixture{cfg: Config{URLs: urls, Key: newKey(t), AckWait: o.AckWait, MaxDeliver: o.MaxDeliver},
		home: o.Home, log: &logBuffer{}}
	if c.home == "" {
		c.home = t.TempDir()
	}
	dumpOnFailure(t, "coordinator", c.log)
	c.conn = connect(t, c.cfg, "coordinator", c.log.logger())
	c.cfg = c.conn.cfg // with the defaults filled in
	coord, err := NewCoordinator(testCtx(t), c.conn, CoordinatorOptions{
		Local: runtimes(t, nil, c.home), ComponentsDir: filepath.Join(c.home, "components"),
		Pools: o.Pools, Logger: c.log.logger(), OnRedelivery: func() { c.redeliveries.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(coord.Close)
	c.coord = coord
	return c
}

// restart is the coordinator's restart: this one stops consuming results, and another, on
// a connection of its own with the same configuration and home, takes over.
func (c *fixture) restart(t testing.TB) *fixture {
	t.Helper()
	c.coord.Close()
	n := &fixture{cfg: c.cfg, home: c.home, log: &logBuffer{}}
	dumpOnFailure(t, "restarted coordinator", n.log)
	n.conn = connect(t, n.cfg, "coordinator", n.log.logger())
	coord, err := NewCoordinator(testCtx(t), n.conn, CoordinatorOptions{
		Local: runtimes(t, nil, n.home), ComponentsDir: filepath.Join(n.home, "components"),
		Logger: n.log.logger(), OnRedelivery: func() { n.redeliveries.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(coord.Close)
	n.coord = coord
	return n
}

// runningWorker is a Worker whose Run runs in a goroutine.
type runningWorker struct {
	*Worker
	home    string
	log     *logBuffer
	stopRun context.CancelFunc
	done    chan error
	once    sync.Once
}

// startWorker runs a worker of the cluster on its own connection (as another process would)
// and its own real runtimes, until stop or the end of the test.
func (c *fixture) startWorker(t testing.TB, o WorkerOptions) *runningWorker {
	t.Helper()
	rw := &runningWorker{home: o.Home, log: &logBuffer{}, done: make(chan error, 1)}
	if rw.home == "" {
		rw.home = t.TempDir()
	}
	dumpOnFailure(t, "worker", rw.log)
	conn := connect(t, c.cfg, "fuscia worker", rw.log.logger()) // the name engine/host gives
	o.Home, o.Logger = rw.home, rw.log.logger()
	if o.Tasks == nil {
		o.Tasks = runtimes(t, conn, rw.home)
	}
	if o.Concurrency == 0 {
		o.Concurrency = 2
	}
	if o.ShutdownGrace == 0 {
		o.ShutdownGrace = 5 * time.Second // a failed test's attempts may be stuck
	}
	rw.Worker = NewWorker(conn, o)
	ctx, cancel := context.WithCancel(context.Background())
	rw.stopRun = cancel
	go func() { rw.done <- rw.Run(ctx) }()
	t.Cleanup(func() { rw.stop(t) })
	// Joined once its record is in the workers bucket.
	eventually(t, "worker "+rw.ID()+" to join", func() bool {
		_, err := c.worker(rw.ID())
		return err == nil
	})
	return rw
}

// stop ends the worker's Run and waits for it.
func (rw *runningWorker) stop(t testing.TB) {
	rw.once.Do(func() {
		rw.stopRun()
		select {
		case err := <-rw.done:
			if err != nil {
				t.Errorf("worker %s: Run: %v", rw.ID(), err)
			}
		case <-time.After(patience):
			t.Errorf("worker %s did not stop within %s", rw.ID(), patience)
		}
	})
}

// worker reads a worker's record.
func (c *fixture) worker(id string) (WorkerInfo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, err := c.coord.Workers(ctx)
	if err != nil {
		return WorkerInfo{}, err
	}
	for _, w := range ws {
		if w.ID == id {
			return w, nil
		}
	}
	return WorkerInfo{}, fmt.Errorf("worker %s is not listed (%d workers)", id, len(ws))
}

// queued is the number of attempts of pool waiting for a worker.
func (c *fixture) queued(pool string) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, ok := c.coord.QueueDepth(ctx)[pool]
	if !ok {
		return -1
	}
	return d
}

// bindHTTP binds builtin.http through the coordinator, as a run does.
func (c *fixture) bindHTTP(t testing.TB) task.Binding {
	t.Helper()
	b, err := c.coord.Bind(testCtx(t), task.Block{Uses: lang.Uses{Kind: lang.UsesBuiltin, Name: "http"},
		Workflow: &lang.Workflow{Name: "w"}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// logLines collects a call's log lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) log(level, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, level+": "+msg)
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// execution is the execution id of the tests' calls (a ULID, as the engine's are).
const execution = "01JCLUSTERTEST0000000000XX"

// newCall is attempt 1 of node with the given input, in pool; its log lines go to logs.
func newCall(node string, uses lang.Uses, input any, pool string, logs *logLines) task.Call {
	raw, err := json.Marshal(input)
	if err != nil {
		panic(err)
	}
	if logs == nil {
		logs = &logLines{}
	}
	return task.Call{Uses: uses, Input: raw, ExecutionID: execution, Workflow: "w", Node: node,
		TaskID: execution + "/" + node, Attempt: 1, Seq: 1, Pool: pool, Log: logs.log}
}

// httpCall is a builtin.http call of url.
func httpCall(node, url, pool string, logs *logLines) task.Call {
	return newCall(node, lang.Uses{Kind: lang.UsesBuiltin, Name: "http"}, map[string]any{"url": url}, pool, logs)
}

// pending is a call running in a goroutine.
type pending struct {
	cancel context.CancelCauseFunc
	done   chan outcome.Result
}

// callAsync runs c.coord.Call in a goroutine, on a context of its own.
func (c *fixture) callAsync(b task.Binding, call task.Call) *pending {
	ctx, cancel := context.WithCancelCause(context.Background())
	p := &pending{cancel: cancel, done: make(chan outcome.Result, 1)}
	go func() { p.done <- c.coord.Call(ctx, b, call) }()
	return p
}

// result waits for the call's result.
func (p *pending) result(t testing.TB) outcome.Result {
	t.Helper()
	select {
	case r := <-p.done:
		p.cancel(nil)
		return r
	case <-time.After(patience):
		p.cancel(nil)
		t.Fatalf("the call did not return within %s", patience)
		return outcome.Result{}
	}
}

// finished reports whether the call returned, without waiting.
func (p *pending) finished() bool { return len(p.done) > 0 }

// call makes a call and waits for its result.
func (c *fixture) call(t testing.TB, b task.Binding, call task.Call) outcome.Result {
	t.Helper()
	return c.callAsync(b, call).result(t)
}

func wantSuccess(t testing.TB, what string, r outcome.Result) {
	t.Helper()
	if r.Type != outcome.Success {
		t.Fatalf("%s: %+v, want success", what, r)
	}
}

func wantKind(t testing.TB, what string, r outcome.Result, kind outcome.Kind) {
	t.Helper()
	if r.Type != outcome.Failure || r.Kind != kind {
		t.Fatalf("%s: %+v, want an error of kind %s", what, r, kind)
	}
}

// site is an HTTP server on 127.0.0.1 that counts the requests of each path. /slow answers
// only when its request is cancelled (or the test ends); /echo answers with the request's
// body; anything else answers 200 {"path": PATH}.
type site struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
	// slowStarted receives the time each /slow request arrived, slowEnded the time its
	// request's context ended.
	slowStarted, slowEnded chan time.Time
	release                chan struct{}
}

func newSite(t testing.TB) *site {
	s := &site{hits: map[string]int{}, slowStarted: make(chan time.Time, 16), slowEnded: make(chan time.Time, 16),
		release: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		switch r.URL.Path {
		case "/slow":
			s.slowStarted <- time.Now()
			select {
			case <-r.Context().Done():
				s.slowEnded <- time.Now()
			case <-s.release:
			}
			return
		case "/echo":
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write(body)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"path": %q}`, r.URL.Path)
	}))
	t.Cleanup(func() {
		close(s.release)
		s.Close()
	})
	return s
}

// count is the number of requests of path so far.
func (s *site) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// filesContaining lists the files under dir that contain s.
func filesContaining(t testing.TB, dir string, s []byte) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil // removed by the server meanwhile
		}
		if err != nil {
			return err
		}
		if bytes.Contains(b, s) {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
