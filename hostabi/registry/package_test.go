package registry

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// packComponent packs a valid component, changed by change (may be nil), and returns the
// package file.
func packComponent(t *testing.T, change func(m map[string]any)) string {
	t.Helper()
	m := testManifest("")
	if change != nil {
		change(m)
	}
	dir := componentDir(t, m, abiWasm(t))
	out := filepath.Join(t.TempDir(), "pkg.fcpkg")
	if _, err := Pack(dir, out); err != nil {
		t.Fatalf("Pack: %v", err)
	}
	return out
}

func withVersion(v string) func(map[string]any) {
	return func(m map[string]any) { m["version"] = v }
}

type tarEntry struct {
	hdr  tar.Header
	data []byte
}

func file(name string, data []byte) tarEntry {
	return tarEntry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data))}, data: data}
}

// makePackage writes entries as a gzip'd tar, by hand, and returns its path.
func makePackage(t *testing.T, entries ...tarEntry) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		hdr := e.hdr
		if err := tw.WriteHeader(&hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "crafted.fcpkg")
	write(t, p, buf.Bytes())
	return p
}

// validEntries are the entries of a valid package whose module is wasm.
func validEntries(t *testing.T, wasm []byte) []tarEntry {
	t.Helper()
	return []tarEntry{
		file(ManifestFile, mustJSON(t, testManifest(sha256Digest(wasm)))),
		file(WasmFile, wasm),
	}
}

// readPackage returns the headers and contents of a package.
func readPackage(t *testing.T, path string) ([]*tar.Header, map[string][]byte) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if !zr.ModTime.IsZero() || zr.Name != "" {
		t.Errorf("gzip header has name %q, time %v; want neither", zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	var hdrs []*tar.Header
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		hdrs = append(hdrs, h)
		files[h.Name] = b
	}
	return hdrs, files
}

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestPackInstallRoundTrip(t *testing.T) {
	wasm := abiWasm(t)
	dir := componentDir(t, testManifest(""), wasm)
	out := filepath.Join(t.TempDir(), "acme-mailer-1.2.3.fcpkg")
	m, err := Pack(dir, out)
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256Digest(wasm)
	if m.Digest != digest {
		t.Errorf("packed digest %s, want %s", m.Digest, digest)
	}

	hdrs, files := readPackage(t, out)
	var names []string
	for _, h := range hdrs {
		names = append(names, h.Name)
		if h.Typeflag != tar.TypeReg || h.Mode != 0o644 || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || !h.ModTime.Equal(time.Unix(0, 0)) {
			t.Errorf("entry %s: type %c mode %o uid %d gid %d uname %q gname %q mtime %v; want a regular file, 0644, owner 0, no names, the epoch",
				h.Name, h.Typeflag, h.Mode, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime)
		}
	}
	if want := []string{"README.md", "assets/templates/welcome.txt", "component.wasm", "manifest.json"}; !slices.Equal(names, want) {
		t.Errorf("entries %v, want %v", names, want)
	}
	packed, err := ParseManifest(files[ManifestFile])
	if err != nil {
		t.Fatalf("packed manifest: %v", err)
	}
	if packed.Digest != digest || packed.Limits.MaxMemory != "64MiB" {
		t.Errorf("packed manifest digest %s, max_memory %q", packed.Digest, packed.Limits.MaxMemory)
	}

	components := filepath.Join(t.TempDir(), "components")
	inst, err := Install(components, out)
	if err != nil {
		t.Fatal(err)
	}
	wantDir := filepath.Join(components, "acme--mailer--1.2.3")
	if inst.Source != "acme/mailer" || inst.Version != "1.2.3" || inst.Digest != digest || inst.Dir != wantDir || inst.AlreadyInstalled {
		t.Errorf("Install = %+v", inst)
	}
	if inst.Parsed == nil || len(inst.Parsed.Tasks) != 1 {
		t.Errorf("Install's Parsed = %+v", inst.Parsed)
	}
	for name, want := range map[string][]byte{
		ManifestFile:                   files[ManifestFile],
		WasmFile:                       wasm,
		ReadmeFile:                     []byte("# Mailer\n"),
		"assets/templates/welcome.txt": []byte("Welcome!\n"),
	} {
		got, err := os.ReadFile(filepath.Join(wantDir, filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("installed %s = %q, %v; want %q", name, got, err, want)
		}
	}
	if fi, err := os.Stat(wantDir); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("installed directory: %v, %v; want mode 0755", fi.Mode(), err)
	}
	if got := dirNames(t, components); !slices.Equal(got, []string{"acme--mailer--1.2.3"}) {
		t.Errorf("components holds %v; want only the installed version (no temporary directory)", got)
	}

	found, err := Find(components, "acme/mailer", "~> 1.2")
	if err != nil {
		t.Fatal(err)
	}
	if found.Dir != wantDir || found.Digest != digest || found.Parsed == nil || found.Parsed.Name != "acme/mailer" {
		t.Errorf("Find = %+v", found)
	}
}

