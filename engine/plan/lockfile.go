package plan

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

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
	var changes []string
	for _, c := range res.Components {
		want := ComponentLock{Source: c.Source, Version: c.Version, Constraints: c.Constraints, Digest: c.Digest}
		if old, ok := lock.Components[c.Source]; !ok || old != want {
			changes = append(changes, fmt.Sprintf("component %s %s (%s)", c.Source, c.Version, c.Digest))
			lock.Components[c.Source] = want
		}
	}
	for _, p := range res.Plugins {
		want := PluginLock{Source: p.Source, Version: p.Version, Digest: p.Digest}
		if old, ok := lock.Plugins[p.Source]; !ok || old != want {
			changes = append(changes, fmt.Sprintf("plugin %s %s (%s)", p.Source, p.Version, p.Digest))
			lock.Plugins[p.Source] = want
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

// CheckPluginLock refuses plugin binaries that differ from what the lock file beside the
// workflow records (docs/reference/plugin-protocol.md: "integrity is checked with the digest in the lock file before
// a binary is started"), for `apply PATH`, which plans without writing the lock file. A
// source the lock file does not name yet is not checked: `plan` records it. Only digests are
// compared: the locked version is the one the binary reports, which is not known before it
// starts, and the same digest is the same binary.
func CheckPluginLock(w *lang.Workflow, res *Resolution) hcl.Diagnostics {
	path := filepath.Join(filepath.Dir(w.Filename), LockFileName)
	lock, diags := ReadLock(path)
	if diags.HasErrors() {
		return diags
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

func orUnversioned(v string) string {
	if v == "" {
		return "(unversioned)"
	}
	return v
}
