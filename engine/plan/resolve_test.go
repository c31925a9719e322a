package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/lang"
)

// TestResolveChecksComponentModule: a component whose component.wasm no longer has the digest
// its manifest recorded at install is refused at plan time, naming it and both digests.
func TestResolveChecksComponentModule(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "components", "acme--x--1.0.0")
	must(t, os.MkdirAll(dir, 0o755))
	installed := []byte("\x00asm\x01\x00\x00\x00")
	sum := sha256.Sum256(installed)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	must(t, os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"name": "acme/x", "version": "1.0.0", "abi": 1, "digest": "`+digest+`", "tasks": {}}`), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "component.wasm"), installed, 0o644))
	wf := filepath.Join(t.TempDir(), "w.fsc.hcl")
	must(t, os.WriteFile(wf, []byte("workflow \"w\" {}\ncomponent \"x\" {\n  source = \"acme/x\"\n}\n"), 0o644))
	w, diags := lang.NewParser().Load(wf, lang.Options{Planning: true})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	res, diags := Resolve(w, Env{Home: home}, hcl.DiagError)
	if diags.HasErrors() || res.Components["x"] == nil || res.Components["x"].Digest != digest {
		t.Fatalf("the installed module: %v, %+v", diags, res.Components["x"])
	}

	swapped := append(installed, 0, 1, 'x', 0)
	must(t, os.WriteFile(filepath.Join(dir, "component.wasm"), swapped, 0o644))
	sum = sha256.Sum256(swapped)
	res, diags = Resolve(w, Env{Home: home}, hcl.DiagError)
	if !diags.HasErrors() || res.Components["x"] != nil {
		t.Fatalf("a swapped module resolved: %v", diags)
	}
	d := diags[0]
	if d.Summary != "Component changed after install" || d.Subject == nil || d.Subject.Start.Line != 2 {
		t.Errorf("diagnostic %q at %v", d.Summary, d.Subject)
	}
	for _, want := range []string{`"x"`, "acme/x@1.0.0", digest, "sha256:" + hex.EncodeToString(sum[:]), "component remove"} {
		if !strings.Contains(d.Detail, want) {
			t.Errorf("the detail does not say %q: %s", want, d.Detail)
		}
	}
}
