package main

// End-to-end tests of `fuscia component pack/install/list/remove` (docs/reference/cli.md, docs/reference/abi-v1.md
// "Component packages"): a component directory with a WAT-built module is packed, installed,
// listed, reinstalled, tampered with and removed by the real binary.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bytecodealliance/wasmtime-go/v39"
)

// componentWAT exports what the host ABI v1 requires (docs/reference/abi-v1.md, "Exports").
const componentWAT = `(module
  (memory (export "memory") 1)
  (func (export "fuscia_abi_v1"))
  (func (export "fuscia_alloc") (param i32) (result i32) i32.const 0)
  (func (export "fuscia_call") (param i32 i32) (result i64) i64.const 0))`

// componentNoMarkerWAT lacks the ABI marker.
const componentNoMarkerWAT = `(module
  (memory (export "memory") 1)
  (func (export "fuscia_alloc") (param i32) (result i32) i32.const 0)
  (func (export "fuscia_call") (param i32 i32) (result i64) i64.const 0))`

// componentManifest is a source manifest: pack writes its digest.
const componentManifest = `{
  "name": "acme/mailer",
  "version": "1.2.3",
  "description": "Send mail",
  "abi": 1,
  "capabilities": {"allowed_hosts": ["smtp.example.com"], "allowed_paths": []},
  "limits": {"max_memory": "64MiB"},
  "tasks": {
    "send": {
      "description": "Send one mail",
      "schema": {"type": "object", "required": ["to"],
                 "properties": {"to": {"type": "string"}, "subject": {"type": "string"}}},
      "output_schema": {"type": "object"}
    }
  },
  "triggers": {
    "bounce": {"description": "A mail bounced", "trigger_type": {"type": "webhook"}}
  }
}
`

func componentWasm(t *testing.T, wat string) []byte {
	t.Helper()
	b, err := wasmtime.Wat2Wasm(wat)
	if err != nil {
		t.Fatalf("wat2wasm: %v", err)
	}
	return b
}

func componentDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// writeComponentDir writes a component directory rel below h.dir.
func writeComponentDir(t *testing.T, h *harness, rel, manifest string, wasm []byte) {
	t.Helper()
	writeFile(t, filepath.Join(h.dir, rel, "manifest.json"), []byte(manifest), 0o644)
	writeFile(t, filepath.Join(h.dir, rel, "component.wasm"), wasm, 0o644)
	writeFile(t, filepath.Join(h.dir, rel, "README.md"), []byte("# Mailer\n"), 0o644)
	writeFile(t, filepath.Join(h.dir, rel, "assets", "welcome.txt"), []byte("Welcome!\n"), 0o644)
}

// rewritePackage copies the package src to dst, changing the entries change returns new
// contents for, and appending extra entries.
func rewritePackage(t *testing.T, src, dst string, change func(name string, data []byte) []byte, extra ...*tar.Header) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if change != nil {
			data = change(hdr.Name, data)
		}
		hdr.Size = int64(len(data))
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	for _, hdr := range extra {
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dst, buf.Bytes(), 0o644)
}

// componentListOutput is `component list -json`.
type componentListOutput struct {
	Components []struct {
		Name         string   `json:"name"`
		Version      string   `json:"version"`
		Digest       string   `json:"digest"`
		Description  string   `json:"description"`
		Tasks        []string `json:"tasks"`
		Triggers     []string `json:"triggers"`
		Capabilities struct {
			AllowedHosts []string `json:"allowed_hosts"`
			AllowedPaths []string `json:"allowed_paths"`
		} `json:"capabilities"`
		Path string `json:"path"`
	} `json:"components"`
}