// TestPackReproducible: the same directory packs to the same bytes, whatever the files' times.
func TestPackReproducible(t *testing.T) {
	dir := componentDir(t, testManifest(""), abiWasm(t))
	a := filepath.Join(t.TempDir(), "a.fcpkg")
	b := filepath.Join(t.TempDir(), "b.fcpkg")
	if _, err := Pack(dir, a); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	for _, f := range []string{ManifestFile, WasmFile, ReadmeFile, "assets/templates/welcome.txt"} {
		if err := os.Chtimes(filepath.Join(dir, f), later, later); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Pack(dir, b); err != nil {
		t.Fatal(err)
	}
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if !bytes.Equal(ab, bb) {
		t.Error("packing the same directory twice gave different bytes")
	}
	if fi, err := os.Stat(a); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("package mode %v, %v; want 0644", fi.Mode(), err)
	}
	// Packing over an existing file replaces it, and leaves no temporary file.
	if _, err := Pack(dir, a); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, filepath.Dir(a)); !slices.Equal(got, []string{"a.fcpkg"}) {
		t.Errorf("output directory holds %v", got)
	}
}

// TestPackDigest: Pack overwrites an absent, empty, malformed or stale digest.
func TestPackDigest(t *testing.T) {
	wasm := abiWasm(t)
	for name, digest := range map[string]any{
		"absent": nil, "empty": "", "malformed": "sha256:abc", "not a string": 42,
		"stale": "sha256:" + strings.Repeat("0", 64),
	} {
		t.Run(name, func(t *testing.T) {
			m := testManifest("")
			if digest == nil {
				delete(m, "digest")
			} else {
				m["digest"] = digest
			}
			out := filepath.Join(t.TempDir(), "x.fcpkg")
			packed, err := Pack(componentDir(t, m, wasm), out)
			if err != nil {
				t.Fatal(err)
			}
			if packed.Digest != sha256Digest(wasm) {
				t.Errorf("digest %s, want %s", packed.Digest, sha256Digest(wasm))
			}
			if _, err := Install(filepath.Join(t.TempDir(), "c"), out); err != nil {
				t.Errorf("Install: %v", err)
			}
		})
	}
}

