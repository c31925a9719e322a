package registry

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/internal/version"
)

// TestRequiredExportsDrift: the exports CheckWasm requires are the ABI marker of
// internal/version's ABI, first, then memory and the functions hostabi/guest exports with
// //go:wasmexport (Go's wasip1 port exports "memory" itself), except fuscia_preinit, which a
// module may leave out (docs/reference/abi-v1.md). hostabi's own drift test compares the
// host's loader with the same guest, and the name of that optional export.
func TestRequiredExportsDrift(t *testing.T) {
	marker := fmt.Sprintf("fuscia_abi_v%d", version.ABI)
	if requiredExports[0].name != marker || requiredExports[0].kind != exportFunc {
		t.Errorf("requiredExports starts with %q; want the function %q, the marker of internal/version.ABI", requiredExports[0].name, marker)
	}
	var funcs []string
	memory := false
	for _, e := range requiredExports {
		switch {
		case e.name == "memory" && e.kind == exportMemory:
			memory = true
		case e.kind == exportFunc:
			funcs = append(funcs, e.name)
		default:
			t.Errorf("requiredExports has %s as %s; only memory is a memory, the rest are functions", e.name, exportKindName(e.kind))
		}
	}
	if !memory {
		t.Error("requiredExports lacks memory")
	}
	slices.Sort(funcs)
	guest := slices.DeleteFunc(guestExports(t), func(e string) bool { return e == "fuscia_preinit" })
	if !slices.Equal(funcs, guest) {
		t.Errorf("CheckWasm requires the functions %v; hostabi/guest exports %v", funcs, guest)
	}

	// CheckWasm's message for a module without the marker names it and the ABI version.
	err := CheckWasm(wat(t, `(module (memory (export "memory") 1)
  (func (export "fuscia_alloc") (param i32) (result i32) i32.const 0)
  (func (export "fuscia_call") (param i32 i32) (result i64) i64.const 0))`))
	want := fmt.Sprintf("does not export %s: it was not built for the Fuscia host ABI v%d", marker, version.ABI)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("CheckWasm without the marker: %v; want %q", err, want)
	}

	// The manifest's "abi" values are internal/version's, and so is the hint for a value of the
	// wrong type.
	m := testManifest(sha256Digest(abiWasm(t)))
	m["abi"] = "one"
	_, err = ParseManifest(mustJSON(t, m))
	hint := fmt.Sprintf("must be %d (a core module of host ABI v%d) or %d (a component of world %s)",
		version.ABI, version.ABI, version.ComponentABI, version.World)
	if err == nil || !strings.Contains(err.Error(), hint) {
		t.Errorf(`ParseManifest with "abi": "one": %v; want %q`, err, hint)
	}
	for _, abi := range []int{version.ABI, version.ComponentABI} {
		m["abi"] = abi
		if _, err := ParseManifest(mustJSON(t, m)); err != nil {
			t.Errorf(`ParseManifest with "abi": %d: %v`, abi, err)
		}
	}
}

// guestExports reads hostabi/guest's //go:wasmexport directives, sorted.
func guestExports(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../guest/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in hostabi/guest: %v", err)
	}
	re := regexp.MustCompile(`(?m)^//go:wasmexport\s+(\S+)\s*$`)
	var exports []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			exports = append(exports, m[1])
		}
	}
	if len(exports) == 0 {
		t.Fatal("found no //go:wasmexport in hostabi/guest; this test's reading of it is out of date")
	}
	slices.Sort(exports)
	return exports
}
