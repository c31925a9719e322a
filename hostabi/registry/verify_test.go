package registry

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerify installs a component, then replaces its component.wasm with another valid
// module: Verify passes before and refuses after, naming the component and both digests.
func TestVerify(t *testing.T) {
	wasm := abiWasm(t)
	dir := componentDir(t, testManifest(""), wasm)
	pkg := filepath.Join(t.TempDir(), "mailer.fcpkg")
	if _, err := Pack(dir, pkg); err != nil {
		t.Fatal(err)
	}
	components := t.TempDir()
	inst, err := Install(components, pkg)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(inst); err != nil {
		t.Fatalf("the installed file: %v", err)
	}
	found, err := Find(components, "acme/mailer", "")
	if err != nil {
		t.Fatal(err)
	}
	other := wat(t, strings.Replace(abiWAT, "(memory (export \"memory\") 1)", "(memory (export \"memory\") 2)", 1))
	write(t, filepath.Join(inst.Dir, WasmFile), other)
	err = Verify(found)
	if !errors.Is(err, ErrModified) {
		t.Fatalf("a replaced file: %v; want ErrModified", err)
	}
	for _, want := range []string{"acme/mailer@1.2.3", inst.Digest, sha256Digest(other), "reinstall"} {
		if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(want)) {
			t.Errorf("the error does not name %q: %v", want, err)
		}
	}
	if err := os.Remove(filepath.Join(inst.Dir, WasmFile)); err != nil {
		t.Fatal(err)
	}
	if err := Verify(found); err == nil || !strings.Contains(err.Error(), "cannot read") {
		t.Errorf("a missing file: %v", err)
	}
}
