package registry

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/internal/version"
)

// testdata reads a committed binary of testdata/ (testdata/README.md: each is built from the
// .wat beside it with jco parse).
func testdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantProblems checks that err lists exactly the problems want, one line each, each line
// containing its want, in order. nil want means no error.
func wantProblems(t *testing.T, err error, want []string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("want no error, got:\n%v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("want the problems %q, got no error", want)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Errorf("%d problems, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if i < len(lines) && !strings.Contains(lines[i], w) {
			t.Errorf("problem %d is %q; want it to contain %q", i+1, lines[i], w)
		}
	}
}

func TestCheckComponentTestdata(t *testing.T) {
	const world = "the world fuscia:host/component@1.0.0"
	tests := []struct {
		file string
		want []string // the problems, in order; nil: fits
	}{
		{"world.wasm", nil},
		{"wasi.wasm", nil},
		{"nested.wasm", nil}, // its inner component's wasi:http and exports are not the host's business
		{"http.wasm", []string{
			"component.wasm imports wasi:http/types@0.2.0 (instance): wasi:http is not available to components; use the world's http-request import (fuscia:host/host) instead: its egress is the one the sandbox checks against allowed_hosts",
			"component.wasm imports wasi:http/outgoing-handler@0.2.0 (instance): wasi:http is not available to components; use the world's http-request import",
		}},
		{"no-call.wasm", []string{
			"component.wasm exports handle (a func), which " + world + " does not: a component exports only the function call",
			"component.wasm does not export the function call, which " + world + " requires: call: func(request: request) -> response",
		}},
		{"misfit.wasm", []string{
			"component.wasm imports acme:kv/store@1.0.0 (instance), which " + world + " does not provide",
			"component.wasm imports fuscia:host/host@1.1.0 (instance); the host provides fuscia:host/component@1.0.0, so it imports version 1.0.x",
			"component.wasm imports fuscia:host/admin@1.0.0 (instance): package fuscia:host has the interfaces host and types only",
			"component.wasm imports wasi:io/streams@0.3.0 (instance); the host provides WASI 0.2, so it imports version 0.2.x",
			"component.wasm imports wasi:cli/stdout (instance) without a version; the host provides WASI 0.2: import version 0.2.x",
			"component.wasm imports wasi:random/random@0.2.0-rc-2023-11-10 (instance); the host provides WASI 0.2, so it imports version 0.2.x",
			"component.wasm imports wasi:keyvalue/store@0.2.0 (instance), which " + world + " does not provide",
			"component.wasm imports log (func), which " + world + " does not provide",
			"component.wasm imports request as an instance; in " + world + ", request is a type of fuscia:host/types",
			"component.wasm exports extra (a func), which " + world + " does not: a component exports only the function call",
			"component.wasm exports call as an instance, not a function: " + world + " exports the function call",
			"component.wasm exports inner-module (a module), which " + world + " does not",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			wantProblems(t, CheckComponent(testdata(t, tt.file)), tt.want)
		})
	}
}

// TestCheckComponentCoreModule: abi 2 with a core module says so and what to do; abi 1 with a
// component likewise.
func TestCheckComponentCoreModule(t *testing.T) {
	err := CheckComponent(abiWasm(t))
	wantProblems(t, err, []string{`component.wasm is a core WebAssembly module, not a component: "abi": 2 means a component of world fuscia:host/component@1.0.0; set "abi": 1 in manifest.json if it is a module built for the host ABI v1, or build a component`})

	err = CheckWasm(testdata(t, "world.wasm"))
	wantProblems(t, err, []string{`component.wasm is a WebAssembly component (component model), not a core module: "abi": 1 means a core module of the host ABI v1; set "abi": 2 in manifest.json to package a component of world fuscia:host/component@1.0.0`})

	for abi, check := range map[int]func([]byte) error{version.ABI: CheckWasm, version.ComponentABI: CheckComponent} {
		for _, wasm := range [][]byte{abiWasm(t), testdata(t, "world.wasm"), testdata(t, "misfit.wasm")} {
			if got, want := CheckABI(abi, wasm), check(wasm); !sameError(got, want) {
				t.Errorf("CheckABI(%d) = %v; want %v", abi, got, want)
			}
		}
	}
	if err := CheckABI(3, abiWasm(t)); err == nil || !strings.Contains(err.Error(), `"abi" 3 is not supported: it must be 1 (a core module of host ABI v1) or 2`) {
		t.Errorf("CheckABI(3) = %v", err)
	}
}

