package hostabi

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/fuscia/fuscia/hostabi/guesttest"
)

// preinitWAT builds a module whose _initialize leaves traces of itself that fuscia_call
// answers with, 40 bytes from 1024: [0,16) 16 bytes from WASI random_get, [16,20) what
// fd_prestat_get(3) returned (0 with a preopened directory, 8 without), [20,24) how many times
// _initialize ran in this instance, [24,28) a mutable f64 global set by _initialize, truncated
// (2), [28,32) an immutable global (42), [32,36) a byte fuscia_preinit stored (99) and the first
// byte of a data segment ('h'). export adds exports (fuscia_preinit), init more of _initialize,
// extra more module fields.
func preinitWAT(t testing.TB, export, init, extra string) []byte {
	t.Helper()
	src := fmt.Sprintf(`(module
  (import "wasi_snapshot_preview1" "random_get" (func $random (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_get" (func $prestat (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "fuscia" "log" (func $log (param i32 i32 i32)))
  (memory (export "memory") 2)
  (global $heap (mut i32) (i32.const 65536))
  (global $inits (mut i32) (i32.const 0))
  (global $f (mut f64) (f64.const 0))
  (global $k i32 (i32.const 42))
  (data (i32.const 2048) "hello\n")
  (func (export "fuscia_abi_v1"))
  (func (export "fuscia_alloc") (param $n i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $heap))
    (global.set $heap (i32.add (global.get $heap) (local.get $n)))
    (local.get $p))
  (func (export "_initialize")
    (global.set $inits (i32.add (global.get $inits) (i32.const 1)))
    (global.set $f (f64.const 2.5))
    (drop (call $random (i32.const 1024) (i32.const 16)))
    (i32.store (i32.const 1040) (call $prestat (i32.const 3) (i32.const 1100)))
    %s)
  %s
  %s
  (func (export "fuscia_call") (param i32 i32) (result i64)
    (i32.store (i32.const 1044) (global.get $inits))
    (i32.store (i32.const 1048) (i32.trunc_f64_s (global.get $f)))
    (i32.store (i32.const 1052) (global.get $k))
    (i32.store8 (i32.const 1057) (i32.load8_u (i32.const 2048)))
    (i64.const %d)))`, init, export, extra, int64(1024)<<32|40)
	wasm, err := wasmtime.Wat2Wasm(src)
	if err != nil {
		t.Fatalf("wat: %v\n%s", err, src)
	}
	return wasm
}

const preinitFunc = `(func (export "fuscia_preinit") (i32.store8 (i32.const 1056) (i32.const 99)))`

// initTrace is what a preinitWAT module answers.
type initTrace struct {
	random             [16]byte
	prestat, inits     uint32
	f, k               uint32
	preinitRan, dataOK bool
}

func traceOf(t *testing.T, h *testHost, m *Module, env *Env) initTrace {
	t.Helper()
	resp, err := h.Invoke(context.Background(), m, env, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp) != 40 {
		t.Fatalf("response of %d bytes", len(resp))
	}
	var tr initTrace
	copy(tr.random[:], resp)
	tr.prestat = binary.LittleEndian.Uint32(resp[16:])
	tr.inits = binary.LittleEndian.Uint32(resp[20:])
	tr.f = binary.LittleEndian.Uint32(resp[24:])
	tr.k = binary.LittleEndian.Uint32(resp[28:])
	tr.preinitRan, tr.dataOK = resp[32] == 99, resp[33] == 'h'
	return tr
}

