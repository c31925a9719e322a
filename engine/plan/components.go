package plan

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schema"
)

// manifest is the part of a component's manifest.json (hostabi.md) that planning reads.
type manifest struct {
	Capabilities struct {
		AllowedHosts []string `json:"allowed_hosts"`
		AllowedPaths []string `json:"allowed_paths"`
	} `json:"capabilities"`
	Tasks map[string]struct {
		Schema json.RawMessage `json:"schema"`
	} `json:"tasks"`
	Triggers map[string]json.RawMessage `json:"triggers"`
}

// checkComponents checks a workflow's use of resolved components against their manifests: task
// and trigger names exist, known inputs match the task's schema, and the component block only
// narrows the manifest's capabilities (hostabi.md, "Capabilities").
func checkComponents(w *lang.Workflow, res *Resolution) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, c := range w.Components {
		lock := res.Components[c.Name]
		if lock == nil || lock.manifest == nil {
			continue
		}
		m := lock.manifest
		for _, h := range c.AllowedHosts {
			if !anyHostCovers(m.Capabilities.AllowedHosts, h) {
				diags = append(diags, missing(c.DeclRange, hcl.DiagError, "Capability not granted by the component",
					fmt.Sprintf("Component %q asks for host %q, but %s@%s only grants %s. A component block can narrow what the manifest grants, not widen it.",
						c.Name, h, lock.Source, lock.Version, listOrNone(m.Capabilities.AllowedHosts))))
			}
		}
		for _, p := range c.AllowedPaths {
			if !anyPathCovers(m.Capabilities.AllowedPaths, p) {
				diags = append(diags, missing(c.DeclRange, hcl.DiagError, "Capability not granted by the component",
					fmt.Sprintf("Component %q asks for path %q, but %s@%s only grants %s. A component block can narrow what the manifest grants, not widen it.",
						c.Name, p, lock.Source, lock.Version, listOrNone(m.Capabilities.AllowedPaths))))
			}
		}
	}
	schemas := map[string]*schema.Schema{}
	for _, n := range w.Nodes {
		if n.Task == nil || n.Task.Uses.Kind != lang.UsesComponent {
			continue
		}
		u := n.Task.Uses
		lock := res.Components[u.Local]
		if lock == nil || lock.manifest == nil {
			continue
		}
		task, ok := lock.manifest.Tasks[u.Name]
		if !ok {
			diags = append(diags, missing(u.Range, hcl.DiagError, "Unknown component task",
				fmt.Sprintf("%s@%s has no task %q; its tasks are %s.", lock.Source, lock.Version, u.Name, listOrNone(sortedKeys(lock.manifest.Tasks)))))
			continue
		}
		if len(task.Schema) == 0 {
			continue
		}
		key := u.Local + "." + u.Name
		s, ok := schemas[key]
		if !ok {
			var err error
			if s, err = schema.Compile(lock.Source+" task "+u.Name, task.Schema); err != nil {
				diags = append(diags, missing(u.Range, hcl.DiagError, "Invalid component schema",
					fmt.Sprintf("The input schema of %s@%s task %q does not compile: %s. The component's package is broken; reinstall or fix it.", lock.Source, lock.Version, u.Name, err)))
			}
			schemas[key] = s
		}
		vals := w.Values[n.Addr]
		if s == nil || vals == nil {
			continue
		}
		inputs := n.Task.Inputs
		if inputs == nil {
			inputs = hcl.StaticExpr(vals.Inputs, n.DeclRange)
		}
		_, problems := s.Check(vals.Inputs)
		diags = append(diags, lang.InputProblems(n, inputs, problems)...)
	}
	for _, t := range w.Triggers {
		if t.Uses == nil || t.Uses.Kind != lang.UsesComponent {
			continue
		}
		lock := res.Components[t.Uses.Local]
		if lock == nil || lock.manifest == nil {
			continue
		}
		if _, ok := lock.manifest.Triggers[t.Uses.Name]; !ok {
			diags = append(diags, missing(t.Uses.Range, hcl.DiagError, "Unknown component trigger",
				fmt.Sprintf("%s@%s has no trigger %q; its triggers are %s.", lock.Source, lock.Version, t.Uses.Name, listOrNone(sortedKeys(lock.manifest.Triggers)))))
		}
	}
	return diags
}

// hostPattern is an allowed_hosts entry: [scheme://]host[:port], host possibly "*.domain".
type hostPattern struct{ scheme, host, port string }

func parseHostPattern(s string) hostPattern {
	var p hostPattern
	if scheme, rest, ok := strings.Cut(s, "://"); ok {
		p.scheme, s = strings.ToLower(scheme), rest
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 && !strings.Contains(s[i:], "]") {
		p.host, p.port = s[:i], s[i+1:]
	} else {
		p.host = s
	}
	p.host = strings.ToLower(strings.TrimSuffix(p.host, "."))
	return p
}

// hostCovers reports whether everything pattern h allows is also allowed by pattern g.
func hostCovers(g, h hostPattern) bool {
	if g.scheme != "" && g.scheme != h.scheme {
		return false
	}
	if g.port != "" && g.port != h.port {
		return false
	}
	if g.host == h.host {
		return true
	}
	if domain, ok := strings.CutPrefix(g.host, "*."); ok {
		return strings.HasSuffix(h.host, "."+domain)
	}
	return false
}

func anyHostCovers(granted []string, want string) bool {
	h := parseHostPattern(want)
	for _, g := range granted {
		if hostCovers(parseHostPattern(g), h) {
			return true
		}
	}
	return false
}

func anyPathCovers(granted []string, want string) bool {
	w := filepath.Clean(want)
	for _, g := range granted {
		g = filepath.Clean(g)
		if w == g || strings.HasPrefix(w, strings.TrimSuffix(g, "/")+"/") {
			return true
		}
	}
	return false
}
