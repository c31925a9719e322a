package hostabi

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// loadSnapshot loads wasm, waits for the background build of its snapshot to end, and returns
// what Load hands out then: the snapshot, or the module as installed when it was refused.
func (h *testHost) loadSnapshot(t testing.TB, name string, wasm []byte) *Module {
	t.Helper()
	waitBuild(t, h.load(t, name, wasm))
	return h.load(t, name, wasm)
}

// waitBuild waits for m's background build, if it has one, to end.
func waitBuild(t testing.TB, m *Module) {
	t.Helper()
	if m.build == nil {
		return
	}
	select {
	case <-m.build.done:
	case <-time.After(3 * time.Minute):
		// As long as a synchronous Load of a Go module may take on a busy machine.
		t.Fatal("the background build of the snapshot did not end within 3 minutes")
	}
}

// jobsInProcess is a CompileElsewhere that does the jobs in this process, as serve's child
// would (CompileToCache), and counts the snapshot jobs. A snapshot job first waits for hold to
// be closed, or for its Cancel, as a child that is killed ends.
type jobsInProcess struct {
	hold      chan struct{}
	snapshots atomic.Int32
	cancelled atomic.Int32
}

func (j *jobsInProcess) compile(job CompileJob) error {
	if job.Preinit {
		j.snapshots.Add(1)
		select {
		case <-j.hold:
		case <-job.Cancel:
			j.cancelled.Add(1)
			return errors.New("killed")
		}
	}
	job.Cancel = nil
	return CompileToCache(job)
}

// TestPreinitInBackground: a first Load returns the module as installed while its snapshot does
// not exist yet; the snapshot is built afterwards (once, however many Loads came), left in the
// cache, and from then on attempts start from it, also through the Module the first Load
// returned.
func TestPreinitInBackground(t *testing.T) {
	cache := t.TempDir()
	jobs := &jobsInProcess{hold: make(chan struct{})}
	h := newTestHost(t, Options{CacheDir: cache, CompileElsewhere: jobs.compile})
	wasm := preinitWAT(t, preinitFunc, "", "")
	m := h.load(t, "t/later", wasm)
	if m.plain != nil || !m.hasInit || m.build == nil {
		t.Fatalf("first load: pre-initialized %t, _initialize exported %t, build %v; want the module as installed and a build", m.plain != nil, m.hasInit, m.build)
	}
	if _, err := h.entryFromCache(digestOf(wasm), kindPreinit); err == nil {
		t.Fatal("the snapshot is in the cache before its build was let go")
	}
	if _, err := h.entryFromCache(digestOf(wasm), kindModule); err != nil {
		t.Fatalf("the module as installed is not in the cache after the first load: %v", err)
	}
	// Attempts run the module as installed meanwhile: _initialize in each, fuscia_preinit never.
	a, b := traceOf(t, h, m, nil), traceOf(t, h, m, nil)
	if a.inits != 1 || a.preinitRan || a.random == b.random {
		t.Fatalf("before the snapshot: %+v then %+v; want _initialize run in each attempt", a, b)
	}
	// More Loads, concurrent ones among them, queue no other build.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := h.Load("t/later", h.dir+"/t_later.wasm", digestOf(wasm)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()

	close(jobs.hold)
	waitBuild(t, m)
	if m.build.err != nil {
		t.Fatalf("the build failed: %v", m.build.err)
	}
	if _, err := h.entryFromCache(digestOf(wasm), kindPreinit); err != nil {
		t.Fatalf("the snapshot is not in the cache after its build: %v", err)
	}
	if n := jobs.snapshots.Load(); n != 1 {
		t.Errorf("%d snapshot jobs; want 1", n)
	}
	first := traceOf(t, h, m, nil)
	if !first.preinitRan || first.inits != 1 || traceOf(t, h, m, nil) != first {
		t.Fatalf("after the build, through the first Load's module: %+v; want the snapshot's state in every attempt", first)
	}
	if again := h.load(t, "t/later", wasm); again.plain == nil || again.Loaded != "memory" {
		t.Fatalf("a Load after the build: loaded %s, pre-initialized %t; want the snapshot from memory", again.Loaded, again.plain != nil)
	}
	// An attempt the snapshot cannot serve still runs the module as installed.
	if tr := traceOf(t, h, m, &Env{AllowedPaths: []string{t.TempDir()}}); tr.preinitRan || tr.prestat != 0 {
		t.Fatalf("with an allowed path after the build: %+v; want the module as installed", tr)
	}
}

