package query

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/fuscia/fuscia/lang"
)

// pkg returns the installed package of the component or plugin block declared as local, and
// the block's declaration; the package is nil when env does not know it.
func (a *analysis) pkg(sp space, local string, env Env) (*Package, *decl) {
	d := a.byName[sp][local]
	if d == nil || env == nil {
		return nil, d
	}
	src, _ := staticString(a.bodyOf(d), "source")
	if src == "" {
		return nil, d
	}
	ver, _ := staticString(a.bodyOf(d), "version")
	var p *Package
	var ok bool
	if sp == spaceComponent {
		p, ok = env.Component(src, ver)
	} else {
		p, ok = env.Plugin(src, ver)
	}
	if !ok {
		return nil, d
	}
	return p, d
}

// entries returns a package's tasks, or its triggers when triggers is set.
func (p *Package) entries(triggers bool) []TaskInfo {
	if p == nil {
		return nil
	}
	if triggers {
		return p.Triggers
	}
	return p.Tasks
}

func findTask(list []TaskInfo, name string) *TaskInfo {
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}

// target is what a `uses` reference runs.
type target struct {
	steps []string // builtin.NAME or component|plugin.LOCAL.NAME
	pkg   *Package // components and plugins, when installed
	info  *TaskInfo
	decl  *decl // the component or plugin block
}

// usesTarget resolves a block's `uses`; trigger says it is a trigger's (which names a trigger,
// not a task).
func (a *analysis) usesTarget(body *hclsyntax.Body, env Env, trigger bool) target {
	t := target{steps: usesOf(body)}
	if len(t.steps) == 3 && (t.steps[0] == "component" || t.steps[0] == "plugin") {
		t.pkg, t.decl = a.pkg(space(t.steps[0]), t.steps[1], env)
		t.info = findTask(t.pkg.entries(trigger), t.steps[2])
	}
	return t
}

// String is the reference as written.
func (t target) String() string {
	s := ""
	for i, st := range t.steps {
		if i > 0 {
			s += "."
		}
		s += st
	}
	return s
}

// nodeShape is what is known of a node's output.
func (a *analysis) nodeShape(d *decl, env Env) *shape {
	body := a.bodyOf(d)
	if body == nil {
		return anyShape
	}
	switch d.kind {
	case lang.KindTask:
		var item *shape
		t := a.usesTarget(body, env, false)
		switch {
		case len(t.steps) == 2 && t.steps[0] == "builtin":
			var inputs hclsyntax.Expression
			if attr := body.Attributes["inputs"]; attr != nil {
				inputs = attr.Expr
			}
			item = builtinOutput(t.steps[1], inputs)
		case t.info != nil:
			item = jsonShape(t.info.OutputSchema)
		}
		if body.Attributes["for_each"] != nil {
			return &shape{typ: "list or map", elem: item, doc: "One output per item: a list, or an object by key when for_each is a map."}
		}
		if item == nil {
			return anyShape
		}
		return item
	case lang.KindSwitch:
		return object("`{ selected }`.", field{"selected", prim("string", "The key of the case (or default) the switch selected.")})
	case lang.KindJoin:
		merge, ok := staticString(body, "merge")
		if !ok {
			merge = lang.MergeKeyed
		}
		switch merge {
		case lang.MergeKeyed:
			var fields []field
			for _, name := range a.joinBranches(body) {
				fields = append(fields, field{name, object("The branch's result.",
					field{"status", prim("string", "The branch's status.")},
					field{"output", prim("any", "The branch's output.")},
					field{"error", object("`{ kind, message }`, or null.", field{"kind", prim("string", "")}, field{"message", prim("string", "")})},
				)})
			}
			return object("One attribute per branch, by node name (merge \"keyed\").", fields...)
		case lang.MergeAppend:
			return &shape{typ: "list", elem: anyShape, doc: "The succeeded branches' outputs, in `after` order (merge \"append\")."}
		case lang.MergeObject:
			return prim("object", "The succeeded branches' outputs merged (merge \"merge_object\").")
		default:
			return prim("any", "The output of the branch that finished last (merge \"last_wins\").")
		}
	case lang.KindLoop:
		var item *shape
		if attr := body.Attributes["output"]; attr != nil {
			item = exprShape(attr.Expr, 0)
		} else {
			var fields []field
			for _, bd := range a.loopSinks(d) {
				fields = append(fields, field{bd.name, a.nodeShape(bd, env)})
			}
			item = object("The outputs of the body's last nodes, by name.", fields...)
		}
		return &shape{typ: "list or map", elem: item, doc: "The iterations' outputs in item order: a list, or an object by key for a map."}
	case lang.KindWait:
		for _, b := range body.Blocks {
			if b.Type == "approval" || b.Type == "callback" {
				return prim("any", "The answer's data, or `{}`.")
			}
		}
		return object("A duration or until wait outputs `{}`.")
	case lang.KindCall:
		return prim("object", "The called workflow's `output` values, by name.")
	}
	return nil
}

