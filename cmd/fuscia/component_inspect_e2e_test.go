package main

// End-to-end tests of `fuscia component inspect` (docs/reference/cli.md) and of pack and
// install with "abi": 2 (docs/reference/abi-v1.md, "Packaging"): the real binary inspects an
// ABI v1 package built from examples/components/wat-echo, and components committed under
// hostabi/registry/testdata, as packages and as bare Wasm files.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/internal/version"
)

// inspectOutput is `component inspect -json`.
type inspectOutput struct {
	File     string   `json:"file"`
	Package  bool     `json:"package"`
	Name     *string  `json:"name"`
	Version  *string  `json:"version"`
	ABI      *int     `json:"abi"`
	Kind     *string  `json:"kind"`
	World    *string  `json:"world"`
	Size     int64    `json:"size"`
	Digest   string   `json:"digest"`
	Imports  []extern `json:"imports"`
	Exports  []extern `json:"exports"`
	Problems []string `json:"problems"`
}

type extern struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

func decodeInspect(t *testing.T, out string) inspectOutput {
	t.Helper()
	want := []string{"abi", "digest", "exports", "file", "imports", "kind", "name", "package", "problems", "size", "version", "world"}
	if got := keys(t, json.RawMessage(out)); !slices.Equal(got, want) {
		t.Errorf("inspect -json keys %v, want %v", got, want)
	}
	var o inspectOutput
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("inspect -json: %v\n%s", err, out)
	}
	return o
}

// registryTestdata reads a committed component of hostabi/registry/testdata.
func registryTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "hostabi", "registry", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// componentABI2Manifest is a source manifest of a component: "abi": 2.
const componentABI2Manifest = `{
  "name": "acme/world",
  "version": "1.0.0",
  "abi": 2,
  "capabilities": {"allowed_hosts": [], "allowed_paths": []},
  "tasks": {"echo": {"description": "Answers success"}}
}
`

