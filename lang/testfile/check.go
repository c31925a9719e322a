package testfile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/fuscia/fuscia/lang"
)

// Check checks run (a run of f) and f's mocks against w, the run's loaded workflow: every mocked
// node is a task or wait at the top level of w, every mock_component and mock_plugin names a
// component or plugin block of w (a mocked task that no node or trigger of w uses is a
// warning: the mock is never called), expect_failures names nodes of w, the trigger exists (or
// w has a manual trigger when the run names none), and every variable is declared by w and has
// a value of its type. The file-level mocks are checked again for each run: runs of one file
// may test different workflows. Diagnostics are sorted by position.
func Check(f *File, run *Run, w *lang.Workflow) hcl.Diagnostics {
	if run == nil || w == nil {
		return nil
	}
	c := &checker{w: w}
	c.mocks(run.Mocks)
	if f != nil {
		c.mocks(f.Mocks)
	}
	c.expectFailures(run)
	c.trigger(run)
	c.variables(run)
	lang.SortDiagnostics(c.diags)
	return c.diags
}

type checker struct {
	w     *lang.Workflow
	diags hcl.Diagnostics
}

func (c *checker) add(d *hcl.Diagnostic) { c.diags = append(c.diags, d) }

func (c *checker) mocks(m Mocks) {
	for _, nm := range m.Nodes {
		c.nodeMock(nm)
	}
	for _, g := range m.Components {
		c.groupMock(g, lang.UsesComponent)
	}
	for _, g := range m.Plugins {
		c.groupMock(g, lang.UsesPlugin)
	}
}

// nodeMock checks that a mocked node is a top-level node of its kind.
func (c *checker) nodeMock(nm *NodeMock) {
	kind := lang.NodeKind(nm.Kind)
	if c.w.Node(lang.Addr{Kind: kind, Name: nm.Name}) != nil {
		return
	}
	rng := nm.DeclRange
	for _, n := range c.w.Nodes {
		if n.Addr.Name != nm.Name {
			continue
		}
		if n.Addr.Loop != "" {
			c.add(errorf(rng, "Mock of a node inside a loop",
				"%s is in the body of loop %q; mocks name nodes at the top level of the workflow. Mock its calls through mock_component, mock_plugin or mock_http instead.",
				n.Addr, n.Addr.Loop))
			return
		}
		c.add(errorf(rng, "Mock of undeclared node",
			"%q is a %s in %s, not a %s: only tasks and waits can be mocked.", nm.Name, n.Addr.Kind, c.w.Filename, nm.Kind))
		return
	}
	var names []string
	for _, n := range c.w.TopNodes() {
		if n.Addr.Kind == kind {
			names = append(names, n.Addr.Name)
		}
	}
	hint := ""
	if best := closest(nm.Name, names); best != "" {
		hint = fmt.Sprintf(" Did you mean %s.%s?", kind, best)
	}
	c.add(errorf(rng, "Mock of undeclared node",
		"No %s named %q is declared at the top level of %s.%s", kind, nm.Name, c.w.Filename, hint))
}

// groupMock checks a mock_component or mock_plugin against the workflow's blocks and the tasks
// its nodes and triggers use of them.
func (c *checker) groupMock(g *GroupMock, kind lang.UsesKind) {
	var declared []string
	switch kind {
	case lang.UsesComponent:
		for _, comp := range c.w.Components {
			declared = append(declared, comp.Name)
		}
	case lang.UsesPlugin:
		for _, p := range c.w.Plugins {
			declared = append(declared, p.Name)
		}
	}
	if !slices.Contains(declared, g.Name) {
		list := " It declares none."
		if len(declared) > 0 {
			list = fmt.Sprintf(" Its %s blocks are %s.", kind, quoteList(declared))
		}
		c.add(errorf(g.DeclRange, "Mock of undeclared "+string(kind),
			"%s declares no %s block named %q.%s%s", c.w.Filename, kind, g.Name, suggestion(g.Name, declared), list))
		return
	}
	used := c.usedTasks(kind, g.Name)
	names := make([]string, 0, len(g.Tasks))
	for name := range g.Tasks {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if slices.Contains(used, name) {
			continue
		}
		t := g.Tasks[name]
		uses := "no task of it"
		if len(used) > 0 {
			uses = "only " + quoteList(used)
		}
		c.add(warnf(t.DeclRange, "Mock of unused task",
			"%s uses %s of %s %q, not %q: this mock is never called.%s", c.w.Filename, uses, kind, g.Name, name, suggestion(name, used)))
	}
}

