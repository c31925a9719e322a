package hostabi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v39"
)

// Module is a compiled component, shared by every call of it.
type Module struct {
	// Name says which component this is in messages: "acme/mailer@1.2.3".
	Name   string
	Digest string
	// Loaded says where the compiled code came from: "compiled", "cache" (the disk cache) or
	// "memory" (an earlier Load in this process).
	Loaded string

	// mod is a core module's compiled code; comp a component's. One of them is set.
	mod     *wasmtime.Module
	comp    *component
	hasInit bool
	// guarded says that the module's memory.grow instructions record a refusal (growguard.go),
	// so that Invoke knows exactly, not by inference, when the guest was denied memory.
	guarded bool
	// plain is set when mod is a pre-initialized snapshot (preinit.go): the module as it was
	// installed, for the attempts the snapshot cannot serve (preinitServes). The copies Load
	// hands out share it.
	plain *plainModule
	// preinitMemory is the size in bytes of the linear memory a snapshot's instance starts with.
	preinitMemory int64
	// build is set on a module that asks for pre-initialization, loaded as installed because
	// its snapshot was not in the cache: the background build of that snapshot, which Invoke
	// switches to once it exists (preinit_background.go). The copies Load hands out share it.
	build *preinitBuild
}

// plainModule is the module as installed behind a snapshot, loaded on first need.
type plainModule struct {
	once sync.Once
	load func() (*Module, error)
	mod  *Module // written once by once; read by Module.close after every Invoke returned
	err  error
}

func (p *plainModule) get() (*Module, error) {
	p.once.Do(func() { p.mod, p.err = p.load() })
	return p.mod, p.err
}

// preinitServes says whether an attempt under env can run in m's snapshot: the snapshot saw
// no preopened directory (Go reads them in _initialize), and its memory fits the attempt's cap.
func (m *Module) preinitServes(env *Env) bool {
	limit := env.MaxMemory
	if limit <= 0 {
		limit = DefaultMaxMemory
	}
	return len(env.AllowedPaths) == 0 && m.preinitMemory <= limit
}

// IsComponent says whether m is a component (abi 2) rather than a core module of ABI v1.
func (m *Module) IsComponent() bool { return m.comp != nil }

func (m *Module) close() {
	if m.comp != nil {
		m.comp.close()
		return
	}
	m.mod.Close()
	if m.build != nil {
		// Close waited for the build. Its snapshot falls back to m itself: only its own code
		// is left to free.
		if snap := m.build.snapshot(); snap != nil {
			snap.mod.Close()
		}
		return
	}
	if m.plain != nil && m.plain.mod != nil {
		m.plain.mod.close()
	}
}

// moduleSlot makes concurrent Loads of one digest compile once.
type moduleSlot struct {
	ready chan struct{}
	mod   *Module
	err   error

	// verified holds, by path, the stamp of each file found to have the slot's digest, so
	// that a Load from memory re-reads a file only when it changed (filestamp.go).
	mu       sync.Mutex
	verified map[string]fileStamp
}

// ErrModuleChanged is wrapped by the error of a Load whose component.wasm is not the file that
// was installed: its digest is not the one the manifest (and the plan's lock) recorded.
var ErrModuleChanged = errors.New("component.wasm changed after install")

