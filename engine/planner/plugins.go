package planner

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schema"
	"github.com/fuscia/fuscia/plugin"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// PluginChecks says how far CheckPlugins goes.
type PluginChecks int

const (
	// SchemaChecks uses only GetSchema (cached per binary digest): task and trigger names and
	// the JSON Schemas of known inputs. `validate` stops here.
	SchemaChecks PluginChecks = iota
	// FullChecks also asks the plugin: Configure with each block's config and ValidateInput
	// with each task's input, unknown parts marked. `plan` and `apply` do this.
	FullChecks
)

// PluginTarget is the binary a resolved plugin block runs.
func PluginTarget(local string, lock *plan.PluginLock) plugin.Target {
	return plugin.Target{Name: local, Path: lock.Path, Digest: lock.Digest, Version: lock.FileVersion}
}

// CheckPlugins checks a workflow's use of its resolved plugins, and records in res the
// version each plugin reports (PluginLock.Version), which the lock file and the plan show. A
// plugin that cannot be started or asked is an error on its block.
func CheckPlugins(ctx context.Context, w *lang.Workflow, res *plan.Resolution, m *plugin.Manager, depth PluginChecks) hcl.Diagnostics {
	var diags hcl.Diagnostics
	schemas := map[string]*plugin.Schema{}
	configs := map[string][]byte{}
	for _, p := range w.Plugins {
		lock := res.Plugins[p.Name]
		if lock == nil || lock.Path == "" {
			continue
		}
		t := PluginTarget(p.Name, lock)
		s, err := m.Schema(ctx, t)
		if err != nil {
			diags = append(diags, plan.Missing(p.DeclRange, hcl.DiagError, "Cannot use plugin", lang.Sentence(err.Error())))
			continue
		}
		if d := reportedVersion(p, lock, s); d != nil {
			diags = append(diags, d)
			continue
		}
		schemas[p.Name] = s
		if depth < FullChecks {
			continue
		}
		cfg, unknown, cdiags := pluginConfig(w, p)
		diags = append(diags, cdiags...)
		if cdiags.HasErrors() {
			continue
		}
		configs[p.Name] = cfg
		pd, err := m.Configure(ctx, t, cfg, unknown)
		if err != nil {
			diags = append(diags, plan.Missing(p.DeclRange, hcl.DiagError, "Cannot configure plugin", lang.Sentence(err.Error())))
			continue
		}
		rng := p.DeclRange
		if p.Config != nil {
			rng = p.Config.Range()
		}
		for _, d := range pd {
			diags = append(diags, pluginDiag(d, rng, fmt.Sprintf("Config of plugin %q", p.Name), pointerPath(d.Path)))
		}
	}

	compiled := map[string]*schema.Schema{}
	// The plugins' ValidateInput calls, one per distinct question (answers: one per node).
	asked := map[string]*inputCheck{}
	var checks []*inputCheck
	var answers []inputAnswer
	for _, n := range w.Nodes {
		if n.Task == nil || n.Task.Uses.Kind != lang.UsesPlugin {
			continue
		}
		u := n.Task.Uses
		s := schemas[u.Local]
		if s == nil {
			continue
		}
		task, ok := s.Tasks[u.Name]
		if !ok {
			diags = append(diags, plan.Missing(u.Range, hcl.DiagError, "Unknown plugin task",
				fmt.Sprintf("Plugin %s@%s has no task %q; its tasks are %s.", s.Name, s.Version, u.Name, listOrNone(slices.Sorted(maps.Keys(s.Tasks))))))
			continue
		}
		known, inputs := plan.KnownInputs(w, n)
		if inputs == nil {
			continue
		}
		if len(task.Input) > 0 {
			key := u.Local + "." + u.Name
			cs, ok := compiled[key]
			if !ok {
				var err error
				if cs, err = schema.Compile("plugin "+s.Name+" task "+u.Name, task.Input); err != nil {
					diags = append(diags, plan.Missing(u.Range, hcl.DiagError, "Invalid plugin schema",
						fmt.Sprintf("The input schema of plugin %s@%s task %q does not compile: %s. The plugin is broken; fix or replace it.", s.Name, s.Version, u.Name, err)))
				}
				compiled[key] = cs
			}
			if problems := plan.KnownInputProblems(w, n, cs); len(problems) > 0 {
				diags = append(diags, problems...)
				continue
			}
			if cs != nil {
				// The plugin is asked about the input it will get: coerced to its schema, as
				// the run coerces it (42 is "42" where a string is asked for).
				known, _ = cs.Check(known)
			}
		}
		if depth < FullChecks {
			continue
		}
		input, unknown, err := plan.UnknownJSON(known)
		if err != nil {
			continue
		}
		cfg, ok := configs[u.Local]
		if !ok {
			continue
		}
		key := inputCheckKey(u, input, unknown)
		c := asked[key]
		if c == nil {
			c = &inputCheck{target: PluginTarget(u.Local, res.Plugins[u.Local]), task: u.Name, input: input, config: cfg, unknown: unknown}
			asked[key] = c
			checks = append(checks, c)
		}
		answers = append(answers, inputAnswer{node: n, inputs: inputs, check: c})
	}
	askInputChecks(ctx, m, checks)
	for _, a := range answers { // the caller sorts all diagnostics by position
		diags = append(diags, a.diagnostics()...)
	}

	// References into a plugin task's output, against its output_schema, as a component's
	// are checked (plan.CheckOutputRefs): `task.greet.output.mesage` is an error at plan, not
	// after greet has run.
	diags = append(diags, plan.CheckOutputRefs(w, func(n *lang.Node) ([]byte, string) {
		u := n.Task.Uses
		s := schemas[u.Local]
		if u.Kind != lang.UsesPlugin || s == nil {
			return nil, ""
		}
		return s.Tasks[u.Name].Output, fmt.Sprintf("the output_schema of plugin %s@%s task %q", s.Name, s.Version, u.Name)
	})...)

	for _, t := range w.Triggers {
		if t.Uses == nil || t.Uses.Kind != lang.UsesPlugin {
			continue
		}
		s := schemas[t.Uses.Local]
		if s == nil {
			continue
		}
		if _, ok := s.Triggers[t.Uses.Name]; !ok {
			diags = append(diags, plan.Missing(t.Uses.Range, hcl.DiagError, "Unknown plugin trigger",
				fmt.Sprintf("Plugin %s@%s has no trigger %q; its triggers are %s.", s.Name, s.Version, t.Uses.Name, listOrNone(slices.Sorted(maps.Keys(s.Triggers))))))
		}
	}
	return diags
}

