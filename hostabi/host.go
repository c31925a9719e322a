// Package hostabi runs Fuscia components: core Wasm modules that implement the host ABI of
// docs/reference/abi-v1.md, in wasmtime through wasmtime-go.
//
// A Host owns the process's one wasmtime Engine, the linker with every host import, the epoch
// ticker that interrupts guests, and the compiled modules. Each Invoke gets a fresh Store and
// instance, so nothing a guest does survives its attempt.
package hostabi

import (
	"errors"
	"fmt"
	"github.com/fuscia/fuscia/internal/outcome"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v39"
)

// Versions this package implements.
const (
	// ABIVersion is the host ABI of docs/reference/abi-v1.md; a component exports fuscia_abi_v1.
	ABIVersion = 1
	// WasmtimeVersion is the wasmtime release inside wasmtime-go v39.0.1.
	WasmtimeVersion = "39.0.1"
)

// DefaultMaxMemory caps a guest's linear memory when neither the manifest nor the workflow
// says otherwise (docs/reference/abi-v1.md).
const DefaultMaxMemory = 256 << 20

// DefaultEpochTick is how often the ticker advances the epoch while a guest runs. A guest
// is stopped at most one tick after its deadline; docs/reference/abi-v1.md promises 10 ms.
const DefaultEpochTick = 2 * time.Millisecond

// Options configure a Host.
type Options struct {
	// CacheDir keeps precompiled modules ($FUSCIA_HOME/cache). Empty: compile in memory only.
	CacheDir string
	// Fuel compiles modules with fuel metering, so that max_fuel can be enforced. It slows
	// every guest a little, so it is on only when some component asks for max_fuel.
	Fuel bool
	// EpochTick overrides DefaultEpochTick.
	EpochTick time.Duration
	// OnInstantiate, when set, is told how long each instantiation took (serve's metrics).
	OnInstantiate func(time.Duration)
	// CompileElsewhere, when set with CacheDir, is asked to compile a component or module
	// whose code is not in the cache yet, and to leave it there: serve gives it a short-lived
	// child process, so that the compiler's memory, which wasmtime does not give back, dies
	// with the child. Load then reads the cache; if the entry is still missing it compiles in
	// this process.
	CompileElsewhere func(CompileJob) error
	// Snapshots says when a module that asks for pre-initialization is snapshotted if its
	// snapshot is not in the cache yet: in the background after its first load (the default),
	// or never by this host (preinit_background.go).
	Snapshots SnapshotPolicy
}

// CompileJob is what a CompileElsewhere needs to fill the cache exactly as this host would: a
// Host with the same CacheDir and Fuel, loading Name from WasmPath with Digest.
//
// With Preinit, the job is the snapshot of a module that asks for pre-initialization
// (preinit.go) instead: it is done when the snapshot is in the cache or its refusal is
// remembered there. Cancel, when not nil, is closed when the host no longer wants the result
// (it closes): the compile should then stop at once (serve kills its child).
type CompileJob struct {
	Name, WasmPath, Digest, CacheDir string
	Fuel                             bool
	Preinit                          bool
	Cancel                           <-chan struct{}
}

// Host runs components. It is safe for concurrent use; Close it when done.
type Host struct {
	engine   *wasmtime.Engine
	linker   *wasmtime.Linker
	cacheDir string
	fuel     bool
	configID string
	// onInstantiate is Options.OnInstantiate.
	onInstantiate    func(time.Duration) // what besides the wasm decides compiled code: part of the cache key
	compileElsewhere func(CompileJob) error
	snapshots        SnapshotPolicy
	// snaps builds snapshots in the background (preinit_background.go).
	snaps snapshotter

	// tidyCache removes old temporary files from cacheDir, and trims it (cachetrim.go), at
	// the first entry written.
	tidyCache sync.Once

	mu      sync.Mutex
	modules map[string]*moduleSlot // by digest; nil once Close has begun
	// busy counts the Loads and Invokes under way; Close waits for them before it frees the
	// engine, which they use (wasmtime aborts the process, or reads freed memory, otherwise).
	// Added to only under mu while modules is not nil.
	busy          sync.WaitGroup
	httpTransport *http.Transport
	// slots holds a token per running instance when instances come from the pool; nil
	// otherwise.
	slots chan struct{}

	ticker epochTicker

	// The component linker (component.go), made at the first component, and the calls under
	// way in components by their store's key, for the host imports to find.
	compOnce       sync.Once
	compLinker     *componentLinker
	compLinkerErr  error
	componentCalls sync.Map
}