func TestComponentInspectABIv1Package(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dir := watEchoDir(t)
	wasm, err := os.ReadFile(filepath.Join(dir, "component.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	digest := componentDigest(wasm)
	wantCode(t, h.run("component", "pack", dir, "-o", "echo.fcpkg"), 0)

	r := h.run("component", "inspect", "echo.fcpkg")
	wantCode(t, r, 0)
	wantContains(t, "inspect", r.stdout,
		"File:     echo.fcpkg\n",
		"Package:  fuscia/wat-echo@1.0.0\n",
		"ABI:      1 (a core module of the host ABI v1)\n",
		"Kind:     core module\n",
		"World:    fuscia host ABI v1\n",
		"Digest:   "+digest+"\n",
		"\nImports (2):\n  func  fuscia.log\n  func  fuscia.config_get\n",
		"  func    fuscia_call\n",
		"  memory  memory\n")
	if r.stderr != "" {
		t.Errorf("inspect wrote to stderr:\n%s", r.stderr)
	}

	r = h.run("component", "inspect", "-json", "echo.fcpkg")
	wantCode(t, r, 0)
	o := decodeInspect(t, r.stdout)
	if !o.Package || o.Name == nil || *o.Name != "fuscia/wat-echo" || o.Version == nil || *o.Version != "1.0.0" ||
		o.ABI == nil || *o.ABI != version.ABI || o.Kind == nil || *o.Kind != "core module" || o.World == nil || *o.World != "fuscia host ABI v1" ||
		o.Digest != digest || o.Size != int64(len(wasm)) || len(o.Problems) != 0 {
		t.Errorf("inspect -json = %+v", o)
	}
	if !slices.Contains(o.Exports, extern{"fuscia_abi_v1", "func"}) || !slices.Contains(o.Imports, extern{"fuscia.log", "func"}) {
		t.Errorf("imports %v, exports %v", o.Imports, o.Exports)
	}
	// Inspecting does not install.
	if _, err := os.Stat(filepath.Join(h.home, "components")); !os.IsNotExist(err) {
		t.Errorf("inspect created %s/components: %v", h.home, err)
	}
}

// TestComponentABI2 packs, inspects and installs a component with "abi": 2, and inspects its
// component.wasm alone.
func TestComponentABI2(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	wasm := registryTestdata(t, "world.wasm")
	digest := componentDigest(wasm)
	writeFile(t, filepath.Join(h.dir, "world", "manifest.json"), []byte(componentABI2Manifest), 0o644)
	writeFile(t, filepath.Join(h.dir, "world", "component.wasm"), wasm, 0o644)

	r := h.run("component", "pack", "world", "-o", "world.fcpkg")
	wantCode(t, r, 0)
	wantContains(t, "pack", r.stdout, "Packed acme/world@1.0.0 ("+digest+") to world.fcpkg")

	r = h.run("component", "inspect", "world.fcpkg")
	wantCode(t, r, 0)
	wantContains(t, "inspect", r.stdout,
		"Package:  acme/world@1.0.0\n",
		"ABI:      2 (a component)\n",
		"Kind:     component\n",
		"World:    "+version.World+"\n",
		"Size:     1976 bytes (1.9 KiB)\n",
		"Digest:   "+digest+"\n",
		"\nImports (4):\n  instance  fuscia:host/host@1.0.0\n  instance  fuscia:host/types@1.0.0\n  type      request\n  type      response\n",
		"\nExports (1):\n  func  call\n")

	for _, file := range []string{"world.fcpkg", "world/component.wasm"} {
		r = h.run("component", "inspect", file, "-json")
		wantCode(t, r, 0)
		o := decodeInspect(t, r.stdout)
		if o.ABI == nil || *o.ABI != version.ComponentABI || o.Kind == nil || *o.Kind != "component" || o.World == nil || *o.World != version.World ||
			o.Digest != digest || len(o.Problems) != 0 || !slices.Equal(o.Exports, []extern{{"call", "func"}}) || len(o.Imports) != 4 {
			t.Errorf("inspect %s -json = %+v", file, o)
		}
		if pkg := file == "world.fcpkg"; o.Package != pkg || (o.Name != nil) != pkg {
			t.Errorf("inspect %s -json: package %v, name %v", file, o.Package, o.Name)
		}
	}

	r = h.run("component", "install", "world.fcpkg")
	wantCode(t, r, 0)
	wantContains(t, "install", r.stdout, "Installed acme/world@1.0.0 ("+digest+")")
	r = h.run("component", "list", "-json")
	wantCode(t, r, 0)
	wantContains(t, "list", r.stdout, `"name": "acme/world"`)
}

// TestComponentABIRefusals: pack, install and inspect refuse a binary that does not fit its
// abi or the world, naming every problem and saying what to do (exit 2).
func TestComponentABIRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	put := func(dir, manifest string, wasm []byte) {
		writeFile(t, filepath.Join(h.dir, dir, "manifest.json"), []byte(manifest), 0o644)
		writeFile(t, filepath.Join(h.dir, dir, "component.wasm"), wasm, 0o644)
	}
	http := registryTestdata(t, "http.wasm")
	put("http", componentABI2Manifest, http)
	put("v1", strings.Replace(componentABI2Manifest, `"abi": 2`, `"abi": 1`, 1), registryTestdata(t, "world.wasm"))
	put("module", componentABI2Manifest, componentWasm(t, componentWAT))

	r := h.run("component", "pack", "http", "-o", "http.fcpkg")
	wantCode(t, r, 2)
	wantContainsWrapped(t, "pack http", r.stderr, "Error: Cannot pack http",
		"component.wasm imports wasi:http/types@0.2.0 (instance): wasi:http is not available to components; use the world's",
		"component.wasm imports wasi:http/outgoing-handler@0.2.0 (instance)",
		"Build component.wasm as a component of world "+version.World)

	r = h.run("component", "pack", "v1", "-o", "v1.fcpkg")
	wantCode(t, r, 2)
	wantContainsWrapped(t, "pack v1", r.stderr, "component.wasm is a WebAssembly component (component model), not a core module",
		`set "abi": 2 in manifest.json`)

	r = h.run("component", "pack", "module", "-o", "module.fcpkg")
	wantCode(t, r, 2)
	wantContainsWrapped(t, "pack module", r.stderr, "component.wasm is a core WebAssembly module, not a component", `set "abi": 1`)

	// A package made by hand with a component that imports wasi:http: install refuses it, and
	// inspect shows it and says why.
	writeFile(t, filepath.Join(h.dir, "http", "manifest.json"), []byte(strings.Replace(componentABI2Manifest,
		`"abi": 2,`, `"abi": 2, "digest": "`+componentDigest(http)+`",`, 1)), 0o644)
	pkg := writeHandPackage(t, h, "http.fcpkg", filepath.Join(h.dir, "http"))
	r = h.run("component", "install", pkg)
	wantCode(t, r, 2)
	wantContainsWrapped(t, "install", r.stderr, "Error: Package refused", "wasi:http is not available to components")

	r = h.run("component", "inspect", pkg)
	wantCode(t, r, 2)
	wantContains(t, "inspect stdout", r.stdout, "Package:  acme/world@1.0.0\n", "World:    -\n", "instance  wasi:http/outgoing-handler@0.2.0\n")
	wantContainsWrapped(t, "inspect stderr", r.stderr, "Error: Package would be refused", "component.wasm imports wasi:http/types@0.2.0 (instance)",
		"Build component.wasm as a component of world")

	r = h.run("component", "inspect", "-json", pkg)
	wantCode(t, r, 2)
	o := decodeInspect(t, r.stdout)
	if o.World != nil || len(o.Problems) != 2 || !strings.Contains(o.Problems[1], "wasi:http/outgoing-handler@0.2.0") {
		t.Errorf("inspect -json = %+v", o)
	}
	if r.stderr != "" {
		t.Errorf("inspect -json wrote to stderr:\n%s", r.stderr)
	}

	r = h.run("component", "inspect", "http/component.wasm")
	wantCode(t, r, 2)
	wantContainsWrapped(t, "inspect wasm", r.stderr, "Error: http/component.wasm would be refused by fuscia component pack",
		"http/component.wasm imports wasi:http/types@0.2.0 (instance)")
}

// writeHandPackage packs dir's manifest.json and component.wasm as they are (no checks), the
// way a package from elsewhere might arrive, and returns the package's name.
func writeHandPackage(t *testing.T, h *harness, name, dir string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range []string{"manifest.json", "component.wasm"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f, Mode: 0o644, Size: int64(len(b))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(h.dir, name), buf.Bytes(), 0o644)
	return name
}

func TestComponentInspectBadInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("notes.txt", "not a component")
	tests := []struct {
		args []string
		code int
		want []string // in stderr
	}{
		{[]string{"component", "inspect"}, 2, []string{"Error: Missing file", "fuscia component inspect FILE.fcpkg"}},
		{[]string{"component", "inspect", "a.wasm", "b.wasm"}, 2, []string{"Error: Unexpected argument"}},
		{[]string{"component", "inspect", "nope.fcpkg"}, 2, []string{"Error: File not found", "nope.fcpkg does not exist"}},
		{[]string{"component", "inspect", "notes.txt"}, 2, []string{"Error: Cannot inspect notes.txt", "notes.txt is neither a component package (a gzip'd tar) nor a WebAssembly binary"}},
		{[]string{"component", "inspect", "."}, 2, []string{"is a directory"}},
		{[]string{"component", "inspect", "-bogus", "x.wasm"}, 2, []string{"Error: flag provided but not defined: -bogus", "Usage: fuscia component inspect"}},
	}
	for _, tt := range tests {
		r := h.run(tt.args...)
		wantCode(t, r, tt.code)
		wantContainsWrapped(t, strings.Join(tt.args, " "), r.stderr, tt.want...)
	}
	r := h.run("component", "inspect", "-help")
	wantCode(t, r, 0)
	wantContains(t, "help", r.stdout, "Usage: fuscia component inspect FILE.fcpkg|FILE.wasm [-json]", "-json")
	r = h.run("component", "-help")
	wantCode(t, r, 0)
	wantContains(t, "component help", r.stdout, "  inspect  Show what a package or Wasm binary is")
}

// wantContainsWrapped is wantContains for messages the CLI wraps at 100 columns: runs of white
// space, line breaks included, compare equal.
func wantContainsWrapped(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	flat := strings.Join(strings.Fields(got), " ")
	for _, w := range wants {
		if !strings.Contains(flat, strings.Join(strings.Fields(w), " ")) {
			t.Errorf("%s does not contain %q:\n%s", what, w, got)
		}
	}
}
