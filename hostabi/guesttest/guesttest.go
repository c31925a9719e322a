// Package guesttest builds the example components (examples/components) with the Go toolchain
// and installs them, for tests that run real Wasm through the host. Builds are shared by every
// test of a test binary.
package guesttest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/fuscia/fuscia/hostabi/registry"
)

var builds sync.Map // component name → *build

type build struct {
	once sync.Once
	dir  string // a copy of the component's directory with component.wasm built in it
	err  error
}

// repoRoot is the module root, found from this file's location.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Dir builds examples/components/NAME for wasip1 once per test binary and returns a directory
// holding its manifest.json and component.wasm, ready for registry.Pack.
func Dir(t testing.TB, name string) string {
	t.Helper()
	v, _ := builds.LoadOrStore(name, &build{})
	b := v.(*build)
	b.once.Do(func() { b.dir, b.err = buildComponent(name) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.dir
}

// buildComponent builds into a directory named by a hash of the sources (the component's and
// the guest SDK's), so test binaries share builds and a changed source rebuilds.
func buildComponent(name string) (string, error) {
	src := filepath.Join(repoRoot(), "examples", "components", name)
	sum, err := sourceHash(append([]string{src}, sdkDirs()...)...)
	if err != nil {
		return "", err
	}
	final := filepath.Join(os.TempDir(), "fuscia-guesttest", name+"-"+sum)
	if _, err := os.Stat(filepath.Join(final, "manifest.json")); err == nil {
		return final, nil
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(filepath.Dir(final), ".build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", filepath.Join(dir, "component.wasm"), ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build component %s: %v\n%s", name, err, out)
	}
	manifest, err := os.ReadFile(filepath.Join(src, "manifest.json"))
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), manifest, 0o644); err != nil {
		return "", err
	}
	// Another test binary may have finished the same build first; either copy will do.
	if err := os.Rename(dir, final); err != nil {
		if _, serr := os.Stat(filepath.Join(final, "manifest.json")); serr != nil {
			return "", err
		}
	}
	return final, nil
}

// sourceHash hashes the regular files directly in dirs.
// sdkDirs are the SDK's package and the module's packages it builds on, whose sources are
// part of a component's build: a change to any is a new build (TestSDKDirsCoverItsDeps).
func sdkDirs() []string {
	return []string{
		filepath.Join(repoRoot(), "hostabi", "guest"),
		filepath.Join(repoRoot(), "internal", "taskresult"),
		filepath.Join(repoRoot(), "internal", "jsonenc"),
	}
}

func sourceHash(dirs ...string) (string, error) {
	h := sha256.New()
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			return "", err
		}
		for _, e := range ents {
			if !e.Type().IsRegular() || e.Name() == "component.wasm" {
				continue
			}
			b, err := os.ReadFile(filepath.Join(d, e.Name()))
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "%s %d\n", e.Name(), len(b))
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// Wasm returns the built component.wasm of examples/components/NAME.
func Wasm(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(t, name), "component.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Package packs examples/components/NAME into a .fcpkg under t's temp dir.
func Package(t testing.TB, name string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name+".fcpkg")
	if _, err := registry.Pack(Dir(t, name), out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Install packs and installs examples/components/NAME into componentsDir.
func Install(t testing.TB, componentsDir, name string) registry.Installed {
	t.Helper()
	inst, err := registry.Install(componentsDir, Package(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return inst
}