func sameError(a, b error) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Error() == b.Error())
}

// Builders of component binaries, for the forms jco parse does not write.
func uleb(n uint64) []byte {
	var b []byte
	for {
		c := byte(n & 0x7f)
		n >>= 7
		if n != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func str(s string) []byte { return cat(uleb(uint64(len(s))), []byte(s)) }

func vec(items ...[]byte) []byte { return cat(uleb(uint64(len(items))), cat(items...)) }

func section(id byte, body []byte) []byte { return cat([]byte{id}, uleb(uint64(len(body))), body) }

func componentOf(sections ...[]byte) []byte {
	return cat([]byte("\x00asm\x0d\x00\x01\x00"), cat(sections...))
}

// name0 and name1 are the two plain forms of a name; name2 the one with attributes.
func name0(s string) []byte { return cat([]byte{0}, str(s)) }
func name1(s string) []byte { return cat([]byte{1}, str(s)) }
func name2(s string, attrs ...[]byte) []byte {
	return cat([]byte{2}, str(s), vec(attrs...))
}

var (
	implements = func(i string) []byte { return cat([]byte{0}, str(i)) }
	suffix     = func(s string) []byte { return cat([]byte{1}, str(s)) }
	externalID = func(s string) []byte { return cat([]byte{2}, str(s)) }
)

// Extern types (Binary.md's externtype), each with type index 0.
var (
	tModule    = []byte{0x00, 0x11, 0}
	tFunc      = []byte{0x01, 0}
	tValueEq   = []byte{0x02, 0x00, 0}
	tValueStr  = []byte{0x02, 0x01, 0x73}       // a string value
	tValueIdx  = []byte{0x02, 0x01, 0xac, 0x02} // a value of type 300 (s33)
	tTypeEq    = []byte{0x03, 0x00, 0}
	tResource  = []byte{0x03, 0x01}
	tComponent = []byte{0x04, 0}
	tInstance  = []byte{0x05, 0}
)

// TestComponentNamesAndKinds: every name form of Binary.md (0x00, 0x01, 0x02 with its
// attributes) and every externtype and sort reads as the right name and kind.
func TestComponentNamesAndKinds(t *testing.T) {
	imports := vec(
		cat(name0("fuscia:host/types@1.0.0"), tInstance),
		cat(name1("fuscia:host/host@1.0.0"), tInstance),
		cat(name2("wasi:io/streams@0.2", suffix(".3")), tInstance),
		cat(name2("wasi:cli/stdout@0.2"), tInstance),                    // canonical only: refused
		cat(name2("fuscia:host/host@1", externalID("prod")), tInstance), // the same, the id ignored
		cat(name2("store", implements("wasi:keyvalue/store@0.2.0"), externalID("db")), tInstance),
		cat(name2("client", implements("wasi:http/outgoing-handler@0.2.0")), tInstance),
		cat(name0("request"), tTypeEq),
		cat(name0("response"), tResource),
		cat(name0("m"), tModule),
		cat(name0("v"), tValueEq),
		cat(name0("w"), tValueStr),
		cat(name0("x"), tValueIdx),
		cat(name0("c"), tComponent),
		cat(name0("f"), tFunc),
	)
	exports := vec(
		cat(name0("call"), []byte{0x01, 0, 0}),
		cat(name1("inst"), []byte{0x05, 0, 1}, tInstance),
		cat(name2("mod", suffix("")), []byte{0x00, 0x11, 0, 0}),
		cat(name0("ty"), []byte{0x03, 0, 0}),
		cat(name0("val"), []byte{0x02, 0, 0}),
		cat(name0("comp"), []byte{0x04, 0, 0}),
	)
	// Sections are skipped by their size whatever they hold, and may repeat.
	custom := section(0, cat(str("name"), []byte{1, 2, 3}))
	wasm := componentOf(custom, section(10, imports), section(7, []byte{0xff, 0xff}), section(11, exports),
		section(10, vec(cat(name0("wasi:clocks/wall-clock@0.2.1"), tInstance))))

	d, err := Describe(wasm)
	if err != nil {
		t.Fatal(err)
	}
	wantImports := []Extern{
		{Name: "fuscia:host/types@1.0.0", Kind: KindInstance},
		{Name: "fuscia:host/host@1.0.0", Kind: KindInstance},
		{Name: "wasi:io/streams@0.2.3", Kind: KindInstance},
		{Name: "wasi:cli/stdout@0.2", Kind: KindInstance},
		{Name: "fuscia:host/host@1", Kind: KindInstance},
		{Name: "store", Kind: KindInstance, Implements: "wasi:keyvalue/store@0.2.0"},
		{Name: "client", Kind: KindInstance, Implements: "wasi:http/outgoing-handler@0.2.0"},
		{Name: "request", Kind: KindType},
		{Name: "response", Kind: KindType},
		{Name: "m", Kind: KindModule},
		{Name: "v", Kind: KindValue},
		{Name: "w", Kind: KindValue},
		{Name: "x", Kind: KindValue},
		{Name: "c", Kind: KindComponent},
		{Name: "f", Kind: KindFunc},
		{Name: "wasi:clocks/wall-clock@0.2.1", Kind: KindInstance},
	}
	if !slices.Equal(d.Imports, wantImports) {
		t.Errorf("imports\n%v\nwant\n%v", d.Imports, wantImports)
	}
	wantExports := []Extern{
		{Name: "call", Kind: KindFunc},
		{Name: "inst", Kind: KindInstance},
		{Name: "mod", Kind: KindModule},
		{Name: "ty", Kind: KindType},
		{Name: "val", Kind: KindValue},
		{Name: "comp", Kind: KindComponent},
	}
	if !slices.Equal(d.Exports, wantExports) {
		t.Errorf("exports\n%v\nwant\n%v", d.Exports, wantExports)
	}
	if d.Kind != WasmComponent || d.ABI != version.ComponentABI || d.World != "" || d.Size != int64(len(wasm)) || d.Digest != sha256Digest(wasm) {
		t.Errorf("Describe = kind %q, abi %d, world %q, size %d, digest %s", d.Kind, d.ABI, d.World, d.Size, d.Digest)
	}
	const world = "the world fuscia:host/component@1.0.0"
	wantProblems(t, CheckComponent(wasm), []string{
		// wasmtime refuses to compile a canonical version alone ("`1` is not a valid semver").
		"component.wasm imports wasi:cli/stdout@0.2 (instance); the host provides WASI 0.2, so it imports version 0.2.x",
		"component.wasm imports fuscia:host/host@1 (instance); the host provides fuscia:host/component@1.0.0, so it imports version 1.0.x",
		`component.wasm imports store (instance, implements wasi:keyvalue/store@0.2.0) under the plain name "store", which ` + world + ` does not provide: import the interface by its own name`,
		"component.wasm imports client (instance, implements wasi:http/outgoing-handler@0.2.0): wasi:http is not available to components",
		"component.wasm imports m (module), which " + world + " does not provide",
		"component.wasm imports v (value), which",
		"component.wasm imports w (value), which",
		"component.wasm imports x (value), which",
		"component.wasm imports c (component), which",
		"component.wasm imports f (func), which",
		"component.wasm exports inst (an instance), which " + world + " does not",
		"component.wasm exports mod (a module), which",
		"component.wasm exports ty (a type), which",
		"component.wasm exports val (a value), which",
		"component.wasm exports comp (a component), which",
	})
	if strings.Join(d.Problems, "\n") != CheckComponent(wasm).Error() {
		t.Errorf("Describe's problems are not CheckComponent's:\n%s", strings.Join(d.Problems, "\n"))
	}
}

// TestComponentImportKinds: an allowed interface imported as something else than an instance,
// and the world's types imported as something else than types, are named.
func TestComponentImportKinds(t *testing.T) {
	call := section(11, vec(cat(name0("call"), []byte{0x01, 0, 0})))
	wasm := componentOf(section(10, vec(
		cat(name0("fuscia:host/host@1.0.0"), tFunc),
		cat(name0("wasi:io/poll@0.2.0"), tComponent),
		cat(name0("response"), tFunc),
		cat(name0("wasi:io/Streams-API@0.2.0"), tInstance),       // labels may hold acronyms
		cat(name0("fuscia:host/types@1.0.0+build.7"), tInstance), // build metadata: still 1.0.0
		cat(name0("Wasi:io/error@0.2.0"), tInstance),             // not an interface name
	)), call)
	wantProblems(t, CheckComponent(wasm), []string{
		"component.wasm imports fuscia:host/host@1.0.0 as a func, not an instance of the interface",
		"component.wasm imports wasi:io/poll@0.2.0 as a component, not an instance of the interface",
		"component.wasm imports response as a func; in the world fuscia:host/component@1.0.0, response is a type of fuscia:host/types",
		"component.wasm imports Wasi:io/error@0.2.0 (instance), which the world fuscia:host/component@1.0.0 does not provide",
	})
}

// TestComponentMalformed: hostile and damaged binaries are errors naming what is wrong, never
// panics, and never allocate by a count they announce.
func TestComponentMalformed(t *testing.T) {
	call := cat(name0("call"), []byte{0x01, 0, 0})
	imp := func(items ...[]byte) []byte { return componentOf(section(10, vec(items...))) }
	tests := []struct {
		name string
		wasm []byte
		want string
	}{
		{"old component version", []byte("\x00asm\x0c\x00\x01\x00"), "component.wasm is a WebAssembly binary of layer 1, version 12; the host runs components of layer 1, version 13"},
		{"unknown layer", []byte("\x00asm\x0d\x00\x02\x00"), "layer 2, version 13"},
		{"truncated section", componentOf(section(10, vec(cat(name0("a"), tFunc))))[:14], "component.wasm is truncated: section 10 at byte 8 is"},
		{"section size overflows", cat([]byte("\x00asm\x0d\x00\x01\x00\x0a"), []byte{0xff, 0xff, 0xff, 0xff, 0x7f}), "component.wasm is truncated or corrupt: the size of section 10 at byte 8: a LEB128 integer overflows 32 bits"},
		{"section size cut", []byte("\x00asm\x0d\x00\x01\x00\x0a\x80"), "unexpected end of data in a LEB128 integer"},
		{"huge import count", componentOf(section(10, cat(uleb(0xffffffff), name0("a"), tFunc))), "component.wasm is corrupt: its import section at byte 8: import 1: its name is missing"},
		{"huge export count", componentOf(section(11, cat(uleb(0xffffffff), call))), "export 1: its name is missing"},
		{"count overflows", componentOf(section(10, []byte{0xff, 0xff, 0xff, 0xff, 0x7f})), "its import section at byte 8: a LEB128 integer overflows 32 bits"},
		{"name past the end", componentOf(section(10, cat(uleb(1), []byte{0}, uleb(100), []byte("abc")))), "import 0: its name: a name of 100 bytes runs past the end of the section"},
		{"huge name length", componentOf(section(10, cat(uleb(1), []byte{0}, uleb(0xffffffff), []byte("abc")))), "a name of 4294967295 bytes runs past the end"},
		{"name length overflows", componentOf(section(10, cat(uleb(1), []byte{0, 0xff, 0xff, 0xff, 0xff, 0x1f}))), "import 0: its name: a LEB128 integer overflows 32 bits"},
		{"name not UTF-8", imp(cat([]byte{0}, str("\xff\xfe"), tFunc)), `import 0: its name: the name "\xff\xfe" is not valid UTF-8`},
		{"unknown name form", imp(cat([]byte{3}, str("a"), tFunc)), "import 0: unknown name form 0x03"},
		{"no name at all", componentOf(section(10, uleb(1))), "import 0: its name is missing"},
		{"attribute of unknown kind", imp(cat([]byte{2}, str("a"), vec([]byte{7, 0}), tFunc)), `import 0: "a": attribute 0 is of unknown kind 0x07`},
		{"huge attribute count", imp(cat([]byte{2}, str("a"), uleb(0xffffffff), implements("x:y/z"))), `"a": attribute 1 is missing`},
		{"attribute past the end", imp(cat([]byte{2}, str("a"), uleb(1), []byte{1}, uleb(9))), `"a": attribute 0: a name of 9 bytes runs past the end`},
		{"no extern type", imp(name0("a")), `import 0 ("a"): its type is missing`},
		{"unknown extern type", imp(cat(name0("a"), []byte{0x06, 0})), `import 0 ("a"): unknown extern type 0x06`},
		{"core type not a module", imp(cat(name0("a"), []byte{0x00, 0x10, 0})), "a core type other than a module"},
		{"type index missing", imp(cat(name0("a"), []byte{0x05})), `import 0 ("a"): its type index: unexpected end of data`},
		{"type index overflows", imp(cat(name0("a"), []byte{0x01, 0xff, 0xff, 0xff, 0xff, 0x7f})), "its type index: a LEB128 integer overflows 32 bits"},
		{"unknown value bound", imp(cat(name0("a"), []byte{0x02, 0x05})), "unknown value bound 0x05"},
		{"value type overflows", imp(cat(name0("a"), []byte{0x02, 0x01, 0xff, 0xff, 0xff, 0xff, 0x4f})), "its value bound: a LEB128 integer overflows 33 bits"},
		{"unknown type bound", imp(cat(name0("a"), []byte{0x03, 0x02})), "unknown type bound 0x02"},
		{"type bound cut", imp(cat(name0("a"), []byte{0x03})), "its type bound is missing"},
		{"bytes after the imports", componentOf(section(10, cat(vec(cat(name0("a"), tFunc)), []byte{9, 9}))), "its import section at byte 8: 2 bytes follow its last import"},
		{"unknown sort", componentOf(section(11, vec(cat(name0("call"), []byte{0x06, 0, 0})))), `export 0 ("call"): unknown sort 0x06`},
		{"unknown core sort", componentOf(section(11, vec(cat(name0("call"), []byte{0x00, 0x13, 0, 0})))), "unknown core sort 0x13"},
		{"export index missing", componentOf(section(11, vec(cat(name0("call"), []byte{0x01})))), `export 0 ("call"): its index: unexpected end of data`},
		{"export type flag missing", componentOf(section(11, vec(cat(name0("call"), []byte{0x01, 0})))), `export 0 ("call"): its optional type is missing`},
		{"export type flag unknown", componentOf(section(11, vec(cat(name0("call"), []byte{0x01, 0, 2})))), "unknown byte 0x02 before its optional type"},
		{"export type bad", componentOf(section(11, vec(cat(name0("call"), []byte{0x01, 0, 1, 0x09})))), "unknown extern type 0x09"},
		{"bytes after the exports", componentOf(section(11, cat(vec(call), []byte{0}))), "1 bytes follow its last export"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for what, check := range map[string]func([]byte) error{
				"CheckComponent": CheckComponent,
				"Describe":       func(b []byte) error { _, err := Describe(b); return err },
			} {
				err := check(tt.wasm)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("%s: got %v, want an error containing %q", what, err, tt.want)
				}
			}
		})
	}
}