// maxInputChecks bounds the ValidateInput calls in flight at once, across plugins: enough to
// keep one call's round trip from waiting on the one before it (a plan of many plugin tasks
// paid one round trip per task, one after another), few enough not to swamp a plugin.
const maxInputChecks = 8

// inputCheck is one ValidateInput question and, once asked, its answer. Nodes that ask the
// same question (the same block, task, input and unknown paths) share one.
type inputCheck struct {
	target  plugin.Target
	task    string
	input   []byte
	config  []byte
	unknown []string

	diags []*pluginv1.Diagnostic
	err   error
}

// inputCheckKey identifies a ValidateInput question. The block's config is the same for every
// task of the block.
func inputCheckKey(u lang.Uses, input []byte, unknown []string) string {
	return strings.Join(append([]string{u.Local, u.Name, string(input)}, unknown...), "\x00")
}

// inputAnswer is a node's ValidateInput answer, whose diagnostics point into the node's own
// inputs.
type inputAnswer struct {
	node   *lang.Node
	inputs hcl.Expression
	check  *inputCheck
}

func (a inputAnswer) diagnostics() hcl.Diagnostics {
	u := a.node.Task.Uses
	if a.check.err != nil {
		return hcl.Diagnostics{plan.Missing(u.Range, hcl.DiagError, "Cannot validate input", lang.Sentence(a.check.err.Error()))}
	}
	var diags hcl.Diagnostics
	for _, d := range a.check.diags {
		path := pointerPath(d.Path)
		diags = append(diags, pluginDiag(d, lang.InputRange(a.inputs, path), "Invalid input for "+a.node.Addr.String(), path))
	}
	return diags
}