func TestPackRefuses(t *testing.T) {
	noMarker := wat(t, `(module (memory (export "memory") 1)
  (func (export "fuscia_alloc") (param i32) (result i32) i32.const 0)
  (func (export "fuscia_call") (param i32 i32) (result i64) i64.const 0))`)
	tests := []struct {
		name  string
		setup func(t *testing.T) string // returns the directory to pack
		want  []string
	}{
		{"invalid manifest", func(t *testing.T) string {
			m := testManifest("")
			m["version"] = "1.2"
			m["abi"] = 7
			return componentDir(t, m, abiWasm(t))
		}, []string{`manifest.json: "version" "1.2" is not a semantic version (MAJOR.MINOR.PATCH)`, `manifest.json: "abi" 7 is not supported`}},
		{"no ABI marker", func(t *testing.T) string { return componentDir(t, testManifest(""), noMarker) },
			[]string{"component.wasm does not export fuscia_abi_v1"}},
		{"not wasm", func(t *testing.T) string { return componentDir(t, testManifest(""), []byte("#!/bin/sh\n")) },
			[]string{"component.wasm is not a WebAssembly module"}},
		{"no component.wasm", func(t *testing.T) string {
			dir := componentDir(t, testManifest(""), abiWasm(t))
			os.Remove(filepath.Join(dir, WasmFile))
			return dir
		}, []string{"has no component.wasm"}},
		{"no manifest.json", func(t *testing.T) string {
			dir := componentDir(t, testManifest(""), abiWasm(t))
			os.Remove(filepath.Join(dir, ManifestFile))
			return dir
		}, []string{"has no manifest.json"}},
		{"no directory", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }, []string{"does not exist"}},
		{"symlink in assets", func(t *testing.T) string {
			dir := componentDir(t, testManifest(""), abiWasm(t))
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, "assets", "passwd")); err != nil {
				t.Skip(err)
			}
			return dir
		}, []string{"is a symbolic link; a package holds regular files only"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "x.fcpkg")
			_, err := Pack(tt.setup(t), out)
			var re *RefusedError
			if !errors.As(err, &re) {
				t.Fatalf("want a *RefusedError, got %T %v", err, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused pack wrote %s", out)
			}
		})
	}
}

// TestPackFollowsTopLevelSymlinks: component.wasm may be a link to the build's output.
func TestPackFollowsTopLevelSymlinks(t *testing.T) {
	dir := componentDir(t, testManifest(""), abiWasm(t))
	build := filepath.Join(t.TempDir(), "out.wasm")
	write(t, build, abiWasm(t))
	os.Remove(filepath.Join(dir, WasmFile))
	if err := os.Symlink(build, filepath.Join(dir, WasmFile)); err != nil {
		t.Skip(err)
	}
	if _, err := Pack(dir, filepath.Join(t.TempDir(), "x.fcpkg")); err != nil {
		t.Fatal(err)
	}
}

func TestPackTooLarge(t *testing.T) {
	old := packageLimit
	packageLimit = 64 << 10
	defer func() { packageLimit = old }()
	dir := componentDir(t, testManifest(""), abiWasm(t))
	write(t, filepath.Join(dir, "assets", "big.bin"), make([]byte, 80<<10))
	_, err := Pack(dir, filepath.Join(t.TempDir(), "x.fcpkg"))
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "more than 64 KiB uncompressed") {
		t.Errorf("got %v, want a refusal for size", err)
	}
}

