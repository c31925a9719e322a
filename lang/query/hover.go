package query

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/fuscia/fuscia/lang"
)

// Hover describes the thing at offset, or returns nil when there is nothing to say: a block
// type or an attribute name (its documentation), a declaration's label or a reference (what it
// is, its type, and for a node what the plan knows of it: what it runs, its timeout and
// retry policy), a function name (its signature and documentation), or a key of a task's
// `inputs` (the input schema's description of it).
func Hover(d Doc, offset int, env Env) *HoverResult {
	a := d.analyse()
	if a.body == nil || offset < 0 || offset > len(d.Src) {
		return nil
	}
	path := a.blockPath(offset)
	if len(path) == 0 {
		return nil
	}
	b := path[len(path)-1]
	key := a.keyOfPath(path)
	if contains(b.TypeRange, offset) {
		return &HoverResult{Markdown: a.blockMarkdown(b, key, path, env), Range: b.TypeRange}
	}
	for i, lr := range b.LabelRanges {
		if contains(lr, offset) {
			md := a.labelMarkdown(b, i, path, env)
			if md == "" {
				return nil
			}
			return &HoverResult{Markdown: md, Range: a.labelText(lr)}
		}
	}
	for _, attr := range sortedAttrs(b.Body) {
		if contains(attr.NameRange, offset) {
			md := a.attrMarkdownAt(key, attr.Name)
			if md == "" {
				return nil
			}
			return &HoverResult{Markdown: md, Range: attr.NameRange}
		}
		if contains(attr.Expr.Range(), offset) {
			return a.hoverExpr(attr, b, path, offset, env)
		}
	}
	return nil
}

// keyOfPath is the docs key of the innermost block of path.
func (a *analysis) keyOfPath(path []*hclsyntax.Block) string {
	frames := make([]blockFrame, len(path))
	for i, b := range path {
		frames[i] = blockFrame{typ: b.Type, labels: b.Labels}
	}
	return a.bodyKey(frames)
}

func (a *analysis) attrMarkdownAt(key, name string) string {
	if a.test {
		if d, ok := testBlocks[key].attrs[name]; ok {
			return attrMarkdown(name, d)
		}
		return ""
	}
	if d, ok := blockDocs()[key].attrs[name]; ok {
		return attrMarkdown(name, d)
	}
	return ""
}

// blockMarkdown documents a block, hovered on its type.
func (a *analysis) blockMarkdown(b *hclsyntax.Block, key string, path []*hclsyntax.Block, env Env) string {
	if a.test {
		return "**" + b.Type + "** block\n\n" + testBlocks[key].doc
	}
	doc := blockDocs()[b.Type].doc
	if b.Type == "trigger" && blockDocs()[key].doc != "" {
		doc += "\n\n" + blockDocs()[key].doc
	}
	md := "**" + b.Type + "** block\n\n" + doc
	if d := a.nodeDecl(b); d != nil {
		md += "\n\n" + a.nodeMarkdown(d, env)
	}
	return md
}

// labelMarkdown describes what a block's label declares.
func (a *analysis) labelMarkdown(b *hclsyntax.Block, i int, path []*hclsyntax.Block, env Env) string {
	if a.test {
		return ""
	}
	switch b.Type {
	case "workflow":
		md := fmt.Sprintf("**workflow** `%s`", b.Labels[0])
		if desc, ok := staticString(b.Body, "description"); ok && desc != "" {
			md += "\n\n" + desc
		}
		return md
	case "case", "default":
		if len(path) >= 2 {
			sw := path[len(path)-2]
			if sw.Type == "switch" && len(sw.Labels) > 0 {
				return fmt.Sprintf("**%s** `%s` of switch `%s`: nodes follow it with `after = [switch.%s.%s]`.",
					b.Type, b.Labels[i], sw.Labels[0], sw.Labels[0], b.Labels[i])
			}
		}
		return ""
	case "trigger":
		if i == 0 {
			return "**trigger type** `" + b.Labels[0] + "`\n\n" + blockDocs()["trigger."+b.Labels[0]].doc
		}
	}
	d := a.declAt(a.labelText(b.LabelRanges[i]).Start.Byte)
	if d == nil || d.block != b {
		return ""
	}
	return a.declMarkdown(d, env)
}

