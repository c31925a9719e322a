package registry

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// The binary format of a core WebAssembly module (WebAssembly spec, "Binary Format"): the
// magic "\0asm", a little-endian uint32 version (1), then sections, each an id byte, a LEB128
// u32 size and that many bytes.
const (
	wasmMagic         = "\x00asm"
	wasmVersion       = 1
	wasmExportSection = 7
)

// Export kinds of the export section.
const (
	exportFunc   = 0
	exportTable  = 1
	exportMemory = 2
	exportGlobal = 3
	exportTag    = 4
)

func exportKindName(k byte) string {
	switch k {
	case exportFunc:
		return "a function"
	case exportTable:
		return "a table"
	case exportMemory:
		return "a memory"
	case exportGlobal:
		return "a global"
	case exportTag:
		return "a tag"
	}
	return fmt.Sprintf("an export of unknown kind %d", k)
}

// requiredExports are the exports of docs/reference/abi-v1.md, "Exports", in the order they are
// reported. The ABI marker comes first: without it, the module was not built for Fuscia at all.
var requiredExports = []struct {
	name string
	kind byte
}{
	{"fuscia_abi_v1", exportFunc},
	{"memory", exportMemory},
	{"fuscia_alloc", exportFunc},
	{"fuscia_call", exportFunc},
}

// CheckWasm checks that wasm is a core WebAssembly module (binary format version 1) that
// exports what the host ABI v1 needs: "memory" (a memory) and the functions "fuscia_abi_v1"
// (the ABI marker), "fuscia_alloc" and "fuscia_call". Its error names every export that is
// missing or of the wrong kind, one per line.
//
// It reads only the module's header, its section table and its export section, with the
// standard library: it does not compile the module. Function signatures are checked by the
// host when it instantiates the module.
func CheckWasm(wasm []byte) error {
	exports, err := wasmExports(wasm)
	if err != nil {
		return err
	}
	var errs []error
	for _, want := range requiredExports {
		kind, ok := exports[want.name]
		switch {
		case !ok && want.name == "fuscia_abi_v1":
			errs = append(errs, fmt.Errorf("%s does not export fuscia_abi_v1: it was not built for the Fuscia host ABI v1 (build it with hostabi/guest)", WasmFile))
		case !ok && want.kind == exportMemory:
			errs = append(errs, fmt.Errorf("%s does not export its linear memory as %q, which the host ABI v1 requires", WasmFile, want.name))
		case !ok:
			errs = append(errs, fmt.Errorf("%s does not export the function %s, which the host ABI v1 requires", WasmFile, want.name))
		case kind != want.kind:
			errs = append(errs, fmt.Errorf("%s exports %s as %s, not %s", WasmFile, want.name, exportKindName(kind), exportKindName(want.kind)))
		}
	}
	return errors.Join(errs...)
}

// wasmExports returns the exports of a core module: name → kind.
func wasmExports(wasm []byte) (map[string]byte, error) {
	if len(wasm) == 0 {
		return nil, fmt.Errorf("%s is empty, not a WebAssembly module", WasmFile)
	}
	if len(wasm) < 8 || !bytes.HasPrefix(wasm, []byte(wasmMagic)) {
		return nil, fmt.Errorf("%s is not a WebAssembly module: it does not start with the Wasm magic bytes \\0asm", WasmFile)
	}
	if wasm[6] != 0 || wasm[7] != 0 { // the "layer" of the component model's binary format
		return nil, fmt.Errorf("%s is a WebAssembly component (component model), not a core module: the host ABI v1 runs core modules (build for wasm32-wasip1)", WasmFile)
	}
	if v := binary.LittleEndian.Uint32(wasm[4:8]); v != wasmVersion {
		return nil, fmt.Errorf("%s is WebAssembly binary format version %d; the host runs version %d", WasmFile, v, wasmVersion)
	}
	exports := map[string]byte{}
	r := &wasmReader{b: wasm, off: 8}
	for r.off < len(r.b) {
		start := r.off
		id := r.b[r.off]
		r.off++
		size, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("%s is truncated or corrupt: the size of section %d at byte %d: %w", WasmFile, id, start, err)
		}
		if int64(size) > int64(len(r.b)-r.off) {
			return nil, fmt.Errorf("%s is truncated: section %d at byte %d is %d bytes long, but only %d bytes follow", WasmFile, id, start, size, len(r.b)-r.off)
		}
		body := r.b[r.off : r.off+int(size)]
		r.off += int(size)
		if id != wasmExportSection {
			continue
		}
		if err := readExportSection(body, exports); err != nil {
			return nil, fmt.Errorf("%s is corrupt: its export section at byte %d: %w", WasmFile, start, err)
		}
	}
	return exports, nil
}

// readExportSection reads an export section's body: a vector of (name, kind, index).
func readExportSection(body []byte, exports map[string]byte) error {
	r := &wasmReader{b: body}
	n, err := r.u32()
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		nameLen, err := r.u32()
		if err != nil {
			return err
		}
		if int64(nameLen) > int64(len(r.b)-r.off) {
			return fmt.Errorf("export %d: its name runs past the end of the section", i)
		}
		name := string(r.b[r.off : r.off+int(nameLen)])
		r.off += int(nameLen)
		if r.off >= len(r.b) {
			return fmt.Errorf("export %d (%q): its kind is missing", i, name)
		}
		kind := r.b[r.off]
		r.off++
		if _, err := r.u32(); err != nil {
			return fmt.Errorf("export %d (%q): its index: %w", i, name, err)
		}
		exports[name] = kind
	}
	if r.off != len(r.b) {
		return fmt.Errorf("%d bytes follow its last export", len(r.b)-r.off)
	}
	return nil
}

// wasmReader reads LEB128 integers from b.
type wasmReader struct {
	b   []byte
	off int
}

// u32 reads an unsigned LEB128 integer of at most 32 bits (at most 5 bytes).
func (r *wasmReader) u32() (uint32, error) {
	var v uint32
	for i := 0; i < 5; i++ {
		if r.off >= len(r.b) {
			return 0, errors.New("unexpected end of data in a LEB128 integer")
		}
		c := r.b[r.off]
		r.off++
		if i == 4 && c&0xf0 != 0 {
			return 0, errors.New("a LEB128 integer overflows 32 bits")
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, nil
		}
	}
	return 0, errors.New("a LEB128 integer is longer than 5 bytes")
}
