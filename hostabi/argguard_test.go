package hostabi

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bytecodealliance/wasmtime-go/v39"
)

// argGuardWAT is a core module that imports the three guarded functions of the host interface
// from module mod and exports, for each, a function that calls it directly ("NAME"), by a tail
// call ("NAME-tail") and through a table ("NAME-indirect"), forwarding its parameters.
func argGuardWAT(mod string) string {
	type imp struct{ name, params string }
	imps := []imp{
		{"kv-set", "i32 i32 i32 i32"},
		{"artifact-write", "i32 i32 i32 i32 i32"},
		{"http-request", "i32 i32 i32 i32 i32 i32 i32 i32 i32 i64 i32"},
	}
	var b strings.Builder
	b.WriteString("(module\n")
	for i, im := range imps {
		fmt.Fprintf(&b, "  (type $t%d (func (param %s)))\n", i, im.params)
		fmt.Fprintf(&b, "  (import %q %q (func $i%d (type $t%d)))\n", mod, im.name, i, i)
	}
	b.WriteString("  (table 3 funcref) (elem (i32.const 0) $i0 $i1 $i2)\n")
	for i, im := range imps {
		var gets strings.Builder
		for p := range strings.Fields(im.params) {
			fmt.Fprintf(&gets, " (local.get %d)", p)
		}
		fmt.Fprintf(&b, "  (func (export %q) (type $t%d) (call $i%d%s))\n", im.name, i, i, gets.String())
		fmt.Fprintf(&b, "  (func (export \"%s-tail\") (type $t%d) (return_call $i%d%s))\n", im.name, i, i, gets.String())
		fmt.Fprintf(&b, "  (func (export \"%s-indirect\") (type $t%d) (call_indirect (type $t%d)%s (i32.const %d)))\n", im.name, i, i, gets.String(), i)
	}
	b.WriteString(")")
	return b.String()
}

// argGuardRun instantiates the core module wasm with Go functions for its imports, which record
// their calls, and calls its export fn with args. It returns the calls the imports saw, as
// "NAME(ARGS)", and the call's error.
func argGuardRun(t *testing.T, engine *wasmtime.Engine, wasm []byte, fn string, args ...any) ([]string, error) {
	t.Helper()
	mod, err := wasmtime.NewModule(engine, wasm)
	if err != nil {
		t.Fatalf("wasmtime refuses the module: %v", err)
	}
	defer mod.Close()
	store := wasmtime.NewStore(engine)
	defer store.Close()
	store.SetEpochDeadline(1 << 40) // the host's engine interrupts at epochs: never here
	var calls []string
	var imports []wasmtime.AsExtern
	for _, im := range mod.Imports() {
		name := *im.Name()
		ft := im.Type().FuncType()
		if ft == nil {
			t.Fatalf("import %s is not a function", name)
		}
		imports = append(imports, wasmtime.NewFunc(store, ft, func(_ *wasmtime.Caller, vals []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
			s := make([]string, len(vals))
			for i, v := range vals {
				s[i] = fmt.Sprint(v.Get())
			}
			calls = append(calls, name+"("+strings.Join(s, ",")+")")
			return nil, nil
		}))
	}
	inst, err := wasmtime.NewInstance(store, mod, imports)
	if err != nil {
		t.Fatal(err)
	}
	f := inst.GetFunc(store, fn)
	if f == nil {
		t.Fatalf("no export %s", fn)
	}
	_, err = f.Call(store, args...)
	return calls, err
}

