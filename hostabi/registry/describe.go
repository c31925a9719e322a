package registry

import (
	"fmt"
	"strings"

	"github.com/fuscia/fuscia/internal/version"
)

// The kinds of a Wasm binary, Description.Kind.
const (
	WasmModule    = "core module"
	WasmComponent = "component"
)

// WorldABIv1 is Description.World for a core module that exports what the host ABI v1 needs.
const WorldABIv1 = "fuscia host ABI v1"

// Description is what a Wasm binary is, as `fuscia component inspect` shows it.
type Description struct {
	// Kind is WasmModule or WasmComponent.
	Kind string `json:"kind"`
	// ABI is the manifest "abi" this kind of binary is packaged with: version.ABI for a core
	// module, version.ComponentABI for a component, whether or not it fits.
	ABI int `json:"abi"`
	// World is what the binary fits: version.World for a component, WorldABIv1 for a core
	// module; "" when it fits neither, and Problems says why.
	World string `json:"world"`
	// Imports and Exports are in the order of the binary. A component's are its outer ones,
	// of the component sorts (KindFunc, KindInstance, KindType, KindComponent, KindModule,
	// KindValue); a core module's are of the core kinds (KindFunc, KindTable, KindMemory,
	// KindGlobal, KindTag), its imports named "module.name".
	Imports []Extern `json:"imports"`
	Exports []Extern `json:"exports"`
	// Problems are what keeps the binary from fitting World (CheckComponent's or CheckWasm's
	// lines); empty when it fits.
	Problems []string `json:"problems"`
	// Size is the binary's length in bytes; Digest is "sha256:" and its hex SHA-256, as a
	// manifest's digest.
	Size   int64  `json:"size"`
	Digest string `json:"digest"`
}

// Describe reads what wasm is: a core module or a component, its imports and exports, the
// world it fits, its size and digest. It reads the binary's header and its top-level import
// and export sections only, with the standard library, as CheckWasm and CheckComponent do. Its
// error, for a binary that is not WebAssembly, of an unknown version, truncated or corrupt, is
// about component.wasm; a binary that only does not fit has a Description with Problems.
func Describe(wasm []byte) (Description, error) { return describeWasm(WasmFile, wasm) }

func describeWasm(file string, wasm []byte) (Description, error) {
	d := Description{Size: int64(len(wasm)), Digest: sha256Digest(wasm), Imports: []Extern{}, Exports: []Extern{}, Problems: []string{}}
	layer, err := wasmLayer(file, wasm)
	if err != nil {
		return d, err
	}
	var problems []error
	if layer == 0 {
		mod, err := parseModule(file, wasm, true)
		if err != nil {
			return d, err
		}
		d.Kind, d.ABI = WasmModule, version.ABI
		for _, e := range mod.imports {
			d.Imports = append(d.Imports, Extern{Name: e.name, Kind: coreKind(e.kind)})
		}
		for _, e := range mod.exports {
			d.Exports = append(d.Exports, Extern{Name: e.name, Kind: coreKind(e.kind)})
		}
		if problems = abiV1Problems(file, mod.exports); len(problems) == 0 {
			d.World = WorldABIv1
		}
	} else {
		c, err := parseComponent(file, wasm)
		if err != nil {
			return d, err
		}
		d.Kind, d.ABI = WasmComponent, version.ComponentABI
		d.Imports = append(d.Imports, c.imports...)
		d.Exports = append(d.Exports, c.exports...)
		if problems = worldProblems(file, c); len(problems) == 0 {
			d.World = version.World
		}
	}
	for _, p := range problems {
		d.Problems = append(d.Problems, p.Error())
	}
	return d, nil
}

// CheckABI checks component.wasm against a manifest's "abi": version.ABI (1) is a core module
// of the host ABI v1 (CheckWasm), version.ComponentABI (2) a component of the world
// version.World (CheckComponent). Any other abi is an error.
func CheckABI(abi int, wasm []byte) error {
	switch abi {
	case version.ABI:
		return CheckWasm(wasm)
	case version.ComponentABI:
		return CheckComponent(wasm)
	}
	return fmt.Errorf("%s: %q %s", ManifestFile, "abi", abiMust(fmt.Sprint(abi)+" is not supported"))
}

// checkBinary checks wasm the way pack and install do, and says what to do about its problems.
// abi is the manifest's; when it is neither 1 nor 2 (a problem of the manifest, reported
// there), the binary is checked against what its header says it is, so that its own problems
// are reported in the same go.
func checkBinary(abi int, wasm []byte) (err error, hint string) {
	comp := isComponent(wasm)
	if abi != version.ABI && abi != version.ComponentABI {
		abi = version.ABI
		if comp {
			abi = version.ComponentABI
		}
	}
	if err = CheckABI(abi, wasm); err == nil {
		return nil, ""
	}
	switch {
	case abi == version.ABI && comp:
		hint = fmt.Sprintf(`component.wasm is a component: set "abi": %d in %s to package it (world %s), or build a core module for the host ABI v%d; then pack it again.`,
			version.ComponentABI, ManifestFile, version.World, version.ABI)
	case abi == version.ABI:
		hint = "Build the component for the host ABI v1 (with hostabi/guest, or exporting what docs/reference/abi-v1.md lists under \"Exports\") and pack it again."
	case hasLayer(wasm, 0):
		hint = fmt.Sprintf(`component.wasm is a core module: set "abi": %d in %s if it is built for the host ABI v%d, or build a component of world %s (docs/components.md); then pack it again.`,
			version.ABI, ManifestFile, version.ABI, version.World)
	default:
		hint = fmt.Sprintf("Build component.wasm as a component of world %s (hostabi/wit/fuscia.wit; docs/components.md), then pack it again. It exports only the function call, and imports only %s; not wasi:http: the world's http-request sends requests.",
			version.World, worldImports)
	}
	return err, hint
}

// hasLayer reports whether wasm has the WebAssembly magic and the given layer.
func hasLayer(wasm []byte, layer uint16) bool {
	l, err := wasmLayer(WasmFile, wasm)
	return err == nil && l == layer
}

// abiMust completes a message about a manifest's "abi" with the values it may take.
func abiMust(what string) string {
	return fmt.Sprintf("%s: it must be %s", what, abiValues)
}

// abiValues are the values of a manifest's "abi", for messages.
var abiValues = fmt.Sprintf("%d (a core module of host ABI v%d) or %d (a component of world %s)",
	version.ABI, version.ABI, version.ComponentABI, version.World)

// problemLines splits the lines of errs into one problem each.
func problemLines(errs ...error) []string {
	var out []string
	for _, err := range errs {
		if err != nil {
			out = append(out, strings.Split(err.Error(), "\n")...)
		}
	}
	return out
}
