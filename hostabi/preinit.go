package hostabi

// Pre-initialization: running a module's _initialize once, at load, instead of in every
// attempt. A Go guest's _initialize starts the Go runtime and runs the package init functions;
// it cost ~260 µs of a ~770 µs attempt (docs/performance.md), and every attempt gets a fresh
// instance, so every attempt paid it. What _initialize leaves behind is linear memory and the
// values of the module's globals; a Wizer-like snapshot builds that into the module itself:
//
//  1. parsePreinit checks the module's structure (preinit_module.go): one memory and globals of its
//     own, no start function, no passive data, no instruction that changes a table — so memory
//     and globals are the whole of an instance's state.
//  2. A copy that exports every mutable global is compiled (unoptimized: it runs once) and
//     instantiated in a store like an attempt's (WASI without preopened directories, stdout and
//     stderr captured), and its _initialize runs. Every host import of the fuscia module traps
//     there, and writing to stdout or stderr counts as a side effect: either refuses the
//     snapshot.
//  3. The module is rebuilt with the memory's non-zero pages as its data segments, its memory's
//     initial size the snapshot's, each mutable global's initializer its snapshotted value, and
//     _initialize no longer exported. It is then compiled (with the grow guard) like any module
//     and kept in the cache under its own kind (kindPreinit), so the snapshot is taken once per
//     module and engine version. Instantiating it maps the snapshot copy-on-write; nothing runs.
//
// Only a module that asks for it is snapshotted: it exports a function named [preinitExport],
// which hostabi/guest (the Go SDK) does. The export promises that _initialize needs nothing an
// attempt provides; the host checks what it can (steps 1 and 2) and otherwise runs the module as
// installed. Consequences a guest must accept, written down in docs/wasm.md:
//
//   - The randomness a runtime draws in _initialize is drawn once. Go seeds its runtime
//     generator there (math/rand and math/rand/v2's top-level functions, map iteration order,
//     select's choice): every attempt starts from the same seed, so those sequences repeat from
//     one attempt to the next. crypto/rand asks WASI every time and is not affected.
//   - The clocks read in _initialize read the time of the snapshot.
//   - Go reads its preopened directories in _initialize; the snapshot has none, so an attempt
//     whose Env grants AllowedPaths runs the module as installed, and so does one whose memory
//     cap is below the snapshot's memory. That module is compiled (or read from the cache) on the
//     first attempt that needs it.
//
// A module whose snapshot is refused for what it is or what its _initialize did is remembered
// as refused in the cache (a small file beside the entries), so the next process does not try
// again; a snapshot that timed out, or whose build was cancelled, is tried again by the next
// process.
//
// The snapshot is built after the first load, not during it (preinit_background.go): until it
// exists, attempts run the module as installed.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v39"
)

// preinitExport is the function a module exports to ask for pre-initialization.
const preinitExport = "fuscia_preinit"

// preinitVersion is part of a snapshot's cache key (kindPreinit): a change to the snapshot or
// its rules takes a new one of every module.
const preinitVersion = "1"

// preinitTimeout bounds the snapshot's _initialize; one that runs longer is not snapshotted.
const preinitTimeout = 10 * time.Second

// errPreinitRefused wraps the reasons a module was not snapshotted for what its _initialize
// did: a host call, output, a trap.
var errPreinitRefused = errors.New("_initialize cannot be snapshotted")

// errPreinitTimeout says that the snapshot's _initialize ran past preinitTimeout; unlike the
// other refusals it is not remembered.
var errPreinitTimeout = fmt.Errorf("%w: it ran longer than %s", errPreinitRefused, preinitTimeout)

// errPreinitCancelled says that the snapshot's _initialize was interrupted because its build
// was cancelled (the host closed); it is not remembered either.
var errPreinitCancelled = errors.New("the snapshot's _initialize was interrupted: its build was cancelled")

