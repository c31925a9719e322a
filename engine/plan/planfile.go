package plan

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	kflate "github.com/klauspost/compress/flate"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/fuscia/fuscia/internal/version"
	"github.com/fuscia/fuscia/lang"
)

// A saved plan (`plan -out FILE`, conventionally NAME.fsplan) is a zip holding:
//
//	workflows/N          the source of each workflow file (the planned one first, then called ones)
//	fuscia-plan.json     Saved, below: versions, the plan, variables, locked digests, file index
//	fuscia-plan.sha256   the digest of every other member (integrity.go)
//
// Sources are stored under numbered entries, with their paths in the index, so that a path such as
// "../common/child.fsc.hcl" never becomes a zip entry that escapes a directory. Secret values are
// never written: they are read again at apply.
const manifestEntry = "fuscia-plan.json"

// Saved is the manifest of a plan file.
type Saved struct {
	FormatVersion string                   `json:"format_version"`
	Fuscia        string                   `json:"fuscia_version"`
	ABI           int                      `json:"abi_version"`
	CreatedAt     time.Time                `json:"created_at"`
	Workflow      string                   `json:"workflow_file"` // path of the planned file, as given to plan
	Files         []SavedFile              `json:"files"`
	Variables     map[string]SavedVar      `json:"variables"`
	Components    map[string]ComponentLock `json:"components"`
	Plugins       map[string]PluginLock    `json:"plugins"`
	Plan          *Plan                    `json:"plan"`

	// Sources holds each file's content by path; filled by Decode.
	Sources map[string][]byte `json:"-"`
	// planJSON is Plan as the file holds it, for Rebuilt; filled by Decode.
	planJSON json.RawMessage
}

// SavedFile indexes one workflow source in the zip.
type SavedFile struct {
	Path  string `json:"path"`
	Entry string `json:"entry"`
}

// SavedVar is a variable value with its type, in go-cty's JSON encoding.
type SavedVar struct {
	Type  json.RawMessage `json:"type"`
	Value json.RawMessage `json:"value"`
}

// ErrCorrupt and ErrVersion classify why a plan file was refused.
var (
	ErrCorrupt = errors.New("plan file is corrupt")
	ErrVersion = errors.New("plan file was made by another fuscia version")
)

// IsPlanFile tells a saved plan from a workflow by its content: a plan is a zip.
func IsPlanFile(path string) bool {
	// Without blocking, and only a regular file: a FIFO without a writer would hold the open
	// (the workflow's reader refuses it with its own message).
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	magic := make([]byte, 4)
	_, err = io.ReadFull(f, magic)
	return err == nil && bytes.Equal(magic, []byte("PK\x03\x04"))
}

// WriteFile saves p, the sources of w and every workflow it calls, and the variable values set
// (not defaults) to path.
func WriteFile(path string, p *Plan, w *lang.Workflow, sources map[string][]byte, vars map[string]cty.Value) error {
	data, err := Encode(p, w, sources, vars)
	if err != nil {
		return err
	}
	// Write then rename, so an interrupted plan never leaves half a file under the real name.
	// Owner only: it holds the variables' values, sensitive ones included (docs/reference/cli.md,
	// "Saved plans"); a leftover temporary file would keep its own mode, so it goes first.
	tmp := path + ".tmp"
	_ = os.Remove(tmp)
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("save plan to %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("save plan to %s: %w", path, err)
	}
	return nil
}

