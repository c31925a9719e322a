package registry

import (
	"archive/tar"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/internal/version"
)

func TestInspectPackage(t *testing.T) {
	t.Run("abi 1", func(t *testing.T) {
		pkg := packComponent(t, nil)
		in, err := Inspect(pkg)
		if err != nil {
			t.Fatal(err)
		}
		wasm := abiWasm(t)
		if in.File != pkg || !in.Package || in.Manifest == nil || in.Manifest.Ref() != "acme/mailer@1.2.3" || in.ABI != 1 || len(in.Problems) != 0 || in.Hint != "" {
			t.Errorf("Inspect = %+v", in)
		}
		if in.Wasm.Kind != WasmModule || in.Wasm.World != WorldABIv1 || in.Wasm.Digest != sha256Digest(wasm) || in.Wasm.Digest != in.Manifest.Digest || in.Wasm.Size != int64(len(wasm)) {
			t.Errorf("Inspect's Wasm = %+v", in.Wasm)
		}
		if len(in.Wasm.Exports) != 4 {
			t.Errorf("exports %v", in.Wasm.Exports)
		}
	})
	t.Run("abi 2", func(t *testing.T) {
		wasm := testdata(t, "world.wasm")
		pkg := filepath.Join(t.TempDir(), "c.fcpkg")
		if _, err := Pack(componentDir(t, componentManifest(""), wasm), pkg); err != nil {
			t.Fatal(err)
		}
		before := dirNames(t, filepath.Dir(pkg))
		in, err := Inspect(pkg)
		if err != nil {
			t.Fatal(err)
		}
		if in.ABI != 2 || in.Wasm.Kind != WasmComponent || in.Wasm.World != version.World || len(in.Problems) != 0 {
			t.Errorf("Inspect = %+v", in)
		}
		if !slices.Equal(in.Wasm.Exports, []Extern{{Name: "call", Kind: KindFunc}}) || len(in.Wasm.Imports) != 4 {
			t.Errorf("imports %v, exports %v", in.Wasm.Imports, in.Wasm.Exports)
		}
		if after := dirNames(t, filepath.Dir(pkg)); !slices.Equal(before, after) {
			t.Errorf("Inspect wrote beside the package: %v, then %v", before, after)
		}
	})
}

// TestInspectPackageProblems: what install would refuse of a package's contents is listed, not
// returned, with what to do, and the rest is still described.
func TestInspectPackageProblems(t *testing.T) {
	world := testdata(t, "world.wasm")
	m := testManifest(sha256Digest(abiWasm(t))) // abi 1, and the digest of another binary
	m["version"] = "1.2"
	pkg := makePackage(t, file(ManifestFile, mustJSON(t, m)), file(WasmFile, world), file("assets/a.txt", []byte("a")))
	in, err := Inspect(pkg)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`manifest.json: "version" "1.2" is not a semantic version`,
		"digest mismatch: manifest says " + sha256Digest(abiWasm(t)) + ", component.wasm is " + sha256Digest(world),
		`component.wasm is a WebAssembly component (component model), not a core module`,
	}
	if len(in.Problems) != len(want) {
		t.Fatalf("problems %q, want %d", in.Problems, len(want))
	}
	for i, w := range want {
		if !strings.Contains(in.Problems[i], w) {
			t.Errorf("problem %d %q does not contain %q", i, in.Problems[i], w)
		}
	}
	if in.Hint == "" || in.Manifest == nil || in.Manifest.Name != "acme/mailer" || in.ABI != 1 {
		t.Errorf("Inspect = %+v", in)
	}
	// The binary is described as what it is, whatever the manifest says.
	if in.Wasm.Kind != WasmComponent || in.Wasm.World != version.World {
		t.Errorf("Wasm = %+v", in.Wasm)
	}

	// A component.wasm that is not WebAssembly: the problem says so, the size and digest are
	// still there.
	junk := []byte("\x00asm\x0d\x00\x01\x00\x0a\x09")
	m = componentManifest(sha256Digest(junk))
	in, err = Inspect(makePackage(t, file(ManifestFile, mustJSON(t, m)), file(WasmFile, junk)))
	if err != nil {
		t.Fatal(err)
	}
	if in.Wasm.Kind != "" || in.Wasm.Size != int64(len(junk)) || in.Wasm.Digest != sha256Digest(junk) ||
		len(in.Problems) != 1 || !strings.Contains(in.Problems[0], "component.wasm is truncated: section 10 at byte 8") {
		t.Errorf("Inspect of a damaged component.wasm = %+v", in)
	}

	// A manifest that is not JSON.
	in, err = Inspect(makePackage(t, file(ManifestFile, []byte("name = x")), file(WasmFile, world)))
	if err != nil {
		t.Fatal(err)
	}
	if in.Manifest != nil || in.ABI != 0 || len(in.Problems) != 1 || !strings.HasPrefix(in.Problems[0], "manifest.json: is not a JSON object") || in.Wasm.World != version.World {
		t.Errorf("Inspect of a package with a bad manifest = %+v", in)
	}
}