// wantsPreinit says whether a core module exports preinitExport as a function. It reads only
// the export section.
func wantsPreinit(wasm []byte) bool {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return false
	}
	r := &wasmReader{b: wasm, off: 8}
	for r.more() {
		id := r.byte()
		body := r.take(int(r.u32()))
		if r.err != nil || id != secExport {
			continue
		}
		er := &wasmReader{b: body}
		n := er.u32()
		for i := uint32(0); i < n && er.err == nil; i++ {
			name := string(er.take(int(er.u32())))
			kind := er.byte()
			er.u32()
			if name == preinitExport && kind == 0x00 {
				return er.err == nil
			}
		}
		return false
	}
	return false
}

// preinitialize runs wasm's _initialize once and returns wasm rebuilt in the state it left, as
// the file comment describes. The error wraps errPreinitUnsupported or errPreinitRefused, or is
// errPreinitCancelled when ctx ended first.
func preinitialize(ctx context.Context, wasm []byte, timeout time.Duration) ([]byte, error) {
	pm, err := parsePreinit(wasm)
	if err != nil {
		return nil, err
	}
	cfg := wasmtime.NewConfig()
	cfg.SetEpochInterruption(true)
	// The copy runs one function once: compiling it fast matters more than running it fast
	// (half the compile time of the optimized code, for a Go guest).
	cfg.SetCraneliftOptLevel(wasmtime.OptLevelNone)
	cfg.SetParallelCompilation(true)
	engine := wasmtime.NewEngineWithConfig(cfg)
	defer engine.Close()
	if ctx.Err() != nil {
		return nil, errPreinitCancelled
	}
	mod, err := wasmtime.NewModule(engine, pm.instrumented())
	if err != nil {
		return nil, fmt.Errorf("%w: compile: %v", errPreinitUnsupported, err)
	}
	defer mod.Close()

	linker := wasmtime.NewLinker(engine)
	defer linker.Close()
	if err := linker.DefineWasi(); err != nil {
		return nil, fmt.Errorf("define WASI: %w", err)
	}
	var hostCall string
	for _, imp := range mod.Imports() {
		if imp.Module() != "fuscia" || imp.Name() == nil || imp.Type().FuncType() == nil {
			continue
		}
		name := *imp.Name()
		err := linker.FuncNew("fuscia", name, imp.Type().FuncType(), func(*wasmtime.Caller, []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
			if hostCall == "" {
				hostCall = name
			}
			return nil, wasmtime.NewTrap("fuscia." + name + " is not available while the module is snapshotted")
		})
		if err != nil {
			return nil, fmt.Errorf("define fuscia.%s: %w", name, err)
		}
	}

	var out preinitOutput
	wasi := wasmtime.NewWasiConfig()
	// Ended after the store's close (defers run last-registered-first), before out is read.
	defer captureOutput(wasi, &out, &out)()
	store := wasmtime.NewStore(engine)
	defer store.Close()
	store.SetWasi(wasi)
	store.Limiter(DefaultMaxMemory, -1, -1, -1, -1)
	store.SetEpochDeadline(1)
	stop := epochAfter(ctx, engine, timeout)

	inst, err := linker.Instantiate(store, mod)
	if err == nil {
		_, err = inst.GetFunc(store, "_initialize").Call(store)
	}
	if err == nil {
		// The module's own preparation for the snapshot (hostabi/guest warms its codecs and
		// leaves its heap room to allocate in), run here only, never in an attempt.
		_, err = inst.GetFunc(store, preinitExport).Call(store)
	}
	ended := stop()
	switch {
	case err != nil && ended == errPreinitCancelled:
		return nil, ended
	case hostCall != "":
		return nil, fmt.Errorf("%w: it calls the host (fuscia.%s)", errPreinitRefused, hostCall)
	case out.seen() != "":
		return nil, fmt.Errorf("%w: it writes to stdout or stderr (%q)", errPreinitRefused, out.seen())
	case err != nil && ended != nil:
		return nil, ended
	case err != nil:
		return nil, fmt.Errorf("%w: it failed: %s", errPreinitRefused, trapSummary(err.Error()))
	}

	memory := inst.GetExport(store, "memory")
	if memory == nil || memory.Memory() == nil {
		return nil, fmt.Errorf("%w: it does not export its memory", errPreinitUnsupported)
	}
	var values []preinitValue
	for i, g := range pm.globals {
		if !g.mutable {
			continue
		}
		ext := inst.GetExport(store, globalExportName(i))
		if ext == nil || ext.Global() == nil {
			return nil, fmt.Errorf("%w: global %d is not readable", errPreinitUnsupported, i)
		}
		v := ext.Global().Get(store)
		switch v.Kind() {
		case wasmtime.KindI32:
			values = append(values, preinitValue(uint32(v.I32())))
		case wasmtime.KindI64:
			values = append(values, preinitValue(uint64(v.I64())))
		case wasmtime.KindF32:
			values = append(values, preinitValue(math.Float32bits(v.F32())))
		case wasmtime.KindF64:
			values = append(values, preinitValue(math.Float64bits(v.F64())))
		default:
			return nil, fmt.Errorf("%w: global %d is of kind %v", errPreinitUnsupported, i, v.Kind())
		}
	}
	return pm.withSnapshot(memory.Memory().UnsafeData(store), values)
}