// TestArgGuard: in the trap mode, a call of kv-set, artifact-write or http-request of the host
// interface whose length argument is past the host's limit traps in the helper named after the
// import, before the import runs; a call within the limits reaches the import with its
// arguments unchanged.
func TestArgGuard(t *testing.T) {
	h := newTestHost(t, Options{})
	wasm, err := wasmtime.Wat2Wasm(argGuardWAT("fuscia:host/host@1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	guarded, err := guardGrowthTrap(wasm)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(guarded, wasm) {
		t.Fatal("the module is not rewritten")
	}
	kv := func(klen, vlen int32) []any { return []any{int32(8), klen, int32(16), vlen} }
	aw := func(dlen int32) []any { return []any{int32(8), int32(10), int32(16), dlen, int32(64)} }
	hr := func(hlen, blen int32) []any {
		return []any{int32(1), int32(3), int32(4), int32(20), int32(24), hlen, int32(32), blen, int32(1), int64(-5), int32(96)}
	}
	cases := []struct {
		name, fn string
		args     []any
		// want is the import's call, "" for a trap in the helper of the import fn.
		want string
	}{
		{"kv-set at the limits", "kv-set", kv(maxKeyBytes, maxValueBytes), "kv-set(8,1024,16,1048576)"},
		{"kv-set empty", "kv-set", kv(0, 0), "kv-set(8,0,16,0)"},
		{"kv-set value past the limit", "kv-set", kv(3, maxValueBytes+1), ""},
		{"kv-set value of 64 MiB", "kv-set", kv(3, 64<<20), ""},
		{"kv-set value of 4 GiB - 1", "kv-set", kv(3, -1), ""},
		{"kv-set key past the limit", "kv-set", kv(maxKeyBytes+1, 1), ""},
		{"artifact-write at the limit", "artifact-write", aw(maxComponentBytes), "artifact-write(8,10,16,4194304,64)"},
		{"artifact-write past the limit", "artifact-write", aw(maxComponentBytes + 1), ""},
		{"http-request at the limits", "http-request", hr(maxComponentHeaders, maxComponentBytes), "http-request(1,3,4,20,24,1024,32,4194304,1,-5,96)"},
		{"http-request body past the limit", "http-request", hr(2, maxComponentBytes+1), ""},
		{"http-request headers past the limit", "http-request", hr(maxComponentHeaders+1, 0), ""},
		{"kv-set by a tail call at the limits", "kv-set-tail", kv(maxKeyBytes, maxValueBytes), "kv-set(8,1024,16,1048576)"},
		{"kv-set by a tail call past the limit", "kv-set-tail", kv(3, maxValueBytes+1), ""},
		{"http-request by a tail call past the limit", "http-request-tail", hr(2, maxComponentBytes+1), ""},
		// Through a table: the table holds the guard, not the import (its element segment
		// is redirected), so the call traps the same.
		{"kv-set through a table", "kv-set-indirect", kv(3, maxValueBytes+1), ""},
		{"kv-set through a table within the limits", "kv-set-indirect", kv(3, 5), "kv-set(8,3,16,5)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls, err := argGuardRun(t, h.engine, guarded, tc.fn, tc.args...)
			if tc.want != "" {
				if err != nil || len(calls) != 1 || calls[0] != tc.want {
					t.Fatalf("calls %q, %v; want %s", calls, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("no trap; the import saw %q", calls)
			}
			if len(calls) != 0 {
				t.Fatalf("the import ran (%q) before the trap", calls)
			}
			import_ := strings.TrimSuffix(strings.TrimSuffix(tc.fn, "-tail"), "-indirect")
			if field, ok := trappedInArgGuard(err.Error()); !ok || field != import_ {
				t.Fatalf("trap %q; want one in %s%s", err, argGuardTrapPrefix, import_)
			}
		})
	}

	// The original module: every call reaches the import.
	calls, err := argGuardRun(t, h.engine, wasm, "kv-set", kv(3, 64<<20)...)
	if err != nil || len(calls) != 1 {
		t.Fatalf("unguarded: calls %q, %v; want the import's", calls, err)
	}
}

// TestArgGuardModules: the interface's versions 1.0.N and 1 are guarded; another interface,
// version or type is not, nor is a core module of ABI v1 (the recording mode).
func TestArgGuardModules(t *testing.T) {
	h := newTestHost(t, Options{})
	for _, tc := range []struct {
		mod     string
		guarded bool
	}{
		{"fuscia:host/host@1.0.0", true},
		{"fuscia:host/host@1.0.7", true},
		{"fuscia:host/host@1.0.12+build.5", true},
		{"fuscia:host/host@1", true},
		{"fuscia:host/host@1.0.07", false},
		{"fuscia:host/host@1.1.0", false},
		{"fuscia:host/host@2.0.0", false},
		{"fuscia:host/host", false},
		{"fuscia:host/types@1.0.0", false},
		{"fuscia", false},
	} {
		t.Run(tc.mod, func(t *testing.T) {
			wasm, err := wasmtime.Wat2Wasm(argGuardWAT(tc.mod))
			if err != nil {
				t.Fatal(err)
			}
			out, err := guardGrowthTrap(wasm)
			if err != nil {
				t.Fatal(err)
			}
			if got := !bytes.Equal(out, wasm); got != tc.guarded {
				t.Fatalf("rewritten: %v; want %v", got, tc.guarded)
			}
			calls, err := argGuardRun(t, h.engine, out, "kv-set", int32(0), int32(1), int32(0), int32(maxValueBytes+1))
			if tc.guarded != (err != nil) || tc.guarded == (len(calls) == 1) {
				t.Fatalf("calls %q, %v; want guarded %v", calls, err, tc.guarded)
			}
		})
	}

	// An import of the right name but another type (a kv-set of three parameters) is left
	// alone: it is not the world's, and wasmtime refuses to link it.
	odd, err := wasmtime.Wat2Wasm(`(module
  (import "fuscia:host/host@1.0.0" "kv-set" (func $kv (param i32 i32 i32)))
  (import "fuscia:host/host@1.0.0" "artifact-write" (func $aw (param i32 i32 i32 i32 i32) (result i32)))
  (func (export "f") (call $kv (i32.const 0) (i32.const 0) (i32.const 0x7fffffff))
    (drop (call $aw (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0x7fffffff) (i32.const 0)))))`)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := guardGrowthTrap(odd); err != nil || !bytes.Equal(out, odd) {
		t.Fatalf("%v; want the module of other types as it is", err)
	}

	// ABI v1: the recording mode does not guard calls.
	wasm, err := wasmtime.Wat2Wasm(argGuardWAT(HostInterface))
	if err != nil {
		t.Fatal(err)
	}
	out, err := guardGrowth(wasm)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(argGuardTrapPrefix)) {
		t.Fatal("the recording mode named an argument guard")
	}
	if calls, err := argGuardRun(t, h.engine, out, "kv-set", int32(0), int32(1), int32(0), int32(maxValueBytes+1)); err != nil || len(calls) != 1 {
		t.Fatalf("recording mode: calls %q, %v; want the import's", calls, err)
	}
}

// TestArgGuardWithGrowGuard: a module that grows its memory and calls the host has both kinds
// of helper, each named for itself in the name section that the module brings, and each traps
// in its own name.
func TestArgGuardWithGrowGuard(t *testing.T) {
	h := newTestHost(t, Options{})
	wasm, err := wasmtime.Wat2Wasm(`(module $Main
  (import "fuscia:host/host@1.0.0" "kv-set" (func $kv (param i32 i32 i32 i32)))
  (import "fuscia:host/host@1.0.0" "http-request" (func $hr (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i64 i32)))
  (memory 1)
  (func $grow (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))
  (func $set (export "set") (param i32) (call $kv (i32.const 0) (i32.const 1) (i32.const 0) (local.get 0)))
  (func $req (export "req") (param i32)
    (call $hr (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0)
      (i32.const 0) (local.get 0) (i32.const 0) (i64.const 0) (i32.const 0))))`)
	if err != nil {
		t.Fatal(err)
	}
	guarded, err := guardGrowthTrap(wasm)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{growGuardTrapName, argGuardTrapPrefix + "kv-set", argGuardTrapPrefix + "http-request"} {
		if !bytes.Contains(guarded, []byte(name)) {
			t.Errorf("the name section lacks %q", name)
		}
	}

	mod, err := wasmtime.NewModule(h.engine, guarded)
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close()
	store := wasmtime.NewStore(h.engine)
	defer store.Close()
	store.Limiter(2*wasmPage, -1, -1, -1, -1)
	store.SetEpochDeadline(1 << 40)
	var calls []int32
	imports := []wasmtime.AsExtern{}
	for _, im := range mod.Imports() {
		imports = append(imports, wasmtime.NewFunc(store, im.Type().FuncType(), func(_ *wasmtime.Caller, vals []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
			calls = append(calls, vals[3].I32())
			return nil, nil
		}))
	}
	inst, err := wasmtime.NewInstance(store, mod, imports)
	if err != nil {
		t.Fatal(err)
	}
	call := func(fn string, arg int32) error {
		_, err := inst.GetFunc(store, fn).Call(store, arg)
		return err
	}
	if err := call("set", 5); err != nil || len(calls) != 1 || calls[0] != 5 {
		t.Fatalf("set within the limit: %v, calls %v", err, calls)
	}
	if err := call("grow", 10); err == nil || !trappedInGrowGuard(err.Error()) {
		t.Fatalf("grow past the cap: %v; want a trap in %s", err, growGuardTrapName)
	}
	if err := call("set", maxValueBytes+1); err == nil {
		t.Fatal("set past the limit: no trap")
	} else if field, ok := trappedInArgGuard(err.Error()); !ok || field != "kv-set" || trappedInGrowGuard(err.Error()) {
		t.Fatalf("set past the limit: %v; want a trap in %skv-set", err, argGuardTrapPrefix)
	}
	if err := call("req", maxComponentBytes+1); err == nil {
		t.Fatal("req past the limit: no trap")
	} else if field, ok := trappedInArgGuard(err.Error()); !ok || field != "http-request" {
		t.Fatalf("req past the limit: %v; want a trap in %shttp-request", err, argGuardTrapPrefix)
	}
	if len(calls) != 1 {
		t.Fatalf("the imports saw %v; want only the first call", calls)
	}
}

// TestTrappedInArgGuard: only a first frame in a helper of a guarded import counts.
func TestTrappedInArgGuard(t *testing.T) {
	for msg, want := range map[string]string{
		"error while executing at wasm backtrace:\n    0: 0x1d2 - Main!fuscia:argument_too_large:kv-set\n    1: 0x20 - Main!f\n": "kv-set",
		"wasm backtrace:\n    0: 0x1d2 - fuscia:argument_too_large:http-request\n":                                               "http-request",
		"wasm backtrace:\n    0: 0x1d2 - <unknown>!fuscia:argument_too_large:artifact-write\n":                                   "artifact-write",
		"wasm backtrace:\n    0: 0x1d2 - Main!fuscia:argument_too_large:log\n":                                                   "",
		"wasm backtrace:\n    0: 0x1d2 - Main!fuscia:argument_too_large:kv-setx\n":                                               "",
		"wasm backtrace:\n    0: 0x20 - Main!f\n    1: 0x1d2 - Main!fuscia:argument_too_large:kv-set\n":                          "",
		"wasm backtrace:\n    0: 0x1d2 - Main!fuscia:memory_denied\n":                                                            "",
		"fuscia:argument_too_large:kv-set":                                                                                       "",
	} {
		field, ok := trappedInArgGuard(msg)
		if field != want || ok != (want != "") {
			t.Errorf("%q: %q, %v; want %q", msg, field, ok, want)
		}
	}
}

// TestCGuestArgumentLimits: the C test component's kv-set, whose value and key come from the
// input, reaches the host up to the limits and traps in the guard past them, leaving the store
// as it was.
func TestCGuestArgumentLimits(t *testing.T) {
	h := newTestHost(t, Options{})
	m := loadCGuest(t, h)
	kv := &memKV{m: map[string][]byte{}}
	env := &Env{KV: kv}
	set := func(key string, size int) error {
		input := fmt.Sprintf(`{"key":%q,"value":%q}`, key, strings.Repeat("v", size))
		_, err := h.Invoke(context.Background(), m, env, componentTask("kv", input))
		return err
	}
	if err := set("at-limit", maxValueBytes); err != nil {
		t.Fatalf("a value of %d bytes: %v", maxValueBytes, err)
	}
	if got := len(kv.m["at-limit"]); got != maxValueBytes {
		t.Fatalf("stored %d bytes; want %d", got, maxValueBytes)
	}
	wantErr(t, set("past-limit", maxValueBytes+1), Fatal, "test/cguest@1.0.0: kv-set: an argument is larger than the host accepts", "values up to 1 MiB")
	long := strings.Repeat("k", maxKeyBytes)
	if err := set(long, 1); err != nil {
		t.Fatalf("a key of %d bytes: %v", maxKeyBytes, err)
	}
	wantErr(t, set(long+"k", 1), Fatal, "kv-set: an argument is larger than the host accepts", "keys up to 1 KiB")
	if _, ok := kv.m["past-limit"]; ok || len(kv.m) != 2 {
		t.Fatalf("the store holds %d keys; want the two within the limits", len(kv.m))
	}
}
