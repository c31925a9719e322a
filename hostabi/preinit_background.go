package hostabi

// Building snapshots in the background. Taking a Go module's snapshot (preinit.go) compiles it
// twice more than loading it as installed does: a first load that waited for it took 4.2–5.8 s
// instead of 1.9–3.6 s on a 2-core VM, and `fuscia serve` makes that load before it says it
// serves (docs/performance.md). So a first Load no longer waits: it returns the module as
// installed (which runs _initialize in every attempt, as it always could), and the Host builds
// the snapshot afterwards, one module at a time, in a goroutine of its own. Attempts switch to
// the snapshot once it exists: Invoke asks the module's build for it, so a Module handed out
// before the switch switches too.
//
// With Options.CompileElsewhere (serve), the build runs in the compile child, like any compile
// of serve's, and Close kills that child; otherwise it runs here, where Close interrupts the
// snapshot's _initialize but has to wait for a compile under way (wasmtime cannot stop one).
// A one-shot host (SnapshotCachedOnly) uses a cached snapshot and builds none: it would pay
// for a build it exits before using.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// SnapshotPolicy says what a Host does about a module that asks for pre-initialization
// (preinit.go) and whose snapshot is not in the cache. A snapshot in the cache is always used.
type SnapshotPolicy int

const (
	// SnapshotInBackground: Load returns the module as installed, and the Host builds the
	// snapshot afterwards, one module at a time; attempts use it once it exists, and the cache
	// keeps it for the next process. For hosts that live long enough to use it: serve, a
	// worker.
	SnapshotInBackground SnapshotPolicy = iota
	// SnapshotCachedOnly: the module runs as installed until another process has left its
	// snapshot in the cache. For one-shot runs (apply, resume), which exit before a build would
	// pay for itself.
	SnapshotCachedOnly
)

// errSnapshotCancelled ends a build that Close stopped; it is not remembered as a refusal.
var errSnapshotCancelled = errors.New("the snapshot was not built: the wasm host closed")

// preinitBuild is the background build of one module's snapshot. A Host makes at most one per
// digest (the moduleSlot's module holds it), so a module is never built twice at once in a
// process; two processes may build the same one, and the cache keeps either (entries are
// replaced atomically).
type preinitBuild struct {
	name, wasmPath, digest string
	// installed is the module as installed, which the snapshot falls back to for the
	// attempts it cannot serve (Module.preinitServes).
	installed *Module

	snap atomic.Pointer[Module]
	done chan struct{} // closed when the build ended, whatever its outcome
	err  error         // why there is no snapshot; read after done
}

// snapshot returns the built snapshot, or nil: none yet, none to build (b is nil), or refused.
func (b *preinitBuild) snapshot() *Module {
	if b == nil {
		return nil
	}
	return b.snap.Load()
}

func (b *preinitBuild) end(snap *Module, err error) {
	if snap != nil {
		b.snap.Store(snap)
	}
	b.err = err
	close(b.done)
}

// snapshotter runs a Host's builds, one at a time, in a goroutine that exists while builds are
// queued. Close cancels ctx (which stops a build: its child is killed, its _initialize
// interrupted) and waits for the goroutine.
type snapshotter struct {
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	queue   []*preinitBuild
	running bool
	closed  bool
	exited  sync.WaitGroup
}

func (s *snapshotter) init() { s.ctx, s.cancel = context.WithCancel(context.Background()) }

// close stops the build under way, drops the queued ones and waits for the goroutine.
func (s *snapshotter) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.exited.Wait()
}

// queueSnapshot has b built after the builds queued before it.
func (h *Host) queueSnapshot(b *preinitBuild) {
	s := &h.snaps
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		b.end(nil, errSnapshotCancelled)
		return
	}
	s.queue = append(s.queue, b)
	if !s.running {
		s.running = true
		s.exited.Add(1)
		go h.buildSnapshots()
	}
	s.mu.Unlock()
}

// buildSnapshots builds the queued snapshots until none is left or the host closes.
func (h *Host) buildSnapshots() {
	s := &h.snaps
	defer s.exited.Done()
	for {
		s.mu.Lock()
		if len(s.queue) == 0 || s.closed {
			rest := s.queue
			s.queue, s.running = nil, false
			s.mu.Unlock()
			for _, b := range rest {
				b.end(nil, errSnapshotCancelled)
			}
			return
		}
		b := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		b.end(h.buildSnapshot(s.ctx, b))
	}
}

// buildSnapshot builds b's snapshot: in the compile child when the host has one, else here.
func (h *Host) buildSnapshot(ctx context.Context, b *preinitBuild) (*Module, error) {
	installed := installedPlain(b.installed)
	if h.compileElsewhere == nil || h.cacheDir == "" {
		return h.takeSnapshot(ctx, b.name, b.wasmPath, b.digest, installed)
	}
	err := h.compileElsewhere(CompileJob{
		Name: b.name, WasmPath: b.wasmPath, Digest: b.digest, CacheDir: h.cacheDir, Fuel: h.fuel,
		Preinit: true, Cancel: ctx.Done(),
	})
	switch {
	case ctx.Err() != nil:
		return nil, errSnapshotCancelled
	case err != nil:
		// Not built in this process: the compiler's memory would stay with the daemon (the
		// reason for the child). The module keeps running as installed; the next start tries
		// again.
		return nil, err
	}
	if m := h.cachedSnapshot(b.name, b.digest, installed); m != nil {
		return m, nil
	}
	if h.preinitRefused(b.digest) {
		return nil, fmt.Errorf("%w (remembered in the cache)", errPreinitRefused)
	}
	return nil, errors.New("the compile child left no snapshot in the cache")
}

// installedPlain is a plainModule that is m, already loaded: what a snapshot built after m
// falls back to. Module.close closes m through its build, not through the snapshot.
func installedPlain(m *Module) *plainModule {
	p := &plainModule{}
	p.once.Do(func() { p.mod = m })
	return p
}