// joinBranches returns the names of the nodes a join lists in after and depends_on.
func (a *analysis) joinBranches(body *hclsyntax.Body) []string {
	var names []string
	for _, name := range []string{"after", "depends_on"} {
		attr := body.Attributes[name]
		if attr == nil {
			continue
		}
		for _, tr := range attr.Expr.Variables() {
			if len(tr) >= 2 && isNodeKind(tr.RootName()) {
				if s, ok := tr[1].(hcl.TraverseAttr); ok {
					names = append(names, s.Name)
				}
			}
		}
	}
	return names
}

// loopSinks returns a loop's body nodes that no other body node refers to: the ones whose
// outputs make an iteration's output when the loop has no `output`.
func (a *analysis) loopSinks(loop *decl) []*decl {
	body := a.bodyOf(loop)
	if body == nil {
		return nil
	}
	used := map[string]bool{}
	for _, b := range nodeBlocks(body) {
		if len(b.Labels) > 0 {
			markReads(b, b.Labels[0], used)
		}
	}
	var out []*decl
	for _, d := range a.decls {
		if d.loop == loop && !used[d.name] {
			out = append(out, d)
		}
	}
	return out
}

// markReads adds to used the nodes that the expressions of b (and of its nested blocks) refer
// to, except self.
func markReads(b *hclsyntax.Block, self string, used map[string]bool) {
	for _, attr := range b.Body.Attributes {
		for _, tr := range attr.Expr.Variables() {
			if len(tr) < 2 || !isNodeKind(tr.RootName()) {
				continue
			}
			if s, ok := tr[1].(hcl.TraverseAttr); ok && s.Name != self {
				used[s.Name] = true
			}
		}
	}
	for _, bb := range b.Body.Blocks {
		markReads(bb, self, used)
	}
}

// visibleNodes returns the nodes of a kind that an expression in `from` (nil: an output block)
// may read: the top-level ones, and the body nodes of from's loop (of from itself, for a
// loop's own `output`).
func (a *analysis) visibleNodes(kind lang.NodeKind, from *decl, inLoopOutput bool) []*decl {
	var loop *decl
	if from != nil {
		loop = from.loop
		if inLoopOutput && from.kind == lang.KindLoop {
			loop = from
		}
	}
	var out []*decl
	for _, d := range a.decls {
		if d.space != spaceNode || d.kind != kind || d == from {
			continue
		}
		if d.loop == nil || d.loop == loop {
			if from != nil && from.loop != nil && d == from.loop {
				continue // a body node cannot read its own loop
			}
			out = append(out, d)
		}
	}
	return out
}

// nodeDetail is a one-line summary of a node: its kind, and what a task runs.
func (a *analysis) nodeDetail(d *decl) string {
	s := string(d.kind)
	if d.kind == lang.KindTask {
		switch {
		case d.block != nil:
			if steps := usesOf(d.block.Body); steps != nil {
				s += " · " + target{steps: steps}.String()
			}
		default:
			if u := a.usesText(d); u != "" {
				s += " · " + u
			}
		}
	}
	if d.loop != nil {
		s += " · in loop." + d.loop.name
	}
	return s
}