// Load returns the compiled module for the component whose component.wasm is at wasmPath and
// whose manifest says digest: from memory, from the disk cache, or compiled (and then cached).
//
// What runs is what was installed: the file is hashed and checked against digest before its
// compiled code is trusted, whether that code is compiled now or comes from the disk cache
// (which holds native code, keyed by digest; a changed file must never reuse the entry of the
// file it replaced). A Load from memory checks the file's stamp (size, times, inode) and hashes
// it again only when the stamp changed (or the file is too young for its stamp to be trusted;
// filestamp.go), which costs a stat.
func (h *Host) Load(name, wasmPath, digest string) (*Module, error) {
	h.mu.Lock()
	if h.modules == nil {
		h.mu.Unlock()
		return nil, errors.New("wasm host is closed")
	}
	// Registered with Close under the same lock that saw the host open (see Host.enter).
	h.busy.Add(1)
	defer h.busy.Done()
	if s, ok := h.modules[digest]; ok {
		h.mu.Unlock()
		<-s.ready
		if s.err != nil {
			return nil, s.err
		}
		if err := s.recheck(name, wasmPath, digest); err != nil {
			return nil, err
		}
		m := *s.mod
		if snap := m.build.snapshot(); snap != nil {
			m = *snap
		}
		m.Name, m.Loaded = name, "memory"
		return &m, nil
	}
	s := &moduleSlot{ready: make(chan struct{}), verified: map[string]fileStamp{}}
	h.modules[digest] = s
	h.mu.Unlock()

	var stamp fileStamp
	s.mod, stamp, s.err = h.load(name, wasmPath, digest)
	if s.err == nil {
		s.verified[wasmPath] = stamp // before ready: no other goroutine reads it yet
	} else {
		// A failure is not remembered: the next Load tries again (the file may be fixed).
		h.mu.Lock()
		delete(h.modules, digest)
		h.mu.Unlock()
	}
	close(s.ready)
	if s.err == nil && s.mod.build != nil {
		h.queueSnapshot(s.mod.build)
	}
	return s.mod, s.err
}

func (h *Host) load(name, wasmPath, digest string) (*Module, fileStamp, error) {
	wasm, stamp, err := readVerified(name, wasmPath, digest)
	if err != nil {
		return nil, fileStamp{}, err
	}
	h.compileFirst(name, wasmPath, digest, wasm)
	if isComponent(wasm) {
		m, err := h.loadComponent(name, wasmPath, digest, wasm)
		return m, stamp, err
	}
	preinit := wantsPreinit(wasm)
	if preinit {
		plain := &plainModule{load: func() (*Module, error) { return h.loadModule(name, wasmPath, digest, nil) }}
		if m := h.cachedSnapshot(name, digest, plain); m != nil {
			return m, stamp, nil
		}
	}
	m, err := h.loadModule(name, wasmPath, digest, wasm)
	if err != nil {
		return nil, fileStamp{}, err
	}
	// No snapshot yet: the module runs as installed, _initialize in every attempt, until the
	// background build has one (preinit_background.go); Load queues it once the slot holds m.
	if preinit && h.snapshots == SnapshotInBackground && !h.preinitRefused(digest) {
		m.build = &preinitBuild{name: name, wasmPath: wasmPath, digest: digest, installed: m, done: make(chan struct{})}
	}
	return m, stamp, nil
}

// loadModule returns the core module as installed: from the cache, or compiled (and then
// cached). wasm may be nil: it is read from wasmPath, and checked, only when the cache has no
// entry.
func (h *Host) loadModule(name, wasmPath, digest string, wasm []byte) (*Module, error) {
	if h.cacheDir != "" {
		if path, err := h.entryFromCache(digest, kindModule); err == nil {
			if mod, err := wasmtime.NewModuleDeserializeFile(h.engine, path); err == nil {
				return newModule(name, digest, "cache", mod)
			}
		}
		// A missing, foreign or damaged entry is rebuilt below; never trusted.
	}
	if wasm == nil {
		var err error
		if wasm, _, err = readVerified(name, wasmPath, digest); err != nil {
			return nil, err
		}
	}
	mod, err := compileGuarded(h.engine, wasm)
	if err != nil {
		return nil, fmt.Errorf("load component %s: compile %s: %w", name, wasmPath, err)
	}
	m, err := newModule(name, digest, "compiled", mod)
	if err != nil {
		return nil, err
	}
	if h.cacheDir != "" {
		// A cache that cannot be written costs the next process a compile, nothing more.
		if body, err := mod.Serialize(); err == nil {
			_ = h.toCache(digest, kindModule, body)
		}
	}
	return m, nil
}

