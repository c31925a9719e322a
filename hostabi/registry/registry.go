package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

	// Parsed is Manifest decoded but not validated (Install validated it); nil when
	// manifest.json cannot be read or does not have the manifest's shape.
	Parsed *Manifest

	// AlreadyInstalled is set by Install when this version was installed already with the same
	// digest, so nothing changed.
	AlreadyInstalled bool
}

// Ref is "org/name@version".
func (i Installed) Ref() string { return i.Source + "@" + i.Version }

// ErrNotInstalled is returned (wrapped) when no installed version matches.
var ErrNotInstalled = errors.New("component not installed")

// RefusedError is returned when the input is refused for what it is, not because an operation
// failed: an invalid manifest or module, a tampered or malformed package, a version installed
// with another digest, a malformed name. The CLI exits 2 on it.
type RefusedError struct {
	// Reason says what is wrong. It may span several lines (one per manifest problem) and is
	// written to be shown as it is.
	Reason string
	// Hint is a sentence saying what to do, or "".
	Hint string
	// Err is the underlying error, such as a *ManifestError, or nil.
	Err error
}

func (e *RefusedError) Error() string { return e.Reason }
func (e *RefusedError) Unwrap() error { return e.Err }

// installDirName is the directory of one installed version below the components directory
// (docs/reference/cli.md): <org>--<name>--<version>. Names cannot contain "--" (see validName), so the first
// two "--" separate the parts.
func installDirName(source, ver string) string {
	org, name, _ := strings.Cut(source, "/")
	return org + "--" + name + "--" + ver
}

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
	raw, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return Installed{}, fmt.Errorf("read manifest of %s@%s: %w", source, best.Original(), err)
	}
	var m struct {
		Digest string `json:"digest"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return Installed{}, fmt.Errorf("read manifest of %s@%s: %w", source, best.Original(), err)
	}
	return Installed{Source: source, Version: best.Original(), Digest: m.Digest, Dir: dir, Manifest: raw,
		Parsed: decodeLenient(raw)}, nil
}

// List returns every installed component version, sorted by name, then by version (oldest
// first). Directories that are not installed versions (such as the temporary directories of an
// install or a removal in progress, whose names start with ".") are skipped. A version whose
// manifest cannot be read is listed without digest and with a nil Parsed, so that it can be
// seen and removed.
func List(componentsDir string) ([]Installed, error) {
	entries, err := os.ReadDir(componentsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list components in %s: %w", componentsDir, err)
	}
	type entry struct {
		inst Installed
		ver  *version.Version
	}
	var found []entry
	for _, e := range entries {
		source, vs, ok := parseInstallDirName(e.Name())
		if !ok || !e.IsDir() {
			continue
		}
		v, err := version.NewSemver(vs)
		if err != nil {
			continue
		}
		inst := Installed{Source: source, Version: vs, Dir: filepath.Join(componentsDir, e.Name())}
		if raw, err := os.ReadFile(filepath.Join(inst.Dir, ManifestFile)); err == nil {
			inst.Manifest = raw
			if inst.Parsed = decodeLenient(raw); inst.Parsed != nil {
				inst.Digest = inst.Parsed.Digest
			}
		}
		found = append(found, entry{inst, v})
	}
	slices.SortFunc(found, func(a, b entry) int {
		if c := strings.Compare(a.inst.Source, b.inst.Source); c != 0 {
			return c
		}
		return a.ver.Compare(b.ver)
	})
	out := make([]Installed, len(found))
	for i, f := range found {
		out[i] = f.inst
	}
	return out, nil
}

// parseInstallDirName splits "<org>--<name>--<version>" into "org/name" and the version.
func parseInstallDirName(dir string) (source, ver string, ok bool) {
	if strings.HasPrefix(dir, ".") {
		return "", "", false
	}
	parts := strings.SplitN(dir, "--", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", false
	}
	return parts[0] + "/" + parts[1], parts[2], true
}

// Remove deletes the installed version ver of source (org/name). It fails with an error wrapping
// ErrNotInstalled, listing the installed versions of source, when that version is not
// installed, and with a *RefusedError when source is not a valid org/name. The directory is
// first renamed away, so a removal never leaves a half-deleted version visible to Find.
func Remove(componentsDir, source, ver string) error {
	if reason := validName(source); reason != "" {
		return &RefusedError{Reason: fmt.Sprintf("%q is not a component name: %s", source, reason),
			Hint: "Give the component as NAME@VERSION, for example acme/mailer@1.2.3."}
	}
	if ver == "" || strings.ContainsAny(ver, "/\\\x00") || strings.HasPrefix(ver, ".") {
		return notInstalled(componentsDir, source, ver)
	}
	dir := filepath.Join(componentsDir, installDirName(source, ver))
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) || (err == nil && !fi.IsDir()) {
		return notInstalled(componentsDir, source, ver)
	}
	if err != nil {
		return fmt.Errorf("remove %s@%s: %w", source, ver, err)
	}
	trash, err := os.MkdirTemp(componentsDir, ".remove-")
	if err != nil {
		return fmt.Errorf("remove %s@%s: %w", source, ver, err)
	}
	gone := filepath.Join(trash, "old")
	if err := os.Rename(dir, gone); err != nil {
		_ = os.Remove(trash)
		if errors.Is(err, os.ErrNotExist) { // removed by someone else meanwhile
			return notInstalled(componentsDir, source, ver)
		}
		return fmt.Errorf("remove %s@%s: %w", source, ver, err)
	}
	if err := os.RemoveAll(trash); err != nil {
		return fmt.Errorf("%s@%s is no longer installed, but deleting its files failed (delete %s by hand): %w", source, ver, trash, err)
	}
	return nil
}

// notInstalled is the error of Remove for a version that is not installed.
func notInstalled(componentsDir, source, ver string) error {
	var versions []string
	if all, err := List(componentsDir); err == nil {
		for _, i := range all {
			if i.Source == source {
				versions = append(versions, i.Version)
			}
		}
	}
	if len(versions) == 0 {
		return &notInstalledError{fmt.Sprintf("%s@%s is not installed, and no version of %s is", source, ver, source)}
	}
	return &notInstalledError{fmt.Sprintf("%s@%s is not installed; the installed versions of %s are %s",
		source, ver, source, strings.Join(versions, ", "))}
}

// notInstalledError is an error that is ErrNotInstalled with its own message.
type notInstalledError struct{ msg string }

func (e *notInstalledError) Error() string        { return e.msg }
func (e *notInstalledError) Is(target error) bool { return target == ErrNotInstalled }
