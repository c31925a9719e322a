package plan

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/hostabi/capability"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schema"
)

// checkComponents checks a workflow's use of resolved components against their manifests: task
// and trigger names exist, known inputs match the task's schema, and the component block only
// narrows the manifest's capabilities (docs/reference/abi-v1.md, "Capabilities").
func checkComponents(w *lang.Workflow, res *Resolution) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, c := range w.Components {
		lock := res.Components[c.Name]
		if lock == nil || lock.manifest == nil {
			continue
		}
		m := lock.manifest
		for _, h := range c.AllowedHosts {
			if !capability.AnyHostCovers(m.Capabilities.AllowedHosts, h) {
				diags = append(diags, Missing(c.AllowedHostsRange, hcl.DiagError, "Capability not granted by the component",
					fmt.Sprintf("Component %q asks for host %q, but %s@%s only grants %s. A component block can narrow what the manifest grants, not widen it.",
						c.Name, h, lock.Source, lock.Version, listOrNone(m.Capabilities.AllowedHosts))))
			}
		}
		for _, p := range c.AllowedPaths {
			if !capability.AnyPathCovers(m.Capabilities.AllowedPaths, p) {
				diags = append(diags, Missing(c.AllowedPathsRange, hcl.DiagError, "Capability not granted by the component",
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
			diags = append(diags, Missing(u.Range, hcl.DiagError, "Unknown component task",
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
				diags = append(diags, Missing(u.Range, hcl.DiagError, "Invalid component schema",
					fmt.Sprintf("The input schema of %s@%s task %q does not compile: %s. The component's package is broken; reinstall or fix it.", lock.Source, lock.Version, u.Name, err)))
			}
			schemas[key] = s
		}
		diags = append(diags, KnownInputProblems(w, n, s)...)
	}
	diags = append(diags, checkOutputRefs(w, res)...)
	for _, t := range w.Triggers {
		if t.Uses == nil || t.Uses.Kind != lang.UsesComponent {
			continue
		}
		lock := res.Components[t.Uses.Local]
		if lock == nil || lock.manifest == nil {
			continue
		}
		if _, ok := lock.manifest.Triggers[t.Uses.Name]; !ok {
			diags = append(diags, Missing(t.Uses.Range, hcl.DiagError, "Unknown component trigger",
				fmt.Sprintf("%s@%s has no trigger %q; its triggers are %s.", lock.Source, lock.Version, t.Uses.Name, listOrNone(sortedKeys(lock.manifest.Triggers)))))
		}
	}
	return diags
}

// KnownInputs is a task node's inputs as plan knows them, and the expression to point
// diagnostics at; a zero value when plan evaluated none.
func KnownInputs(w *lang.Workflow, n *lang.Node) (cty.Value, hcl.Expression) {
	vals := w.Values[n.Addr]
	if vals == nil || vals.Inputs == cty.NilVal {
		return cty.NilVal, nil
	}
	inputs := n.Task.Inputs
	if inputs == nil {
		inputs = hcl.StaticExpr(vals.Inputs, n.DeclRange)
	}
	return vals.Inputs, inputs
}

// KnownInputProblems checks a task node's known inputs against its input schema s (nil: none).
func KnownInputProblems(w *lang.Workflow, n *lang.Node, s *schema.Schema) hcl.Diagnostics {
	v, inputs := KnownInputs(w, n)
	if s == nil || inputs == nil {
		return nil
	}
	_, problems := s.Check(v)
	return lang.InputProblems(n, inputs, problems)
}