// usedTasks lists the tasks of component or plugin block local that nodes (loop bodies
// included) and triggers of the workflow use, sorted.
func (c *checker) usedTasks(kind lang.UsesKind, local string) []string {
	var out []string
	add := func(u *lang.Uses) {
		if u != nil && u.Kind == kind && u.Local == local && !slices.Contains(out, u.Name) {
			out = append(out, u.Name)
		}
	}
	for _, n := range c.w.Nodes {
		if n.Task != nil {
			add(&n.Task.Uses)
		}
	}
	for _, t := range c.w.Triggers {
		add(t.Uses)
	}
	slices.Sort(out)
	return out
}

func (c *checker) expectFailures(run *Run) {
	for _, e := range run.ExpectFailures {
		addr, ok := lang.ParseAddr(e.Addr)
		if !ok || c.w.Node(addr) != nil {
			continue
		}
		var names []string
		for _, n := range c.w.TopNodes() {
			names = append(names, n.Addr.Local())
		}
		hint := ""
		if best := closest(e.Addr, names); best != "" {
			hint = fmt.Sprintf(" Did you mean %s?", best)
		}
		if hint == "" {
			for _, n := range c.w.TopNodes() {
				if n.Addr.Name == addr.Name {
					hint = fmt.Sprintf(" %q is a %s: write %s.", addr.Name, n.Addr.Kind, n.Addr.Local())
				}
			}
		}
		c.add(errorf(e.Range, "Expected failure of undeclared node",
			"No %s named %q is declared at the top level of %s.%s", addr.Kind, addr.Name, c.w.Filename, hint))
	}
}

func (c *checker) trigger(run *Run) {
	var names []string
	for _, t := range c.w.Triggers {
		names = append(names, t.Name)
		if run.Trigger == "" && t.Type == lang.TriggerManual {
			return
		}
		if run.Trigger != "" && t.Name == run.Trigger {
			return
		}
	}
	if run.Trigger == "" {
		c.add(errorf(run.DeclRange, "No manual trigger",
			"%s has no manual trigger, so run %q must say which trigger starts it: trigger = one of %s.",
			c.w.Filename, run.Name, quoteList(names)))
		return
	}
	c.add(errorf(run.TriggerRange, "Undeclared trigger",
		"%s declares no trigger named %q.%s Its triggers are %s.", c.w.Filename, run.Trigger, suggestion(run.Trigger, names), quoteList(names)))
}

func (c *checker) variables(run *Run) {
	names := make([]string, 0, len(run.Variables))
	for name := range run.Variables {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		rng := run.VariableRanges[name]
		if rng.Filename == "" {
			rng = run.DeclRange
		}
		decl := c.w.Variable(name)
		if decl == nil {
			c.add(errorf(rng, "Undeclared variable",
				"The test sets %q, but %s declares no such variable.%s", name, c.w.Filename, declaredVars(c.w.Variables)))
			continue
		}
		if _, err := convert.Convert(run.Variables[name], decl.Type); err != nil {
			c.add(errorf(rng, "Invalid value for variable",
				"Variable %q has type %s: %s.", name, typeexpr.TypeString(decl.Type), strings.TrimSuffix(err.Error(), ".")))
		}
	}
}

// declaredVars lists the workflow's variables, as lang's message about an undeclared one does.
func declaredVars(decls []*lang.Variable) string {
	if len(decls) == 0 {
		return " It declares no variables."
	}
	names := make([]string, len(decls))
	for i, v := range decls {
		names[i] = v.Name
	}
	return " Declared variables: " + strings.Join(names, ", ") + "."
}
