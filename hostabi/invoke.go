package hostabi

import (
	"time"

	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/bytecodealliance/wasmtime-go/v39"
	"go.opentelemetry.io/otel/trace"

	"github.com/fuscia/fuscia/lang/schema"
)

// Level is a log level of the `log` import.
type Level int

// Log levels, as the guest numbers them.
const (
	LevelDebug Level = iota
	LevelInfo
	LevelWarn
	LevelError
)

func (l Level) String() string {
	switch l {
	case LevelDebug:
		return "debug"
	case LevelWarn:
		return "warn"
	case LevelError:
		return "error"
	}
	return "info"
}

// KV is the key-value scope of one call: the execution's for a task, the trigger's for a
// trigger (docs/reference/abi-v1.md).
type KV interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Set(ctx context.Context, key string, value []byte) error
	Delete(ctx context.Context, key string) error
}

// Artifacts stores and reads the blobs of the call's execution.
type Artifacts interface {
	// Write stores data and returns the JSON the guest gets: {"artifact_id", "content_type",
	// "size"}.
	Write(ctx context.Context, contentType string, data []byte) ([]byte, error)
	Read(ctx context.Context, id string) ([]byte, error)
}

// Env is everything one call may reach besides its request. The zero Env grants nothing.
type Env struct {
	// Config holds the component block's config values: strings as their bytes, anything
	// else JSON-encoded (docs/reference/abi-v1.md).
	Config map[string][]byte
	// KV is nil when the call has no scope; kv_* then trap with a message.
	KV        KV
	Artifacts Artifacts
	// HTTP makes http_request's connections; nil refuses every request.
	HTTP *HTTP
	// AllowedPaths are preopened for WASI at the same path, read-write.
	AllowedPaths []string
	// OpenPaths, when it has an allowed path, is the host directory opened for it (its
	// resolved location, capability.ResolveNarrowedPath); the guest still sees the path.
	OpenPaths map[string]string
	// MaxMemory caps linear memory in bytes; 0 means DefaultMaxMemory.
	MaxMemory int64
	// MaxFuel is the CPU budget when the host meters fuel; 0 means unlimited.
	MaxFuel uint64
	// Log receives the guest's log lines and its stdout (info) and stderr (warn).
	Log func(level Level, message string)
	// OutputLimit bounds what is kept of stdout and of stderr; 0 means 64 KiB each.
	OutputLimit int
}

// DefaultOutputLimit is how much of a guest's stdout, and of its stderr, reaches the logs.
const DefaultOutputLimit = 64 << 10

// call is the state of one Invoke, reachable from the host imports through the store's data.
type call struct {
	ctx    context.Context
	host   *Host
	module *Module
	env    *Env

	// violation is the first capability the guest was refused; it fails the attempt whatever
	// the guest answers.
	violation string
	// hostFault is a trap a host import raised (bad pointer, …), reported instead of wasmtime's
	// generic message.
	hostFault string
	// lastImport is the host import a component called last, for a message about its type.
	lastImport string
	stdout     lineWriter
	stderr     lineWriter
}

// Invoke runs one request in a fresh instance of m and returns the guest's JSON response. A
// non-nil error is an *Error: the attempt failed before the guest could answer, or it broke a
// rule (a sandbox violation) whatever it answered.
// maxMemoriesPerAttempt is how many linear memories one attempt's instances may define
// together. Toolchains make one (wit-component's WASI adapter and shims import the main
// module's); a composition of a few components makes one each.
const maxMemoriesPerAttempt = 4

func (h *Host) Invoke(ctx context.Context, m *Module, env *Env, request []byte) ([]byte, error) {
	// Under a span that records (the engine's attempt span, when tracing is on), the attempt's
	// instantiation and call are spans of their own.
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return h.invoke(ctx, m, env, request, nil)
	}
	var times invokeTimes
	resp, err := h.invoke(ctx, m, env, request, &times)
	recordInvokeSpans(ctx, parent, m.Name, times, time.Now(), err)
	return resp, err
}

