// Package version holds the versions Fuscia reports and records in saved plans.
package version

// Fuscia is the version of this build. Release builds set it with `make build VERSION=1.2.3`:
// -ldflags "-X github.com/fuscia/fuscia/internal/version.Fuscia=1.2.3" here, and
// CGO_CFLAGS='-DFUSCIA_VERSION="1.2.3"' for the C code that answers `fuscia version` before the
// Go runtime starts (cmd/fuscia/version_fast.h, whose texts a test keeps equal to Go's).
var Fuscia = "0.1.0-dev"

const (
	// ABI is the version of the Wasm host ABI (docs/reference/abi-v1.md): a core module that
	// exports fuscia_abi_v1 and trades JSON through its linear memory. A manifest's "abi": 1.
	ABI = 1
	// ComponentABI is a manifest's "abi" for a WebAssembly component (component model) of the
	// world World, which the host runs next to ABI v1 modules.
	ComponentABI = 2
	// World is the WIT world a component of ComponentABI is built against: world "component" of
	// package fuscia:host@1.0.0 (hostabi/wit/fuscia.wit). It never changes: additions go into a
	// later minor version that keeps 1.0.0 components running.
	World = "fuscia:host/component@1.0.0"
	// PluginProtocol is the go-plugin protocol version (docs/reference/plugin-protocol.md).
	PluginProtocol = 1
	// Wasmtime is the wasmtime release the host is built on.
	Wasmtime = "39.0.1"
	// PlanFormat is the format_version of `plan -json` and of saved plan files.
	PlanFormat = "1"
)