func TestInstallRefuses(t *testing.T) {
	wasm := abiWasm(t)
	valid := func(extra ...tarEntry) []tarEntry { return append(validEntries(t, wasm), extra...) }
	special := func(name string, typ byte, link string) tarEntry {
		return tarEntry{hdr: tar.Header{Typeflag: typ, Name: name, Linkname: link, Mode: 0o644}}
	}
	otherWasm := wat(t, `(module (memory (export "memory") 1) (func (export "fuscia_abi_v1"))
  (func (export "fuscia_alloc") (param i32) (result i32) i32.const 8)
  (func (export "fuscia_call") (param i32 i32) (result i64) i64.const 0))`)
	noMarker := wat(t, `(module (memory (export "memory") 1)
  (func (export "fuscia_alloc") (param i32) (result i32) i32.const 0)
  (func (export "fuscia_call") (param i32 i32) (result i64) i64.const 0))`)
	badManifest := testManifest(sha256Digest(wasm))
	badManifest["version"] = "1.2"

	tests := []struct {
		name    string
		entries []tarEntry
		raw     []byte // instead of entries: the package's bytes
		want    string
	}{
		{"parent directory", valid(file("../evil.txt", []byte("x"))), nil, `holds the entry "../evil.txt", whose name leads out of the package (..)`},
		{"parent inside assets", valid(file("assets/../../evil.txt", []byte("x"))), nil, `whose name leads out of the package (..)`},
		{"absolute path", valid(file("/tmp/evil.txt", []byte("x"))), nil, `holds the entry "/tmp/evil.txt", whose name is an absolute path`},
		{"backslash", valid(file(`assets\..\..\evil.txt`, []byte("x"))), nil, "contains a backslash"},
		{"unclean", valid(file("assets//x", []byte("x"))), nil, "is not a clean path"},
		{"symlink", valid(special("assets/passwd", tar.TypeSymlink, "/etc/passwd")), nil, "holds a link, assets/passwd -> /etc/passwd; a package holds regular files only"},
		{"symlink named like the module", append([]tarEntry{special(WasmFile, tar.TypeSymlink, "/etc/passwd")}, file(ManifestFile, mustJSON(t, testManifest(sha256Digest(wasm))))), nil, "holds a link"},
		{"hard link", valid(special("assets/x", tar.TypeLink, "manifest.json")), nil, "holds a link, assets/x -> manifest.json"},
		{"character device", valid(special("assets/null", tar.TypeChar, "")), nil, `holds "assets/null", which is not a regular file`},
		{"block device", valid(special("assets/sda", tar.TypeBlock, "")), nil, "which is not a regular file"},
		{"fifo", valid(special("assets/pipe", tar.TypeFifo, "")), nil, "which is not a regular file"},
		{"file outside the allowed set", valid(file("install.sh", []byte("rm -rf /"))), nil, `holds "install.sh"; a package holds only manifest.json, component.wasm, README.md and assets/`},
		{"directory outside the allowed set", valid(special("bin/", tar.TypeDir, "")), nil, `holds the directory "bin"`},
		{"assets as a file", valid(file("assets", []byte("x"))), nil, `holds "assets"`},
		{"duplicate manifest", valid(file(ManifestFile, mustJSON(t, testManifest(sha256Digest(wasm))))), nil, `holds "manifest.json" twice`},
		{"duplicate module", valid(file("./"+WasmFile, wasm)), nil, `holds "component.wasm" twice`},
		{"file then directory", valid(file("assets/x", []byte("1")), file("assets/x/y", []byte("2"))), nil, `holds "assets/x" both as a file and as a directory`},
		{"no manifest", []tarEntry{file(WasmFile, wasm)}, nil, "has no manifest.json"},
		{"no module", []tarEntry{file(ManifestFile, mustJSON(t, testManifest(sha256Digest(wasm))))}, nil, "has no component.wasm"},
		{"empty", nil, nil, "has no manifest.json and no component.wasm"},
		{"digest mismatch", []tarEntry{file(ManifestFile, mustJSON(t, testManifest(sha256Digest(wasm)))), file(WasmFile, otherWasm)}, nil,
			"digest mismatch: manifest says " + sha256Digest(wasm) + ", component.wasm is " + sha256Digest(otherWasm)},
		{"invalid manifest", []tarEntry{file(ManifestFile, mustJSON(t, badManifest)), file(WasmFile, wasm)}, nil,
			`manifest.json: "version" "1.2" is not a semantic version (MAJOR.MINOR.PATCH)`},
		{"manifest not JSON", []tarEntry{file(ManifestFile, []byte("name = acme")), file(WasmFile, wasm)}, nil, "manifest.json: is not a JSON object"},
		{"no ABI marker", []tarEntry{file(ManifestFile, mustJSON(t, testManifest(sha256Digest(noMarker)))), file(WasmFile, noMarker)}, nil,
			"component.wasm does not export fuscia_abi_v1: it was not built for the Fuscia host ABI v1 (build it with hostabi/guest)"},
		{"manifest too large", []tarEntry{file(ManifestFile, bytes.Repeat([]byte(" "), MaxManifestSize+1)), file(WasmFile, wasm)}, nil,
			"manifest.json is 1048577 bytes, more than the limit of 1 MiB"},
		{"not gzip", nil, []byte("just some text, not a package"), "is not a valid package (a gzip'd tar)"},
		{"too short for gzip", nil, []byte("abc"), "is not a valid package (a gzip'd tar): it does not start with a gzip header"},
		{"gzip but not tar", nil, gzipped(t, bytes.Repeat([]byte("not a tar header "), 64)), "is not a valid package (a gzip'd tar)"},
		{"truncated", nil, truncated(t, makePackage(t, validEntries(t, wasm)...)), "is truncated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			var pkg string
			if tt.raw != nil {
				pkg = filepath.Join(t.TempDir(), "raw.fcpkg")
				write(t, pkg, tt.raw)
			} else {
				pkg = makePackage(t, tt.entries...)
			}
			components := filepath.Join(root, "home", "components")
			_, err := Install(components, pkg)
			var re *RefusedError
			if !errors.As(err, &re) {
				t.Fatalf("want a *RefusedError, got %T: %v", err, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error does not contain %q:\n%v", tt.want, err)
			}
			if got := dirNames(t, components); len(got) != 0 {
				t.Errorf("a refused install left %v in the components directory", got)
			}
			if got := dirNames(t, filepath.Join(root, "home")); !slices.Equal(got, []string{"components"}) {
				t.Errorf("a refused install wrote %v beside the components directory", got)
			}
		})
	}
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func truncated(t *testing.T, pkg string) []byte {
	t.Helper()
	b, err := os.ReadFile(pkg)
	if err != nil {
		t.Fatal(err)
	}
	return b[:len(b)/2]
}

// TestInstallHandMade: a package made with tar -C dir -czf x.fcpkg . has "./" names and
// directory entries.
func TestInstallHandMade(t *testing.T) {
	wasm := abiWasm(t)
	dir := func(name string) tarEntry {
		return tarEntry{hdr: tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755}}
	}
	pkg := makePackage(t,
		dir("./"),
		file("./manifest.json", mustJSON(t, testManifest(sha256Digest(wasm)))),
		file("./component.wasm", wasm),
		dir("./assets/"),
		dir("./assets/img/"),
		file("./assets/img/logo.svg", []byte("<svg/>")),
		tarEntry{hdr: tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": "x"}}},
	)
	components := t.TempDir()
	inst, err := Install(components, pkg)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(inst.Dir, "assets", "img", "logo.svg")); err != nil || string(b) != "<svg/>" {
		t.Errorf("asset: %q, %v", b, err)
	}
}