// cachedSnapshot returns digest's pre-initialized snapshot (preinit.go) from the cache, or nil
// when the cache has none (or a damaged one, which is rebuilt, never trusted).
func (h *Host) cachedSnapshot(name, digest string, plain *plainModule) *Module {
	if h.cacheDir == "" {
		return nil
	}
	path, err := h.entryFromCache(digest, kindPreinit)
	if err != nil {
		return nil
	}
	mod, err := wasmtime.NewModuleDeserializeFile(h.engine, path)
	if err != nil {
		return nil
	}
	return newPreinitModule(name, digest, "cache", mod, plain)
}

// takeSnapshot returns the snapshot of the module at wasmPath: from the cache, or taken and
// compiled (and then cached). A refusal is remembered in the cache, unless the snapshot timed
// out or ctx ended (the next build tries again). It is what a background build does in this
// process, and what a compile job with Preinit does in the child.
func (h *Host) takeSnapshot(ctx context.Context, name, wasmPath, digest string, plain *plainModule) (*Module, error) {
	if m := h.cachedSnapshot(name, digest, plain); m != nil {
		return m, nil
	}
	if h.preinitRefused(digest) {
		return nil, fmt.Errorf("%w (remembered in the cache)", errPreinitRefused)
	}
	wasm, _, err := readVerified(name, wasmPath, digest)
	if err != nil {
		return nil, err
	}
	snap, err := preinitialize(ctx, wasm, preinitTimeout)
	if err == nil {
		mod, cerr := compileGuarded(h.engine, snap)
		if cerr == nil {
			m := newPreinitModule(name, digest, "compiled", mod, plain)
			if m == nil {
				// newModule refused it, as it would the module as installed: nothing to remember.
				return nil, fmt.Errorf("%w: the snapshot is not a module of the host ABI", errPreinitRefused)
			}
			if h.cacheDir != "" {
				// Written by rename, code first and its sidecar last: a build killed half way
				// leaves no entry that a reader would take (entryFromCache).
				if body, err := mod.Serialize(); err == nil {
					_ = h.toCache(digest, kindPreinit, body)
				}
			}
			return m, nil
		}
		err = fmt.Errorf("%w: the snapshot does not compile: %v", errPreinitRefused, cerr)
	}
	h.rememberRefusal(digest, err)
	return nil, err
}

// newPreinitModule is newModule for a snapshot, or nil when newModule refuses it (the module
// as installed then fails to load with the same error).
func newPreinitModule(name, digest, loaded string, mod *wasmtime.Module, plain *plainModule) *Module {
	m, err := newModule(name, digest, loaded, mod)
	if err != nil {
		return nil
	}
	m.plain = plain
	for _, e := range mod.Exports() {
		if mt := e.Type().MemoryType(); mt != nil && e.Name() == "memory" {
			m.preinitMemory = int64(mt.Minimum()) * wasmPage
		}
	}
	return m
}

// compileFirst has Options.CompileElsewhere fill the cache when the entry for wasm is missing.
// Its failure is not Load's: Load compiles here instead.
func (h *Host) compileFirst(name, wasmPath, digest string, wasm []byte) {
	if h.compileElsewhere == nil || h.cacheDir == "" {
		return
	}
	kind := kindModule
	switch {
	case isComponent(wasm):
		kind = kindComponent
	case wantsPreinit(wasm):
		// A snapshot in the cache is all Load needs; without one, Load needs the module as
		// installed, and the snapshot is built afterwards (preinit_background.go).
		if _, err := os.Stat(h.cachePath(digest, kindPreinit) + ".sum"); err == nil {
			return
		}
	}
	// An entry is complete only with its sidecar, written last.
	if _, err := os.Stat(h.cachePath(digest, kind) + ".sum"); err == nil {
		return
	}
	_ = h.compileElsewhere(CompileJob{Name: name, WasmPath: wasmPath, Digest: digest, CacheDir: h.cacheDir, Fuel: h.fuel})
}

