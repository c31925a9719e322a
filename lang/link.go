package lang

import (
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/lang/dag"
)

// Graph is a workflow's linked DAG. The top level and each loop body are separate graphs: a loop
// runs its body graph once per iteration, and its dependents wait for the loop as a whole.
type Graph struct {
	Top    *dag.Graph
	Bodies map[string]*dag.Graph // by loop name

	Stages     [][]Addr            // top-level nodes, in stage order
	BodyStages map[string][][]Addr // by loop name
}

// linker resolves the references of a decoded workflow.
type linker struct {
	w      *Workflow
	diags  hcl.Diagnostics
	byName map[string]*Node // node names are unique per file, bodies included
	deps   map[*Node]map[Addr]*Dep
	// faults gets the nodes with reference errors, so that check does not repeat those errors
	// in other words; its rejected names are not reported again as undeclared.
	faults *faults
}

func (l *linker) add(d ...*hcl.Diagnostic) { l.diags = appendDiags(l.diags, d...) }

// variables returns expr's references and keeps them in the workflow for check and References,
// which read the same expressions: walking an expression for its references allocates a node
// visitor per syntax node, and did so three times per expression.
func (l *linker) variables(expr hcl.Expression) []hcl.Traversal {
	trs := expr.Variables()
	if cacheable(expr) {
		if l.w.refs == nil {
			l.w.refs = make(map[hcl.Expression][]hcl.Traversal, 2*len(l.w.Nodes)+len(l.w.Outputs))
		}
		l.w.refs[expr] = trs
	}
	return trs
}

// variables returns expr's references: the ones link found, or expr's own.
func (w *Workflow) variables(expr hcl.Expression) []hcl.Traversal {
	if cacheable(expr) {
		if trs, ok := w.refs[expr]; ok {
			return trs
		}
	}
	return expr.Variables()
}

// cacheable reports whether expr can be a map key: HCL's syntax nodes are pointers, but an
// expression such as hcl.StaticExpr holds a cty.Value, whose hash would panic.
func cacheable(expr hcl.Expression) bool {
	return reflect.TypeOf(expr).Kind() == reflect.Pointer
}

// link resolves every reference of w into Deps, builds the graphs, and reports cycles. The
// graphs are built even when some references are wrong: an edge that is missing because its
// reference was reported cannot make a cycle, so the cycles found are errors of their own.
func link(w *Workflow, f *faults) hcl.Diagnostics {
	l := &linker{w: w, byName: make(map[string]*Node, len(w.Nodes)), deps: make(map[*Node]map[Addr]*Dep), faults: f}
	for _, n := range w.Nodes {
		l.byName[n.Addr.Name] = n
	}
	for _, n := range w.Nodes {
		before := len(l.diags)
		l.linkNode(n)
		if len(l.diags) > before {
			f.nodes[n] = true
		}
	}
	for _, o := range w.Outputs {
		before := len(l.diags)
		for _, tr := range l.variables(o.Value) {
			l.ref(nil, tr, false)
		}
		if len(l.diags) > before {
			f.outputs = true
		}
	}
	for _, c := range w.Components {
		if c.Config != nil {
			l.checkPlainRoots(c.Config, "config", "var", "secret")
		}
	}
	for _, p := range w.Plugins {
		if p.Config != nil {
			l.checkPlainRoots(p.Config, "config", "var", "secret")
		}
	}
	for _, t := range w.Triggers {
		if t.Uses != nil {
			l.checkUses(*t.Uses)
		}
		if t.HMAC != nil && t.HMAC.Secret != "" && !l.hasSecret(t.HMAC.Secret) {
			l.add(errorf(t.HMAC.SecretRange, "Reference to undeclared secret",
				"Trigger %q signs with secret %q, which is not declared. Add a `secret %q { env = \"…\" }` block.",
				t.Name, t.HMAC.Secret, t.HMAC.Secret))
		}
	}
	l.buildGraph()
	return l.diags
}