// TestPreinitSnapshot: a module that exports fuscia_preinit runs _initialize (and
// fuscia_preinit) once, at load; every attempt starts from what they left: the same bytes of
// randomness, globals and memory as they set them, _initialize counted once. Without the
// export, each attempt runs _initialize afresh and draws other random bytes.
func TestPreinitSnapshot(t *testing.T) {
	h := newTestHost(t, Options{})
	m := h.loadSnapshot(t, "t/preinit", preinitWAT(t, preinitFunc, "", ""))
	if m.plain == nil || m.hasInit {
		t.Fatalf("not pre-initialized (plain %v, _initialize exported %t)", m.plain, m.hasInit)
	}
	first := traceOf(t, h, m, nil)
	want := initTrace{random: first.random, prestat: 8, inits: 1, f: 2, k: 42, preinitRan: true, dataOK: true}
	if first != want {
		t.Fatalf("first attempt: %+v; want %+v", first, want)
	}
	for range 3 {
		if got := traceOf(t, h, m, nil); got != first {
			t.Fatalf("another attempt: %+v; want the snapshot's %+v", got, first)
		}
	}

	plain := h.load(t, "t/plain", preinitWAT(t, "", "", ""))
	if plain.plain != nil || !plain.hasInit {
		t.Fatal("a module without fuscia_preinit was pre-initialized")
	}
	a, b := traceOf(t, h, plain, nil), traceOf(t, h, plain, nil)
	if a.random == b.random || a.inits != 1 || a.preinitRan {
		t.Fatalf("without fuscia_preinit: %+v then %+v; want _initialize in each attempt", a, b)
	}
}

// TestPreinitRefused: a module whose structure a snapshot cannot hold, or whose _initialize
// does something an attempt must see, runs as installed: _initialize in every attempt, with
// its effects reaching each attempt as before.
func TestPreinitRefused(t *testing.T) {
	tests := map[string]struct {
		init, extra string
		logs        string // what each attempt's log must have
	}{
		"a host call in _initialize": {init: `(call $log (i32.const 1) (i32.const 2048) (i32.const 5))`, logs: "info: hello"},
		"output in _initialize": {
			init: `(i32.store (i32.const 3000) (i32.const 2048)) (i32.store (i32.const 3004) (i32.const 6))
			       (drop (call $fd_write (i32.const 1) (i32.const 3000) (i32.const 1) (i32.const 3008)))`,
			logs: "info: hello",
		},
		"a start function": {extra: `(func $start) (start $start)`},
		"a table.set":      {extra: `(table 1 funcref) (func (table.set (i32.const 0) (ref.null func)))`},
		"passive data":     {extra: `(data $p "x") (func (memory.init $p (i32.const 0) (i32.const 0) (i32.const 1)))`},
		"a v128 global":    {extra: `(global (mut v128) (v128.const i64x2 0 0))`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			h := newTestHost(t, Options{})
			m := h.loadSnapshot(t, "t/refused", preinitWAT(t, preinitFunc, tt.init, tt.extra))
			if m.plain != nil || !m.hasInit {
				t.Fatal("pre-initialized; want the module as installed")
			}
			for range 2 {
				var logs logRec
				tr := traceOf(t, h, m, &Env{Log: logs.log})
				if tr.inits != 1 || tr.preinitRan {
					t.Fatalf("%+v; want _initialize run in the attempt, fuscia_preinit not", tr)
				}
				if tt.logs != "" && !strings.Contains(logs.all(), tt.logs) {
					t.Fatalf("attempt logs %q; want %q", logs.all(), tt.logs)
				}
			}
		})
	}

	// A fuscia_preinit that traps refuses the snapshot too.
	h := newTestHost(t, Options{})
	m := h.loadSnapshot(t, "t/trapping", preinitWAT(t, `(func (export "fuscia_preinit") unreachable)`, "", ""))
	if m.plain != nil {
		t.Fatal("a module whose fuscia_preinit traps was pre-initialized")
	}
	if tr := traceOf(t, h, m, nil); tr.inits != 1 {
		t.Fatalf("%+v", tr)
	}

	// So does an _initialize that traps; its attempts fail as they always did.
	m = h.loadSnapshot(t, "t/init-traps", preinitWAT(t, preinitFunc, "unreachable", ""))
	if m.plain != nil {
		t.Fatal("a module whose _initialize traps was pre-initialized")
	}
	_, err := h.Invoke(context.Background(), m, nil, []byte(`{}`))
	wantErr(t, err, Fatal, "trapped in _initialize")
}