// readVerified reads the file at wasmPath and checks it against digest. The stamp is taken
// before the read: a file replaced after it has another stamp, so the next check reads again.
func readVerified(name, wasmPath, digest string) ([]byte, fileStamp, error) {
	stamp, err := stampOf(wasmPath, time.Now())
	if err != nil {
		return nil, fileStamp{}, fmt.Errorf("load component %s: %w", name, err)
	}
	wasm, err := os.ReadFile(wasmPath)
	if err != nil {
		return nil, fileStamp{}, fmt.Errorf("load component %s: %w", name, err)
	}
	if got := digestOf(wasm); got != digest {
		return nil, fileStamp{}, changedError(name, wasmPath, got, digest)
	}
	return wasm, stamp, nil
}

// recheck makes sure the file at wasmPath is still one with the slot's digest before a Load
// hands out the module compiled from it: a stat when it did not change since it was checked,
// a full read and hash when it did (or was never checked at this path).
func (s *moduleSlot) recheck(name, wasmPath, digest string) error {
	stamp, err := stampOf(wasmPath, time.Now())
	if err != nil {
		return fmt.Errorf("load component %s: %w", name, err)
	}
	s.mu.Lock()
	known, ok := s.verified[wasmPath]
	s.mu.Unlock()
	if ok && known == stamp && stamp != (fileStamp{}) {
		return nil
	}
	_, stamp, err = readVerified(name, wasmPath, digest)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.verified[wasmPath] = stamp
	s.mu.Unlock()
	return nil
}

// changedError says which component's file changed, and both digests.
func changedError(name, wasmPath, got, want string) error {
	return fmt.Errorf("load component %s: %w: %s is %s, but %s was installed (the digest in its manifest, which the plan locked); it is not run. Reinstall the component: fuscia component remove %s, then fuscia component install its .fcpkg",
		name, ErrModuleChanged, wasmPath, got, want, name)
}

// compileGuarded compiles wasm with its memory.grow instructions guarded (growguard.go). A
// module the rewrite does not understand, or whose rewrite wasmtime refuses, is compiled as it
// is: it still runs under the same cap, and Invoke infers a denial from its memory's size.
func compileGuarded(engine *wasmtime.Engine, wasm []byte) (*wasmtime.Module, error) {
	guarded, err := guardGrowth(wasm)
	if errors.Is(err, errGuardReserved) {
		return nil, err
	}
	if err == nil {
		if mod, err := wasmtime.NewModule(engine, guarded); err == nil {
			return mod, nil
		}
	}
	return wasmtime.NewModule(engine, wasm)
}