// declMarkdown describes a declaration.
func (a *analysis) declMarkdown(d *decl, env Env) string {
	switch d.space {
	case spaceNode:
		return a.nodeMarkdown(d, env)
	case spaceVariable:
		return a.varMarkdown(d)
	case spaceSecret:
		return a.secretMarkdown(d)
	case spaceComponent, spacePlugin:
		return a.packageMarkdown(d, env)
	case spaceTrigger:
		md := fmt.Sprintf("**trigger** `%s`", d.name)
		if d.block != nil && len(d.block.Labels) > 0 {
			md += " (" + d.block.Labels[0] + ")\n\n" + blockDocs()["trigger."+d.block.Labels[0]].doc
		}
		return md
	case spaceOutput:
		md := fmt.Sprintf("**output** `%s`", d.name)
		if d.block != nil {
			if desc, ok := staticString(d.block.Body, "description"); ok && desc != "" {
				md += "\n\n" + desc
			}
		}
		return md + "\n\nA calling workflow reads it as `call.NAME.output." + d.name + "`."
	}
	return ""
}

// packageMarkdown describes a component or plugin block, and what env says is installed.
func (a *analysis) packageMarkdown(d *decl, env Env) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** `%s`", d.space, d.name)
	if d.block == nil {
		return b.String()
	}
	src, _ := staticString(d.block.Body, "source")
	ver, _ := staticString(d.block.Body, "version")
	if src != "" {
		fmt.Fprintf(&b, ": source `%s`", src)
	}
	if ver != "" {
		fmt.Fprintf(&b, ", version `%s`", ver)
	}
	p, _ := a.pkg(d.space, d.name, env)
	switch {
	case p != nil:
		fmt.Fprintf(&b, "\n\nInstalled: %s %s", p.Source, p.Version)
		if p.Description != "" {
			b.WriteString("\n\n" + p.Description)
		}
		writeEntries(&b, "Tasks", p.Tasks)
		writeEntries(&b, "Triggers", p.Triggers)
	case env != nil && src != "" && d.space == spaceComponent:
		fmt.Fprintf(&b, "\n\nNot installed: `fuscia component install` it before `plan`.")
	case env != nil && src != "":
		fmt.Fprintf(&b, "\n\nNot found in the plugins directory (fuscia-plugin-%s).", src)
	}
	return b.String()
}

func writeEntries(b *strings.Builder, title string, list []TaskInfo) {
	if len(list) == 0 {
		return
	}
	fmt.Fprintf(b, "\n\n%s:", title)
	list = slices.Clone(list)
	slices.SortFunc(list, func(x, y TaskInfo) int { return strings.Compare(x.Name, y.Name) })
	for _, t := range list {
		fmt.Fprintf(b, "\n- `%s`", t.Name)
		if t.Description != "" {
			b.WriteString(": " + t.Description)
		}
	}
}

// hoverExpr describes what is at off in an attribute's expression.
func (a *analysis) hoverExpr(attr *hclsyntax.Attribute, b *hclsyntax.Block, path []*hclsyntax.Block, off int, env Env) *HoverResult {
	if !a.test {
		for _, tr := range attr.Expr.Variables() {
			if !contains(tr.SourceRange(), off) {
				continue
			}
			for i := len(tr) - 1; i >= 0; i-- {
				rng := stepRange(tr[i])
				if contains(rng, off) {
					md := a.refMarkdown(tr, i, attr.Name, env)
					if md == "" {
						return nil
					}
					return &HoverResult{Markdown: md, Range: hcl.RangeBetween(tr[0].SourceRange(), rng)}
				}
			}
		}
	}
	for _, n := range exprsAt(attr.Expr, off) {
		if call, ok := n.(*hclsyntax.FunctionCallExpr); ok && contains(call.NameRange, off) {
			if d, ok := funcDocs()[call.Name]; ok {
				return &HoverResult{Markdown: funcMarkdown(d), Range: call.NameRange}
			}
		}
	}
	if attr.Name == "inputs" && b.Type == "task" && !a.test {
		if md, rng := a.inputKeyMarkdown(attr.Expr, b, off, env); md != "" {
			return &HoverResult{Markdown: md, Range: rng}
		}
	}
	return nil
}

// stepRange is the range of one step of a traversal.
func stepRange(s hcl.Traverser) hcl.Range {
	switch s := s.(type) {
	case hcl.TraverseRoot:
		return s.SrcRange
	case hcl.TraverseAttr:
		return s.SrcRange
	case hcl.TraverseIndex:
		return s.SrcRange
	case hcl.TraverseSplat:
		return s.SrcRange
	}
	return hcl.Range{}
}

