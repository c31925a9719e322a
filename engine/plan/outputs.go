package plan

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/lang"
)

// checkOutputRefs reports references to output attributes that a component task's
// output_schema says do not exist: `task.x.output.emial` when the schema lists "email".
func checkOutputRefs(w *lang.Workflow, res *Resolution) hcl.Diagnostics {
	return CheckOutputRefs(w, func(n *lang.Node) ([]byte, string) {
		if n.Task.Uses.Kind != lang.UsesComponent {
			return nil, ""
		}
		lock := res.Components[n.Task.Uses.Local]
		if lock == nil || lock.manifest == nil {
			return nil, ""
		}
		task, ok := lock.manifest.Tasks[n.Task.Uses.Name]
		if !ok {
			return nil, ""
		}
		return task.OutputSchema, fmt.Sprintf("the output_schema of %s@%s task %q", lock.Source, lock.Version, n.Task.Uses.Name)
	})
}

// CheckOutputRefs reports references to the output attributes of task nodes that their task's
// output schema says do not exist. schemaOf gives a task node's output schema (JSON Schema;
// nil when none is known) and names it for the message.
func CheckOutputRefs(w *lang.Workflow, schemaOf func(n *lang.Node) (schema []byte, what string)) hcl.Diagnostics {
	type target struct {
		schema map[string]any
		what   string
		each   bool
	}
	targets := map[string]*target{}
	for _, n := range w.Nodes {
		if n.Task == nil || n.Addr.Kind != lang.KindTask {
			continue
		}
		raw, what := schemaOf(n)
		if len(raw) == 0 {
			continue
		}
		var s map[string]any
		if json.Unmarshal(raw, &s) != nil {
			continue
		}
		targets[n.Addr.Name] = &target{schema: s, each: n.Task.ForEach != nil, what: what}
	}
	if len(targets) == 0 {
		return nil
	}
	var diags hcl.Diagnostics
	w.References(func(_ *lang.Node, tr hcl.Traversal) {
		if tr.RootName() != "task" || len(tr) < 3 {
			return
		}
		name, ok := tr[1].(hcl.TraverseAttr)
		if !ok {
			return
		}
		t := targets[name.Name]
		if t == nil {
			return
		}
		if out, ok := tr[2].(hcl.TraverseAttr); !ok || out.Name != "output" {
			return
		}
		steps := tr[3:]
		if t.each {
			// task.x.output is one output per instance: skip the instance's index.
			if len(steps) == 0 {
				return
			}
			if _, ok := steps[0].(hcl.TraverseIndex); !ok {
				return
			}
			steps = steps[1:]
		}
		path := "task." + name.Name + ".output"
		s := t.schema
		for _, step := range steps {
			switch st := step.(type) {
			case hcl.TraverseAttr:
				next, known, ok := property(s, st.Name)
				if !ok {
					r := st.SrcRange
					diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unsupported attribute",
						Detail:  fmt.Sprintf("%s has no attribute %q according to %s; it has %s.", path, st.Name, t.what, listOrNone(known)),
						Subject: &r})
					return
				}
				if next == nil {
					return
				}
				s, path = next, path+"."+st.Name
			case hcl.TraverseIndex:
				items, _ := s["items"].(map[string]any)
				if items == nil {
					return
				}
				s, path = items, path+"[…]"
			default:
				return
			}
		}
	})
	return diags
}

// property looks attribute name up in an object schema. ok is false only when the schema
// lists its properties and allows no others; next is nil when nothing more is known.
func property(s map[string]any, name string) (next map[string]any, known []string, ok bool) {
	props, _ := s["properties"].(map[string]any)
	if p, found := props[name]; found {
		m, _ := p.(map[string]any)
		return m, nil, true
	}
	// Without "properties", or with additionalProperties allowed explicitly, any name may be
	// there. A schema that lists properties describes the output completely otherwise: that
	// is what makes `output.emial` a typo worth an error.
	if props == nil || isCombinator(s) {
		return nil, nil, true
	}
	switch ap := s["additionalProperties"].(type) {
	case bool:
		if ap {
			return nil, nil, true
		}
	case map[string]any:
		return ap, nil, true
	}
	for k := range props {
		known = append(known, k)
	}
	sort.Strings(known)
	return nil, known, false
}

// isCombinator reports a schema whose shape other keywords also decide.
func isCombinator(s map[string]any) bool {
	for _, k := range []string{"allOf", "anyOf", "oneOf", "$ref", "patternProperties", "if"} {
		if _, ok := s[k]; ok {
			return true
		}
	}
	return false
}
