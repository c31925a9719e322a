// Package discover finds plugin binaries on disk (docs/reference/plugin-protocol.md,
// "Discovery"): file names, versions and digests. It starts nothing, so the planner and the
// CLI can list and resolve plugins without go-plugin.
package discover

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/hashicorp/go-version"
)

// FilePrefix starts the file name of every plugin binary.
const FilePrefix = "fuscia-plugin-"

// Binary is a plugin executable found on disk.
type Binary struct {
	Name    string // from the file name
	Version string // from the file name's _v<semver> suffix; empty when it has none
	Path    string
}

// ErrNotFound is returned (wrapped) when no binary matches.
var ErrNotFound = errors.New("plugin not found")

// Discover lists the plugin binaries in dirs, in order. A name found in an earlier directory
// hides the same name and version in a later one, so `./plugins` beside a workflow overrides
// the home directory (docs/reference/plugin-protocol.md, "Discovery"). Missing directories are skipped.
func Discover(dirs []string) ([]Binary, error) {
	var out []Binary
	seen := map[string]bool{}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list plugins in %s: %w", dir, err)
		}
		for _, e := range entries {
			b, ok := parseFileName(e.Name())
			if !ok || e.IsDir() {
				continue
			}
			key := b.Name + "@" + b.Version
			if seen[key] {
				continue
			}
			seen[key] = true
			b.Path = filepath.Join(dir, e.Name())
			out = append(out, b)
		}
	}
	return out, nil
}

func parseFileName(name string) (Binary, bool) {
	rest, ok := strings.CutPrefix(name, FilePrefix)
	if !ok || rest == "" {
		return Binary{}, false
	}
	b := Binary{Name: rest}
	if i := strings.LastIndex(rest, "_v"); i > 0 {
		if _, err := version.NewSemver(rest[i+2:]); err == nil {
			b.Name, b.Version = rest[:i], rest[i+2:]
		}
	}
	return b, true
}

// Find picks the binary for a `plugin` block: the given name, and when constraint is set, the
// newest version that satisfies it. A binary without a version in its name satisfies any
// constraint here; the version it reports is checked when it starts.
func Find(dirs []string, name, constraint string) (Binary, error) {
	all, err := Discover(dirs)
	if err != nil {
		return Binary{}, err
	}
	var cons version.Constraints
	if constraint != "" {
		if cons, err = version.NewConstraint(constraint); err != nil {
			return Binary{}, fmt.Errorf("plugin %s: invalid version constraint %q: %w", name, constraint, err)
		}
	}
	var matches []Binary
	for _, b := range all {
		if b.Name != name {
			continue
		}
		if b.Version != "" && cons != nil && !cons.Check(version.Must(version.NewSemver(b.Version))) {
			continue
		}
		matches = append(matches, b)
	}
	if len(matches) == 0 {
		return Binary{}, fmt.Errorf("%w: no %s%s[_vVERSION] matching %q in %s", ErrNotFound, FilePrefix, name, constraint, strings.Join(dirs, ", "))
	}
	// Prefer the newest versioned binary; an unversioned one only when nothing else matches.
	sort.SliceStable(matches, func(i, j int) bool {
		vi, vj := matches[i].Version, matches[j].Version
		if vi == "" || vj == "" {
			return vi != "" && vj == ""
		}
		return version.Must(version.NewSemver(vi)).GreaterThan(version.Must(version.NewSemver(vj)))
	})
	return matches[0], nil
}

// Digest returns "sha256:<hex>" of the file at path: the lock file's digest of a plugin binary.
func Digest(path string) (string, error) {
	f, err := openPlugin(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	digest, err := digestOf(f)
	if err != nil {
		return "", fmt.Errorf("digest plugin %s: %w", path, err)
	}
	return digest, nil
}

// openPlugin opens a plugin binary to read it, without blocking, and makes sure it is a regular
// file: a FIFO named like a plugin held every command that listed the directory in its open,
// past SIGTERM, and a device would be read forever.
func openPlugin(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("digest plugin %s: %w", path, err)
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("it is not a regular file (%s); a plugin is an executable file: remove or rename it", info.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("digest plugin %s: %w", path, err)
	}
	return f, nil
}