// invoke is Invoke; it notes the instantiation's times in times, unless nil.
func (h *Host) invoke(ctx context.Context, m *Module, env *Env, request []byte, times *invokeTimes) ([]byte, error) {
	if env == nil {
		env = &Env{}
	}
	if err := ctx.Err(); err != nil {
		return nil, ctxError(ctx, m)
	}
	if !h.enter() {
		return nil, errorf(Fatal, "component %s: the wasm host is closed", m.Name)
	}
	defer h.busy.Done()
	// A module loaded before its snapshot existed switches to it once it does.
	if snap := m.build.snapshot(); snap != nil && snap.preinitServes(env) {
		named := *snap
		named.Name = m.Name
		m = &named
	}
	if m.plain != nil && !m.preinitServes(env) {
		plain, err := m.plain.get()
		if err != nil {
			return nil, errorf(Fatal, "component %s: %v", m.Name, err)
		}
		named := *plain
		named.Name = m.Name
		m = &named
	}
	if h.slots != nil {
		select {
		case h.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctxError(ctx, m)
		}
		// Registered first, so it runs last: the store has released its slot by then.
		defer func() { <-h.slots }()
	}
	c := &call{ctx: ctx, host: h, module: m, env: env}
	limit := env.OutputLimit
	if limit <= 0 {
		limit = DefaultOutputLimit
	}
	c.stdout = lineWriter{level: LevelInfo, stream: "stdout", limit: limit, log: env.Log}
	c.stderr = lineWriter{level: LevelWarn, stream: "stderr", limit: limit, log: env.Log}
	defer c.stdout.flush()
	defer c.stderr.flush()

	wasi := wasmtime.NewWasiConfig()
	// After the store's close, before the flushes: what comes later is not this attempt's log.
	defer captureOutput(wasi, &c.stdout, &c.stderr)()
	for _, p := range env.AllowedPaths {
		open := p
		if real, ok := env.OpenPaths[p]; ok {
			open = real
		}
		if err := wasi.PreopenDir(open, p, wasmtime.DIR_READ|wasmtime.DIR_WRITE, wasmtime.FILE_READ|wasmtime.FILE_WRITE); err != nil {
			wasi.Close()
			return nil, errorf(Fatal, "component %s: cannot open allowed path %s: %v", m.Name, p, err)
		}
	}
	flag := newStopFlag()
	defer flag.free()
	store := wasmtime.NewStoreWithData(h.engine, c)
	// Deferred last-registered-first: the store closes before the flag and handles it uses
	// are freed.
	defer store.Close()
	store.SetWasi(wasi)
	maxMem := env.MaxMemory
	if maxMem <= 0 {
		maxMem = DefaultMaxMemory
	}
	// max_memory caps each linear memory; the count bounds their sum (a component may hold a
	// core instance, and a memory, per module it embeds) and the pool's slots one attempt takes.
	store.Limiter(maxMem, -1, -1, -1, maxMemoriesPerAttempt)
	if h.fuel {
		fuel := env.MaxFuel
		if fuel == 0 {
			fuel = math.MaxUint64
		}
		if err := store.SetFuel(fuel); err != nil {
			return nil, errorf(Fatal, "component %s: set fuel: %v", m.Name, err)
		}
	}
	interruptOn(store, flag)
	// Deferred after flag.free, so it runs first: no set is under way once the flag is freed.
	defer setOnDone(ctx, flag.set)()
	h.ticker.enter()
	defer h.ticker.leave()

	if m.comp != nil {
		return c.invokeComponent(store, request, flag, times)
	}
	times.instantiating()
	began := time.Now()
	inst, err := h.linker.Instantiate(store, m.mod)
	if h.onInstantiate != nil {
		h.onInstantiate(time.Since(began))
	}
	if err != nil {
		return nil, c.failure(store, nil, nil, "instantiate", err, flag)
	}
	mem := inst.GetExport(store, "memory").Memory()
	if m.hasInit {
		if _, err := callExport(store, inst, "_initialize", 0); err != nil {
			return nil, c.failure(store, inst, mem, "_initialize", err, flag)
		}
	}
	times.instantiatedAt(time.Now())
	ptr, err := guestAlloc(store, inst, mem, len(request))
	if err != nil {
		return nil, c.failure(store, inst, mem, "fuscia_alloc", err, flag)
	}
	copy(mem.UnsafeData(store)[ptr:], request)
	packed, err := callExport(store, inst, "fuscia_call", 1, int32(ptr), int32(len(request)))
	if err != nil {
		return nil, c.failure(store, inst, mem, "fuscia_call", err, flag)
	}
	if c.violation != "" {
		return nil, errorf(SandboxViolation, "component %s: %s", m.Name, c.violation)
	}
	// A guest that was denied memory fails whatever it answers (docs/reference/abi-v1.md).
	if err := c.memoryDenied(store, inst, mem); err != nil {
		return nil, err
	}
	resp, ok := guestBytes(mem.UnsafeData(store), packed)
	if !ok {
		return nil, errorf(Fatal, "component %s: fuscia_call returned a response outside guest memory (ptr %d, len %d, memory %d bytes)",
			m.Name, uint64(packed)>>32, uint32(packed), mem.DataSize(store))
	}
	return bytes.Clone(resp), nil
}