// steps converts traversal steps after the root.
func steps(tr hcl.Traversal) []step {
	out := make([]step, 0, len(tr))
	for _, s := range tr {
		switch s := s.(type) {
		case hcl.TraverseAttr:
			out = append(out, step{name: s.Name})
		case hcl.TraverseIndex:
			st := step{index: true}
			if s.Key.IsKnown() && !s.Key.IsNull() && s.Key.Type().FriendlyName() == "string" {
				st.name = s.Key.AsString()
			}
			out = append(out, st)
		default:
			out = append(out, step{index: true})
		}
	}
	return out
}

// writeRef writes a traversal up to and including step i.
func writeRef(tr hcl.Traversal, i int) string {
	var b strings.Builder
	for j, s := range tr[:i+1] {
		switch s := s.(type) {
		case hcl.TraverseRoot:
			b.WriteString(s.Name)
		case hcl.TraverseAttr:
			b.WriteString("." + s.Name)
		case hcl.TraverseIndex:
			if s.Key.Type().FriendlyName() == "string" && s.Key.IsKnown() && !s.Key.IsNull() {
				fmt.Fprintf(&b, "[%q]", s.Key.AsString())
			} else if s.Key.IsKnown() && !s.Key.IsNull() && s.Key.Type().FriendlyName() == "number" {
				fmt.Fprintf(&b, "[%s]", s.Key.AsBigFloat().Text('f', -1))
			} else {
				b.WriteString("[…]")
			}
		default:
			_ = j
			b.WriteString("[*]")
		}
	}
	return b.String()
}

func typed(ref string, s *shape) string {
	md := "```\n" + ref + ": " + s.typeString() + "\n```"
	if s != nil && s.doc != "" {
		md += "\n\n" + s.doc
	}
	return md
}

// refMarkdown describes a reference up to step i.
func (a *analysis) refMarkdown(tr hcl.Traversal, i int, attr string, env Env) string {
	root := tr.RootName()
	if i == 0 {
		if doc, ok := rootDocs[root]; ok {
			return "**" + root + "**\n\n" + doc
		}
		return ""
	}
	st := steps(tr[1:])
	name := st[0].name
	ref := writeRef(tr, i)
	switch root {
	case "var":
		d := a.byName[spaceVariable][name]
		if d == nil {
			return ""
		}
		if i == 1 {
			return a.varMarkdown(d)
		}
		return typed(ref, a.varShape(d).at(st[1:i]))
	case "secret":
		if d := a.byName[spaceSecret][name]; d != nil {
			return a.secretMarkdown(d)
		}
		return ""
	case "each":
		return typed(ref, eachShape.at(st[:i]))
	case "trigger":
		s := triggerShape.at(st[:1])
		if i > 1 && name == "payload" {
			s = a.payloadShape(env).at(st[1:i])
		}
		return typed(ref, s)
	case "builtin":
		return builtinMarkdown(name)
	case "component", "plugin":
		sp := space(root)
		d := a.byName[sp][name]
		if d == nil {
			return ""
		}
		if i == 1 || len(st) < 2 {
			return a.packageMarkdown(d, env)
		}
		p, _ := a.pkg(sp, name, env)
		trigger := attr == "uses" && d.block != nil && a.isTriggerUses(tr)
		t := findTask(p.entries(trigger), st[1].name)
		if t == nil {
			return fmt.Sprintf("`%s`: a task of %s `%s`, which is not installed or has no such task.", ref, root, name)
		}
		md := fmt.Sprintf("**%s** `%s` of %s (%s %s)", map[bool]string{true: "trigger", false: "task"}[trigger], t.Name, ref[:strings.LastIndexByte(ref, '.')], p.Source, p.Version)
		if t.Description != "" {
			md += "\n\n" + t.Description
		}
		if out := jsonShape(t.OutputSchema); out != nil && len(out.fields) > 0 {
			md += "\n\nOutput: " + fieldList(out.fields)
		}
		return md
	}
	if !isNodeKind(root) {
		return ""
	}
	d := a.byName[spaceNode][name]
	if d == nil || string(d.kind) != root {
		return ""
	}
	if i == 1 {
		return a.nodeMarkdown(d, env)
	}
	if attr == "after" || attr == "depends_on" {
		switch {
		case root == "switch" && i == 2:
			return fmt.Sprintf("**branch** `%s` of switch `%s`: the node runs only when the switch selects it.", st[1].name, name)
		case root == "task" && i >= 2:
			return "**branch edge**: the node runs only when the task answers with this branch key."
		}
	}
	if st[1].name != "output" || st[1].index {
		return ""
	}
	return typed(ref, a.shapeOf(d, env).at(st[2:i]))
}

