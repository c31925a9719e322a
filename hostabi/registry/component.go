package registry

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fuscia/fuscia/internal/version"
)

// The binary format of a component (the component model's design/mvp/Binary.md): the magic
// "\0asm", a little-endian u16 version (0x0d, the pre-standard version wasmtime 39 reads) and
// a u16 layer (1), then sections framed like a core module's. Only the top-level import and
// export sections are read: they are the component's outer imports and exports, the ones a
// world describes. Nested components and modules are sections like any other, skipped by
// their size.
const (
	componentVersion       = 0x0d
	componentLayer         = 1
	componentImportSection = 10
	componentExportSection = 11
)

// The kinds of Extern.Kind. A component's imports and exports are of the component sorts
// (Binary.md, "sort" and "externtype"); a core module's of the core kinds.
const (
	KindFunc      = "func"
	KindInstance  = "instance"
	KindType      = "type"
	KindComponent = "component"
	KindModule    = "module" // a core module, imported or exported by a component
	KindValue     = "value"

	KindTable  = "table"
	KindMemory = "memory"
	KindGlobal = "global"
	KindTag    = "tag"
)

// Extern is one import or export of a component or core module.
type Extern struct {
	// Name is the import's or export's name: an interface ("wasi:io/streams@0.2.3", with the
	// version suffix of its name attributes appended when it has one) or a plain name ("call").
	// A core module's import is "module.name".
	Name string `json:"name"`
	// Kind is one of the Kind constants.
	Kind string `json:"kind"`
	// Implements is the interface a plain-named instance import or export implements (a name
	// attribute of newer component binaries), or "".
	Implements string `json:"implements,omitempty"`
}

func (e Extern) String() string {
	if e.Implements != "" {
		return fmt.Sprintf("%s (%s, implements %s)", e.Name, e.Kind, e.Implements)
	}
	return fmt.Sprintf("%s (%s)", e.Name, e.Kind)
}

// componentBinary is what the parser reads of a component: its outer imports and exports, in
// the order of the binary.
type componentBinary struct {
	imports, exports []Extern
}

