package registry

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/fuscia/fuscia/internal/version"
)

// The binary format of a core WebAssembly module (WebAssembly spec, "Binary Format"): the
// magic "\0asm", a little-endian uint32 version (1), then sections, each an id byte, a LEB128
// u32 size and that many bytes. A component (component.go) shares the magic and the section
// framing; its version field is a u16 version and a u16 layer, 1 for a component, and a core
// module's layer reads as 0.
const (
	wasmMagic         = "\x00asm"
	wasmVersion       = 1
	wasmImportSection = 2
	wasmExportSection = 7
)

// Import and export kinds of a core module's import and export sections.
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

// coreKind names a core import or export kind as Extern.Kind does.
func coreKind(k byte) string {
	switch k {
	case exportFunc:
		return KindFunc
	case exportTable:
		return KindTable
	case exportMemory:
		return KindMemory
	case exportGlobal:
		return KindGlobal
	case exportTag:
		return KindTag
	}
	return fmt.Sprintf("unknown kind %d", k)
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
// missing or of the wrong kind, one per line. A component gets an error saying so and that its
// manifest's "abi" is then 2 (CheckComponent).
//
// It reads only the module's header, its section table and its export section, with the
// standard library: it does not compile the module. Function signatures are checked by the
// host when it instantiates the module.
func CheckWasm(wasm []byte) error { return checkModule(WasmFile, wasm) }

func checkModule(file string, wasm []byte) error {
	layer, err := wasmLayer(file, wasm)
	if err != nil {
		return err
	}
	if layer != 0 {
		return fmt.Errorf(`%s is a WebAssembly component (component model), not a core module: "abi": %d means a core module of the host ABI v%d; set "abi": %d in %s to package a component of world %s`,
			file, version.ABI, version.ABI, version.ComponentABI, ManifestFile, version.World)
	}
	mod, err := parseModule(file, wasm, false)
	if err != nil {
		return err
	}
	return errors.Join(abiV1Problems(file, mod.exports)...)
}

// abiV1Problems are the exports of the host ABI v1 that exports lacks or has of the wrong kind.
func abiV1Problems(file string, exports []coreExtern) []error {
	kinds := map[string]byte{}
	for _, e := range exports {
		kinds[e.name] = e.kind
	}
	var errs []error
	for _, want := range requiredExports {
		kind, ok := kinds[want.name]
		switch {
		case !ok && want.name == "fuscia_abi_v1":
			errs = append(errs, fmt.Errorf("%s does not export fuscia_abi_v1: it was not built for the Fuscia host ABI v1 (build it with hostabi/guest)", file))
		case !ok && want.kind == exportMemory:
			errs = append(errs, fmt.Errorf("%s does not export its linear memory as %q, which the host ABI v1 requires", file, want.name))
		case !ok:
			errs = append(errs, fmt.Errorf("%s does not export the function %s, which the host ABI v1 requires", file, want.name))
		case kind != want.kind:
			errs = append(errs, fmt.Errorf("%s exports %s as %s, not %s", file, want.name, exportKindName(kind), exportKindName(want.kind)))
		}
	}
	return errs
}

// wasmLayer checks the magic of a WebAssembly binary and returns its layer: 0 for a core
// module, 1 for a component. The version is checked by the parser of each layer.
func wasmLayer(file string, wasm []byte) (uint16, error) {
	if len(wasm) == 0 {
		return 0, fmt.Errorf("%s is empty, not a WebAssembly module", file)
	}
	if len(wasm) < 8 || !bytes.HasPrefix(wasm, []byte(wasmMagic)) {
		return 0, fmt.Errorf("%s is not a WebAssembly module: it does not start with the Wasm magic bytes \\0asm", file)
	}
	return binary.LittleEndian.Uint16(wasm[6:8]), nil
}

// coreExtern is one import or export of a core module.
type coreExtern struct {
	name string // "module.name" for an import
	kind byte
}

// coreModule is what the parser reads of a core module.
type coreModule struct {
	imports, exports []coreExtern
}

// parseModule reads the export section of a core module, and its import section when imports
// is set. A module that is not a core module, or whose sections are truncated or corrupt, is
// an error naming file.
func parseModule(file string, wasm []byte, imports bool) (*coreModule, error) {
	layer, err := wasmLayer(file, wasm)
	if err != nil {
		return nil, err
	}
	if v := binary.LittleEndian.Uint32(wasm[4:8]); layer != 0 || v != wasmVersion {
		return nil, fmt.Errorf("%s is WebAssembly binary format version %d; the host runs version %d", file, v, wasmVersion)
	}
	mod := &coreModule{}
	err = walkSections(file, wasm, func(id byte, start int, body []byte) error {
		switch {
		case id == wasmExportSection:
			if err := readExportSection(body, mod); err != nil {
				return fmt.Errorf("%s is corrupt: its export section at byte %d: %w", file, start, err)
			}
		case id == wasmImportSection && imports:
			if err := readImportSection(body, mod); err != nil {
				return fmt.Errorf("%s is corrupt: its import section at byte %d: %w", file, start, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return mod, nil
}

// walkSections calls visit with each section of a module or component after its 8-byte
// header: its id, the offset of its first byte, and its body. It checks that every section's
// size fits in what follows.
func walkSections(file string, wasm []byte, visit func(id byte, start int, body []byte) error) error {
	r := &wasmReader{b: wasm, off: 8}
	for r.off < len(r.b) {
		start := r.off
		id := r.b[r.off]
		r.off++
		size, err := r.u32()
		if err != nil {
			return fmt.Errorf("%s is truncated or corrupt: the size of section %d at byte %d: %w", file, id, start, err)
		}
		if int64(size) > int64(len(r.b)-r.off) {
			return fmt.Errorf("%s is truncated: section %d at byte %d is %d bytes long, but only %d bytes follow", file, id, start, size, len(r.b)-r.off)
		}
		body := r.b[r.off : r.off+int(size)]
		r.off += int(size)
		if err := visit(id, start, body); err != nil {
			return err
		}
	}
	return nil
}

// readExportSection reads an export section's body: a vector of (name, kind, index).
func readExportSection(body []byte, mod *coreModule) error {
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
		mod.exports = append(mod.exports, coreExtern{name, kind})
	}
	if r.off != len(r.b) {
		return fmt.Errorf("%d bytes follow its last export", len(r.b)-r.off)
	}
	return nil
}

// readImportSection reads an import section's body: a vector of (module, name, description).
// Only Describe reads it, so that what CheckWasm accepts does not depend on how well this
// parser knows the newer kinds of imported tables and globals.
func readImportSection(body []byte, mod *coreModule) error {
	r := &wasmReader{b: body}
	n, err := r.u32()
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		module, err := r.name()
		if err != nil {
			return fmt.Errorf("import %d: its module name: %w", i, err)
		}
		name, err := r.name()
		if err != nil {
			return fmt.Errorf("import %d (%q): its name: %w", i, module, err)
		}
		full := module + "." + name
		kind, err := r.byte()
		if err != nil {
			return fmt.Errorf("import %d (%q): its kind is missing", i, full)
		}
		if err := r.skipImportDesc(kind); err != nil {
			return fmt.Errorf("import %d (%q): %w", i, full, err)
		}
		mod.imports = append(mod.imports, coreExtern{full, kind})
	}
	if r.off != len(r.b) {
		return fmt.Errorf("%d bytes follow its last import", len(r.b)-r.off)
	}
	return nil
}

// skipImportDesc skips the type of a core import of kind k.
func (r *wasmReader) skipImportDesc(k byte) error {
	switch k {
	case exportFunc:
		_, err := r.u32() // type index
		return err
	case exportTable:
		if err := r.skipRefType(); err != nil {
			return err
		}
		return r.skipLimits()
	case exportMemory:
		return r.skipLimits()
	case exportGlobal:
		if err := r.skipValType(); err != nil {
			return err
		}
		if _, err := r.byte(); err != nil { // mutability
			return err
		}
		return nil
	case exportTag:
		if _, err := r.byte(); err != nil { // attribute: 0, an exception
			return err
		}
		_, err := r.u32()
		return err
	}
	return fmt.Errorf("unknown import kind 0x%02x", k)
}

// skipLimits skips the limits of a table or memory: a flags byte (bit 0: a maximum follows;
// bit 1: shared; bit 2: 64-bit; bit 3: a page size follows), the minimum, the maximum and the
// log2 of the page size.
func (r *wasmReader) skipLimits() error {
	flags, err := r.byte()
	if err != nil {
		return err
	}
	if flags > 0x0f {
		return fmt.Errorf("unknown limits flags 0x%02x", flags)
	}
	if _, err := r.u64(); err != nil {
		return err
	}
	if flags&1 != 0 {
		if _, err := r.u64(); err != nil {
			return err
		}
	}
	if flags&8 != 0 {
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	return nil
}

// skipValType skips a core value type: a one-byte number or vector type, a one-byte
// reference type, or a (ref null? heaptype).
func (r *wasmReader) skipValType() error { return r.skipRefType() }

// skipRefType skips a reference type (or any one-byte value type): 0x63 and 0x64 are followed
// by a heap type, a signed LEB128 type index or an abstract heap type's byte; 0x65 (shared)
// by an abstract heap type's byte.
func (r *wasmReader) skipRefType() error {
	b, err := r.byte()
	if err != nil {
		return err
	}
	switch b {
	case 0x63, 0x64:
		_, err := r.s33()
		return err
	case 0x65:
		_, err := r.byte()
		return err
	}
	return nil
}

// wasmReader reads the bytes and LEB128 integers of b.
type wasmReader struct {
	b   []byte
	off int
}

var errEOF = errors.New("unexpected end of data")

func (r *wasmReader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errEOF
	}
	c := r.b[r.off]
	r.off++
	return c, nil
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

// u64 reads an unsigned LEB128 integer of at most 64 bits (at most 10 bytes).
func (r *wasmReader) u64() (uint64, error) {
	var v uint64
	for i := 0; i < 10; i++ {
		if r.off >= len(r.b) {
			return 0, errors.New("unexpected end of data in a LEB128 integer")
		}
		c := r.b[r.off]
		r.off++
		if i == 9 && c&0xfe != 0 {
			return 0, errors.New("a LEB128 integer overflows 64 bits")
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, nil
		}
	}
	return 0, errors.New("a LEB128 integer is longer than 10 bytes")
}

// s33 reads a signed LEB128 integer of at most 33 bits (at most 5 bytes), as type indices
// and type codes are written.
func (r *wasmReader) s33() (int64, error) {
	var v int64
	for i := 0; i < 5; i++ {
		if r.off >= len(r.b) {
			return 0, errors.New("unexpected end of data in a LEB128 integer")
		}
		c := r.b[r.off]
		r.off++
		v |= int64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if i == 4 && c&0x70 != 0 && c&0x70 != 0x70 {
				return 0, errors.New("a LEB128 integer overflows 33 bits")
			}
			if c&0x40 != 0 { // negative: extend the sign
				v |= -1 << (7 * (i + 1))
			}
			return v, nil
		}
	}
	return 0, errors.New("a LEB128 integer is longer than 5 bytes")
}

// name reads a name: a LEB128 length and that many bytes of UTF-8.
func (r *wasmReader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	if int64(n) > int64(len(r.b)-r.off) {
		return "", fmt.Errorf("a name of %d bytes runs past the end of the section", n)
	}
	b := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	if !utf8.Valid(b) {
		return "", fmt.Errorf("the name %q is not valid UTF-8", b)
	}
	return string(b), nil
}