// isTriggerUses reports whether tr is the `uses` of a trigger block.
func (a *analysis) isTriggerUses(tr hcl.Traversal) bool {
	for _, d := range a.declsIn(spaceTrigger) {
		if d.block != nil && contains(d.block.Range(), tr.SourceRange().Start.Byte) {
			return true
		}
	}
	return false
}

func fieldList(fields []field) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = "`" + f.name + "` " + f.shape.typeString()
	}
	return strings.Join(parts, ", ")
}

// inputKeyMarkdown documents a key of a task's `inputs` object from its input schema.
func (a *analysis) inputKeyMarkdown(e hclsyntax.Expression, b *hclsyntax.Block, off int, env Env) (string, hcl.Range) {
	t := a.usesTarget(b.Body, env, false)
	var raw []byte
	switch {
	case len(t.steps) == 2 && t.steps[0] == "builtin":
		raw = builtinInputSchema(t.steps[1])
	case t.info != nil:
		raw = t.info.InputSchema
	}
	s := jsonShape(raw)
	var keys []string
	for s != nil {
		obj, ok := e.(*hclsyntax.ObjectConsExpr)
		if !ok {
			return "", hcl.Range{}
		}
		next := false
		for _, item := range obj.Items {
			k := objectKey(item.KeyExpr)
			if contains(item.KeyExpr.Range(), off) {
				fs := s.field(k)
				if fs == nil {
					return "", hcl.Range{}
				}
				return typed("inputs."+strings.Join(append(keys, k), "."), fs), item.KeyExpr.Range()
			}
			if contains(item.ValueExpr.Range(), off) && k != "" {
				keys = append(keys, k)
				s, e, next = s.field(k), item.ValueExpr, true
				break
			}
		}
		if !next {
			return "", hcl.Range{}
		}
	}
	return "", hcl.Range{}
}

// nodeMarkdown describes a node: its kind and what it runs, its output's type, and the plan
// facts the loaded workflow has (timeout, retry, upstream nodes).
func (a *analysis) nodeMarkdown(d *decl, env Env) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** `%s`", d.kind, d.name)
	if d.loop != nil {
		fmt.Fprintf(&b, " (in the body of loop `%s`)", d.loop.name)
	}
	if d.block == nil {
		return b.String()
	}
	body := d.block.Body
	if d.kind == lang.KindTask {
		t := a.usesTarget(body, env, false)
		switch {
		case len(t.steps) == 2 && t.steps[0] == "builtin":
			fmt.Fprintf(&b, "\n\nRuns the builtin `%s`.", t)
		case len(t.steps) == 3 && t.pkg != nil:
			fmt.Fprintf(&b, "\n\nRuns %s task `%s` of `%s` (%s %s).", t.steps[0], t.steps[2], t.steps[0]+"."+t.steps[1], t.pkg.Source, t.pkg.Version)
			if t.info != nil && t.info.Description != "" {
				b.WriteString(" " + t.info.Description)
			}
		case len(t.steps) == 3:
			fmt.Fprintf(&b, "\n\nRuns %s task `%s` of `%s`.", t.steps[0], t.steps[2], t.steps[0]+"."+t.steps[1])
		}
	}
	if s := a.shapeOf(d, env); s != nil {
		fmt.Fprintf(&b, "\n\nOutput: %s", s.typeString())
		if len(s.fields) > 0 {
			b.WriteString(" — " + fieldList(s.fields))
		}
	}
	if w := a.workflow(); w != nil {
		addr := lang.Addr{Kind: d.kind, Name: d.name}
		if d.loop != nil {
			addr.Loop = d.loop.name
		}
		if n := w.Node(addr); n != nil {
			writeFacts(&b, w, n)
		}
	}
	return b.String()
}

