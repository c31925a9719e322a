package hostabi

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bytecodealliance/wasmtime-go/v39"
)

// TestGrowGuardTrapMode: in the trap mode, a growth refused within the memory's own declared
// maximum traps in the named helper, and one past that maximum returns -1.
func TestGrowGuardTrapMode(t *testing.T) {
	h := newTestHost(t, Options{})
	const capPages = 64 // the store's cap in the cases below: 4 MiB
	cases := []struct {
		name string
		// memory is the memory's declaration, arg the pages asked for.
		memory string
		arg    int64
		want   string // "trap", or the result memory.grow must return
	}{
		{"32-bit past the cap", "1", 100, "trap"},
		{"32-bit within the cap", "1", 10, "1"},
		{"32-bit within its maximum, past the cap", "1 100", 70, "trap"},
		{"32-bit past its maximum", "1 100", 200, "-1"},
		{"32-bit to 4 GiB, past the cap", "1", 0xffff, "trap"},
		{"32-bit past 4 GiB", "1", 0x10000, "-1"},
		{"32-bit growth by 4 GiB - 1 page", "1", -1, "-1"},
		{"64-bit past the cap", "i64 1", 100, "trap"},
		{"64-bit growth that wraps, no maximum", "i64 1", -1, "trap"},
		{"64-bit within the cap", "i64 1", 3, "1"},
		{"64-bit within its maximum, past the cap", "i64 1 100", 70, "trap"},
		{"64-bit past its maximum", "i64 1 100", 200, "-1"},
		{"64-bit growth that wraps, with a maximum", "i64 1 100", -1, "-1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ty := "i32"
			if strings.HasPrefix(tc.memory, "i64") {
				ty = "i64"
			}
			src := fmt.Sprintf(`(module (memory %s)
  (func (export "f") (param %[2]s) (result %[2]s) (memory.grow (local.get 0))))`, tc.memory, ty)
			wasm, err := wasmtime.Wat2Wasm(src)
			if err != nil {
				t.Fatal(err)
			}
			guarded, err := guardGrowthTrap(wasm)
			if err != nil {
				t.Fatal(err)
			}
			got, err := callGuarded(t, h.engine, guarded, capPages, tc.arg)
			if tc.want == "trap" {
				if err == nil {
					t.Fatalf("memory.grow returned %s; want a trap", got)
				}
				if !trappedInGrowGuard(err.Error()) {
					t.Fatalf("trap %q; want one in %s", err, growGuardTrapName)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("memory.grow returned %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

// callGuarded instantiates wasm in a store whose memories are capped at capPages and returns
// what its export "f" returns for arg.
func callGuarded(t *testing.T, engine *wasmtime.Engine, wasm []byte, capPages, arg int64) (string, error) {
	t.Helper()
	mod, err := wasmtime.NewModule(engine, wasm)
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close()
	store := wasmtime.NewStore(engine)
	defer store.Close()
	store.Limiter(capPages*wasmPage, -1, -1, -1, -1)
	store.SetEpochDeadline(1 << 40) // the host's engine interrupts at epochs: never here
	inst, err := wasmtime.NewInstance(store, mod, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range mod.Exports() {
		if e.Name() != "f" {
			t.Fatalf("the rewrite exported %q", e.Name())
		}
	}
	f := inst.GetFunc(store, "f")
	var v any = arg
	if f.Type(store).Params()[0].Kind() == wasmtime.KindI32 {
		v = int32(arg)
	}
	r, err := f.Call(store, v)
	if err != nil {
		return "", err
	}
	return fmt.Sprint(r), nil
}

// TestGrowGuardTrapNames: the helpers are named in the name section, whatever the module
// brings, and the names it has are kept.
func TestGrowGuardTrapNames(t *testing.T) {
	body := []byte{0x01, 0x01, 0x7F, 0x41, 0x01, 0x40, 0x00, 0x21, 0x00, 0x0B} // local i32; memory.grow 1; local.set 0
	plain := guardBody(t, body)
	helper := "\x01\x14" + growGuardTrapName // function index 1, its name
	cases := []struct {
		name string
		// names is the module's name section payload (after its name), nil for none.
		names []byte
		// want is the section the rewrite must make of it, nil for the same.
		want []byte
	}{
		{"no name section", nil, []byte("\x01\x17\x01" + helper)},
		{"module name only", []byte("\x00\x02\x01m"), []byte("\x00\x02\x01m\x01\x17\x01" + helper)},
		{"module and local names", []byte("\x00\x02\x01m\x02\x02\x00\x00"),
			[]byte("\x00\x02\x01m\x01\x17\x01" + helper + "\x02\x02\x00\x00")},
		{"function names", []byte("\x01\x04\x01\x00\x01f\x02\x02\x00\x00"),
			[]byte("\x01\x1a\x02\x00\x01f" + helper + "\x02\x02\x00\x00")},
		{"a subsection past the end", []byte("\x00\x09\x01m"), nil},
		{"function names out of range", []byte("\x01\x04\x01\x05\x01f"), nil},
		{"function names with trailing bytes", []byte("\x01\x05\x01\x00\x01fx"), nil},
		{"two function names subsections", []byte("\x01\x04\x01\x00\x01f\x01\x04\x01\x00\x01g"), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wasm := plain
			if tc.names != nil {
				wasm = appendSection(append([]byte(nil), plain...), secCustom, append(appendName(nil, "name"), tc.names...))
			}
			out, err := guardGrowthTrap(wasm)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(out, []byte{0x40, 0x00, 0x21}) {
				t.Fatal("the memory.grow of function 0 is not rewritten")
			}
			var names []byte
			n := 0
			r := &wasmReader{b: out, off: 8}
			for r.more() {
				id := r.byte()
				sec := r.take(int(r.u32()))
				if id == secCustom && customName(sec) == "name" {
					names = sec[5:]
					n++
				}
			}
			if r.err != nil || n != 1 {
				t.Fatalf("%d name sections (%v); want one", n, r.err)
			}
			want := tc.want
			if want == nil {
				want = tc.names
			}
			if !bytes.Equal(names, want) {
				t.Fatalf("name section %q; want %q", names, want)
			}
			if tc.want == nil {
				return // wasmtime ignores a name section it cannot read
			}
			h := newTestHost(t, Options{})
			mod, err := wasmtime.NewModule(h.engine, out)
			if err != nil {
				t.Fatalf("wasmtime refuses the rewrite: %v", err)
			}
			mod.Close()
		})
	}
}

// TestGrowGuardTrapUnchanged: in the trap mode, a module without memory.grow is left as it
// is, and no global or export is added to one with it.
func TestGrowGuardTrapUnchanged(t *testing.T) {
	plain := guardBody(t, []byte{0x00, 0x0B})
	out, err := guardGrowthTrap(plain)
	if err != nil || !bytes.Equal(out, plain) {
		t.Fatalf("%v; want the module as it is", err)
	}
	grows := guardBody(t, []byte{0x00, 0x41, 0x01, 0x40, 0x00, 0x1A, 0x0B})
	out, err = guardGrowthTrap(grows)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(growGuardExport)) {
		t.Fatal("the trap mode adds the recording export")
	}
	r := &wasmReader{b: out, off: 8}
	for r.more() {
		if id := r.byte(); id == secGlobal {
			t.Fatal("the trap mode adds a global")
		}
		r.take(int(r.u32()))
	}
}

// TestGuardComponent: every core module of a component, nested ones too, is rewritten; every
// other section is copied; what cannot be read is an error or, for a module, left alone.
func TestGuardComponent(t *testing.T) {
	minimal := readTestdata(t, "testdata/wat/bin/minimal.wasm")
	out, err := guardComponent(minimal)
	if err != nil {
		t.Fatal(err)
	}
	in, got := componentSections(t, minimal), componentSections(t, out)
	if len(in) != len(got) {
		t.Fatalf("%d sections; want %d", len(got), len(in))
	}
	rewritten := 0
	for i := range in {
		if in[i].id != got[i].id {
			t.Fatalf("section %d has id %d; want %d", i, got[i].id, in[i].id)
		}
		if in[i].id != compSecCoreModule {
			if !bytes.Equal(in[i].body, got[i].body) {
				t.Fatalf("section %d (id %d) changed", i, in[i].id)
			}
			continue
		}
		if bytes.Contains(got[i].body, []byte(growGuardTrapName)) {
			rewritten++
		}
	}
	if rewritten != 2 { // $Mem's realloc and $Main's call grow memory
		t.Fatalf("%d core modules rewritten; want 2", rewritten)
	}

	nested := appendSection(append([]byte(nil), componentHeader...), compSecComponent, minimal)
	out, err = guardComponent(nested)
	if err != nil {
		t.Fatal(err)
	}
	// Nested, its imports are its parent's to satisfy, not the host's: its modules are
	// rewritten as a nested component's (argflow.go follows no host function there).
	var inner pieces
	if _, err := guardComponentAt(minimal, 1, &inner); err != nil {
		t.Fatal(err)
	}
	if want := appendSection(append([]byte(nil), componentHeader...), compSecComponent, inner.join()); !bytes.Equal(out, want) {
		t.Fatal("a nested component is not rewritten")
	}

	odd := appendSection(append([]byte(nil), componentHeader...), compSecCoreModule, []byte("\x00asm\x01\x00\x00\x00\x63"))
	if out, err := guardComponent(odd); err != nil || !bytes.Equal(out, odd) {
		t.Fatalf("a module the rewrite cannot read: %v; want it left as it is", err)
	}

	deep := append([]byte(nil), componentHeader...)
	for range maxComponentNesting + 2 {
		deep = appendSection(append([]byte(nil), componentHeader...), compSecComponent, deep)
	}
	for name, wasm := range map[string][]byte{
		"core module":                    guardBody(t, []byte{0x00, 0x0B}),
		"truncated section":              append(append([]byte(nil), componentHeader...), 0x07, 0x10, 0x00),
		"size too long":                  append(append([]byte(nil), componentHeader...), 0x07, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01),
		"nested component not one":       appendSection(append([]byte(nil), componentHeader...), compSecComponent, []byte("junk")),
		"nested deeper than the maximum": deep,
	} {
		if _, err := guardComponent(wasm); !errors.Is(err, errComponentGuard) {
			t.Errorf("%s: %v; want errComponentGuard", name, err)
		}
	}
}

func readTestdata(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// componentSections splits a component binary into its sections.
func componentSections(t *testing.T, wasm []byte) []section {
	t.Helper()
	var secs []section
	r := &wasmReader{b: wasm, off: len(componentHeader)}
	for r.more() {
		id := r.byte()
		secs = append(secs, section{id, r.take(int(r.u32()))})
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	return secs
}

// FuzzGuardComponent: the rewrites never panic on any input, and what guardComponent
// returns is a component it can walk again.
func FuzzGuardComponent(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/wat/bin/*.wasm")
	seeds = append(seeds, "testdata/components/cguest/cguest.wasm")
	for _, path := range seeds {
		wasm := readTestdata(f, path)
		f.Add(wasm)
		f.Add(wasm[:len(wasm)/2])
		f.Add(appendSection(append([]byte(nil), componentHeader...), compSecComponent, wasm))
	}
	// A core module whose calls of the host imports the rewrite guards (argguard.go).
	if core, err := wasmtime.Wat2Wasm(argGuardWAT(HostInterface)); err == nil {
		f.Add(appendSection(append([]byte(nil), componentHeader...), compSecCoreModule, core))
	}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		out, err := guardComponent(wasm)
		if err == nil {
			if !bytes.HasPrefix(out, componentHeader) {
				t.Fatalf("the rewrite is not a component: % x", out[:min(len(out), 8)])
			}
			if _, err := guardComponent(out); err != nil {
				t.Fatalf("the rewrite cannot be walked again: %v", err)
			}
		}
		// The core module rewrite on its own, for inputs that are core modules.
		if len(wasm) >= 8 {
			core := append([]byte("\x00asm\x01\x00\x00\x00"), wasm[8:]...)
			_, _ = guardGrowthTrap(core)
			_, _ = guardGrowth(core)
		}
	})
}