// Encode makes the bytes of a saved plan: what WriteFile writes, and what a run journals as the
// snapshot it executes.
func Encode(p *Plan, w *lang.Workflow, sources map[string][]byte, vars map[string]cty.Value) ([]byte, error) {
	s := Saved{
		FormatVersion: version.PlanFormat,
		Fuscia:        version.Fuscia,
		ABI:           version.ABI,
		CreatedAt:     time.Now().UTC().Truncate(time.Second),
		Workflow:      w.Filename,
		Variables:     map[string]SavedVar{},
		Components:    map[string]ComponentLock{},
		Plugins:       map[string]PluginLock{},
		Plan:          p,
	}
	for name, c := range p.Components {
		s.Components[name] = *c
	}
	for name, pl := range p.Plugins {
		s.Plugins[name] = *pl
	}
	for name, v := range vars {
		v, _ = v.UnmarkDeep()
		ty, err := ctyjson.MarshalType(v.Type())
		if err != nil {
			return nil, fmt.Errorf("save variable %s: %w", name, err)
		}
		val, err := ctyjson.Marshal(v, v.Type())
		if err != nil {
			return nil, fmt.Errorf("save variable %s: %w", name, err)
		}
		s.Variables[name] = SavedVar{Type: ty, Value: val}
	}
	var files []string
	var collect func(w *lang.Workflow)
	collect = func(w *lang.Workflow) {
		files = append(files, w.Filename)
		for _, n := range w.Nodes {
			if child := w.Calls[n.Addr.Name]; child != nil {
				collect(child)
			}
		}
	}
	collect(w)

	// Members are written sources first, then the manifest, then the integrity entry that
	// binds them all (integrity.go).
	members := map[string][]byte{}
	var order []string
	seen := map[string]bool{}
	for _, f := range files {
		if seen[f] {
			continue
		}
		seen[f] = true
		src, ok := sources[f]
		if !ok {
			return nil, fmt.Errorf("save plan: no source for %s", f)
		}
		entry := fmt.Sprintf("workflows/%d", len(s.Files))
		s.Files = append(s.Files, SavedFile{Path: f, Entry: entry})
		members[entry] = src
		order = append(order, entry)
	}
	manifest, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("save plan: %w", err)
	}
	members[manifestEntry] = manifest
	order = append(order, manifestEntry)
	seal, err := sealMembers(members)
	if err != nil {
		return nil, fmt.Errorf("save plan: %w", err)
	}
	members[integrityEntry] = seal
	order = append(order, integrityEntry)

	buf := &bytes.Buffer{}
	zw := zip.NewWriter(buf)
	zw.RegisterCompressor(zip.Deflate, newStatelessDeflate)
	for _, name := range order {
		if err := writeEntry(zw, name, members[name]); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("save plan: %w", err)
	}
	return buf.Bytes(), nil
}

// newStatelessDeflate compresses a member without the ~640 KiB of match-finding state
// compress/flate allocates per writer: in a one-shot apply, a fresh process, that state was
// ~300 page faults (~5 ms on a VM where a fault costs ~15 µs) to compress a few KiB, more than
// the plan itself. The output is ordinary deflate, read by archive/zip; it is about as small
// for plans, whose members are a few KiB to a few hundred.
func newStatelessDeflate(w io.Writer) (io.WriteCloser, error) {
	return kflate.NewStatelessWriter(w), nil
}

func writeEntry(zw *zip.Writer, name string, data []byte) error {
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: time.Unix(0, 0).UTC()})
	if err != nil {
		return fmt.Errorf("save plan entry %s: %w", name, err)
	}
	if _, err := w.Write(data); err != nil {
		return fmt.Errorf("save plan entry %s: %w", name, err)
	}
	return nil
}

// maxEntrySize bounds what Decode inflates of one member, and maxPlanSize of all of them, so
// that a zip bomb is refused as corrupt.
const (
	maxEntrySize = 64 << 20
	maxPlanSize  = 256 << 20
)

// ReadFile opens a saved plan. Errors wrap ErrCorrupt, ErrVersion or ErrIntegrity.
func ReadFile(path string) (*Saved, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read plan %s: %w", path, err)
	}
	return Decode(path, data)
}

