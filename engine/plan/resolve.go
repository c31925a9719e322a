package plan

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/hostabi/registry"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/plugin/discover"
)

// ComponentLock is a resolved component: the lock file entry and what plan shows.
type ComponentLock struct {
	Source      string `json:"source"`
	Version     string `json:"version"`
	Constraints string `json:"constraints,omitempty"`
	Digest      string `json:"digest"`

	manifest *registry.Manifest
}

// PluginLock is a resolved plugin binary.
type PluginLock struct {
	Source string `json:"source"`
	// Version is the version the plugin reports through GetSchema, set by CheckPlugins: what
	// the lock file, the plan and a saved plan record. Until then (and when the plugin could
	// not be asked) it is FileVersion.
	Version string `json:"version,omitempty"`
	Digest  string `json:"digest"`
	Path    string `json:"-"`
	// FileVersion is the version in the binary's file name (fuscia-plugin-NAME_vX.Y.Z); empty
	// when the name has none.
	FileVersion string `json:"-"`
}

// Resolution maps the local names of a workflow's component and plugin blocks to what they
// resolved to.
type Resolution struct {
	Components map[string]*ComponentLock
	Plugins    map[string]*PluginLock
}

// findComponent finds the installed version of c's source to use: the one the lock file
// records, while it is installed and c's constraint allows it (as Terraform keeps a locked
// provider), else the newest the constraint allows.
func findComponent(dir string, c *lang.Component, locked *Lock) (registry.Installed, error) {
	if e, ok := locked.component(c.Source); ok && e.Version != "" {
		exact := "= " + e.Version
		if c.Version != "" {
			exact = c.Version + ", " + exact
		}
		if inst, err := registry.Find(dir, c.Source, exact); err == nil {
			return inst, nil
		}
	}
	return registry.Find(dir, c.Source, c.Version)
}

// Resolve finds the installed components and plugins a workflow names. A missing one is a
// diagnostic of the given severity: a warning for `validate` (docs/reference/cli.md), an error for `plan`.
func Resolve(w *lang.Workflow, env Env, severity hcl.DiagnosticSeverity) (*Resolution, hcl.Diagnostics) {
	res := &Resolution{Components: map[string]*ComponentLock{}, Plugins: map[string]*PluginLock{}}
	var diags hcl.Diagnostics
	var locked *Lock
	if !env.Upgrade && len(w.Components) > 0 {
		// A broken lock file is reported where it is written or checked; here it locks nothing.
		if l, ldiags := ReadLock(filepath.Join(filepath.Dir(w.Filename), LockFileName)); !ldiags.HasErrors() {
			locked = l
		}
	}
	for _, c := range w.Components {
		if c.Invalid {
			continue // Load reported its source or version
		}
		inst, err := findComponent(env.ComponentsDir(), c, locked)
		if err != nil {
			diags = append(diags, Missing(c.DeclRange, severity, "Component not installed",
				componentHint(c, err)))
			continue
		}
		m := inst.Parsed
		if m == nil {
			diags = append(diags, Missing(c.DeclRange, hcl.DiagError, "Invalid component manifest",
				fmt.Sprintf("The manifest of %s@%s in %s cannot be read. Reinstall the component.", c.Source, inst.Version, inst.Dir)))
			continue
		}
		// The module that will run must be the one installed: its compiled code may be cached
		// by digest, and a plan locks that digest.
		if err := registry.Verify(inst); err != nil {
			diags = append(diags, Missing(c.DeclRange, hcl.DiagError, "Component changed after install",
				fmt.Sprintf("Component %q uses %s.", c.Name, err)))
			continue
		}
		res.Components[c.Name] = &ComponentLock{Source: c.Source, Version: inst.Version, Constraints: c.Version, Digest: inst.Digest, manifest: m}
	}
	dirs := env.PluginSearchPath(w.Filename)
	for _, p := range w.Plugins {
		if p.Invalid {
			continue // Load reported its source or version
		}
		bin, err := discover.Find(dirs, p.Source, p.Version)
		if errors.Is(err, discover.ErrNotFound) {
			want := ""
			if p.Version != "" {
				want = " matching " + p.Version
			}
			diags = append(diags, Missing(p.DeclRange, severity, "Plugin not found",
				fmt.Sprintf("Plugin %q needs %s%s[_vVERSION]%s, which is not in any of %s. Put the binary in ./plugins beside the workflow, a -plugin-dir, or $FUSCIA_HOME/plugins.",
					p.Name, discover.FilePrefix, p.Source, want, strings.Join(dirs, ", "))))
			continue
		}
		if err != nil {
			diags = append(diags, Missing(p.DeclRange, hcl.DiagError, "Cannot look for plugins", fmt.Sprintf("Plugin %q: %s.", p.Name, err)))
			continue
		}
		digest, err := env.Digests.Digest(bin.Path)
		if err != nil {
			diags = append(diags, Missing(p.DeclRange, hcl.DiagError, "Cannot read plugin", fmt.Sprintf("%s.", err)))
			continue
		}
		res.Plugins[p.Name] = &PluginLock{Source: p.Source, Version: bin.Version, FileVersion: bin.Version, Digest: digest, Path: bin.Path}
	}
	diags = append(diags, checkComponents(w, res)...)
	return res, diags
}

func componentHint(c *lang.Component, err error) string {
	if errors.Is(err, registry.ErrNotInstalled) {
		want := ""
		if c.Version != "" {
			want = " matching " + c.Version
		}
		return fmt.Sprintf("Component %q needs %s%s, which is not installed. Install it with `fuscia component install FILE.fcpkg`.",
			c.Name, c.Source, want)
	}
	return fmt.Sprintf("Component %q (%s) could not be resolved: %s.", c.Name, c.Source, err.Error())
}

// Missing is the diagnostic of a component or plugin that is not installed (or not usable),
// at the severity the caller asked for.
func Missing(rng hcl.Range, severity hcl.DiagnosticSeverity, summary, detail string) *hcl.Diagnostic {
	r := rng
	return &hcl.Diagnostic{Severity: severity, Summary: summary, Detail: detail, Subject: &r}
}

// Locks are what a saved plan locked, by the local name of each block: what a run resolves
// its components and plugins to.
type Locks struct {
	Components map[string]ComponentLock
	Plugins    map[string]PluginLock
}