// TestPreinitFallback: an attempt the snapshot cannot serve runs the module as installed:
// one with a preopened directory (Go reads its preopens in _initialize; the snapshot saw none),
// and one whose memory cap is below the snapshot's memory, which fails as it always did, in
// _initialize, with the memory limit's error.
func TestPreinitFallback(t *testing.T) {
	h := newTestHost(t, Options{})
	m := h.loadSnapshot(t, "t/preopens", preinitWAT(t, preinitFunc, "", ""))
	if m.plain == nil {
		t.Fatal("not pre-initialized")
	}
	if tr := traceOf(t, h, m, nil); tr.prestat != 8 || !tr.preinitRan {
		t.Fatalf("without allowed paths: %+v; want the snapshot, which saw no preopened directory", tr)
	}
	tr := traceOf(t, h, m, &Env{AllowedPaths: []string{t.TempDir()}})
	if tr.prestat != 0 || tr.preinitRan || tr.inits != 1 {
		t.Fatalf("with an allowed path: %+v; want _initialize run in the attempt, seeing fd 3", tr)
	}

	grows := h.loadSnapshot(t, "t/grows", preinitWAT(t, preinitFunc, `(drop (memory.grow (i32.const 14)))`, ""))
	if grows.plain == nil || grows.preinitMemory != 16*wasmPage {
		t.Fatalf("pre-initialized %t with %d bytes of memory; want 1 MiB", grows.plain != nil, grows.preinitMemory)
	}
	if tr := traceOf(t, h, grows, &Env{MaxMemory: 1 << 20}); !tr.preinitRan {
		t.Fatalf("under a cap the snapshot fits: %+v; want the snapshot", tr)
	}
	_, err := h.Invoke(context.Background(), grows, &Env{MaxMemory: 512 << 10}, []byte(`{}`))
	wantErr(t, err, Fatal, "memory limit of 512 KiB (max_memory) exceeded")
}

// TestPreinitCache: the snapshot is taken once per module: the next process loads it from the
// cache with the same state, and a module refused once is remembered as refused.
func TestPreinitCache(t *testing.T) {
	cache := t.TempDir()
	wasm := preinitWAT(t, preinitFunc, "", "")
	h1 := newTestHost(t, Options{CacheDir: cache})
	first := h1.load(t, "t/cached", wasm)
	waitBuild(t, first)
	m1 := h1.load(t, "t/cached", wasm)
	h2 := newTestHost(t, Options{CacheDir: cache})
	m2 := h2.load(t, "t/cached", wasm)
	if first.Loaded != "compiled" || m1.plain == nil || m2.Loaded != "cache" || m2.plain == nil || m2.build != nil {
		t.Fatalf("loaded %s then %s (pre-initialized %t, %t); want compiled then the snapshot from the cache", first.Loaded, m2.Loaded, m1.plain != nil, m2.plain != nil)
	}
	if a, b := traceOf(t, h1, m1, nil), traceOf(t, h2, m2, nil); a != b {
		t.Fatalf("the cached snapshot answers %+v; the first %+v", b, a)
	}
	// The module as installed, behind the snapshot, is cached too when first needed.
	traceOf(t, h2, m2, &Env{AllowedPaths: []string{t.TempDir()}})
	if _, err := h2.entryFromCache(digestOf(wasm), kindModule); err != nil {
		t.Errorf("the module as installed is not in the cache after an attempt needed it: %v", err)
	}

	refused := preinitWAT(t, preinitFunc, `(call $log (i32.const 1) (i32.const 2048) (i32.const 5))`, "")
	h1.loadSnapshot(t, "t/refused", refused)
	note, err := os.ReadFile(h1.refusalPath(digestOf(refused)))
	if err != nil || !strings.Contains(string(note), "it calls the host (fuscia.log)") {
		t.Fatalf("refusal file: %q, %v", note, err)
	}
	if !h2.preinitRefused(digestOf(refused)) {
		t.Fatal("another host does not see the refusal")
	}
	if m := h2.load(t, "t/refused", refused); m.Loaded != "cache" || m.plain != nil || m.build != nil {
		t.Fatalf("refused module in the next process: %s, pre-initialized %t, build %v; want the cached module as installed and no build", m.Loaded, m.plain != nil, m.build)
	}
	// A snapshot that timed out is tried again by the next process.
	h1.rememberRefusal("sha256:x", errPreinitTimeout)
	if h1.preinitRefused("sha256:x") {
		t.Error("a timeout was remembered as a refusal")
	}
}