// askInputChecks asks the plugins every question in checks, at most maxInputChecks at a time,
// and returns once all are answered.
func askInputChecks(ctx context.Context, m *plugin.Manager, checks []*inputCheck) {
	next := make(chan *inputCheck)
	var wg sync.WaitGroup
	for range min(maxInputChecks, len(checks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				c.diags, c.err = m.ValidateInput(ctx, c.target, c.task, c.input, c.config, c.unknown)
			}
		}()
	}
	for _, c := range checks {
		next <- c
	}
	close(next)
	wg.Wait()
}

// reportedVersion records the version plugin block p's binary reports (schema s) in its lock,
// and checks it against the block's version constraint. plugin.Find could only check the
// constraint against a version in the file name; a binary without one is checked here.
func reportedVersion(p *lang.Plugin, lock *plan.PluginLock, s *plugin.Schema) *hcl.Diagnostic {
	v, err := version.NewSemver(s.Version)
	if err != nil {
		return plan.Missing(p.DeclRange, hcl.DiagError, "Invalid plugin version",
			fmt.Sprintf("Plugin %q (%s) reports version %q, which is not a semantic version such as 1.2.3. The plugin is broken; fix its version or replace it.",
				p.Name, filepath.Base(lock.Path), s.Version))
	}
	lock.Version = s.Version
	if p.Version == "" {
		return nil
	}
	cons, err := version.NewConstraint(p.Version)
	if err != nil {
		return nil // lang reported the constraint
	}
	if !cons.Check(v) {
		rng := p.DeclRange
		if p.VersionRange != (hcl.Range{}) {
			rng = p.VersionRange
		}
		return plan.Missing(rng, hcl.DiagError, "Plugin version does not match",
			fmt.Sprintf("Plugin %q needs version %s, but %s reports %s. Install a matching %s%s binary, or change the constraint.",
				p.Name, p.Version, lock.Path, s.Version, plugin.FilePrefix, p.Source))
	}
	return nil
}

// pluginConfig evaluates a plugin block's config with what plan knows: variables; secrets and
// anything else are unknown.
func pluginConfig(w *lang.Workflow, p *lang.Plugin) ([]byte, []string, hcl.Diagnostics) {
	if p.Config == nil {
		return []byte("{}"), nil, nil
	}
	ectx := lang.NewEvalContext(p.Config, lang.Scope{Vars: w.VarValues(), Secrets: cty.DynamicVal, Trigger: cty.DynamicVal,
		Node: func(lang.NodeKind, string) cty.Value { return cty.DynamicVal }})
	v, diags := p.Config.Value(ectx)
	if diags.HasErrors() {
		return nil, nil, diags
	}
	if v.IsKnown() && !v.IsNull() && !v.Type().IsObjectType() && !v.Type().IsMapType() {
		return nil, nil, hcl.Diagnostics{plan.Missing(p.Config.Range(), hcl.DiagError, "Invalid plugin config",
			fmt.Sprintf("The config of plugin %q must be an object; got %s.", p.Name, v.Type().FriendlyName()))}
	}
	b, unknown, err := plan.UnknownJSON(v)
	if err != nil {
		return nil, nil, hcl.Diagnostics{plan.Missing(p.Config.Range(), hcl.DiagError, "Invalid plugin config", lang.Sentence(err.Error()))}
	}
	if string(b) == "null" {
		b = []byte("{}")
	}
	return b, unknown, nil
}

func pluginDiag(d *pluginv1.Diagnostic, rng hcl.Range, what, path string) *hcl.Diagnostic {
	sev := hcl.DiagError
	if d.Severity == pluginv1.Diagnostic_SEVERITY_WARNING {
		sev = hcl.DiagWarning
	}
	detail := d.Detail
	if detail == "" {
		detail = d.Summary
	}
	if path != "" {
		detail = fmt.Sprintf("%s, %q: %s", what, path, lang.Sentence(detail))
	} else {
		detail = fmt.Sprintf("%s: %s", what, lang.Sentence(detail))
	}
	summary := d.Summary
	if summary == "" {
		summary = what
	}
	return plan.Missing(rng, sev, summary, detail)
}

// pointerPath turns a JSON Pointer ("/args/0") into the path form of input diagnostics
// ("args[0]").
func pointerPath(ptr string) string {
	if ptr == "" || ptr == "/" {
		return ""
	}
	var b strings.Builder
	for i, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(seg); err == nil && i > 0 {
			b.WriteString("[" + seg + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

// listOrNone lists names for a message, or says there are none.
func listOrNone(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}
