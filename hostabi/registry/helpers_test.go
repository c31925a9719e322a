package registry

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/bytecodealliance/wasmtime-go/v39"
)

// abiWAT is the smallest module that satisfies the host ABI v1 exports.
const abiWAT = `(module
  (memory (export "memory") 1)
  (func (export "fuscia_abi_v1"))
  (func (export "fuscia_alloc") (param i32) (result i32) i32.const 0)
  (func (export "fuscia_call") (param i32 i32) (result i64) i64.const 0))`

var wasmCache sync.Map // WAT → []byte

// wat compiles a WAT module with wasmtime (tests only: the package itself parses the binary by
// hand).
func wat(t testing.TB, src string) []byte {
	t.Helper()
	if b, ok := wasmCache.Load(src); ok {
		return b.([]byte)
	}
	b, err := wasmtime.Wat2Wasm(src)
	if err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, src)
	}
	wasmCache.Store(src, b)
	return b
}

func abiWasm(t testing.TB) []byte { return wat(t, abiWAT) }

// testManifest returns a valid manifest as a generic map, for tests to change.
func testManifest(digest string) map[string]any {
	return map[string]any{
		"name":        "acme/mailer",
		"version":     "1.2.3",
		"description": "Send mail",
		"abi":         1,
		"digest":      digest,
		"capabilities": map[string]any{
			"allowed_hosts": []any{"smtp.example.com"},
			"allowed_paths": []any{},
		},
		"limits": map[string]any{"max_memory": "64MiB"},
		"tasks": map[string]any{
			"send": map[string]any{
				"description": "Send one mail",
				"schema": map[string]any{
					"type":       "object",
					"required":   []any{"to"},
					"properties": map[string]any{"to": map[string]any{"type": "string"}},
				},
				"output_schema": map[string]any{"type": "object"},
			},
		},
		"triggers": map[string]any{
			"row-added": map[string]any{
				"description":  "A row was added",
				"schema":       map[string]any{"type": "object"},
				"trigger_type": map[string]any{"type": "poll", "interval_ms": 30000},
			},
		},
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// componentDir writes a component directory (manifest, module, README, an asset) and returns it.
func componentDir(t *testing.T, manifest map[string]any, wasm []byte) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, ManifestFile), mustJSON(t, manifest))
	write(t, filepath.Join(dir, WasmFile), wasm)
	write(t, filepath.Join(dir, ReadmeFile), []byte("# Mailer\n"))
	write(t, filepath.Join(dir, "assets", "templates", "welcome.txt"), []byte("Welcome!\n"))
	return dir
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