func TestInstallTooLarge(t *testing.T) {
	old := packageLimit
	packageLimit = 64 << 10
	defer func() { packageLimit = old }()
	entries := append(validEntries(t, abiWasm(t)), file("assets/big.bin", make([]byte, 80<<10)))
	components := t.TempDir()
	_, err := Install(components, makePackage(t, entries...))
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "is more than 64 KiB uncompressed, the limit of a package") {
		t.Errorf("got %v, want a refusal for size", err)
	}
	if got := dirNames(t, components); len(got) != 0 {
		t.Errorf("left %v", got)
	}
}

func TestInstallMissingFile(t *testing.T) {
	_, err := Install(t.TempDir(), filepath.Join(t.TempDir(), "nope.fcpkg"))
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "nope.fcpkg does not exist") {
		t.Errorf("got %v", err)
	}
	_, err = Install(t.TempDir(), t.TempDir())
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "is a directory, not a package") {
		t.Errorf("got %v", err)
	}
}

func TestReinstall(t *testing.T) {
	components := t.TempDir()
	pkg := packComponent(t, nil)
	first, err := Install(components, pkg)
	if err != nil {
		t.Fatal(err)
	}

	again, err := Install(components, pkg)
	if err != nil {
		t.Fatalf("reinstalling the same package: %v", err)
	}
	if !again.AlreadyInstalled || again.Digest != first.Digest || again.Dir != first.Dir {
		t.Errorf("reinstall = %+v; want AlreadyInstalled with the same digest and directory", again)
	}

	// The same version, rebuilt: a different digest is refused and the installed files stay.
	other := wat(t, `(module (memory (export "memory") 2) (func (export "fuscia_abi_v1"))
  (func (export "fuscia_alloc") (param i32) (result i32) i32.const 16)
  (func (export "fuscia_call") (param i32 i32) (result i64) i64.const 0))`)
	dir := componentDir(t, testManifest(""), other)
	rebuilt := filepath.Join(t.TempDir(), "rebuilt.fcpkg")
	if _, err := Pack(dir, rebuilt); err != nil {
		t.Fatal(err)
	}
	_, err = Install(components, rebuilt)
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("want a *RefusedError, got %v", err)
	}
	want := "acme/mailer@1.2.3 is already installed with digest " + first.Digest + "; remove it first with `fuscia component remove acme/mailer@1.2.3`"
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
	if !strings.Contains(re.Hint, sha256Digest(other)) {
		t.Errorf("hint %q does not name the new digest", re.Hint)
	}
	if b, _ := os.ReadFile(filepath.Join(first.Dir, WasmFile)); !bytes.Equal(b, abiWasm(t)) {
		t.Error("a refused reinstall changed the installed module")
	}
	if got := dirNames(t, components); !slices.Equal(got, []string{"acme--mailer--1.2.3"}) {
		t.Errorf("components holds %v", got)
	}

	// After removing, the rebuilt package installs.
	if err := Remove(components, "acme/mailer", "1.2.3"); err != nil {
		t.Fatal(err)
	}
	if inst, err := Install(components, rebuilt); err != nil || inst.Digest != sha256Digest(other) {
		t.Errorf("install after remove: %+v, %v", inst, err)
	}
}