// digestOf is the manifest form of a wasm file's digest.
func digestOf(wasm []byte) string {
	sum := sha256.Sum256(wasm)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// newModule checks the ABI's exports and that every import is one the host provides.
func newModule(name, digest, loaded string, mod *wasmtime.Module) (*Module, error) {
	exports := map[string]string{}
	signatures := map[string]string{}
	hasInit, guarded := false, false
	for _, e := range mod.Exports() {
		ty := e.Type()
		switch {
		case ty.FuncType() != nil:
			exports[e.Name()] = "func"
			signatures[e.Name()] = signature(ty.FuncType())
		case ty.MemoryType() != nil:
			exports[e.Name()] = "memory"
		}
		if e.Name() == "_initialize" && ty.FuncType() != nil {
			hasInit = true
		}
		// compileGuarded refuses a module that exports this name itself, so here it is ours.
		if e.Name() == growGuardExport && ty.GlobalType() != nil {
			guarded = true
		}
	}
	want := []struct {
		name string
		kind string
	}{{"memory", "memory"}, {"fuscia_abi_v1", "func"}, {"fuscia_alloc", "func"}, {"fuscia_call", "func"}}
	var missing []string
	for _, w := range want {
		if k, ok := exports[w.name]; !ok || k != w.kind {
			missing = append(missing, w.name)
		}
	}
	var mistyped []string
	for _, w := range abiSignatures {
		if got, ok := signatures[w.name]; ok && got != w.want {
			mistyped = append(mistyped, fmt.Sprintf("%s has type %s, not %s", w.name, got, w.want))
		}
	}
	var foreign []string
	for _, imp := range mod.Imports() {
		mn := imp.Module()
		if mn != "fuscia" && mn != "wasi_snapshot_preview1" {
			n := ""
			if imp.Name() != nil {
				n = *imp.Name()
			}
			foreign = append(foreign, mn+"."+n)
		}
	}
	switch {
	case len(missing) > 0:
		mod.Close()
		return nil, fmt.Errorf("load component %s: the module does not export %s: it was not built for the Fuscia host ABI v%d (build it with hostabi/guest)", name, strings.Join(missing, ", "), ABIVersion)
	case len(mistyped) > 0:
		mod.Close()
		return nil, fmt.Errorf("load component %s: %s: it was not built for the Fuscia host ABI v%d (build it with hostabi/guest)", name, strings.Join(mistyped, "; "), ABIVersion)
	case len(foreign) > 0:
		mod.Close()
		return nil, fmt.Errorf("load component %s: the module imports %s, which the Fuscia host does not provide (only the fuscia and wasi_snapshot_preview1 modules)", name, strings.Join(foreign, ", "))
	}
	return &Module{Name: name, Digest: digest, Loaded: loaded, mod: mod, hasInit: hasInit, guarded: guarded}, nil
}

// abiSignatures are the types ABI v1 gives its exported functions (docs/reference/abi-v1.md).
// The host calls them with these arguments and reads these results: a module that declares
// others is refused at load, not met with a wrong value in the middle of an attempt.
var abiSignatures = []struct{ name, want string }{
	{"fuscia_abi_v1", "() -> ()"},
	{"fuscia_alloc", "(i32) -> i32"},
	{"fuscia_call", "(i32, i32) -> i64"},
	{"_initialize", "() -> ()"},
}

// signature writes a function type as "(i32, i32) -> i64", or "() -> ()" with no results.
func signature(ft *wasmtime.FuncType) string {
	list := func(types []*wasmtime.ValType) string {
		names := make([]string, len(types))
		for i, t := range types {
			names[i] = t.Kind().String()
		}
		return "(" + strings.Join(names, ", ") + ")"
	}
	results := list(ft.Results())
	if len(ft.Results()) == 1 {
		results = strings.Trim(results, "()")
	}
	return list(ft.Params()) + " -> " + results
}

// The disk cache holds one entry per digest, kind and engine configuration (entryFromCache):
// the serialized code, and a sidecar whose first line is cacheMagic.
const cacheMagic = "fuscia-cwasm-2\n"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Kinds of cache entry: a core module's and a component's serialized code differ, and
// wasmtime would refuse the one as the other; the kind in the key keeps them apart. A
// component's kind carries the version of its grow guard (growguard_component.go).
const (
	kindModule    = ""
	kindComponent = ";component;componentguard=" + componentGuardVersion
)

func (h *Host) cacheKey(digest, kind string) string { return digest + ";" + h.configID + kind + "\n" }

// CachePath is the cache file of a core module's digest under this host's configuration.
func (h *Host) CachePath(digest string) string { return h.cachePath(digest, kindModule) }

func (h *Host) cachePath(digest, kind string) string {
	sum := sha256.Sum256([]byte(h.cacheKey(digest, kind)))
	return filepath.Join(h.cacheDir, hex.EncodeToString(sum[:16])+".cwasm")
}

// A cache entry is two files: the code as wasmtime serialized it, which wasmtime maps instead
// of reading (the JavaScript example serializes to 52 MB: copying that took 175 ms, mapping it
// 2 ms; and mapped code is file pages the kernel can drop, not the daemon's anonymous memory),
// and beside it a sidecar, PATH.sum: the magic, the key, the CRC-32C and the length of the
// code. wasmtime refuses code from another wasmtime version or configuration itself, but
// trusts the bytes otherwise; the key and checksum make sure a damaged or foreign entry is
// rebuilt instead of loaded. The code is written first, so a sidecar always describes a
// complete file; a reader that finds them out of step (another process replacing the entry)
// sees a wrong length or sum and compiles.

// entryFromCache checks the entry for digest and kind and returns the path of its code.
func (h *Host) entryFromCache(digest, kind string) (string, error) {
	path := h.cachePath(digest, kind)
	sum, err := os.ReadFile(path + ".sum")
	if err != nil {
		return "", err
	}
	header := cacheMagic + h.cacheKey(digest, kind)
	if !bytes.HasPrefix(sum, []byte(header)) || len(sum) != len(header)+12 {
		return "", errors.New("cache entry of another digest, version or configuration")
	}
	want, size := binary.BigEndian.Uint32(sum[len(header):]), binary.BigEndian.Uint64(sum[len(header)+4:])
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	crc := crc32.New(castagnoli)
	n, err := io.CopyBuffer(crc, f, make([]byte, 1<<20))
	if err != nil {
		return "", err
	}
	if uint64(n) != size || crc.Sum32() != want {
		return "", errors.New("damaged cache entry")
	}
	// wasmtime opens the path again to map it: an entry replaced in between (by rename, the
	// only way entries are written) is another complete entry of the same key.
	noteCacheUse(path, time.Now())
	return path, nil
}

// toCache writes the entry for digest and kind: the code, then its sidecar.
func (h *Host) toCache(digest, kind string, body []byte) error {
	path := h.cachePath(digest, kind)
	if err := h.writeCacheFile(path, body); err != nil {
		return err
	}
	return h.writeCacheFile(path+".sum", h.cacheHeader(digest, kind, body))
}

// cacheHeader is the magic, the key, the CRC-32C and the length of body.
func (h *Host) cacheHeader(digest, kind string, body []byte) []byte {
	header := cacheMagic + h.cacheKey(digest, kind)
	buf := make([]byte, 0, len(header)+12)
	buf = append(buf, header...)
	buf = binary.BigEndian.AppendUint32(buf, crc32.Checksum(body, castagnoli))
	return binary.BigEndian.AppendUint64(buf, uint64(len(body)))
}

// writeCacheFile writes the parts, one after the other, as the file at path, atomically.
func (h *Host) writeCacheFile(path string, parts ...[]byte) error {
	// Private like the home the cache is in (and creates when missing: MkdirAll gives the
	// parents this mode too); CreateTemp makes the entries 0600.
	if err := os.MkdirAll(h.cacheDir, 0o700); err != nil {
		return err
	}
	h.tidyCache.Do(func() {
		now := time.Now()
		removeStaleCacheTemps(h.cacheDir, now)
		trimCache(h.cacheDir, now)
	})
	tmp, err := os.CreateTemp(h.cacheDir, cacheTempPrefix+"*"+cacheTempSuffix)
	if err != nil {
		return err
	}
	var werr error
	for _, p := range parts {
		if _, werr = tmp.Write(p); werr != nil {
			break
		}
	}
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	// Rename is atomic: another process sees the old entry, none, or this one, never half.
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// A cache entry is written as a temporary file and renamed. A process killed during the write
// (a compile child at its daemon's shutdown, a crash) leaves the temporary file, compiled code
// of megabytes, which nothing would ever read or remove.
const (
	cacheTempPrefix = ".tmp-"
	cacheTempSuffix = ".cwasm"
	// staleCacheTemp is the age past which a temporary file is such a leftover: a write takes
	// moments, and another process sharing the cache may be writing one right now.
	staleCacheTemp = time.Hour
)

// removeStaleCacheTemps removes the temporary files in dir older than staleCacheTemp. It is
// best effort: the cache works with or without them.
func removeStaleCacheTemps(dir string, now time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, cacheTempPrefix) || !strings.HasSuffix(name, cacheTempSuffix) {
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) >= staleCacheTemp {
			_ = os.Remove(filepath.Join(dir, name)) // gone meanwhile, or not ours to remove: either way, leave it
		}
	}
}
