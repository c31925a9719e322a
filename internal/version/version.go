// Package version holds the versions Fuscia reports and records in saved plans.
package version

// Fuscia is the version of this build. Release builds set it with
// -ldflags "-X github.com/fuscia/fuscia/internal/version.Fuscia=1.2.3".
var Fuscia = "0.1.0-dev"

const (
	// ABI is the version of the Wasm host ABI (docs/reference/abi-v1.md).
	ABI = 1
	// PluginProtocol is the go-plugin protocol version (docs/reference/plugin-protocol.md).
	PluginProtocol = 1
	// Wasmtime is the wasmtime release the host is built on.
	Wasmtime = "39.0.1"
	// PlanFormat is the format_version of `plan -json` and of saved plan files.
	PlanFormat = "1"
)