// setOnDone calls set when ctx ends, until the function it returns is called. That function
// returns only once no call of set is under way: context.AfterFunc's stop does not wait for a
// call that has already begun, and the flag set writes to is C memory freed right after (a
// write into a freed malloc chunk corrupts the allocator, with no Go check to catch it).
func setOnDone(ctx context.Context, set func()) (unwatch func()) {
	finished := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(finished)
		set()
	})
	return func() {
		if !stop() {
			<-finished
		}
	}
}

// guestAlloc calls fuscia_alloc and checks the pointer it returns.
func guestAlloc(store *wasmtime.Store, inst *wasmtime.Instance, mem *wasmtime.Memory, n int) (uint32, error) {
	r, err := callExport(store, inst, "fuscia_alloc", 1, int32(n))
	if err != nil {
		return 0, err
	}
	p := uint32(r)
	if uint64(p)+uint64(n) > uint64(mem.DataSize(store)) {
		return 0, fmt.Errorf("fuscia_alloc(%d) returned %d, outside guest memory (%d bytes)", n, p, mem.DataSize(store))
	}
	return p, nil
}

// guestBytes is the (ptr << 32 | len) slice of guest memory, if it lies inside.
func guestBytes(data []byte, packed int64) ([]byte, bool) {
	p, n := uint64(packed)>>32, uint64(uint32(packed))
	if p+n > uint64(len(data)) {
		return nil, false
	}
	return data[p : p+n], true
}

// failure explains why the guest did not answer.
func (c *call) failure(store *wasmtime.Store, inst *wasmtime.Instance, mem *wasmtime.Memory, stage string, err error, flag stopFlag) *Error {
	m := c.module
	if flag.isSet() {
		return ctxError(c.ctx, m)
	}
	if c.violation != "" {
		return errorf(SandboxViolation, "component %s: %s", m.Name, c.violation)
	}
	if c.hostFault != "" {
		return errorf(Fatal, "component %s: %s", m.Name, c.hostFault)
	}
	if denied := c.memoryDenied(store, inst, mem); denied != nil {
		return denied
	}
	if limit := c.memoryLimit(); !c.module.guarded && mem != nil && c.nearMemoryCap(store, mem, limit) {
		return c.outOfMemory(limit)
	}
	var werr *wasmtimeError
	if errors.As(err, &werr) && werr.exited {
		return errorf(Fatal, "component %s: the guest exited with status %d in %s%s", m.Name, werr.exitStatus, stage, c.stderr.lastLine())
	}
	msg := trapSummary(err.Error())
	if strings.Contains(msg, "all fuel consumed") {
		return errorf(Fatal, "component %s: the guest used up its CPU budget of %d fuel (max_fuel)", m.Name, c.env.MaxFuel)
	}
	return errorf(Fatal, "component %s: the guest trapped in %s: %s%s", m.Name, stage, msg, c.stderr.lastLine())
}

// memoryDenied is the attempt's error when the guest asked for memory past its cap, or nil.
// A guarded module (growguard.go) says exactly what it was refused; for any other, a guest
// that answers with its memory within a page of the cap is taken to have been refused.
func (c *call) memoryDenied(store *wasmtime.Store, inst *wasmtime.Instance, mem *wasmtime.Memory) *Error {
	limit := c.memoryLimit()
	if !c.module.guarded {
		if mem != nil && int64(mem.DataSize(store))+wasmPage > limit {
			return c.outOfMemory(limit)
		}
		return nil
	}
	if inst == nil {
		return nil
	}
	denied, ok := globalI64(store, inst, growGuardExport)
	if !ok {
		return nil
	}
	pages := uint64(denied)
	if pages <= uint64(limit)/wasmPage {
		// Refused below the cap: by the module's own declared maximum, not by Fuscia.
		return nil
	}
	asked := "more than 16 EiB"
	if pages < 1<<(63-16) {
		asked = schema.FormatSize(int64(pages) * wasmPage)
	}
	return errorf(Fatal, "component %s: memory limit of %s (max_memory) exceeded: memory.grow to %s was denied; raise max_memory or use less",
		c.module.Name, schema.FormatSize(limit), asked)
}