func (l *linker) linkNode(n *Node) {
	n.noteCalls()
	if n.Task != nil {
		l.checkUses(n.Task.Uses)
		if n.Task.ForEach != nil && n.Addr.Loop != "" {
			l.add(errorf(n.Task.ForEach.Range(), "for_each inside a loop body",
				"Task %q is in the body of loop %q and cannot have its own for_each: loops do not nest. Iterate over both levels in the loop (for_each = setproduct(A, B)), or move the iteration into a sub-workflow and `call` it from outside the loop (a loop body holds no call).",
				n.Addr.Name, n.Addr.Loop))
		}
	}
	for _, expr := range n.exprs {
		eachOK := n.Addr.Loop != "" || (n.Task != nil && n.Task.ForEach != nil)
		if (n.Task != nil && expr == n.Task.ForEach) || (n.Loop != nil && expr == n.Loop.ForEach) {
			eachOK = n.Addr.Loop != ""
		}
		for _, tr := range l.variables(expr) {
			l.ref(n, tr, eachOK)
		}
	}
	if n.Loop != nil && n.Loop.Output != nil {
		for _, tr := range l.variables(n.Loop.Output) {
			l.loopOutputRef(n, tr)
		}
	}
	for _, a := range n.After {
		l.afterRef(n, a)
	}
	if n.Join != nil && n.Join.Strategy == JoinMofN && n.Join.M > len(n.After) {
		l.add(errorf(n.DeclRange, "Invalid m for m_of_n",
			"Join %q needs m between 1 and the number of branches (%d); got %d.", n.Addr.Name, len(n.After), n.Join.M))
	}
}

var refRoots = "var., secret., trigger., each., task., switch., join., loop., wait. or call."

// ref checks one reference of node n (nil for an output block) and records the edge it makes.
func (l *linker) ref(n *Node, tr hcl.Traversal, eachOK bool) {
	rng := tr.SourceRange()
	root := tr.RootName()
	attr := func(i int) (string, bool) {
		if len(tr) <= i {
			return "", false
		}
		switch s := tr[i].(type) {
		case hcl.TraverseAttr:
			return s.Name, true
		case hcl.TraverseIndex:
			if s.Key.Type().FriendlyName() == "string" {
				return s.Key.AsString(), true
			}
		}
		return "", false
	}
	switch root {
	case "var":
		name, ok := attr(1)
		if !ok {
			l.add(errorf(rng, "Invalid reference", "A variable is read as var.NAME."))
		} else if l.w.Variable(name) == nil {
			if near := l.suggestVariable(name); near != "" {
				l.add(errorf(rng, "Reference to undeclared variable",
					"No variable named %q is declared. Did you mean var.%s?", name, near))
			} else {
				l.add(errorf(rng, "Reference to undeclared variable",
					"No variable named %q is declared. Declare it with a `variable %q { type = string }` block.", name, name))
			}
		}
	case "secret":
		name, ok := attr(1)
		if !ok {
			l.add(errorf(rng, "Invalid reference", "A secret is read as secret.NAME."))
		} else if !l.hasSecret(name) {
			l.add(errorf(rng, "Reference to undeclared secret",
				"No secret named %q is declared. Declare it with a `secret %q { env = \"VARIABLE\" }` block.", name, name))
		}
	case "trigger":
		name, _ := attr(1)
		if name != "payload" && name != "name" && name != "type" {
			l.add(errorf(rng, "Invalid trigger reference",
				"The trigger has payload, name and type: use trigger.payload, trigger.name or trigger.type."))
		} else if name == "payload" {
			l.w.payloadReads.Add(slices.Collect(payloadPath(tr))...)
		}
	case "each":
		name, _ := attr(1)
		switch {
		case !eachOK:
			l.add(errorf(rng, "Reference to each outside an iteration",
				"each.key, each.value and each.index exist only inside a loop body and in a task with for_each (not in the for_each expression itself)."))
		case name != "key" && name != "value" && name != "index":
			l.add(errorf(rng, "Invalid each reference", "Use each.key, each.value or each.index."))
		}
	case "builtin", "component", "plugin":
		l.add(errorf(rng, "Invalid reference",
			"%s.… names what a task runs and can only appear in `uses`.", root))
	default:
		kind, ok := parseNodeKind(root)
		if !ok {
			l.add(errorf(rng, "Unknown reference",
				"There is nothing named %q to refer to. References start with %s", root, refRoots))
			return
		}
		name, ok := attr(1)
		if !ok {
			l.add(errorf(rng, "Invalid reference", "A node is read as %s.NAME.output.", kind))
			return
		}
		target := l.resolve(n, kind, name, rng)
		if target == nil {
			return
		}
		if step, _ := attr(2); step != "output" {
			l.add(errorf(rng, "Invalid node reference",
				"%s is a node; read its output with %s.output, or wait for it without data with after = [%s].",
				target.Addr.Local(), target.Addr.Local(), target.Addr.Local()))
			return
		}
		if n != nil {
			l.edge(n, target, DepData, "", rng)
		}
	}
}

