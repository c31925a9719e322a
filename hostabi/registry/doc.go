// Package registry manages the Wasm components installed under $FUSCIA_HOME/components: it packs a
// component directory into a package, installs packages, lists and removes installed versions,
// and finds the version a workflow asks for.
//
// # Model
//
// A component is published as a package, NAME-VERSION.fcpkg: a gzip'd tar holding manifest.json,
// component.wasm, and optionally README.md and an assets/ tree (docs/reference/abi-v1.md, "Component
// packages"). The manifest (Manifest) names the component (org/name), its semantic version, the
// host ABI it was built for, the sha256 digest of component.wasm, the capabilities it asks for,
// its limits, and its tasks and triggers with their JSON Schemas.
//
// A package goes through these steps:
//
//  1. Pack reads a directory, writes the digest of component.wasm into the manifest, checks the
//     manifest (ParseManifest) and component.wasm against the manifest's "abi" (CheckABI), and
//     writes a reproducible package.
//  2. Install reads a package defensively (no absolute paths, no "..", no links or devices,
//     bounded sizes), checks the manifest, that the digest matches component.wasm, and
//     component.wasm against "abi", then moves it into place in one rename:
//     components/<org>--<name>--<version>/.
//  3. Find (used by plan) picks the newest installed version matching a constraint; List shows
//     them all; Remove deletes one version, also in one rename.
//
// component.wasm is one of two kinds, which the manifest's "abi" names: 1, a core module of the
// host ABI v1 that exports its marker and functions (CheckWasm); 2, a WebAssembly component of
// the component model whose outer imports and exports fit the WIT world
// fuscia:host/component@1.0.0 (CheckComponent). Both checks, and Describe and Inspect (what
// `fuscia component inspect` shows), read the binary's sections with the standard library only,
// without compiling it: the host's wasmtime checks the types when it instantiates the binary.
//
// An installed version never changes: installing the same name and version again is a no-op
// when the digest is the same and is refused when it differs, so a digest locked by
// `fuscia plan` stays valid until the version is removed.
//
// # Errors
//
// Errors that blame the input (an invalid manifest or module, a tampered or malformed package,
// a conflicting installed version) are *RefusedError; a version that is not installed is
// ErrNotInstalled (wrapped). Anything else is an I/O failure. The CLI maps the first two to exit
// code 2 and the rest to 1.
package registry
