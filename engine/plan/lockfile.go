package plan

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/lang"
)

// LockFileName is the lock file written beside a workflow by `fuscia plan`.
const LockFileName = ".fuscia.lock.hcl"

// Lock is the content of a lock file: components by source, plugins by source.
type Lock struct {
	Components map[string]ComponentLock
	Plugins    map[string]PluginLock
}

type lockFileHCL struct {
	Components []struct {
		Source      string `hcl:"source,label"`
		Version     string `hcl:"version"`
		Constraints string `hcl:"constraints,optional"`
		Digest      string `hcl:"digest"`
	} `hcl:"component,block"`
	Plugins []struct {
		Source  string `hcl:"source,label"`
		Version string `hcl:"version,optional"`
		Digest  string `hcl:"digest"`
	} `hcl:"plugin,block"`
}

// ReadLock reads the lock file at path; a missing file is an empty lock.
func ReadLock(path string) (*Lock, hcl.Diagnostics) {
	l := &Lock{Components: map[string]ComponentLock{}, Plugins: map[string]PluginLock{}}
	src, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read lock file",
			Detail: fmt.Sprintf("Reading %s failed: %s.", path, err)}}
	}
	var f lockFileHCL
	if d := lang.CheckNesting(path, src); d != nil {
		return nil, hcl.Diagnostics{d}
	}
	file, diags := hclsyntax.ParseConfig(src, path, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	if diags := gohcl.DecodeBody(file.Body, nil, &f); diags.HasErrors() {
		return nil, diags
	}
	for _, c := range f.Components {
		l.Components[c.Source] = ComponentLock{Source: c.Source, Version: c.Version, Constraints: c.Constraints, Digest: c.Digest}
	}
	for _, p := range f.Plugins {
		l.Plugins[p.Source] = PluginLock{Source: p.Source, Version: p.Version, Digest: p.Digest}
	}
	return l, nil
}

// Bytes renders the lock file, entries sorted by source so that it diffs well.
func (l *Lock) Bytes() []byte {
	f := hclwrite.NewEmptyFile()
	body := f.Body()
	for _, src := range sortedKeys(l.Components) {
		c := l.Components[src]
		b := body.AppendNewBlock("component", []string{src}).Body()
		b.SetAttributeValue("version", cty.StringVal(c.Version))
		if c.Constraints != "" {
			b.SetAttributeValue("constraints", cty.StringVal(c.Constraints))
		}
		b.SetAttributeValue("digest", cty.StringVal(c.Digest))
		body.AppendNewline()
	}
	for _, src := range sortedKeys(l.Plugins) {
		p := l.Plugins[src]
		b := body.AppendNewBlock("plugin", []string{src}).Body()
		if p.Version != "" {
			b.SetAttributeValue("version", cty.StringVal(p.Version))
		}
		b.SetAttributeValue("digest", cty.StringVal(p.Digest))
		body.AppendNewline()
	}
	header := "# This file is maintained by \"fuscia plan\". Commit it with your workflows.\n\n"
	return append(append([]byte(header), bytes.TrimRight(hclwrite.Format(f.Bytes()), "\n")...), '\n')
}

// UpdateLock brings the lock file beside workflowFile in line with res. Entries for sources this
// workflow does not use are kept: several workflows in one directory share the file. With
// readonly, a needed change is an error instead of a write (`-lockfile=readonly`, for CI).
// It reports whether the file was written.
func UpdateLock(workflowFile string, res *Resolution, readonly bool) (bool, hcl.Diagnostics) {
	path := filepath.Join(filepath.Dir(workflowFile), LockFileName)
	lock, diags := ReadLock(path)
	if diags.HasErrors() {
		return false, diags
	}
	comps, plugins, diags := lockEntries(res)
	if diags.HasErrors() {
		return false, diags
	}
	var changes []string
	for _, want := range comps {
		if old, ok := lock.Components[want.Source]; !ok || old != want {
			changes = append(changes, fmt.Sprintf("component %s %s (%s)", want.Source, want.Version, want.Digest))
			lock.Components[want.Source] = want
		}
	}
	for _, want := range plugins {
		if old, ok := lock.Plugins[want.Source]; !ok || old != want {
			changes = append(changes, fmt.Sprintf("plugin %s %s (%s)", want.Source, want.Version, want.Digest))
			lock.Plugins[want.Source] = want
		}
	}
	if len(changes) == 0 {
		return false, nil
	}
	sort.Strings(changes)
	if readonly {
		return false, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Lock file would change",
			Detail: fmt.Sprintf("With -lockfile=readonly, %s must already record: %s. Run `fuscia plan` without -lockfile=readonly and commit the lock file.",
				path, joinSentence(changes))}}
	}
	if err := os.WriteFile(path, lock.Bytes(), 0o644); err != nil {
		return false, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot write lock file",
			Detail: fmt.Sprintf("Writing %s failed: %s.", path, err)}}
	}
	return true, nil
}