// Decode reads a saved plan from its bytes; name is used in messages. It checks every member
// against the plan's digest (integrity.go) before it believes any of them. Errors wrap
// ErrCorrupt, ErrVersion or ErrIntegrity.
func Decode(name string, data []byte) (*Saved, error) {
	path := name
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	members, integrity, err := readMembers(path, zr)
	if err != nil {
		return nil, err
	}
	raw, ok := members[manifestEntry]
	if !ok && integrity == nil {
		return nil, fmt.Errorf("%w: %s has no %s", ErrCorrupt, path, manifestEntry)
	}
	if integrity == nil {
		// A plan saved before plans carried a digest. Its version says why, when it has one.
		var old struct {
			Fuscia string `json:"fuscia_version"`
		}
		if json.Unmarshal(raw, &old) == nil && old.Fuscia != "" && old.Fuscia != version.Fuscia {
			return nil, fmt.Errorf("%w: %s was saved by fuscia %s, this is fuscia %s; run `fuscia plan` again", ErrVersion, path, old.Fuscia, version.Fuscia)
		}
		return nil, fmt.Errorf("%w: %s has no digest (%s): it was saved by an older fuscia, or put together by hand; run `fuscia plan -out` again", ErrIntegrity, path, integrityEntry)
	}
	if err := checkMembers(path, integrity, members); err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s has no %s", ErrCorrupt, path, manifestEntry)
	}
	var s Saved
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%w: %s: %s: %v", ErrCorrupt, path, manifestEntry, err)
	}
	var planOnly struct {
		Plan json.RawMessage `json:"plan"`
	}
	_ = json.Unmarshal(raw, &planOnly)
	s.planJSON = planOnly.Plan
	if s.FormatVersion != version.PlanFormat || s.Plan == nil || len(s.Files) == 0 {
		return nil, fmt.Errorf("%w: %s: unsupported format %q", ErrCorrupt, path, s.FormatVersion)
	}
	if s.Fuscia != version.Fuscia {
		return nil, fmt.Errorf("%w: %s was saved by fuscia %s, this is fuscia %s; run `fuscia plan` again", ErrVersion, path, s.Fuscia, version.Fuscia)
	}
	s.Sources = make(map[string][]byte, len(s.Files))
	indexed := map[string]bool{manifestEntry: true}
	for _, f := range s.Files {
		data, ok := members[f.Entry]
		if !ok || indexed[f.Entry] {
			return nil, fmt.Errorf("%w: %s: the file index names member %q, which is missing or named twice", ErrCorrupt, path, f.Entry)
		}
		indexed[f.Entry] = true
		s.Sources[filepath.Clean(f.Path)] = data
	}
	for name := range members {
		if !indexed[name] {
			return nil, fmt.Errorf("%w: %s: member %q is not in the file index", ErrCorrupt, path, name)
		}
	}
	return &s, nil
}

// readMember inflates one member of a plan file, at most maxEntrySize bytes of it.
func readMember(path string, f *zip.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %s: %v", ErrCorrupt, path, f.Name, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxEntrySize+1))
	if err != nil || len(data) > maxEntrySize {
		return nil, fmt.Errorf("%w: %s: entry %s is unreadable or too large", ErrCorrupt, path, f.Name)
	}
	return data, nil
}

// VarValues decodes the saved variable values.
func (s *Saved) VarValues() (map[string]cty.Value, error) {
	out := make(map[string]cty.Value, len(s.Variables))
	for name, sv := range s.Variables {
		ty, err := ctyjson.UnmarshalType(sv.Type)
		if err != nil {
			return nil, fmt.Errorf("%w: variable %s: %v", ErrCorrupt, name, err)
		}
		v, err := ctyjson.Unmarshal(sv.Value, ty)
		if err != nil {
			return nil, fmt.Errorf("%w: variable %s: %v", ErrCorrupt, name, err)
		}
		out[name] = v
	}
	return out, nil
}

// ErrStale is returned by CheckLocks when what is installed no longer matches the saved plan.
var ErrStale = errors.New("plan is stale")

// CheckLocks compares the digests locked in a saved plan with what resolves now: a changed or
// missing component or plugin makes the plan stale.
func CheckLocks(s *Saved, now *Resolution) error {
	for name, want := range s.Components {
		got := now.Components[name]
		if got == nil || got.Digest != want.Digest {
			have := "nothing installed"
			if got != nil {
				have = got.Digest
			}
			return fmt.Errorf("%w: component %q was planned with %s@%s (%s), but resolves now to %s; run `fuscia plan` again", ErrStale, name, want.Source, want.Version, want.Digest, have)
		}
	}
	for name, want := range s.Plugins {
		got := now.Plugins[name]
		if got == nil || got.Digest != want.Digest {
			have := "nothing installed"
			if got != nil {
				have = got.Digest
			}
			return fmt.Errorf("%w: plugin %q was planned with version %s (%s), but resolves now to %s; run `fuscia plan` again", ErrStale, name, want.Version, want.Digest, have)
		}
	}
	return nil
}