// TestComponentEmpty: a component of nothing but its header reads, and does not fit.
func TestComponentEmpty(t *testing.T) {
	d, err := Describe(componentOf())
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind != WasmComponent || d.World != "" || len(d.Imports)+len(d.Exports) != 0 ||
		!slices.Equal(d.Problems, []string{"component.wasm does not export the function call, which the world fuscia:host/component@1.0.0 requires: call: func(request: request) -> response"}) {
		t.Errorf("Describe(header only) = %+v", d)
	}
}

// TestComponentTruncated: every prefix of a real component is an error, unless it ends
// between two sections (a shorter component), and never a panic.
func TestComponentTruncated(t *testing.T) {
	for _, name := range []string{"world.wasm", "misfit.wasm", "wasi.wasm"} {
		wasm := testdata(t, name)
		boundaries := sectionEnds(t, wasm)
		for n := 0; n < len(wasm); n++ {
			_, err := Describe(wasm[:n])
			cerr := CheckComponent(wasm[:n])
			if !boundaries[n] && (err == nil || cerr == nil) {
				t.Errorf("%s cut to %d bytes: Describe %v, CheckComponent %v; want errors", name, n, err, cerr)
			}
		}
	}
}

// sectionEnds returns the offsets at which the sections of wasm end (and its header's).
func sectionEnds(t *testing.T, wasm []byte) map[int]bool {
	t.Helper()
	ends := map[int]bool{8: true}
	for off := 8; off < len(wasm); {
		off++ // id
		size, shift := 0, 0
		for {
			c := wasm[off]
			off++
			size |= int(c&0x7f) << shift
			shift += 7
			if c&0x80 == 0 {
				break
			}
		}
		off += size
		ends[off] = true
	}
	return ends
}