// parseComponent reads the outer imports and exports of a component. A core module, a
// component of another binary version, or truncated or corrupt sections are errors naming
// file.
func parseComponent(file string, wasm []byte) (*componentBinary, error) {
	layer, err := wasmLayer(file, wasm)
	if err != nil {
		return nil, err
	}
	if layer == 0 {
		return nil, fmt.Errorf(`%s is a core WebAssembly module, not a component: "abi": %d means a component of world %s; set "abi": %d in %s if it is a module built for the host ABI v%d, or build a component`,
			file, version.ComponentABI, version.World, version.ABI, ManifestFile, version.ABI)
	}
	if v := binary.LittleEndian.Uint16(wasm[4:6]); layer != componentLayer || v != componentVersion {
		return nil, fmt.Errorf("%s is a WebAssembly binary of layer %d, version %d; the host runs components of layer %d, version %d (the component model's binary format that wasmtime %s reads)",
			file, layer, v, componentLayer, componentVersion, version.Wasmtime)
	}
	c := &componentBinary{}
	err = walkSections(file, wasm, func(id byte, start int, body []byte) error {
		switch id {
		case componentImportSection:
			if err := readComponentImports(body, c); err != nil {
				return fmt.Errorf("%s is corrupt: its import section at byte %d: %w", file, start, err)
			}
		case componentExportSection:
			if err := readComponentExports(body, c); err != nil {
				return fmt.Errorf("%s is corrupt: its export section at byte %d: %w", file, start, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// readComponentImports reads an import section: a vector of (name attributes, externtype).
func readComponentImports(body []byte, c *componentBinary) error {
	r := &wasmReader{b: body}
	n, err := r.u32()
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		e, err := r.externName()
		if err != nil {
			return fmt.Errorf("import %d: %w", i, err)
		}
		if e.Kind, err = r.externType(); err != nil {
			return fmt.Errorf("import %d (%q): %w", i, e.Name, err)
		}
		c.imports = append(c.imports, e)
	}
	if r.off != len(r.b) {
		return fmt.Errorf("%d bytes follow its last import", len(r.b)-r.off)
	}
	return nil
}

// readComponentExports reads an export section: a vector of (name attributes, sort and index,
// optional externtype).
func readComponentExports(body []byte, c *componentBinary) error {
	r := &wasmReader{b: body}
	n, err := r.u32()
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		e, err := r.externName()
		if err != nil {
			return fmt.Errorf("export %d: %w", i, err)
		}
		if e.Kind, err = r.sort(); err != nil {
			return fmt.Errorf("export %d (%q): %w", i, e.Name, err)
		}
		if _, err := r.u32(); err != nil {
			return fmt.Errorf("export %d (%q): its index: %w", i, e.Name, err)
		}
		switch opt, err := r.byte(); {
		case err != nil:
			return fmt.Errorf("export %d (%q): its optional type is missing", i, e.Name)
		case opt == 1:
			if _, err := r.externType(); err != nil {
				return fmt.Errorf("export %d (%q): %w", i, e.Name, err)
			}
		case opt != 0:
			return fmt.Errorf("export %d (%q): unknown byte 0x%02x before its optional type", i, e.Name, opt)
		}
		c.exports = append(c.exports, e)
	}
	if r.off != len(r.b) {
		return fmt.Errorf("%d bytes follow its last export", len(r.b)-r.off)
	}
	return nil
}

// externName reads an import's or export's name attributes (Binary.md, "nameattributes"):
// 0x00 or 0x01 and the name (the two forms are the same since the interface/plain distinction
// moved into the name's syntax), or 0x02, the name and a vector of attributes: 0x00 an
// interface the import implements, 0x01 a version suffix (appended to the name's version), 0x02
// an external id (ignored).
func (r *wasmReader) externName() (Extern, error) {
	form, err := r.byte()
	if err != nil {
		return Extern{}, fmt.Errorf("its name is missing")
	}
	if form > 0x02 {
		return Extern{}, fmt.Errorf("unknown name form 0x%02x", form)
	}
	var e Extern
	if e.Name, err = r.name(); err != nil {
		return Extern{}, fmt.Errorf("its name: %w", err)
	}
	if form != 0x02 {
		return e, nil
	}
	n, err := r.u32()
	if err != nil {
		return Extern{}, fmt.Errorf("%q: its attributes: %w", e.Name, err)
	}
	for i := uint32(0); i < n; i++ {
		kind, err := r.byte()
		if err != nil {
			return Extern{}, fmt.Errorf("%q: attribute %d is missing", e.Name, i)
		}
		val, err := r.name()
		if err != nil {
			return Extern{}, fmt.Errorf("%q: attribute %d: %w", e.Name, i, err)
		}
		switch kind {
		case 0x00:
			e.Implements = val
		case 0x01:
			e.Name += val
		case 0x02:
		default:
			return Extern{}, fmt.Errorf("%q: attribute %d is of unknown kind 0x%02x", e.Name, i, kind)
		}
	}
	return e, nil
}

// externType reads an externtype and returns its kind: 0x00 0x11 a core module type, 0x01 a
// func type, 0x02 a value bound, 0x03 a type bound, 0x04 a component type, 0x05 an instance
// type, each but the bounds followed by a type index.
func (r *wasmReader) externType() (string, error) {
	b, err := r.byte()
	if err != nil {
		return "", errors.New("its type is missing")
	}
	var kind string
	switch b {
	case 0x00:
		if c, err := r.byte(); err != nil || c != 0x11 {
			return "", errors.New("its type: a core type other than a module")
		}
		kind = KindModule
	case 0x01:
		kind = KindFunc
	case 0x02:
		bound, err := r.byte()
		if err != nil {
			return "", errors.New("its value bound is missing")
		}
		switch bound {
		case 0x00:
			_, err = r.u32() // eq a value index
		case 0x01:
			_, err = r.s33() // a value type: a primitive's code or a type index
		default:
			return "", fmt.Errorf("unknown value bound 0x%02x", bound)
		}
		if err != nil {
			return "", fmt.Errorf("its value bound: %w", err)
		}
		return KindValue, nil
	case 0x03:
		bound, err := r.byte()
		if err != nil {
			return "", errors.New("its type bound is missing")
		}
		switch bound {
		case 0x00:
			if _, err := r.u32(); err != nil {
				return "", fmt.Errorf("its type bound: %w", err)
			}
		case 0x01: // a fresh resource type
		default:
			return "", fmt.Errorf("unknown type bound 0x%02x", bound)
		}
		return KindType, nil
	case 0x04:
		kind = KindComponent
	case 0x05:
		kind = KindInstance
	default:
		return "", fmt.Errorf("unknown extern type 0x%02x", b)
	}
	if _, err := r.u32(); err != nil {
		return "", fmt.Errorf("its type index: %w", err)
	}
	return kind, nil
}

// sort reads the sort of an export's sort and index: 0x00 and a core sort (only a core module
// is a valid export), 0x01 func, 0x02 value, 0x03 type, 0x04 component, 0x05 instance.
func (r *wasmReader) sort() (string, error) {
	b, err := r.byte()
	if err != nil {
		return "", errors.New("its sort is missing")
	}
	switch b {
	case 0x00:
		c, err := r.byte()
		if err != nil {
			return "", errors.New("its core sort is missing")
		}
		switch c {
		case 0x11:
			return KindModule, nil
		case 0x00, 0x01, 0x02, 0x03, 0x04:
			return "core " + coreKind(c), nil
		case 0x10:
			return "core type", nil
		case 0x12:
			return "core instance", nil
		}
		return "", fmt.Errorf("unknown core sort 0x%02x", c)
	case 0x01:
		return KindFunc, nil
	case 0x02:
		return KindValue, nil
	case 0x03:
		return KindType, nil
	case 0x04:
		return KindComponent, nil
	case 0x05:
		return KindInstance, nil
	}
	return "", fmt.Errorf("unknown sort 0x%02x", b)
}

// The world's outer imports and exports (hostabi/wit/fuscia.wit, world component, and the
// decisions of docs/components.md). The WIT world imports the interfaces host and types (its
// `use types.{request, response}` also imports those two types by their plain names) and
// exports the function call. The host also links WASI 0.2 for components.
const (
	worldPackage   = "fuscia:host"
	worldExport    = "call"
	worldWASIMinor = "0.2"
	worldHostMinor = "1.0"
	// worldImports says what a component of the world may import, for hints.
	worldImports = "fuscia:host/host@1.0.x, fuscia:host/types@1.0.x (and its types request and response) and the WASI 0.2.x interfaces of wasi:io, wasi:cli, wasi:clocks, wasi:random, wasi:filesystem and wasi:sockets"
)

var (
	// worldInterfaces are the interfaces of package fuscia:host a component may import.
	worldInterfaces = []string{"host", "types"}
	// worldTypes are the types the world's `use` imports by plain name.
	worldTypes = []string{"request", "response"}
	// worldWASI are the WASI packages the host links (wasmtime's WASI 0.2); wasi:sockets is
	// linked, but no address is ever granted.
	worldWASI = []string{"wasi:io", "wasi:cli", "wasi:clocks", "wasi:random", "wasi:filesystem", "wasi:sockets"}

	// interfaceName is an interface's name as imported: namespace:package/interface, then an
	// optional @version. (Binary.md's interfacename: the namespace and package are lowercase
	// words; the interface is a label, which may hold upper-case acronyms; nested namespaces and
	// projections are allowed.)
	interfaceName = lazyRegexp(`^([a-z][a-z0-9]*(?:-[a-z0-9]+)*(?::[a-z][a-z0-9]*(?:-[a-z0-9]+)*)+)/([A-Za-z][A-Za-z0-9-]*(?:/[A-Za-z][A-Za-z0-9-]*)*)(?:@(.*))?$`)
	// releaseVersion is MAJOR.MINOR.PATCH with optional +build metadata, no prerelease.
	releaseVersion = lazyRegexp(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:\+[0-9A-Za-z.-]+)?$`)
)

// CheckComponent checks that wasm is a WebAssembly component (component model, binary layer 1)
// that fits the world version.World by the names and kinds of its outer imports and exports:
// it exports exactly the function "call"; it imports only the instances
// fuscia:host/host@1.0.x and fuscia:host/types@1.0.x, the types "request" and "response" of
// the world's `use`, and instances of the WASI 0.2.x interfaces of wasi:io, wasi:cli,
// wasi:clocks, wasi:random, wasi:filesystem and wasi:sockets. wasi:http is refused with a
// pointer to the world's http-request. Its error names every import and export that does not
// fit, one per line; a core module gets an error saying so and that its manifest's "abi" is
// then 1.
//
// Like CheckWasm it reads only the binary's header, its section table and its top-level
// import and export sections, with the standard library. Types (the signature of call, the
// records of the imports) are checked by wasmtime when the host instantiates the component.
func CheckComponent(wasm []byte) error {
	c, err := parseComponent(WasmFile, wasm)
	if err != nil {
		return err
	}
	return errors.Join(worldProblems(WasmFile, c)...)
}

// worldProblems are the imports and exports of c that do not fit the world, in the binary's
// order: imports, then exports, then a missing call.
func worldProblems(file string, c *componentBinary) []error {
	var errs []error
	for _, e := range c.imports {
		if err := importProblem(file, e); err != nil {
			errs = append(errs, err)
		}
	}
	call := false
	for _, e := range c.exports {
		switch {
		case e.Name == worldExport && e.Kind == KindFunc:
			call = true
		case e.Name == worldExport:
			call = true
			errs = append(errs, fmt.Errorf("%s exports call as %s, not a function: the world %s exports the function call", file, article(e.Kind), version.World))
		default:
			errs = append(errs, fmt.Errorf("%s exports %s (%s), which the world %s does not: a component exports only the function call", file, e.Name, article(e.Kind), version.World))
		}
	}
	if !call {
		errs = append(errs, fmt.Errorf("%s does not export the function call, which the world %s requires: call: func(request: request) -> response", file, version.World))
	}
	return errs
}

// importProblem says why the import e does not fit the world, or returns nil.
func importProblem(file string, e Extern) error {
	if slices.Contains(worldTypes, e.Name) {
		if e.Kind != KindType {
			return fmt.Errorf("%s imports %s as %s; in the world %s, %s is a type of fuscia:host/types", file, e.Name, article(e.Kind), version.World, e.Name)
		}
		return nil
	}
	iface := e.Name
	if e.Implements != "" {
		iface = e.Implements
	}
	m := interfaceName().FindStringSubmatch(iface)
	if m == nil {
		return fmt.Errorf("%s imports %s, which the world %s does not provide", file, e, version.World)
	}
	pkg, ver := m[1], m[3]
	switch {
	case pkg == "wasi:http":
		return fmt.Errorf("%s imports %s: wasi:http is not available to components; use the world's http-request import (fuscia:host/host) instead: its egress is the one the sandbox checks against allowed_hosts", file, e)
	case e.Implements != "":
		return fmt.Errorf("%s imports %s under the plain name %q, which the world %s does not provide: import the interface by its own name", file, e, e.Name, version.World)
	case pkg == worldPackage && !slices.Contains(worldInterfaces, m[2]):
		return fmt.Errorf("%s imports %s: package %s has the interfaces host and types only", file, e, worldPackage)
	case pkg == worldPackage:
		return versionProblem(file, e, ver, worldHostMinor, fmt.Sprintf("the host provides %s", version.World))
	case slices.Contains(worldWASI, pkg):
		return versionProblem(file, e, ver, worldWASIMinor, "the host provides WASI 0.2")
	}
	return fmt.Errorf("%s imports %s, which the world %s does not provide", file, e, version.World)
}

// versionProblem checks that the instance import e of an allowed package has a release version
// MAJOR.MINOR.x of minor ("1.0"), and returns nil when it does. A canonical version alone ("1",
// Binary.md's canonversion) is refused: wasmtime refuses to compile a component importing
// `fuscia:host/host@1` ("`1` is not a valid semver"), so every attempt of it would fail.
func versionProblem(file string, e Extern, ver, minor, provides string) error {
	want := minor + ".x"
	if ver == "" {
		return fmt.Errorf("%s imports %s without a version; %s: import version %s", file, e, provides, want)
	}
	m := releaseVersion().FindStringSubmatch(ver)
	if m == nil || m[1]+"."+m[2] != minor {
		return fmt.Errorf("%s imports %s; %s, so it imports version %s", file, e, provides, want)
	}
	if e.Kind != KindInstance {
		return fmt.Errorf("%s imports %s as %s, not an instance of the interface", file, e.Name, article(e.Kind))
	}
	return nil
}

// article puts "a" or "an" before a kind: "an instance", "a func".
func article(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

// isComponent reports whether wasm starts with the header of a component (layer 1).
func isComponent(wasm []byte) bool {
	return len(wasm) >= 8 && string(wasm[:4]) == wasmMagic && binary.LittleEndian.Uint16(wasm[6:8]) == componentLayer
}