func (c *call) outOfMemory(limit int64) *Error {
	return errorf(Fatal, "component %s: the guest ran out of memory: its linear memory is capped at %s (max_memory); raise max_memory or use less", c.module.Name, schema.FormatSize(limit))
}

func (c *call) memoryLimit() int64 {
	if c.env.MaxMemory > 0 {
		return c.env.MaxMemory
	}
	return DefaultMaxMemory
}

// nearMemoryCap guesses, for a module that could not be guarded (growguard.go), that a failure
// came from a denied memory.grow: a guest that failed with its memory within one growth step
// of the cap, or that said it ran out of memory on stderr (Go's and Rust's runtimes do), is
// taken to have hit the cap. Such a guest that answers after a denial is caught only when its
// memory is within a page of the cap (memoryDenied).
func (c *call) nearMemoryCap(store *wasmtime.Store, mem *wasmtime.Memory, limit int64) bool {
	const goArena = 4 << 20 // Go's wasm heap grows 4 MiB at a time
	size := int64(mem.DataSize(store))
	// Go: "fatal error: out of memory"; Rust: "memory allocation of N bytes failed".
	return size+goArena+wasmPage > limit || c.stderr.saw("out of memory") || c.stderr.saw("memory allocation of")
}

const wasmPage = 64 << 10

func ctxError(ctx context.Context, m *Module) *Error {
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errorf(Timeout, "component %s: the guest was stopped at its timeout", m.Name)
	}
	return errorf(Cancelled, "component %s: the guest was interrupted: the run was cancelled", m.Name)
}

// trapSummary is the cause of a wasmtime error without its backtrace: wasmtime writes
// "error while executing at wasm backtrace: … Caused by: CAUSE".
func trapSummary(s string) string {
	// A native backtrace (RUST_BACKTRACE=1 without RUST_LIB_BACKTRACE=0) is of no use here.
	s, _, _ = strings.Cut(s, "Stack backtrace:")
	if _, cause, ok := strings.Cut(s, "Caused by:"); ok {
		var parts []string
		for _, l := range strings.Split(cause, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				parts = append(parts, strings.TrimPrefix(l, "wasm trap: "))
			}
		}
		return strings.Join(parts, ": ")
	}
	return firstLine(s)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// lineWriter turns a WASI stream into log lines, keeping at most limit bytes.
type lineWriter struct {
	mu      sync.Mutex
	level   Level
	stream  string
	limit   int
	written int
	partial []byte
	seen    []string // the first lines, and the last one in the final slot: for messages
	cut     bool
	log     func(Level, string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	if w.written >= w.limit {
		if n > 0 {
			w.truncate()
		}
		return n, nil
	}
	over := false
	if room := w.limit - w.written; len(p) > room {
		p, over = p[:room], true
	}
	w.written += len(p)
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.emit(string(w.partial[:i]))
		w.partial = w.partial[i+1:]
	}
	if over {
		// Something was dropped now: say so at once, not only if another write comes.
		w.truncate()
	}
	return n, nil
}

// truncate logs the line the limit cut, as far as it got, and the note that the rest of the
// stream is dropped; once.
func (w *lineWriter) truncate() {
	if w.cut {
		return
	}
	w.cut = true
	if len(w.partial) > 0 {
		w.emit(string(w.partial))
		w.partial = nil
	}
	w.emit(fmt.Sprintf("[%s truncated after %s]", w.stream, schema.FormatSize(int64(w.limit))))
}

func (w *lineWriter) emit(line string) {
	line = strings.TrimRight(line, "\r")
	if len(w.seen) < 8 {
		w.seen = append(w.seen, line)
	} else {
		w.seen[len(w.seen)-1] = line
	}
	if w.log != nil {
		w.log(w.level, line)
	}
}

func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		w.emit(string(w.partial))
		w.partial = nil
	}
}

// lastLine is ` (stderr: LINE)` for messages, or "": the line that says why a guest died
// (Go's "panic: …" or "fatal error: …") when there is one, else the last line.
func (w *lineWriter) lastLine() string {
	w.flush()
	w.mu.Lock()
	defer w.mu.Unlock()
	line := ""
	if len(w.seen) > 0 {
		line = w.seen[len(w.seen)-1]
	}
	for _, l := range w.seen {
		if strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") {
			line = l
			break
		}
	}
	if line == "" {
		return ""
	}
	return fmt.Sprintf(" (%s: %s)", w.stream, line)
}

func (w *lineWriter) saw(s string) bool {
	w.flush()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range w.seen {
		if strings.Contains(l, s) {
			return true
		}
	}
	return strings.Contains(string(w.partial), s)
}