func TestInspectWasm(t *testing.T) {
	dir := t.TempDir()
	put := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		write(t, p, b)
		return p
	}
	in, err := Inspect(put("m.wasm", abiWasm(t)))
	if err != nil {
		t.Fatal(err)
	}
	if in.Package || in.Manifest != nil || in.ABI != 1 || in.Wasm.Kind != WasmModule || in.Wasm.World != WorldABIv1 || len(in.Problems) != 0 || in.Hint != "" {
		t.Errorf("Inspect(module) = %+v", in)
	}
	in, err = Inspect(put("c.wasm", testdata(t, "world.wasm")))
	if err != nil {
		t.Fatal(err)
	}
	if in.ABI != 2 || in.Wasm.World != version.World || len(in.Problems) != 0 {
		t.Errorf("Inspect(component) = %+v", in)
	}
	p := put("misfit.wasm", testdata(t, "misfit.wasm"))
	in, err = Inspect(p)
	if err != nil {
		t.Fatal(err)
	}
	if in.ABI != 2 || in.Wasm.World != "" || len(in.Problems) != 12 || !strings.HasPrefix(in.Problems[0], p+" imports acme:kv/store@1.0.0") ||
		!strings.Contains(in.Hint, "Build component.wasm as a component of world") {
		t.Errorf("Inspect(misfit) = %+v", in)
	}
}

// TestInspectRefuses: what is not a package or a Wasm binary, or is a malformed one, is
// refused the way install refuses it.
func TestInspectRefuses(t *testing.T) {
	dir := t.TempDir()
	put := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		write(t, p, b)
		return p
	}
	wasm := abiWasm(t)
	tests := []struct {
		name string
		file string
		want string
	}{
		{"missing", filepath.Join(dir, "nope.fcpkg"), "nope.fcpkg does not exist"},
		{"directory", t.TempDir(), "is a directory"},
		{"empty", put("empty", nil), "is neither a component package (a gzip'd tar) nor a WebAssembly binary"},
		{"text", put("notes.txt", []byte("hello")), "is neither a component package"},
		{"truncated wasm", put("t.wasm", wasm[:len(wasm)-2]), "t.wasm is truncated: section"},
		{"wasm header only", put("h.wasm", []byte("\x00asm")), "h.wasm is not a WebAssembly module"},
		{"wasm of another version", put("v.wasm", []byte("\x00asm\x0c\x00\x01\x00")), "v.wasm is a WebAssembly binary of layer 1, version 12"},
		{"package leading out", makePackage(t, append(validEntries(t, wasm), file("../evil", []byte("x")))...), `holds the entry "../evil", whose name leads out of the package (..)`},
		{"package with a link", makePackage(t, append(validEntries(t, wasm), tarEntry{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: "assets/x", Linkname: "/etc/passwd"}})...), "holds a link"},
		{"package without module", makePackage(t, file(ManifestFile, mustJSON(t, testManifest(sha256Digest(wasm))))), "has no component.wasm"},
		{"package truncated", put("cut.fcpkg", truncated(t, makePackage(t, validEntries(t, wasm)...))), "is truncated"},
		{"gzip of junk", put("junk.fcpkg", gzipped(t, bytes.Repeat([]byte("not a tar header "), 64))), "is not a valid package (a gzip'd tar)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := Inspect(tt.file)
			var re *RefusedError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Inspect = %+v, %v; want a refusal containing %q", in, err, tt.want)
			}
			if tt.name == "missing" && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the refusal of a missing file is not fs.ErrNotExist")
			}
		})
	}
}

// TestInspectTooLarge: a package and a Wasm file are bounded as install bounds a package.
func TestInspectTooLarge(t *testing.T) {
	old := packageLimit
	packageLimit = 64 << 10
	defer func() { packageLimit = old }()
	big := append(abiWasm(t), section(0, cat(str("pad"), make([]byte, 80<<10)))...)
	if err := CheckWasm(big); err != nil {
		t.Fatal(err)
	}
	pkg := makePackage(t, file(ManifestFile, mustJSON(t, testManifest(sha256Digest(big)))), file(WasmFile, big))
	_, err := Inspect(pkg)
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "is more than 64 KiB uncompressed, the limit of a package") {
		t.Errorf("Inspect(big package) = %v", err)
	}
	p := filepath.Join(t.TempDir(), "big.wasm")
	if err := os.WriteFile(p, big, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Inspect(p); !errors.As(err, &re) || !strings.Contains(err.Error(), "more than the limit of 64 KiB of a package") {
		t.Errorf("Inspect(big wasm) = %v", err)
	}
}