// New starts a Host: the Engine, the linker with the host imports, and the epoch ticker.
func New(opts Options) (*Host, error) {
	cfg := wasmtime.NewConfig()
	cfg.SetEpochInterruption(true)
	cfg.SetConsumeFuel(opts.Fuel)
	// Go guests are large; compiling them on every core keeps the first load short.
	cfg.SetParallelCompilation(true)
	// Instances come from a pool of reused slots: an attempt costs less than half as much
	// (wasmtime_ext.go, docs/performance.md). The pool does not change compiled code, so it
	// is not in configID; when its address space cannot be reserved, wasmtime's on-demand
	// allocator does the same work, slower.
	pool := defaultPool()
	pooled := usePooling(cfg, pool)
	engine := wasmtime.NewEngineWithConfig(cfg)
	h := &Host{
		engine:   engine,
		cacheDir: opts.CacheDir,
		fuel:     opts.Fuel,

		onInstantiate:    opts.OnInstantiate,
		compileElsewhere: opts.CompileElsewhere,
		snapshots:        opts.Snapshots,
		configID:         fmt.Sprintf("wasmtime=%s;epoch=1;fuel=%t;growguard=%d", WasmtimeVersion, opts.Fuel, growGuardVersion),
		modules:          map[string]*moduleSlot{},
	}
	h.snaps.init()
	if pooled {
		// An attempt beyond the pool would fail to instantiate; it waits for a slot instead.
		h.slots = make(chan struct{}, pool.slots)
	}
	linker, err := newLinker(engine)
	if err != nil {
		engine.Close()
		return nil, fmt.Errorf("wasm host: %w", err)
	}
	h.linker = linker
	tick := opts.EpochTick
	if tick <= 0 {
		tick = DefaultEpochTick
	}
	h.ticker.start(engine, tick)
	return h, nil
}

// Close stops the background build of a snapshot, frees the engine once the Loads and Invokes
// under way have returned (cancel their contexts to make that quick), and stops the ticker.
// Later calls fail with an error.
func (h *Host) Close() error {
	h.mu.Lock()
	modules := h.modules
	h.modules = nil
	h.mu.Unlock()
	if modules == nil {
		return nil
	}
	// A build under way is stopped, not waited for (a child is killed, an _initialize
	// interrupted), and one a Load queues from now on is dropped.
	h.snaps.close()
	h.busy.Wait()
	h.ticker.stop()
	h.mu.Lock()
	for _, s := range modules {
		if s.mod != nil {
			s.mod.close()
		}
	}
	if h.httpTransport != nil {
		h.httpTransport.CloseIdleConnections()
	}
	h.mu.Unlock()
	h.linker.Close()
	if h.compLinker != nil {
		h.compLinker.close()
	}
	h.engine.Close()
	return nil
}

// epochTicker advances the engine's epoch every tick while at least one guest runs, and
// sleeps otherwise: an idle host costs no wakeups.
type epochTicker struct {
	active atomic.Int64
	wake   chan struct{}
	quit   chan struct{}
	done   chan struct{}
}

func (t *epochTicker) start(engine *wasmtime.Engine, tick time.Duration) {
	t.wake = make(chan struct{}, 1)
	t.quit = make(chan struct{})
	t.done = make(chan struct{})
	go func() {
		defer close(t.done)
		for {
			if t.active.Load() == 0 {
				select {
				case <-t.wake:
				case <-t.quit:
					return
				}
			}
			tk := time.NewTicker(tick)
			for t.active.Load() > 0 {
				select {
				case <-tk.C:
					engine.IncrementEpoch()
				case <-t.quit:
					tk.Stop()
					return
				}
			}
			tk.Stop()
		}
	}()
}

// enter marks a guest running; leave undoes it.
func (t *epochTicker) enter() {
	if t.active.Add(1) == 1 {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
}

func (t *epochTicker) leave() { t.active.Add(-1) }

func (t *epochTicker) stop() {
	select {
	case <-t.quit:
	default:
		close(t.quit)
	}
	<-t.done
}

// enter registers a Load or Invoke with Close; false when the host is closed. A true answer
// must be followed by h.busy.Done().
func (h *Host) enter() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.modules == nil {
		return false
	}
	h.busy.Add(1)
	return true
}

// Error is a failed invocation: what the engine turns into the attempt's error.
type Error struct {
	Kind    Kind
	Message string
}

// Kind is the engine's error kind (internal/outcome): the host classifies its failures with
// the kinds the engine interprets, so there is one kind type on the host side.
type Kind = outcome.Kind

// Error kinds a call can fail with; a guest's own error response is not an Error.
const (
	Fatal            = outcome.Fatal
	Timeout          = outcome.Timeout
	Cancelled        = outcome.Cancelled
	SandboxViolation = outcome.SandboxViolation
)

func (e *Error) Error() string { return e.Message }

func errorf(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// KindOf returns the kind of err, Fatal when it is not an *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Fatal
}