// loopOutputRef checks a reference of a loop's `output`, which is evaluated in its body's scope.
func (l *linker) loopOutputRef(loop *Node, tr hcl.Traversal) {
	if kind, ok := parseNodeKind(tr.RootName()); ok && len(tr) > 1 {
		if step, ok := tr[1].(hcl.TraverseAttr); ok {
			if t := l.byName[step.Name]; t != nil && t.Addr.Kind == kind && t.Addr.Loop == loop.Addr.Name {
				return // a body node of this loop: available in each iteration
			}
		}
	}
	l.ref(loop, tr, true)
}

// resolve finds the node kind.name as seen from n (nil: from an output block).
func (l *linker) resolve(n *Node, kind NodeKind, name string, rng hcl.Range) *Node {
	t := l.byName[name]
	switch {
	case t == nil && l.faults.rejected[name]:
		return nil // the block's invalid name was reported
	case t == nil:
		l.add(errorf(rng, "Reference to undeclared node",
			"No %s named %q is declared in this file.%s", kind, name, l.suggest(name)))
		return nil
	case t.Addr.Kind != kind:
		l.add(errorf(rng, "Reference to undeclared node",
			"%q is a %s, not a %s: write %s.", name, t.Addr.Kind, kind, t.Addr.Local()))
		return nil
	case n != nil && t == n:
		l.add(errorf(rng, "Self-referential node",
			"%s refers to itself; a node cannot depend on its own output.", n.Addr))
		return nil
	case n != nil && n.Addr.Loop != "" && t.Addr.Kind == KindLoop && t.Addr.Name == n.Addr.Loop:
		l.add(errorf(rng, "Reference to the enclosing loop",
			"%s is in the body of loop %q and cannot refer to the loop itself: its output exists only after every iteration.",
			n.Addr, n.Addr.Loop))
		return nil
	case t.Addr.Loop != "" && (n == nil || n.Addr.Loop != t.Addr.Loop):
		l.add(errorf(rng, "Reference to a node inside a loop body",
			"%s is inside the body of loop %q; only nodes in that body can refer to it. Use loop.%s.output instead.",
			t.Addr.Local(), t.Addr.Loop, t.Addr.Loop))
		return nil
	}
	return t
}

func (l *linker) suggest(name string) string {
	best, bestDist := "", 3
	for other := range l.byName {
		if d := levenshtein(name, other); d < bestDist || (d == bestDist && best != "" && other < best) {
			best, bestDist = other, d
		}
	}
	if best == "" {
		return ""
	}
	return " Did you mean " + l.byName[best].Addr.Local() + "?"
}