// TestPreinitCompileJob: a compile job with Preinit leaves the snapshot in the cache, and a
// host loads it from there.
func TestPreinitCompileJob(t *testing.T) {
	cache := t.TempDir()
	wasm := preinitWAT(t, preinitFunc, "", "")
	h := newTestHost(t, Options{CacheDir: cache})
	path := h.dir + "/component.wasm"
	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CompileToCache(CompileJob{Name: "t/job", WasmPath: path, Digest: digestOf(wasm), CacheDir: cache, Preinit: true}); err != nil {
		t.Fatal(err)
	}
	m, err := h.Load("t/job", path, digestOf(wasm))
	if err != nil || m.Loaded != "cache" || m.plain == nil {
		t.Fatalf("after the job: %+v, %v; want the snapshot from the cache", m, err)
	}
}

// TestPreinitTimeout: an _initialize that does not end is given up on after the timeout.
func TestPreinitTimeout(t *testing.T) {
	wasm := preinitWAT(t, preinitFunc, `(loop $l (br $l))`, "")
	_, err := preinitialize(context.Background(), wasm, 50*time.Millisecond)
	if !errors.Is(err, errPreinitTimeout) {
		t.Fatalf("%v; want the timeout", err)
	}
}

// TestSnapshotData: the data section of a snapshot holds exactly the memory it was made from.
func TestSnapshotData(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, pages := range []int{1, 3, 17} {
		mem := make([]byte, pages*wasmPage)
		for range rng.IntN(40) {
			at := rng.IntN(len(mem))
			n := min(rng.IntN(9000), len(mem)-at)
			for i := range n {
				mem[at+i] = byte(rng.Uint32())
			}
		}
		got := make([]byte, len(mem))
		r := &wasmReader{b: snapshotData(mem)}
		n := r.u32()
		for range n {
			if r.byte() != 0 || r.byte() != 0x41 {
				t.Fatal("not an active segment of memory 0 at an i32.const offset")
			}
			off := int(int32(r.uleb(32)))
			r.byte()
			copy(got[off:], r.take(int(r.u32())))
		}
		if r.err != nil || r.more() {
			t.Fatalf("data section: %v", r.err)
		}
		if !bytes.Equal(got, mem) {
			t.Fatalf("%d pages: the segments do not rebuild the memory", pages)
		}
	}
}

// TestGoGuestPreinitialized: the Go SDK asks for pre-initialization and the host takes the
// snapshot; its attempts answer from it (TestGoGuestText runs the rest of the component's tasks
// on it, its count among them: 1 in every attempt).
func TestGoGuestPreinitialized(t *testing.T) {
	h := newTestHost(t, Options{})
	m := h.loadSnapshot(t, "fuscia/text@1.0.0", guesttest.Wasm(t, "text"))
	if m.plain == nil || m.hasInit {
		t.Fatal("the Go text component was not pre-initialized")
	}
	for range 3 {
		r, err := invokeGuest(t, h, m, nil, context.Background(), "upper", map[string]any{"text": "héllo"})
		if err != nil || r.Type != "success" || !strings.Contains(string(r.Output), `"HÉLLO"`) {
			t.Fatalf("upper: %+v, %v", r, err)
		}
	}
}
