package hostabi

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/fuscia/fuscia/internal/version"
)

// The ABI's version and its exports are written down more than once on purpose: as
// internal/version.ABI (what saved plans record), as ABIVersion and the exports newModule
// requires (module.go), as the //go:wasmexport directives of hostabi/guest, and as
// hostabi/registry's requiredExports (whose own test compares them with the guest too).
// These tests fail when one copy moves without the others.

// abiMarker is the export that says which ABI a module was built for.
var abiMarker = fmt.Sprintf("fuscia_abi_v%d", version.ABI)

func TestABIVersionDrift(t *testing.T) {
	if ABIVersion != version.ABI {
		t.Fatalf("hostabi.ABIVersion is %d, internal/version.ABI %d: change both, with the exports (fuscia_abi_vN) of module.go, hostabi/guest and hostabi/registry",
			ABIVersion, version.ABI)
	}
}

// TestGuestExportsAreWhatTheHostRequires: the Go guest SDK exports exactly the functions the
// host requires, the marker of internal/version's ABI among them, and the optional export that
// asks for pre-initialization (preinit.go), under the name the host looks for. Go's wasip1
// port exports "memory" itself.
func TestGuestExportsAreWhatTheHostRequires(t *testing.T) {
	all, _ := guestDirectives(t)
	if !slices.Contains(all, preinitExport) {
		t.Errorf("hostabi/guest does not export %s, the function that asks the host to pre-initialize the component (preinit.go)", preinitExport)
	}
	exports := slices.DeleteFunc(all, func(e string) bool { return e == preinitExport })
	want := []string{abiMarker, "fuscia_alloc", "fuscia_call"}
	if !slices.Equal(exports, sorted(want)) {
		t.Fatalf("hostabi/guest exports %v besides %s; the host ABI v%d wants %v", exports, preinitExport, version.ABI, sorted(want))
	}

	engine := wasmtime.NewEngine()
	defer engine.Close()
	load := func(exports []string) error {
		src := "(module"
		for _, e := range exports {
			if e == "memory" {
				src += ` (memory (export "memory") 1)`
			} else {
				// Each with the type the host requires of it (module.go's abiSignatures).
				body := map[string]string{
					"fuscia_alloc": ` (param i32) (result i32) (i32.const 0)`,
					"fuscia_call":  ` (param i32 i32) (result i64) (i64.const 0)`,
				}[e]
				src += fmt.Sprintf(` (func (export %q)%s)`, e, body)
			}
		}
		wasm, err := wasmtime.Wat2Wasm(src + ")")
		if err != nil {
			t.Fatal(err)
		}
		mod, err := wasmtime.NewModule(engine, wasm)
		if err != nil {
			t.Fatal(err)
		}
		m, err := newModule("t/drift", digestOf(wasm), "compiled", mod)
		if err == nil {
			m.close()
		}
		return err
	}
	full := append([]string{"memory"}, exports...)
	if err := load(full); err != nil {
		t.Fatalf("the host refuses a module with hostabi/guest's exports and memory: %v", err)
	}
	for _, drop := range full {
		rest := slices.DeleteFunc(slices.Clone(full), func(e string) bool { return e == drop })
		if err := load(rest); err == nil || !strings.Contains(err.Error(), "does not export "+drop) {
			t.Errorf("a module without %s: Load error %v; want one naming %s (the host no longer requires what hostabi/guest exports)", drop, err, drop)
		}
	}
	other := fmt.Sprintf("fuscia_abi_v%d", version.ABI+1)
	swapped := slices.Clone(full)
	swapped[slices.Index(swapped, abiMarker)] = other
	if err := load(swapped); err == nil {
		t.Errorf("the host loads a module that exports %s instead of %s", other, abiMarker)
	}
}

// TestGuestImportsAreHostImports: every import of hostabi/guest is one the host defines,
// in the module "fuscia".
func TestGuestImportsAreHostImports(t *testing.T) {
	_, imports := guestDirectives(t)
	host := hostImports(t)
	if len(imports["fuscia"]) == 0 {
		t.Fatal(`found no //go:wasmimport fuscia … in hostabi/guest; this test's reading of it is out of date`)
	}
	for mod, names := range imports {
		if mod != "fuscia" {
			t.Errorf("hostabi/guest imports from module %q (%v); the host defines only fuscia and WASI", mod, names)
			continue
		}
		for _, n := range names {
			if !slices.Contains(host, n) {
				t.Errorf("hostabi/guest imports fuscia.%s, which the host (imports.go) does not define; its imports are %v", n, host)
			}
		}
	}
}

// guestDirectives reads hostabi/guest's //go:wasmexport NAME and //go:wasmimport MODULE NAME
// directives: the exports sorted, the imports by module, sorted.
func guestDirectives(t *testing.T) (exports []string, imports map[string][]string) {
	t.Helper()
	files, err := filepath.Glob("guest/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in hostabi/guest: %v", err)
	}
	exportRE := regexp.MustCompile(`(?m)^//go:wasmexport\s+(\S+)\s*$`)
	importRE := regexp.MustCompile(`(?m)^//go:wasmimport\s+(\S+)\s+(\S+)\s*$`)
	imports = map[string][]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range exportRE.FindAllStringSubmatch(string(src), -1) {
			exports = append(exports, m[1])
		}
		for _, m := range importRE.FindAllStringSubmatch(string(src), -1) {
			imports[m[1]] = append(imports[m[1]], m[2])
		}
	}
	if len(exports) == 0 {
		t.Fatal("found no //go:wasmexport in hostabi/guest; this test's reading of it is out of date")
	}
	for _, names := range imports {
		slices.Sort(names)
	}
	return sorted(exports), imports
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
