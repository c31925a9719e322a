// Package registry finds the Wasm components installed under $FUSCIA_HOME/components
// (cli.md: `<org>--<name>--<version>/{manifest.json,component.wasm}`).
package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-version"
)

// Installed is one installed component version.
type Installed struct {
	Source   string // org/name
	Version  string
	Digest   string // sha256:… of component.wasm, from the manifest
	Dir      string
	Manifest json.RawMessage
}

// ErrNotInstalled is returned (wrapped) when no installed version matches.
var ErrNotInstalled = errors.New("component not installed")

// Find returns the newest installed version of source satisfying constraint (any version when
// constraint is empty).
func Find(componentsDir, source, constraint string) (Installed, error) {
	org, name, ok := strings.Cut(source, "/")
	if !ok {
		return Installed{}, fmt.Errorf("component source %q is not org/name", source)
	}
	var cons version.Constraints
	if constraint != "" {
		var err error
		if cons, err = version.NewConstraint(constraint); err != nil {
			return Installed{}, fmt.Errorf("component %s: invalid version constraint %q: %w", source, constraint, err)
		}
	}
	entries, err := os.ReadDir(componentsDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return Installed{}, fmt.Errorf("list components in %s: %w", componentsDir, err)
	}
	prefix := org + "--" + name + "--"
	var best *version.Version
	var bestDir string
	for _, e := range entries {
		vs, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		v, err := version.NewSemver(vs)
		if err != nil || (cons != nil && !cons.Check(v)) {
			continue
		}
		if best == nil || v.GreaterThan(best) {
			best, bestDir = v, e.Name()
		}
	}
	if best == nil {
		want := ""
		if constraint != "" {
			want = " matching " + constraint
		}
		return Installed{}, fmt.Errorf("%w: no %s%s in %s", ErrNotInstalled, source, want, componentsDir)
	}
	dir := filepath.Join(componentsDir, bestDir)
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return Installed{}, fmt.Errorf("read manifest of %s@%s: %w", source, best.Original(), err)
	}
	var m struct {
		Digest string `json:"digest"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return Installed{}, fmt.Errorf("read manifest of %s@%s: %w", source, best.Original(), err)
	}
	return Installed{Source: source, Version: best.Original(), Digest: m.Digest, Dir: dir, Manifest: raw}, nil
}