// epochAfter ends the epoch of engine's stores (their deadline is 1) once d has passed or ctx
// ended, unless the function it returns is called first; that function says why the epoch
// ended: errPreinitTimeout, errPreinitCancelled, or nil when it did not. It returns only when
// its goroutine has, so that the engine can be closed right after.
func epochAfter(ctx context.Context, engine *wasmtime.Engine, d time.Duration) func() error {
	done := make(chan struct{})
	exited := make(chan error)
	go func() {
		t := time.NewTimer(d)
		defer t.Stop()
		var why error
		select {
		case <-t.C:
			why = errPreinitTimeout
		case <-ctx.Done():
			why = errPreinitCancelled
		case <-done:
			exited <- nil
			return
		}
		engine.IncrementEpoch()
		<-done
		exited <- why
	}()
	return func() error {
		close(done)
		return <-exited
	}
}

// preinitOutput remembers the start of what _initialize wrote to stdout or stderr.
type preinitOutput struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (o *preinitOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.buf.Len() < 200 {
		o.buf.Write(p[:min(len(p), 200-o.buf.Len())])
	}
	return len(p), nil
}

func (o *preinitOutput) seen() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return firstLine(o.buf.String())
}

// The snapshot in the cache. A module that asks for pre-initialization has one entry of kind
// kindPreinit (its snapshot, compiled) or, when it was refused, a refusal file at that entry's
// path with ".refused" added, holding the key and the reason, and then the module's own entry
// of kindModule.

// kindPreinit is the cache kind of a snapshotted module's code.
const kindPreinit = ";preinit=" + preinitVersion

// refusalPath is where the cache remembers that digest's snapshot was refused.
func (h *Host) refusalPath(digest string) string {
	return h.cachePath(digest, kindPreinit) + ".refused"
}

// preinitRefused says whether the cache remembers digest's snapshot as refused.
func (h *Host) preinitRefused(digest string) bool {
	if h.cacheDir == "" {
		return false
	}
	b, err := os.ReadFile(h.refusalPath(digest))
	return err == nil && strings.HasPrefix(string(b), cacheMagic+h.cacheKey(digest, kindPreinit))
}

// rememberRefusal writes digest's refusal file; a cache that cannot be written costs the next
// process another attempt at the snapshot.
func (h *Host) rememberRefusal(digest string, reason error) {
	if h.cacheDir == "" || errors.Is(reason, errPreinitTimeout) || errors.Is(reason, errPreinitCancelled) {
		return
	}
	_ = h.writeCacheFile(h.refusalPath(digest), []byte(cacheMagic+h.cacheKey(digest, kindPreinit)+reason.Error()+"\n"))
}
