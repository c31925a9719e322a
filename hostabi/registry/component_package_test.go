package registry

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/internal/version"
)

// componentManifest is testManifest for a component: "abi": 2.
func componentManifest(digest string) map[string]any {
	m := testManifest(digest)
	m["abi"] = version.ComponentABI
	return m
}

// TestPackInstallComponent: a component of the world packs and installs with "abi": 2, like a
// module with "abi": 1.
func TestPackInstallComponent(t *testing.T) {
	for _, name := range []string{"world.wasm", "wasi.wasm"} {
		t.Run(name, func(t *testing.T) {
			wasm := testdata(t, name)
			out := filepath.Join(t.TempDir(), "c.fcpkg")
			m, err := Pack(componentDir(t, componentManifest(""), wasm), out)
			if err != nil {
				t.Fatal(err)
			}
			if m.ABI != 2 || !m.IsComponent() || m.Digest != sha256Digest(wasm) {
				t.Errorf("packed manifest: abi %d, digest %s", m.ABI, m.Digest)
			}
			inst, err := Install(t.TempDir(), out)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(inst.Dir, WasmFile))
			if err != nil || string(got) != string(wasm) {
				t.Errorf("installed component.wasm differs: %v", err)
			}
			if inst.Parsed == nil || !inst.Parsed.IsComponent() {
				t.Errorf("installed manifest %+v is not a component's", inst.Parsed)
			}
		})
	}
	if (&Manifest{ABI: 1}).IsComponent() {
		t.Error("a manifest of abi 1 is a component")
	}
}

// TestPackInstallChecksABI: pack and install check component.wasm against the manifest's abi
// and say what to do; every problem of the manifest and the binary is reported at once.
func TestPackInstallChecksABI(t *testing.T) {
	module, world, misfit := abiWasm(t), testdata(t, "world.wasm"), testdata(t, "misfit.wasm")
	tests := []struct {
		name   string
		abi    any
		wasm   []byte
		change func(m map[string]any)
		want   []string // in the reason
		hint   string   // in the hint
	}{
		{"component as abi 1", 1, world, nil,
			[]string{`component.wasm is a WebAssembly component (component model), not a core module: "abi": 1 means a core module of the host ABI v1; set "abi": 2 in manifest.json`},
			`component.wasm is a component: set "abi": 2 in manifest.json to package it (world fuscia:host/component@1.0.0), or build a core module for the host ABI v1`},
		{"module as abi 2", 2, module, nil,
			[]string{`component.wasm is a core WebAssembly module, not a component: "abi": 2 means a component of world fuscia:host/component@1.0.0; set "abi": 1`},
			`component.wasm is a core module: set "abi": 1 in manifest.json if it is built for the host ABI v1, or build a component of world fuscia:host/component@1.0.0`},
		{"wasi:http", 2, testdata(t, "http.wasm"), nil,
			[]string{"component.wasm imports wasi:http/types@0.2.0 (instance): wasi:http is not available to components; use the world's http-request import",
				"component.wasm imports wasi:http/outgoing-handler@0.2.0"},
			"Build component.wasm as a component of world fuscia:host/component@1.0.0 (hostabi/wit/fuscia.wit; docs/components.md), then pack it again. It exports only the function call, and imports only fuscia:host/host@1.0.x, fuscia:host/types@1.0.x (and its types request and response) and the WASI 0.2.x interfaces of wasi:io, wasi:cli, wasi:clocks, wasi:random, wasi:filesystem and wasi:sockets; not wasi:http: the world's http-request sends requests."},
		{"misfit", 2, misfit, nil,
			[]string{"imports acme:kv/store@1.0.0", "imports fuscia:host/host@1.1.0", "imports log (func)", "exports extra (a func)", "exports call as an instance"},
			"Build component.wasm as a component of world"},
		{"misfit and a bad manifest", 2, misfit, func(m map[string]any) { m["version"] = "1.2" },
			[]string{`manifest.json: "version" "1.2" is not a semantic version`, "imports acme:kv/store@1.0.0", "exports call as an instance"},
			"Fix "},
		{"unknown abi, fitting component", 7, world, nil,
			[]string{`manifest.json: "abi" 7 is not supported: it must be 1 (a core module of host ABI v1) or 2 (a component of world fuscia:host/component@1.0.0)`},
			"Fix "},
		{"unknown abi, misfit component", "two", misfit, nil,
			[]string{`manifest.json: "abi" must be 1 (a core module of host ABI v1) or 2`, "imports acme:kv/store@1.0.0"},
			"Fix "},
		{"unknown abi, module without marker", 0, wat(t, `(module (memory (export "memory") 1))`), nil,
			[]string{`manifest.json: "abi" is missing`, "does not export fuscia_abi_v1"},
			"Fix "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(what string, err error) {
				t.Helper()
				var re *RefusedError
				if !errors.As(err, &re) {
					t.Fatalf("%s: want a *RefusedError, got %T %v", what, err, err)
				}
				for _, w := range tt.want {
					if !strings.Contains(re.Reason, w) {
						t.Errorf("%s: the reason does not contain %q:\n%s", what, w, re.Reason)
					}
				}
				if !strings.Contains(re.Hint, tt.hint) {
					t.Errorf("%s: the hint %q does not contain %q", what, re.Hint, tt.hint)
				}
			}
			m := testManifest("")
			m["abi"] = tt.abi
			if tt.change != nil {
				tt.change(m)
			}
			_, err := Pack(componentDir(t, m, tt.wasm), filepath.Join(t.TempDir(), "x.fcpkg"))
			check("Pack", err)

			m["digest"] = sha256Digest(tt.wasm)
			components := t.TempDir()
			_, err = Install(components, makePackage(t, file(ManifestFile, mustJSON(t, m)), file(WasmFile, tt.wasm)))
			check("Install", err)
			if got := dirNames(t, components); len(got) != 0 {
				t.Errorf("a refused install left %v", got)
			}
		})
	}
}