func TestDescribeComponent(t *testing.T) {
	wasm := testdata(t, "world.wasm")
	d, err := Describe(wasm)
	if err != nil {
		t.Fatal(err)
	}
	want := Description{
		Kind: WasmComponent, ABI: 2, World: "fuscia:host/component@1.0.0",
		Imports: []Extern{
			{Name: "fuscia:host/host@1.0.0", Kind: "instance"},
			{Name: "fuscia:host/types@1.0.0", Kind: "instance"},
			{Name: "request", Kind: "type"},
			{Name: "response", Kind: "type"},
		},
		Exports:  []Extern{{Name: "call", Kind: "func"}},
		Problems: []string{},
		Size:     int64(len(wasm)), Digest: sha256Digest(wasm),
	}
	if !equalDescriptions(d, want) {
		t.Errorf("Describe(world.wasm) =\n%+v\nwant\n%+v", d, want)
	}

	d, err = Describe(testdata(t, "http.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if d.World != "" || len(d.Problems) != 2 || !strings.Contains(d.Problems[0], "wasi:http/types@0.2.0") {
		t.Errorf("Describe(http.wasm): world %q, problems %q", d.World, d.Problems)
	}
}

func equalDescriptions(a, b Description) bool {
	return a.Kind == b.Kind && a.ABI == b.ABI && a.World == b.World && slices.Equal(a.Imports, b.Imports) &&
		slices.Equal(a.Exports, b.Exports) && slices.Equal(a.Problems, b.Problems) && a.Size == b.Size && a.Digest == b.Digest
}

func TestDescribeModule(t *testing.T) {
	wasm := wat(t, `(module
  (type $t (func))
  (import "fuscia" "log" (func (param i32 i32 i32)))
  (import "env" "table" (table 1 funcref))
  (import "env" "refs" (table 1 2 (ref null $t)))
  (import "env" "mem" (memory 1 2))
  (import "env" "mem64" (memory i64 1))
  (import "env" "g" (global (mut i32)))
  (import "env" "gref" (global (ref null $t)))
  (import "env" "tag" (tag (param i32)))
  (memory (export "memory") 1)
  (func (export "fuscia_abi_v1"))
  (func (export "fuscia_alloc") (param i32) (result i32) i32.const 0)
  (func (export "fuscia_call") (param i32 i32) (result i64) i64.const 0)
  (global (export "answer") i32 (i32.const 42)))`)
	d, err := Describe(wasm)
	if err != nil {
		t.Fatal(err)
	}
	want := Description{
		Kind: WasmModule, ABI: 1, World: WorldABIv1,
		Imports: []Extern{
			{Name: "fuscia.log", Kind: "func"},
			{Name: "env.table", Kind: "table"},
			{Name: "env.refs", Kind: "table"},
			{Name: "env.mem", Kind: "memory"},
			{Name: "env.mem64", Kind: "memory"},
			{Name: "env.g", Kind: "global"},
			{Name: "env.gref", Kind: "global"},
			{Name: "env.tag", Kind: "tag"},
		},
		Exports: []Extern{
			{Name: "memory", Kind: "memory"},
			{Name: "fuscia_abi_v1", Kind: "func"},
			{Name: "fuscia_alloc", Kind: "func"},
			{Name: "fuscia_call", Kind: "func"},
			{Name: "answer", Kind: "global"},
		},
		Problems: []string{},
		Size:     int64(len(wasm)), Digest: sha256Digest(wasm),
	}
	if !equalDescriptions(d, want) {
		t.Errorf("Describe =\n%+v\nwant\n%+v", d, want)
	}

	d, err = Describe(wat(t, `(module (memory (export "memory") 1))`))
	if err != nil {
		t.Fatal(err)
	}
	if d.World != "" || len(d.Problems) != 3 || !strings.Contains(d.Problems[0], "does not export fuscia_abi_v1") {
		t.Errorf("Describe of a module without the ABI: world %q, problems %q", d.World, d.Problems)
	}
}

func TestDescribeModuleMalformed(t *testing.T) {
	mod := func(id byte, body ...byte) []byte {
		return append([]byte("\x00asm\x01\x00\x00\x00"), section(id, body)...)
	}
	tests := []struct {
		name string
		wasm []byte
		want string
	}{
		{"empty", nil, "component.wasm is empty"},
		{"not wasm", []byte("GIF89a.."), "component.wasm is not a WebAssembly module"},
		{"version 2", []byte("\x00asm\x02\x00\x00\x00"), "binary format version 2"},
		{"import module past the end", mod(2, 1, 9, 'a'), "component.wasm is corrupt: its import section at byte 8: import 0: its module name: a name of 9 bytes runs past the end"},
		{"import name missing", mod(2, 1, 1, 'a'), `import 0 ("a"): its name: unexpected end of data`},
		{"import kind missing", mod(2, 1, 1, 'a', 1, 'b'), `import 0 ("a.b"): its kind is missing`},
		{"unknown import kind", mod(2, 1, 1, 'a', 1, 'b', 9), `import 0 ("a.b"): unknown import kind 0x09`},
		{"unknown limits", mod(2, 1, 1, 'a', 1, 'b', 2, 0x10, 1), "unknown limits flags 0x10"},
		{"limits cut", mod(2, 1, 1, 'a', 1, 'b', 2, 1, 1), "unexpected end of data"},
		{"limits overflow", mod(2, 1, 1, 'a', 1, 'b', 2, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f), "overflows 64 bits"},
		{"global type cut", mod(2, 1, 1, 'a', 1, 'b', 3, 0x63), "unexpected end of data"},
		{"huge import count", mod(2, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 'a', 1, 'b', 0, 0), "import 1: its module name: unexpected end of data"},
		{"bytes after the imports", mod(2, 0, 1), "1 bytes follow its last import"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Describe(tt.wasm)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
	// CheckWasm does not read the import section: what it accepts does not depend on it.
	if err := CheckWasm(append(abiWasm(t), mod(2, 1, 1, 'a', 1, 'b', 9)[8:]...)); err != nil {
		t.Errorf("CheckWasm read the import section: %v", err)
	}
}

func TestWasmReaderS33(t *testing.T) {
	tests := []struct {
		in   []byte
		want int64
		ok   bool
	}{
		{[]byte{0x00}, 0, true},
		{[]byte{0x73}, -13, true}, // string
		{[]byte{0x7f}, -1, true},
		{[]byte{0xac, 0x02}, 300, true},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, 0xffffffff, true},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x70}, -1 << 32, true},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x1f}, 0, false},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 0, false},
		{[]byte{0x80}, 0, false},
	}
	for _, tt := range tests {
		r := &wasmReader{b: tt.in}
		got, err := r.s33()
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("s33(% x) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestCheckComponentCGuest: the components another test suite builds from C
// (hostabi/testdata/components/cguest) are judged as pack and install must judge them.
func TestCheckComponentCGuest(t *testing.T) {
	dir := filepath.Join("..", "testdata", "components", "cguest")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no C guest components: %v", err)
	}
	const world = "the world fuscia:host/component@1.0.0"
	tests := []struct {
		file string
		want []string
	}{
		{"cguest.wasm", nil},
		{"bad-import.wasm", []string{"component.wasm imports acme:other/thing@1.0.0 (instance), which " + world + " does not provide"}},
		{"wasi-http.wasm", []string{"component.wasm imports wasi:http/outgoing-handler@0.2.0 (instance): wasi:http is not available to components; use the world's http-request import"}},
		{"no-call.wasm", []string{"component.wasm exports run (a func), which " + world + " does not", "component.wasm does not export the function call"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			wasm, err := os.ReadFile(filepath.Join(dir, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			wantProblems(t, CheckComponent(wasm), tt.want)
			if tt.want == nil {
				d, err := Describe(wasm)
				if err != nil || d.World != version.World || !slices.Contains(d.Imports, Extern{Name: "wasi:cli/exit@0.2.12", Kind: KindInstance}) {
					t.Errorf("Describe(%s) = %+v, %v", tt.file, d, err)
				}
			}
		})
	}
}