// decodeComponentList parses `component list -json` strictly, checking its keys at every level.
func decodeComponentList(t *testing.T, out string) componentListOutput {
	t.Helper()
	if got := keys(t, json.RawMessage(out)); !slices.Equal(got, []string{"components"}) {
		t.Errorf("component list -json keys = %v, want [components]", got)
	}
	var raw struct {
		Components []json.RawMessage `json:"components"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Components == nil {
		t.Errorf(`"components" is not an array: %s`, out)
	}
	for _, c := range raw.Components {
		want := []string{"capabilities", "description", "digest", "name", "path", "tasks", "triggers", "version"}
		if got := keys(t, c); !slices.Equal(got, want) {
			t.Errorf("component keys = %v, want %v", got, want)
		}
		var cc struct {
			Capabilities json.RawMessage `json:"capabilities"`
		}
		_ = json.Unmarshal(c, &cc)
		if got := keys(t, cc.Capabilities); !slices.Equal(got, []string{"allowed_hosts", "allowed_paths"}) {
			t.Errorf("capabilities keys = %v", got)
		}
	}
	var v componentListOutput
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("component list -json: %v\n%s", err, out)
	}
	return v
}

func TestComponentLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	wasm := componentWasm(t, componentWAT)
	digest := componentDigest(wasm)
	writeComponentDir(t, h, "mailer", componentManifest, wasm)

	// pack
	r := h.run("component", "pack", "mailer", "-o", "acme-mailer-1.2.3.fcpkg")
	wantCode(t, r, 0)
	if want := "Packed acme/mailer@1.2.3 (" + digest + ") to acme-mailer-1.2.3.fcpkg\n"; r.stdout != want {
		t.Errorf("pack stdout = %q, want %q", r.stdout, want)
	}

	// install
	r = h.run("component", "install", "acme-mailer-1.2.3.fcpkg")
	wantCode(t, r, 0)
	if want := "Installed acme/mailer@1.2.3 (" + digest + ")\n"; r.stdout != want {
		t.Errorf("install stdout = %q, want %q", r.stdout, want)
	}
	installed := filepath.Join(h.home, "components", "acme--mailer--1.2.3")
	for _, f := range []string{"manifest.json", "component.wasm", "README.md", "assets/welcome.txt"} {
		if _, err := os.Stat(filepath.Join(installed, f)); err != nil {
			t.Errorf("installed component lacks %s: %v", f, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(installed, "component.wasm")); !bytes.Equal(b, wasm) {
		t.Error("the installed module differs from the packed one")
	}

	// list
	r = h.run("component", "list")
	wantCode(t, r, 0)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAME VERSION DIGEST TASKS TRIGGERS" ||
		strings.Join(strings.Fields(lines[1]), " ") != "acme/mailer 1.2.3 "+digest+" send bounce" {
		t.Errorf("component list:\n%s", r.stdout)
	}
	r = h.run("component", "list", "-json")
	wantCode(t, r, 0)
	l := decodeComponentList(t, r.stdout)
	if len(l.Components) != 1 {
		t.Fatalf("components = %+v, want one", l.Components)
	}
	c := l.Components[0]
	if c.Name != "acme/mailer" || c.Version != "1.2.3" || c.Digest != digest || c.Description != "Send mail" ||
		!slices.Equal(c.Tasks, []string{"send"}) || !slices.Equal(c.Triggers, []string{"bounce"}) ||
		!slices.Equal(c.Capabilities.AllowedHosts, []string{"smtp.example.com"}) || c.Capabilities.AllowedPaths == nil ||
		c.Path != installed {
		t.Errorf("component list -json = %+v", c)
	}

	// plan resolves the installed component and locks its digest.
	f := h.write("mail.fsc.hcl", mailWorkflow)
	r = h.run("plan", f)
	wantCode(t, r, 0)
	wantContains(t, "plan", r.stdout, "component acme/mailer@1.2.3 ("+digest+")")

	// reinstalling the same package is a no-op
	r = h.run("component", "install", "acme-mailer-1.2.3.fcpkg")
	wantCode(t, r, 0)
	if want := "acme/mailer@1.2.3 is already installed (" + digest + ")\n"; r.stdout != want {
		t.Errorf("reinstall stdout = %q, want %q", r.stdout, want)
	}

	// a tampered package is refused, and says why
	tampered := componentWasm(t, strings.Replace(componentWAT, "i32.const 0", "i32.const 8", 1))
	rewritePackage(t, filepath.Join(h.dir, "acme-mailer-1.2.3.fcpkg"), filepath.Join(h.dir, "tampered.fcpkg"),
		func(name string, data []byte) []byte {
			if name == "component.wasm" {
				return tampered
			}
			return data
		})
	r = h.run("component", "install", "tampered.fcpkg")
	wantCode(t, r, 2)
	wantContains(t, "stderr", strings.Join(strings.Fields(r.stderr), " "), "Error: Package refused",
		"digest mismatch: manifest says "+digest+", component.wasm is "+componentDigest(tampered))

	// the same version rebuilt is refused while the old one is installed
	writeComponentDir(t, h, "rebuilt", componentManifest, tampered)
	wantCode(t, h.run("component", "pack", "rebuilt", "-o", "rebuilt.fcpkg"), 0)
	r = h.run("component", "install", "rebuilt.fcpkg")
	wantCode(t, r, 2)
	wantContains(t, "stderr", strings.Join(strings.Fields(r.stderr), " "),
		"acme/mailer@1.2.3 is already installed with digest "+digest+"; remove it first with `fuscia component remove acme/mailer@1.2.3`")
	if b, _ := os.ReadFile(filepath.Join(installed, "component.wasm")); !bytes.Equal(b, wasm) {
		t.Error("a refused install changed the installed module")
	}

	// remove
	r = h.run("component", "remove", "acme/mailer@1.2.3")
	wantCode(t, r, 0)
	if r.stdout != "Removed acme/mailer@1.2.3\n" {
		t.Errorf("remove stdout = %q", r.stdout)
	}
	r = h.run("component", "list")
	wantCode(t, r, 0)
	if want := "No components installed in " + filepath.Join(h.home, "components") + ".\n"; r.stdout != want {
		t.Errorf("list after remove = %q, want %q", r.stdout, want)
	}
	r = h.run("component", "list", "-json")
	wantCode(t, r, 0)
	if l := decodeComponentList(t, r.stdout); len(l.Components) != 0 {
		t.Errorf("list -json after remove = %+v", l)
	}
	r = h.run("component", "remove", "acme/mailer@1.2.3")
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, "Error: Component not installed", "acme/mailer@1.2.3 is not installed", "fuscia component list")

	// now the rebuilt version installs
	r = h.run("component", "install", "rebuilt.fcpkg")
	wantCode(t, r, 0)
	wantContains(t, "stdout", r.stdout, "Installed acme/mailer@1.2.3 ("+componentDigest(tampered)+")")
}

// TestComponentRefused: packages and directories install and pack refuse, with exit 2 and the
// reason on stderr, leaving nothing installed.
func TestComponentRefused(t *testing.T) {
	t.Parallel()
	wasm := componentWasm(t, componentWAT)
	noMarker := componentWasm(t, componentNoMarkerWAT)
	tests := []struct {
		name  string
		setup func(t *testing.T, h *harness) []string // returns the command's arguments
		want  []string
	}{
		{"pack invalid manifest", func(t *testing.T, h *harness) []string {
			m := strings.Replace(componentManifest, `"version": "1.2.3"`, `"version": "1.2"`, 1)
			m = strings.Replace(m, `"type": "webhook"`, `"type": "poll"`, 1)
			writeComponentDir(t, h, "src", m, wasm)
			return []string{"component", "pack", "src", "-o", "x.fcpkg"}
		}, []string{"Error: Cannot pack src", `manifest.json: "version" "1.2" is not a semantic version (MAJOR.MINOR.PATCH)`,
			`manifest.json: "triggers.bounce.trigger_type.interval_ms" must be more than 0 for a poll trigger`}},
		{"pack without ABI marker", func(t *testing.T, h *harness) []string {
			writeComponentDir(t, h, "src", componentManifest, noMarker)
			return []string{"component", "pack", "src", "-o", "x.fcpkg"}
		}, []string{"Error: Cannot pack src", "component.wasm does not export fuscia_abi_v1: it was not built for the Fuscia host ABI v1 (build it with hostabi/guest)"}},
		{"pack without module", func(t *testing.T, h *harness) []string {
			writeFile(t, filepath.Join(h.dir, "src", "manifest.json"), []byte(componentManifest), 0o644)
			return []string{"component", "pack", "src", "-o", "x.fcpkg"}
		}, []string{"Error: Cannot pack src", "src has no component.wasm"}},
		{"install path traversal", func(t *testing.T, h *harness) []string {
			writeComponentDir(t, h, "src", componentManifest, wasm)
			wantCode(t, h.run("component", "pack", "src", "-o", "ok.fcpkg"), 0)
			rewritePackage(t, filepath.Join(h.dir, "ok.fcpkg"), filepath.Join(h.dir, "evil.fcpkg"), nil,
				&tar.Header{Typeflag: tar.TypeReg, Name: "../../evil.txt", Mode: 0o644})
			return []string{"component", "install", "evil.fcpkg"}
		}, []string{"Error: Package refused", `holds the entry "../../evil.txt", whose name leads out of the package (..)`}},
		{"install symlink", func(t *testing.T, h *harness) []string {
			writeComponentDir(t, h, "src", componentManifest, wasm)
			wantCode(t, h.run("component", "pack", "src", "-o", "ok.fcpkg"), 0)
			rewritePackage(t, filepath.Join(h.dir, "ok.fcpkg"), filepath.Join(h.dir, "evil.fcpkg"), nil,
				&tar.Header{Typeflag: tar.TypeSymlink, Name: "assets/passwd", Linkname: "/etc/passwd"})
			return []string{"component", "install", "evil.fcpkg"}
		}, []string{"Error: Package refused", "holds a link, assets/passwd -> /etc/passwd"}},
		{"install not a package", func(t *testing.T, h *harness) []string {
			h.write("notes.fcpkg", "just text")
			return []string{"component", "install", "notes.fcpkg"}
		}, []string{"Error: Package refused", "is not a valid package (a gzip'd tar)"}},
		{"install missing file", func(t *testing.T, h *harness) []string {
			return []string{"component", "install", "missing.fcpkg"}
		}, []string{"Error: Package not found", "missing.fcpkg does not exist"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			r := h.run(tt.setup(t, h)...)
			wantCode(t, r, 2)
			wantContains(t, "stderr", strings.Join(strings.Fields(r.stderr), " "), tt.want...)
			if r.stdout != "" {
				t.Errorf("stdout not empty:\n%s", r)
			}
			if _, err := os.Stat(filepath.Join(h.dir, "x.fcpkg")); err == nil {
				t.Error("a refused pack wrote its output")
			}
			entries, _ := os.ReadDir(filepath.Join(h.home, "components"))
			if len(entries) != 0 {
				t.Errorf("a refused install left %d entries in the components directory", len(entries))
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(h.home), "evil.txt")); err == nil {
				t.Error("path traversal wrote outside the components directory")
			}
		})
	}
}

// TestComponentHome: -home selects another home, like every command.
func TestComponentHome(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	other := t.TempDir()
	writeComponentDir(t, h, "src", componentManifest, componentWasm(t, componentWAT))
	wantCode(t, h.run("component", "pack", "src", "-o", "m.fcpkg"), 0)
	wantCode(t, h.run("component", "install", "m.fcpkg", "-home", other), 0)
	if _, err := os.Stat(filepath.Join(other, "components", "acme--mailer--1.2.3", "component.wasm")); err != nil {
		t.Errorf("not installed in -home: %v", err)
	}
	r := h.run("component", "list")
	wantCode(t, r, 0)
	wantContains(t, "list", r.stdout, "No components installed")
	r = h.run("component", "list", "-home", other)
	wantCode(t, r, 0)
	wantContains(t, "list -home", r.stdout, "acme/mailer")
	wantCode(t, h.run("component", "remove", "-home", other, "acme/mailer@1.2.3"), 0)
}

// TestComponentOperationFailed: a failure outside the user's input exits 1.
func TestComponentOperationFailed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	writeComponentDir(t, h, "src", componentManifest, componentWasm(t, componentWAT))
	wantCode(t, h.run("component", "pack", "src", "-o", "m.fcpkg"), 0)
	// The components directory is a file: nothing can be installed or listed.
	writeFile(t, filepath.Join(h.home, "components"), []byte("not a directory"), 0o644)
	r := h.run("component", "install", "m.fcpkg")
	wantCode(t, r, 1)
	wantContains(t, "stderr", r.stderr, "Error: Cannot install m.fcpkg")
	r = h.run("component", "list")
	wantCode(t, r, 1)
	wantContains(t, "stderr", r.stderr, "Error: Cannot list the components")
	// The output directory does not exist.
	r = h.run("component", "pack", "src", "-o", filepath.Join("no", "such", "dir", "m.fcpkg"))
	wantCode(t, r, 1)
	wantContains(t, "stderr", r.stderr, "Error: Cannot pack src")
}

func TestComponentCommandLine(t *testing.T) {
	t.Parallel()
	for _, sub := range []string{"pack", "install", "list", "remove"} {
		for _, flag := range []string{"-help", "--help"} {
			t.Run(sub+flag, func(t *testing.T) {
				t.Parallel()
				r := newHarness(t).run("component", sub, flag)
				wantCode(t, r, 0)
				if !strings.HasPrefix(r.stdout, "Usage: fuscia component "+sub) {
					t.Errorf("help does not start with %q:\n%s", "Usage: fuscia component "+sub, r)
				}
				wantContains(t, "help", r.stdout, "-home")
			})
		}
	}
	t.Run("help", func(t *testing.T) {
		t.Parallel()
		r := newHarness(t).run("component", "-help")
		wantCode(t, r, 0)
		wantContains(t, "help", r.stdout, "Usage: fuscia component", "pack", "install", "list", "remove")
		r = newHarness(t).run("-help")
		wantContains(t, "top-level help", r.stdout, "component")
	})
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"component"}, "Usage: fuscia component"},
		{"unknown subcommand", []string{"component", "publish"}, `unknown subcommand "publish" of fuscia component`},
		{"unknown flag", []string{"component", "list", "-bogus"}, "bogus"},
		{"pack without directory", []string{"component", "pack", "-o", "x.fcpkg"}, "Error: Missing component directory"},
		{"pack without -o", []string{"component", "pack", "src"}, "Error: Missing -o"},
		{"pack two directories", []string{"component", "pack", "a", "b", "-o", "x.fcpkg"}, "Error: Unexpected argument"},
		{"install without file", []string{"component", "install"}, "Error: Missing package file"},
		{"install two files", []string{"component", "install", "a.fcpkg", "b.fcpkg"}, "Error: Unexpected argument"},
		{"list with argument", []string{"component", "list", "acme/mailer"}, "Error: Unexpected argument"},
		{"remove without argument", []string{"component", "remove"}, "Error: Missing component"},
		{"remove without version", []string{"component", "remove", "acme/mailer"}, "Error: Missing version"},
		{"remove bad name", []string{"component", "remove", "Acme/Mailer@1.0.0"}, `"Acme/Mailer" is not a component name`},
		{"remove not installed", []string{"component", "remove", "acme/mailer@1.0.0"}, "acme/mailer@1.0.0 is not installed, and no version of acme/mailer is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newHarness(t).run(tt.args...)
			wantCode(t, r, 2)
			wantContains(t, "stderr", r.stderr, tt.want)
		})
	}
}