// TestPreinitCachedOnly: a one-shot host uses a snapshot that is in the cache and builds none.
func TestPreinitCachedOnly(t *testing.T) {
	cache := t.TempDir()
	wasm := preinitWAT(t, preinitFunc, "", "")
	once := newTestHost(t, Options{CacheDir: cache, Snapshots: SnapshotCachedOnly})
	if m := once.load(t, "t/oneshot", wasm); m.build != nil || m.plain != nil {
		t.Fatalf("one-shot host without a cached snapshot: build %v, pre-initialized %t; want neither", m.build, m.plain != nil)
	}
	if _, err := once.entryFromCache(digestOf(wasm), kindPreinit); err == nil {
		t.Fatal("a one-shot host built a snapshot")
	}
	long := newTestHost(t, Options{CacheDir: cache})
	waitBuild(t, long.load(t, "t/oneshot", wasm))
	next := newTestHost(t, Options{CacheDir: cache, Snapshots: SnapshotCachedOnly})
	if m := next.load(t, "t/oneshot", wasm); m.plain == nil || m.Loaded != "cache" {
		t.Fatalf("one-shot host with a cached snapshot: loaded %s, pre-initialized %t; want the snapshot from the cache", m.Loaded, m.plain != nil)
	}
}

// TestPreinitDamagedSnapshot: a snapshot entry cut short (a build killed while writing, a full
// disk) is never used: the module runs as installed and the snapshot is built again.
func TestPreinitDamagedSnapshot(t *testing.T) {
	cache := t.TempDir()
	wasm := preinitWAT(t, preinitFunc, "", "")
	h1 := newTestHost(t, Options{CacheDir: cache})
	waitBuild(t, h1.load(t, "t/damaged", wasm))
	path := h1.cachePath(digestOf(wasm), kindPreinit)
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, body[:len(body)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	h2 := newTestHost(t, Options{CacheDir: cache})
	m := h2.load(t, "t/damaged", wasm)
	if m.plain != nil || m.build == nil {
		t.Fatalf("with half a snapshot in the cache: pre-initialized %t, build %v; want the module as installed and a build", m.plain != nil, m.build)
	}
	waitBuild(t, m)
	if _, err := h2.entryFromCache(digestOf(wasm), kindPreinit); err != nil || !traceOf(t, h2, m, nil).preinitRan {
		t.Fatalf("after the rebuild: %v; want a whole entry and attempts from the snapshot", err)
	}
}

// TestCloseStopsSnapshotBuild: Close during a background build stops it instead of waiting for
// it: in this process it interrupts the snapshot's _initialize (which would run until the
// 10s preinitTimeout), with a compile child it cancels the job (serve kills the child). No
// refusal is remembered, and no goroutine of the host is left.
func TestCloseStopsSnapshotBuild(t *testing.T) {
	t.Run("in process", func(t *testing.T) {
		cache := t.TempDir()
		h, err := New(Options{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		th := &testHost{Host: h, dir: t.TempDir()}
		wasm := preinitWAT(t, preinitFunc, `(loop $l (br $l))`, "")
		m := th.load(t, "t/endless", wasm)
		waitRunning(t, "hostabi.preinitialize")
		h.Close()
		waitBuild(t, m)
		if !errors.Is(m.build.err, errPreinitCancelled) {
			t.Errorf("the build ended with %v; want it interrupted by Close", m.build.err)
		}
		if h.preinitRefused(digestOf(wasm)) {
			t.Error("a cancelled build was remembered as a refusal")
		}
		noHostGoroutines(t)
	})
	t.Run("compile child", func(t *testing.T) {
		jobs := &jobsInProcess{hold: make(chan struct{})} // never let go: only Cancel ends the job
		h, err := New(Options{CacheDir: t.TempDir(), CompileElsewhere: jobs.compile})
		if err != nil {
			t.Fatal(err)
		}
		th := &testHost{Host: h, dir: t.TempDir()}
		m := th.load(t, "t/child", preinitWAT(t, preinitFunc, "", ""))
		waitRunning(t, "hostabi.(*jobsInProcess).compile")
		h.Close()
		waitBuild(t, m)
		if jobs.cancelled.Load() != 1 || !errors.Is(m.build.err, errSnapshotCancelled) {
			t.Errorf("cancelled jobs %d, build error %v; want the job cancelled by Close", jobs.cancelled.Load(), m.build.err)
		}
		noHostGoroutines(t)
	})
}

// waitRunning waits until some goroutine's stack has fn in it.
func waitRunning(t *testing.T, fn string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(allStacks(), fn) {
		if time.Now().After(deadline) {
			t.Fatalf("no goroutine runs %s after 30s", fn)
		}
		time.Sleep(time.Millisecond)
	}
}

// noHostGoroutines waits until no goroutine runs the snapshot builds, the preinit timer or the
// epoch ticker (the host's goroutines).
func noHostGoroutines(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		stacks := allStacks()
		var left []string
		for _, fn := range []string{"hostabi.(*Host).buildSnapshots", "hostabi.epochAfter", "hostabi.(*epochTicker).start", "hostabi.(*jobsInProcess).compile"} {
			if strings.Contains(stacks, fn) {
				left = append(left, fn)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines left 30s after Close: %v\n%s", left, stacks)
		}
		time.Sleep(time.Millisecond)
	}
}

func allStacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}
