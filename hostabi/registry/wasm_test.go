package registry

import (
	"strings"
	"testing"
)

func TestCheckWasm(t *testing.T) {
	const (
		memory = `(memory (export "memory") 1)`
		marker = `(func (export "fuscia_abi_v1"))`
		alloc  = `(func (export "fuscia_alloc") (param i32) (result i32) i32.const 0)`
		call   = `(func (export "fuscia_call") (param i32 i32) (result i64) i64.const 0)`
	)
	module := func(parts ...string) string { return "(module " + strings.Join(parts, " ") + ")" }
	tests := []struct {
		name string
		wat  string
		want []string // nil: valid
	}{
		{"all exports", abiWAT, nil},
		{"imported memory re-exported", module(`(import "env" "mem" (memory 1))`, `(export "memory" (memory 0))`, marker, alloc, call), nil},
		{"more exports and imports", module(`(import "fuscia" "log" (func (param i32 i32 i32)))`, memory, marker, alloc, call,
			`(func (export "_initialize"))`, `(global (export "g") i32 (i32.const 1))`), nil},
		{"no marker", module(memory, alloc, call),
			[]string{"component.wasm does not export fuscia_abi_v1: it was not built for the Fuscia host ABI v1 (build it with hostabi/guest)"}},
		{"nothing exported", `(module)`, []string{
			"component.wasm does not export fuscia_abi_v1",
			`component.wasm does not export its linear memory as "memory"`,
			"component.wasm does not export the function fuscia_alloc",
			"component.wasm does not export the function fuscia_call"}},
		{"no memory", module(`(memory 1)`, marker, alloc, call), []string{`component.wasm does not export its linear memory as "memory", which the host ABI v1 requires`}},
		{"memory under another name", module(`(memory (export "mem") 1)`, marker, alloc, call), []string{`does not export its linear memory as "memory"`}},
		{"no alloc", module(memory, marker, call), []string{"component.wasm does not export the function fuscia_alloc, which the host ABI v1 requires"}},
		{"no call", module(memory, marker, alloc), []string{"component.wasm does not export the function fuscia_call"}},
		{"call is a global", module(memory, marker, alloc, `(global (export "fuscia_call") i32 (i32.const 0))`),
			[]string{"component.wasm exports fuscia_call as a global, not a function"}},
		{"marker is a memory", module(`(memory (export "fuscia_abi_v1") 1)`, memory, alloc, call),
			[]string{"component.wasm exports fuscia_abi_v1 as a memory, not a function"}},
		{"memory is a function", module(`(func (export "memory"))`, marker, alloc, call),
			[]string{"component.wasm exports memory as a function, not a memory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckWasm(wat(t, tt.wat))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("want no error, got:\n%v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want an error containing %q, got none", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
			if got := strings.Count(err.Error(), "\n") + 1; got != len(tt.want) {
				t.Errorf("%d problems, want %d:\n%v", got, len(tt.want), err)
			}
		})
	}
}

func TestCheckWasmMalformed(t *testing.T) {
	valid := abiWasm(t)
	withSection := func(id byte, body ...byte) []byte {
		b := append([]byte("\x00asm\x01\x00\x00\x00"), id, byte(len(body)))
		return append(b, body...)
	}
	// A custom section (id 0) named "x" with 3 bytes of payload, after a valid module.
	custom := append(append([]byte{}, valid...), 0, 5, 1, 'x', 1, 2, 3)
	tests := []struct {
		name string
		wasm []byte
		want string // "" for valid
	}{
		{"custom section", custom, ""},
		{"empty", nil, "component.wasm is empty, not a WebAssembly module"},
		{"text", []byte("hello, world"), `component.wasm is not a WebAssembly module: it does not start with the Wasm magic bytes \0asm`},
		{"ELF", []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00"), "is not a WebAssembly module"},
		{"only the magic", []byte("\x00asm"), "is not a WebAssembly module"},
		{"component model", []byte("\x00asm\x0d\x00\x01\x00"), "component.wasm is a WebAssembly component (component model), not a core module"},
		{"version 2", []byte("\x00asm\x02\x00\x00\x00"), "component.wasm is WebAssembly binary format version 2; the host runs version 1"},
		{"header only", []byte("\x00asm\x01\x00\x00\x00"), "component.wasm does not export fuscia_abi_v1"},
		{"truncated", valid[:len(valid)-3], "component.wasm is truncated: section"},
		{"truncated in a section size", append([]byte("\x00asm\x01\x00\x00\x00\x07"), 0x80), "component.wasm is truncated or corrupt"},
		{"section size overflows", []byte("\x00asm\x01\x00\x00\x00\x07\xff\xff\xff\xff\x7f"), "overflows 32 bits"},
		{"export name past the end", withSection(7, 1, 5, 'a'), "component.wasm is corrupt: its export section at byte 8: export 0: its name runs past the end of the section"},
		{"export without kind", withSection(7, 1, 1, 'a'), `export 0 ("a"): its kind is missing`},
		{"export without index", withSection(7, 1, 1, 'a', 0), `export 0 ("a"): its index`},
		{"export count too large", withSection(7, 2, 1, 'a', 0, 0), "component.wasm is corrupt"},
		{"bytes after the exports", withSection(7, 0, 9), "1 bytes follow its last export"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckWasm(tt.wasm)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("want no error, got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestWasmReaderU32(t *testing.T) {
	tests := []struct {
		in   []byte
		want uint32
		ok   bool
	}{
		{[]byte{0}, 0, true},
		{[]byte{0x7f}, 127, true},
		{[]byte{0x80, 0x01}, 128, true},
		{[]byte{0xe5, 0x8e, 0x26}, 624485, true},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, 0xffffffff, true},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x1f}, 0, false},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 0, false},
		{[]byte{0x80}, 0, false},
		{nil, 0, false},
	}
	for _, tt := range tests {
		r := &wasmReader{b: tt.in}
		got, err := r.u32()
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("u32(% x) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
