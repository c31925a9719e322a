package hostabi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/fuscia/fuscia/hostabi/guesttest"
)

// TestMemoryDenied: a growth past max_memory fails the attempt whatever the guest does with
// the -1, and only a growth past the cap does.
func TestMemoryDenied(t *testing.T) {
	h := newTestHost(t, Options{})
	answer := packed(1024, len(okResponse))
	cases := []struct {
		name string
		// index is the memory's index type: "" (i32) or "i64".
		index, body string
		env         *Env
		want        string // "" for success
	}{
		{"one big growth ignored", "", `(drop (memory.grow (i32.const 1000))) ` + answer, &Env{MaxMemory: 4 << 20},
			"memory limit of 4 MiB (max_memory) exceeded: memory.grow to 64128 KiB was denied"},
		{"growth to the cap and one more", "", `(drop (memory.grow (i32.const 62))) (drop (memory.grow (i32.const 1))) ` + answer, &Env{MaxMemory: 4 << 20},
			"memory limit of 4 MiB (max_memory) exceeded: memory.grow to 4160 KiB was denied"},
		{"the default cap", "", `(drop (memory.grow (i32.const 0xffff))) ` + answer, nil,
			"memory limit of 256 MiB (max_memory) exceeded: memory.grow to 4194368 KiB was denied"},
		{"denied and trapped", "", `(drop (memory.grow (i32.const 1000))) (unreachable)`, &Env{MaxMemory: 4 << 20},
			"memory limit of 4 MiB (max_memory) exceeded"},
		{"growth within the cap", "", `(if (i32.ne (memory.grow (i32.const 62)) (i32.const 2)) (then (unreachable))) ` +
			`(if (i32.ne (memory.size) (i32.const 64)) (then (unreachable))) ` + answer, &Env{MaxMemory: 4 << 20}, ""},
		// The pool allows one memory per instance, so a 64-bit one is the component's own.
		{"a 64-bit memory denied", "i64", `(drop (memory.grow (i64.const 100))) ` + answer, &Env{MaxMemory: 4 << 20},
			"memory.grow to 6528 KiB was denied"},
		{"a 64-bit growth that wraps", "i64", `(drop (memory.grow (i64.const -1))) ` + answer, &Env{MaxMemory: 4 << 20},
			"memory.grow to more than 16 EiB was denied"},
		{"a 64-bit growth within the cap", "i64", `(if (i64.ne (memory.grow (i64.const 3)) (i64.const 2)) (then (unreachable))) ` + answer, &Env{MaxMemory: 4 << 20}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var wasm []byte
			if tc.index == "i64" {
				wasm = watMemory64(t, tc.body)
			} else {
				wasm = wat(t, "", tc.body, okResponse, "")
			}
			m := h.load(t, "t/grow", wasm)
			if !m.guarded {
				t.Fatal("the module's memory.grow is not guarded")
			}
			resp, err := h.Invoke(context.Background(), m, tc.env, []byte(`{}`))
			if tc.want == "" {
				if err != nil || string(resp) != okResponse {
					t.Fatalf("%s, %v; want the guest's answer", resp, err)
				}
				return
			}
			wantErr(t, err, Fatal, "component t/grow: ", tc.want, "raise max_memory")
		})
	}
}

// TestMemoryDeniedByModule: a refusal by the module's own declared maximum, below the cap,
// is the guest's to handle.
func TestMemoryDeniedByModule(t *testing.T) {
	h := newTestHost(t, Options{})
	src := fmt.Sprintf(`(module
  (memory (export "memory") 2 3)
  (data (i32.const 1024) %q)
  (func (export "fuscia_abi_v1"))
  (func (export "fuscia_alloc") (param i32) (result i32) (i32.const 4096))
  (func (export "fuscia_call") (param i32 i32) (result i64)
    (if (i32.ne (memory.grow (i32.const 5)) (i32.const -1)) (then (unreachable)))
    %s))`, okResponse, packed(1024, len(okResponse)))
	wasm, err := wasmtime.Wat2Wasm(src)
	if err != nil {
		t.Fatal(err)
	}
	m := h.load(t, "t/own-max", wasm)
	resp, err := h.Invoke(context.Background(), m, &Env{MaxMemory: 4 << 20}, []byte(`{}`))
	if err != nil || string(resp) != okResponse {
		t.Fatalf("%s, %v; want the guest's answer", resp, err)
	}
}