func TestList(t *testing.T) {
	components := t.TempDir()
	if got, err := List(filepath.Join(components, "missing")); err != nil || got != nil {
		t.Errorf("List of a missing directory = %v, %v; want nothing", got, err)
	}
	for _, v := range []string{"1.10.0", "1.2.3", "1.9.0", "1.10.0-rc.1"} {
		if _, err := Install(components, packComponent(t, withVersion(v))); err != nil {
			t.Fatal(err)
		}
	}
	alpha := func(m map[string]any) { m["name"] = "acme/alpha"; m["version"] = "0.1.0" }
	if _, err := Install(components, packComponent(t, alpha)); err != nil {
		t.Fatal(err)
	}
	// Things List skips: a temporary directory, a file, a directory that is not a version.
	write(t, filepath.Join(components, ".install-123", "manifest.json"), []byte("{}"))
	write(t, filepath.Join(components, "notes.txt"), []byte("x"))
	write(t, filepath.Join(components, "junk", "x"), []byte("x"))
	write(t, filepath.Join(components, "acme--mailer--latest", "x"), []byte("x"))
	// A broken install is listed, without digest.
	write(t, filepath.Join(components, "acme--broken--1.0.0", WasmFile), []byte("x"))

	got, err := List(components)
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, i := range got {
		refs = append(refs, i.Ref())
	}
	want := []string{"acme/alpha@0.1.0", "acme/broken@1.0.0", "acme/mailer@1.2.3", "acme/mailer@1.9.0", "acme/mailer@1.10.0-rc.1", "acme/mailer@1.10.0"}
	if !slices.Equal(refs, want) {
		t.Errorf("List = %v, want %v", refs, want)
	}
	for _, i := range got {
		if i.Source == "acme/broken" {
			if i.Digest != "" || i.Parsed != nil {
				t.Errorf("broken install listed with %+v", i)
			}
			continue
		}
		if i.Digest != sha256Digest(abiWasm(t)) || i.Parsed == nil || i.Parsed.Version != i.Version || len(i.Manifest) == 0 {
			t.Errorf("List entry %+v", i)
		}
		var m map[string]any
		if err := json.Unmarshal(i.Manifest, &m); err != nil {
			t.Errorf("raw manifest of %s: %v", i.Ref(), err)
		}
	}
}