// duration writes d as the language does: "1h", "1m30s", not Go's "1h0m0s".
func duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// writeFacts writes what the plan knows of a node.
func writeFacts(b *strings.Builder, w *lang.Workflow, n *lang.Node) {
	var facts []string
	add := func(format string, args ...any) { facts = append(facts, fmt.Sprintf(format, args...)) }
	switch {
	case n.Task != nil:
		t := n.Task
		if n.TimeoutSet {
			add("Timeout: %s per attempt", duration(n.Timeout))
		} else {
			add("Timeout: %s per attempt (the workflow's)", duration(n.EffectiveTimeout(w)))
		}
		r := n.EffectiveRetry(w)
		from := ""
		if n.Retry == nil {
			from = " (the workflow's)"
		}
		switch {
		case r.Attempts <= 1:
			add("Retry: 1 attempt, no retry%s", from)
		case r.Backoff == "fixed":
			add("Retry: %d attempts, fixed backoff of %s%s", r.Attempts, duration(r.InitialDelay), from)
		default:
			add("Retry: %d attempts, exponential backoff from %s to %s%s", r.Attempts, duration(r.InitialDelay), duration(r.MaxDelay), from)
		}
		if t.ForEach != nil {
			if t.Concurrency > 0 {
				add("for_each: once per item, %d at a time", t.Concurrency)
			} else {
				add("for_each: once per item")
			}
		}
		if t.Pool != lang.DefaultPool {
			add("Pool: %s", t.Pool)
		}
		if t.MaxIterations != lang.DefaultMaxIterations {
			add("max_iterations: %d", t.MaxIterations)
		}
	case n.Loop != nil:
		l := n.Loop
		mode := l.Mode
		if l.Concurrency > 0 {
			mode += fmt.Sprintf(", %d at a time", l.Concurrency)
		}
		add("Mode: %s; on_failure: %s; %d body nodes", mode, l.OnFailure, len(l.Body))
	case n.Join != nil:
		j := n.Join
		s := j.Strategy
		if j.Strategy == lang.JoinMofN {
			s += fmt.Sprintf(" (m = %d)", j.M)
		}
		add("Strategy: %s; merge: %s", s, j.Merge)
	case n.Wait != nil:
		wt := n.Wait
		switch wt.Kind {
		case lang.WaitDuration:
			add("Waits %s", duration(wt.Duration))
		case lang.WaitUntil:
			add("Waits until %s", wt.Until.Format("2006-01-02T15:04:05Z07:00"))
		case lang.WaitApproval, lang.WaitCallback:
			what := map[string]string{lang.WaitApproval: "an approval", lang.WaitCallback: "a callback"}[wt.Kind]
			if wt.WaitTimeout > 0 {
				add("Waits for %s, at most %s", what, duration(wt.WaitTimeout))
			} else {
				add("Waits for %s, without a timeout", what)
			}
		}
	case n.Call != nil:
		add("Runs `%s`; on_failure: %s", n.Call.Workflow, n.Call.OnFailure)
	case n.Switch != nil:
		keys := make([]string, 0, len(n.Switch.Cases)+1)
		for _, c := range n.Switch.Cases {
			keys = append(keys, c.Key)
		}
		if n.Switch.Default != nil {
			keys = append(keys, n.Switch.Default.Key+" (default)")
		}
		add("Branches: %s", strings.Join(keys, ", "))
	}
	if !n.FailWorkflow {
		add("fail_workflow = false: a failure does not fail the run")
	}
	if n.When != nil {
		add("Conditional (`when`)")
	}
	if len(n.Deps) > 0 {
		ups := make([]string, 0, len(n.Deps))
		for _, dep := range n.Deps {
			s := dep.Upstream.Local()
			var kinds []string
			if dep.Kinds&lang.DepData != 0 {
				kinds = append(kinds, "data")
			}
			if dep.Kinds&lang.DepOrder != 0 {
				kinds = append(kinds, "order")
			}
			if dep.Kinds&lang.DepBranch != 0 {
				kinds = append(kinds, "branch "+strings.Join(dep.Branches, ", "))
			}
			ups = append(ups, s+" ("+strings.Join(kinds, "; ")+")")
		}
		add("Upstream: %s", strings.Join(ups, ", "))
	}
	if len(facts) == 0 {
		return
	}
	b.WriteString("\n")
	for _, f := range facts {
		b.WriteString("\n- " + f)
	}
}