// suggestVariable is the declared variable nearest name (fewer than 3 edits), "" when none is.
func (l *linker) suggestVariable(name string) string {
	best, bestDist := "", 3
	for _, v := range l.w.Variables {
		if d := levenshtein(name, v.Name); d < bestDist || (d == bestDist && best != "" && v.Name < best) {
			best, bestDist = v.Name, d
		}
	}
	return best
}

func (l *linker) afterRef(n *Node, a *AfterRef) {
	t := l.resolve(n, a.Target.Kind, a.Target.Name, a.Range)
	if t == nil {
		return
	}
	if a.Branch == "" {
		l.edge(n, t, DepOrder, "", a.Range)
		return
	}
	if t.Switch != nil && !t.Switch.Key(a.Branch) {
		keys := make([]string, 0, len(t.Switch.Cases)+1)
		for _, c := range t.Switch.Cases {
			keys = append(keys, c.Key)
		}
		if t.Switch.Default != nil {
			keys = append(keys, t.Switch.Default.Key)
		}
		l.add(errorf(a.Range, "Unknown switch case",
			"Switch %q has no case %q; its cases are %s.", t.Addr.Name, a.Branch, quoteList(keys)))
		return
	}
	l.edge(n, t, DepBranch, a.Branch, a.Range)
}

// edge records that n depends on target. A body node's dependency on a node outside its loop is
// also a dependency of the loop, so the loop starts only once it is available.
func (l *linker) edge(n, target *Node, kind DepKind, branch string, rng hcl.Range) {
	l.addDep(n, target.Addr, kind, branch, rng)
	if n.Addr.Loop != "" && target.Addr.Loop != n.Addr.Loop {
		loop := l.w.byAddr[n.Addr.LoopAddr()]
		// A branch edge is evaluated by the body node in each iteration; for the loop it only orders.
		loopKind := kind
		if kind == DepBranch {
			loopKind = DepOrder
		}
		l.addDep(loop, target.Addr, loopKind, "", rng)
	}
}

func (l *linker) addDep(n *Node, up Addr, kind DepKind, branch string, rng hcl.Range) {
	idx := l.deps[n]
	if idx == nil {
		idx = make(map[Addr]*Dep, 4)
		l.deps[n] = idx
	}
	d := idx[up]
	if d == nil {
		d = &Dep{Upstream: up, Range: rng}
		idx[up] = d
		n.Deps = append(n.Deps, d)
	}
	d.Kinds |= kind
	if branch != "" {
		for _, b := range d.Branches {
			if b == branch {
				return
			}
		}
		d.Branches = append(d.Branches, branch)
	}
}

func (l *linker) hasSecret(name string) bool {
	for _, s := range l.w.Secrets {
		if s.Name == name {
			return true
		}
	}
	return false
}

func (l *linker) checkUses(u Uses) {
	switch u.Kind {
	case UsesComponent:
		for _, c := range l.w.Components {
			if c.Name == u.Local {
				return
			}
		}
		l.add(errorf(u.Range, "Reference to undeclared component",
			"No component named %q is declared. Add a `component %q { source = \"org/name\" }` block.", u.Local, u.Local))
	case UsesPlugin:
		for _, p := range l.w.Plugins {
			if p.Name == u.Local {
				return
			}
		}
		l.add(errorf(u.Range, "Reference to undeclared plugin",
			"No plugin named %q is declared. Add a `plugin %q { source = \"%s\" }` block.", u.Local, u.Local, u.Local))
	}
}

// checkPlainRoots checks an expression that may only read the given roots (config blocks).
func (l *linker) checkPlainRoots(expr hcl.Expression, attr string, roots ...string) {
	ok, foreign := splitRoots(expr, roots...)
	for _, tr := range foreign {
		l.add(errorf(tr.SourceRange(), "Invalid reference",
			"%q is evaluated before any node runs, so it can only use %s.", attr, strings.Join(roots, " and ")))
	}
	for _, tr := range ok {
		l.ref(nil, tr, false)
	}
}