// TestMemoryDeniedFromCache: a module loaded from the disk cache is guarded as well.
func TestMemoryDeniedFromCache(t *testing.T) {
	cache := t.TempDir()
	wasm := wat(t, "", `(drop (memory.grow (i32.const 1000))) `+packed(1024, len(okResponse)), okResponse, "")
	for _, loaded := range []string{"compiled", "cache"} {
		h := newTestHost(t, Options{CacheDir: cache})
		m := h.load(t, "t/cached-grow", wasm)
		if m.Loaded != loaded {
			t.Fatalf("loaded from %s; want %s", m.Loaded, loaded)
		}
		_, err := h.Invoke(context.Background(), m, &Env{MaxMemory: 4 << 20}, []byte(`{}`))
		wantErr(t, err, Fatal, "memory limit of 4 MiB (max_memory) exceeded")
	}
}

// TestGrowGuardGoGuest: the rewrite understands everything the Go compiler emits, and a Go
// guest that runs out of memory is named exactly.
func TestGrowGuardGoGuest(t *testing.T) {
	h := newTestHost(t, Options{})
	wasm := guesttest.Wasm(t, "text")
	if _, err := guardGrowth(wasm); err != nil {
		t.Fatalf("guardGrowth: %v", err)
	}
	m := h.loadSnapshot(t, "fuscia/text@1.0.0", wasm)
	if !m.guarded {
		t.Fatal("the Go guest is not guarded")
	}
	_, err := invokeGuest(t, h, m, &Env{MaxMemory: 32 << 20}, context.Background(), "leak", map[string]any{"mib": 64})
	wantErr(t, err, Fatal, "memory limit of 32 MiB (max_memory) exceeded: memory.grow to")
	r, err := invokeGuest(t, h, m, &Env{MaxMemory: 64 << 20}, context.Background(), "leak", map[string]any{"mib": 8})
	if err != nil || r.Type != "success" {
		t.Fatalf("leak within the cap: %+v, %v", r, err)
	}
}

// TestGrowGuardReservedName: a module may not export the name the guard adds.
func TestGrowGuardReservedName(t *testing.T) {
	h := newTestHost(t, Options{})
	wasm := wat(t, `(global (export "fuscia:grow_denied") (mut i64) (i64.const 0))`, packed(1024, len(okResponse)), okResponse, "")
	path := h.dir + "/reserved.wasm"
	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := h.Load("t/reserved", path, digestOf(wasm))
	if err == nil || !errors.Is(err, errGuardReserved) {
		t.Fatalf("Load: %v; want %v", err, errGuardReserved)
	}
}

// TestGrowGuardUnsupported: what the rewrite cannot read is left alone, and still runs under
// the cap with the inferred check.
func TestGrowGuardUnsupported(t *testing.T) {
	for name, wasm := range map[string][]byte{
		"not wasm":       []byte("hello"),
		"component":      {0, 'a', 's', 'm', 0x0d, 0, 1, 0},
		"truncated":      {0, 'a', 's', 'm', 1, 0, 0, 0, secType, 10, 1},
		"unknown opcode": guardBody(t, []byte{0x00, 0xE7, 0x0B}),
	} {
		if _, err := guardGrowth(wasm); !errors.Is(err, errGuardUnsupported) {
			t.Errorf("%s: %v; want errGuardUnsupported", name, err)
		}
	}
	if _, err := guardGrowth(guardBody(t, []byte{0x00, 0x0B})); err != nil {
		t.Errorf("a plain body: %v", err)
	}
}

// guardBody is a module with one memory and one function whose body is body.
func guardBody(t *testing.T, body []byte) []byte {
	t.Helper()
	b := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	b = appendSection(b, secType, []byte{1, 0x60, 0, 0})
	b = appendSection(b, secFunction, []byte{1, 0})
	b = appendSection(b, secMemory, []byte{1, 0, 1})
	b = appendSection(b, secExport, append([]byte{1, 6}, "memory\x02\x00"...))
	return appendSection(b, secCode, append(appendU32([]byte{1}, uint32(len(body))), body...))
}

// watMemory64 is a component whose memory is a 64-bit one.
func watMemory64(t *testing.T, body string) []byte {
	t.Helper()
	src := fmt.Sprintf(`(module
  (memory (export "memory") i64 2)
  (data (i64.const 1024) %q)
  (func (export "fuscia_abi_v1"))
  (func (export "fuscia_alloc") (param i32) (result i32) (i32.const 4096))
  (func (export "fuscia_call") (param i32 i32) (result i64)
    %s))`, okResponse, body)
	wasm, err := wasmtime.Wat2Wasm(src)
	if err != nil {
		t.Fatalf("wat: %v\n%s", err, src)
	}
	return wasm
}

// BenchmarkGuardGrowth is the rewrite of a Go guest, once per module before it is compiled.
func BenchmarkGuardGrowth(b *testing.B) {
	wasm := guesttest.Wasm(b, "text")
	b.SetBytes(int64(len(wasm)))
	for b.Loop() {
		if _, err := guardGrowth(wasm); err != nil {
			b.Fatal(err)
		}
	}
}