func TestRemove(t *testing.T) {
	components := t.TempDir()
	for _, v := range []string{"1.2.3", "1.3.0"} {
		if _, err := Install(components, packComponent(t, withVersion(v))); err != nil {
			t.Fatal(err)
		}
	}
	if err := Remove(components, "acme/mailer", "1.3.0"); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, components); !slices.Equal(got, []string{"acme--mailer--1.2.3"}) {
		t.Errorf("after remove, components holds %v", got)
	}
	if inst, err := Find(components, "acme/mailer", ""); err != nil || inst.Version != "1.2.3" {
		t.Errorf("Find after remove = %+v, %v", inst, err)
	}

	tests := []struct {
		source, version string
		notInstalled    bool
		want            string
	}{
		{"acme/mailer", "1.3.0", true, "acme/mailer@1.3.0 is not installed; the installed versions of acme/mailer are 1.2.3"},
		{"acme/mailer", "1.2", true, "acme/mailer@1.2 is not installed; the installed versions of acme/mailer are 1.2.3"},
		{"acme/mailer", "../../etc", true, "is not installed"},
		{"acme/other", "1.0.0", true, "acme/other@1.0.0 is not installed, and no version of acme/other is"},
		{"Acme/Mailer", "1.2.3", false, `"Acme/Mailer" is not a component name`},
		{"../x", "1.2.3", false, "is not a component name"},
	}
	for _, tt := range tests {
		err := Remove(components, tt.source, tt.version)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Remove(%s, %s) = %v, want an error containing %q", tt.source, tt.version, err, tt.want)
			continue
		}
		var re *RefusedError
		if errors.Is(err, ErrNotInstalled) != tt.notInstalled || errors.As(err, &re) == tt.notInstalled {
			t.Errorf("Remove(%s, %s) = %T %v; want ErrNotInstalled %v", tt.source, tt.version, err, err, tt.notInstalled)
		}
	}
	if got := dirNames(t, components); !slices.Equal(got, []string{"acme--mailer--1.2.3"}) {
		t.Errorf("components holds %v; want no temporary directory left", got)
	}
}

func TestPackOutputIsADirectory(t *testing.T) {
	dir := componentDir(t, testManifest(""), abiWasm(t))
	out := t.TempDir()
	_, err := Pack(dir, out)
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "is a directory") ||
		!strings.Contains(re.Hint, filepath.Join(out, "acme-mailer-1.2.3.fcpkg")) {
		t.Errorf("got %v (hint %q)", err, re.Hint)
	}
}

// TestInstallConcurrently: installs of the same package racing each other all succeed, one of
// them installing and the others finding it installed.
func TestInstallConcurrently(t *testing.T) {
	components := t.TempDir()
	pkg := packComponent(t, nil)
	const n = 8
	results := make(chan Installed, n)
	errs := make(chan error, n)
	for range n {
		go func() {
			inst, err := Install(components, pkg)
			if err != nil {
				errs <- err
				return
			}
			results <- inst
		}()
	}
	fresh := 0
	for range n {
		select {
		case err := <-errs:
			t.Error(err)
		case inst := <-results:
			if !inst.AlreadyInstalled {
				fresh++
			}
		}
	}
	if fresh != 1 {
		t.Errorf("%d installs installed, want 1", fresh)
	}
	if got := dirNames(t, components); !slices.Equal(got, []string{"acme--mailer--1.2.3"}) {
		t.Errorf("components holds %v", got)
	}
}