func (l *linker) buildGraph() {
	w := l.w
	g := &Graph{Top: dag.New(), Bodies: make(map[string]*dag.Graph), BodyStages: make(map[string][][]Addr)}
	w.Graph = g
	for _, n := range w.Nodes {
		attrs := dag.NodeAttrs{Label: nodeLabel(n)}
		if n.Addr.Loop == "" {
			g.Top.AddNode(n.Addr.String(), attrs)
			continue
		}
		body := g.Bodies[n.Addr.Loop]
		if body == nil {
			body = dag.New()
			g.Bodies[n.Addr.Loop] = body
		}
		body.AddNode(n.Addr.String(), attrs)
	}
	for _, n := range w.Nodes {
		target := g.Top
		if n.Addr.Loop != "" {
			target = g.Bodies[n.Addr.Loop]
		}
		for _, d := range n.Deps {
			if d.Upstream.Loop != n.Addr.Loop {
				continue // a body node's outside dependency is the loop's
			}
			from, to := d.Upstream.String(), n.Addr.String()
			if len(d.Branches) == 0 {
				target.AddEdge(from, to, "")
			}
			for _, b := range d.Branches {
				target.AddEdge(from, to, b)
			}
		}
	}
	cyclic := l.reportCycles(g.Top)
	loops := make([]string, 0, len(g.Bodies))
	for name := range g.Bodies {
		loops = append(loops, name)
	}
	sort.Strings(loops)
	for _, name := range loops {
		cyclic = l.reportCycles(g.Bodies[name]) || cyclic
	}
	if cyclic {
		return
	}
	g.Stages = l.stages(g.Top)
	for _, name := range loops {
		g.BodyStages[name] = l.stages(g.Bodies[name])
	}
}

func (l *linker) reportCycles(g *dag.Graph) bool {
	cycles := g.Cycles()
	for _, c := range cycles {
		// The last edge closes the cycle: its downstream node holds the expression to point at.
		closer := l.w.byAddr[mustParseAddr(c[len(c)-1])]
		up := mustParseAddr(c[len(c)-2])
		rng := closer.DeclRange
		for _, d := range closer.Deps {
			if d.Upstream == up {
				rng = d.Range
			}
		}
		l.add(errorf(rng, "Dependency cycle",
			"These nodes depend on each other in a cycle: %s. Remove one of the references so that the graph has a start.",
			strings.Join(c, " -> ")))
	}
	return len(cycles) > 0
}

func (l *linker) stages(g *dag.Graph) [][]Addr {
	ids, err := g.Stages()
	if err != nil {
		return nil
	}
	out := make([][]Addr, len(ids))
	for i, stage := range ids {
		out[i] = make([]Addr, len(stage))
		for j, id := range stage {
			out[i][j] = mustParseAddr(id)
		}
	}
	return out
}

func mustParseAddr(s string) Addr {
	a, ok := ParseAddr(s)
	if !ok {
		panic("lang: invalid node address in graph: " + s)
	}
	return a
}

// nodeLabel is the node's label in pictures: its address and what it is.
func nodeLabel(n *Node) string {
	detail := string(n.Addr.Kind)
	switch {
	case n.Task != nil:
		detail = n.Task.Uses.String()
		if n.Task.ForEach != nil {
			detail += ", for_each"
		}
	case n.Join != nil:
		detail = "join " + n.Join.Strategy
	case n.Loop != nil:
		detail = "loop " + n.Loop.Mode
	case n.Wait != nil:
		detail = "wait " + n.Wait.Kind
	case n.Call != nil:
		detail = "call " + n.Call.Workflow
	}
	return n.Addr.Local() + "\n(" + detail + ")"
}

// EditDistance is the Levenshtein distance of a and b, for "Did you mean" hints elsewhere
// (test files); names longer than 64 bytes are never close.
func EditDistance(a, b string) int { return levenshtein(a, b) }

// levenshtein is the edit distance of a and b, for "Did you mean" hints.
func levenshtein(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