// lockEntries are the lock file's entries for res: one per source, as the file records them.
// Blocks that share a source share its entry, so they must resolve to the same version and
// digest; their constraints are recorded together (sorted, without repeats), so the entry
// does not depend on which block is seen first.
func lockEntries(res *Resolution) (map[string]ComponentLock, map[string]PluginLock, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	comps := map[string]ComponentLock{}
	constraints := map[string][]string{}
	for _, local := range sortedKeys(res.Components) {
		c := res.Components[local]
		want := ComponentLock{Source: c.Source, Version: c.Version, Digest: c.Digest}
		if prev, ok := comps[c.Source]; ok && (prev.Version != want.Version || prev.Digest != want.Digest) {
			diags = append(diags, conflictDiag("component", c.Source, prev.Version, want.Version))
			continue
		}
		comps[c.Source] = want
		if c.Constraints != "" && !slices.Contains(constraints[c.Source], c.Constraints) {
			constraints[c.Source] = append(constraints[c.Source], c.Constraints)
		}
	}
	for source, cs := range constraints {
		sort.Strings(cs)
		e := comps[source]
		e.Constraints = strings.Join(cs, "; ")
		comps[source] = e
	}
	plugins := map[string]PluginLock{}
	for _, local := range sortedKeys(res.Plugins) {
		p := res.Plugins[local]
		want := PluginLock{Source: p.Source, Version: p.Version, Digest: p.Digest}
		if prev, ok := plugins[p.Source]; ok && prev != want {
			diags = append(diags, conflictDiag("plugin", p.Source, prev.Version+" ("+prev.Digest+")", want.Version+" ("+want.Digest+")"))
			continue
		}
		plugins[p.Source] = want
	}
	return comps, plugins, diags
}

func conflictDiag(kind, source, a, b string) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "One " + kind + " source, two versions",
		Detail: fmt.Sprintf("Two %s blocks use %s but resolve to different versions: %s and %s. The lock file records one version per source: give the blocks version constraints that one version meets.",
			kind, source, a, b)}
}

func joinSentence(items []string) string {
	out := ""
	for i, s := range items {
		if i > 0 {
			out += "; "
		}
		out += s
	}
	return out
}

// CheckLock refuses plugin binaries and components that differ from what the lock file beside
// the workflow records (docs/reference/plugin-protocol.md: "integrity is checked with the
// digest in the lock file before a binary is started"), for `apply PATH` and serve, which plan
// without writing the lock file. A source the lock file does not name yet is not checked:
// `plan` records it. Only digests are compared: a plugin's locked version is the one the
// binary reports, which is not known before it starts, and the same digest is the same code.
func CheckLock(w *lang.Workflow, res *Resolution) hcl.Diagnostics {
	path := filepath.Join(filepath.Dir(w.Filename), LockFileName)
	lock, diags := ReadLock(path)
	if diags.HasErrors() {
		return diags
	}
	for _, c := range w.Components {
		got := res.Components[c.Name]
		want, ok := lock.Components[c.Source]
		if got == nil || !ok || got.Digest == want.Digest {
			continue
		}
		diags = append(diags, Missing(c.DeclRange, hcl.DiagError, "Component does not match the lock file",
			fmt.Sprintf("%s records component %s %s (%s), but the installed %s@%s has digest %s. If the new one is intended, run `fuscia plan` to lock it; otherwise install the locked one again.",
				path, c.Source, want.Version, want.Digest, got.Source, got.Version, got.Digest)))
	}
	for _, p := range w.Plugins {
		got := res.Plugins[p.Name]
		want, ok := lock.Plugins[p.Source]
		if got == nil || !ok || got.Digest == want.Digest {
			continue
		}
		diags = append(diags, Missing(p.DeclRange, hcl.DiagError, "Plugin does not match the lock file",
			fmt.Sprintf("%s records plugin %s %s (%s), but %s has digest %s. If the new binary is intended, run `fuscia plan` to lock it; otherwise restore the locked one.",
				path, p.Source, orUnversioned(want.Version), want.Digest, got.Path, got.Digest)))
	}
	return diags
}

// component is l's entry for source; none for a nil l.
func (l *Lock) component(source string) (ComponentLock, bool) {
	if l == nil {
		return ComponentLock{}, false
	}
	e, ok := l.Components[source]
	return e, ok
}

func orUnversioned(v string) string {
	if v == "" {
		return "(unversioned)"
	}
	return v
}
