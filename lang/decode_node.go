package lang

import (
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/fuscia/fuscia/lang/builtin"
)

// decodeNode decodes a node block of any kind; loop is the enclosing loop's name or "".
// The node is marked faulty when its own block has errors (its body's, for a loop, belong to
// the body's nodes); a block with an invalid name is not declared at all, and references to
// that name are left to its error.
func (d *decoder) decodeNode(b *hcl.Block, kind NodeKind, loop string) *Node {
	n := &Node{Addr: Addr{Loop: loop, Kind: kind, Name: b.Labels[0]}, DeclRange: b.DefRange, FailWorkflow: true}
	start, bodyStart := d.mark(), d.bodyErrors
	defer func() {
		errs := d.errorsSince(start)
		if errs > d.bodyErrors-bodyStart {
			d.faults.nodes[n] = true
		}
		if loop != "" {
			d.bodyErrors += errs
		}
	}()
	if diag := checkName(n.Addr.Name, string(kind)+" name", b.LabelRanges[0]); diag != nil {
		d.add(diag)
		d.faults.rejected[n.Addr.Name] = true
		return nil
	}
	if diag := d.nodes.add(n.Addr.Name, b.DefRange); diag != nil {
		d.add(diag)
		return nil
	}
	content, diags := b.Body.Content(nodeSchemas[kind])
	d.add(terraformHints(diags)...)
	d.w.Nodes = append(d.w.Nodes, n)
	d.w.byAddr[n.Addr] = n

	a := content.Attributes
	d.decodeCommon(n, content)
	switch kind {
	case KindTask:
		d.decodeTask(n, a)
	case KindSwitch:
		d.decodeSwitch(n, b, content)
	case KindJoin:
		d.decodeJoin(n, b, a)
	case KindLoop:
		d.decodeLoop(n, b, content)
	case KindWait:
		d.decodeWait(n, b, content)
	case KindCall:
		d.decodeCall(n, a)
	}
	return n
}

func (d *decoder) decodeCommon(n *Node, content *hcl.BodyContent) {
	st, a := &d.static, content.Attributes
	for _, name := range []string{"after", "depends_on"} {
		if attr := a[name]; attr != nil {
			n.After = append(n.After, d.decodeAfter(attr)...)
		}
	}
	if attr := a["when"]; attr != nil {
		n.When = attr.Expr
		n.exprs = append(n.exprs, attr.Expr)
	}
	if attr := a["timeout"]; attr != nil {
		if v, ok := st.positiveDuration(attr); ok {
			if n.Addr.Kind == KindWait {
				n.Wait = &WaitSpec{WaitTimeout: v}
			} else {
				n.Timeout, n.TimeoutSet = v, true
			}
		}
	}
	if v, ok := st.boolean(a["fail_workflow"]); ok {
		n.FailWorkflow = v
	}
	for i, rb := range content.Blocks.OfType("retry") {
		if i > 0 {
			d.add(duplicateBlock(rb, "retry"))
			continue
		}
		n.Retry = d.decodeRetry(rb)
	}
}

// decodeAfter reads `after = [ … ]`. Each element is a reference: KIND.NAME for ordering,
// switch.NAME.CASE or task.NAME.branch.KEY for a branch edge. Targets are resolved in link.
func (d *decoder) decodeAfter(attr *hcl.Attribute) []*AfterRef {
	exprs, diags := hcl.ExprList(attr.Expr)
	if diags.HasErrors() {
		d.add(errorf(attr.Expr.Range(), "Invalid "+attr.Name,
			"%q is a list of node references, e.g. [task.fetch, switch.tier.high].", attr.Name))
		return nil
	}
	refs := make([]*AfterRef, 0, len(exprs))
	for _, e := range exprs {
		if r := d.decodeAfterRef(attr.Name, e); r != nil {
			refs = append(refs, r)
		}
	}
	return refs
}

func (d *decoder) decodeAfterRef(attrName string, e hcl.Expression) *AfterRef {
	bad := func(detail string) *AfterRef {
		d.add(errorf(e.Range(), "Invalid reference in "+attrName, "%s", detail))
		return nil
	}
	const forms = "Each element is a node reference: KIND.NAME (task.fetch, join.paid, …), switch.NAME.CASE, or task.NAME.branch.KEY, without quotes."
	tr, diags := hcl.AbsTraversalForExpr(e)
	if diags.HasErrors() {
		return bad(forms)
	}
	kind, ok := parseNodeKind(tr.RootName())
	if !ok || len(tr) < 2 {
		return bad(forms)
	}
	steps := make([]string, 0, len(tr)-1)
	for _, s := range tr[1:] {
		a, ok := s.(hcl.TraverseAttr)
		if !ok {
			return bad(forms)
		}
		steps = append(steps, a.Name)
	}
	r := &AfterRef{Target: Addr{Kind: kind, Name: steps[0]}, Range: e.Range()}
	switch {
	case len(steps) == 1:
	case kind == KindSwitch && len(steps) == 2:
		r.Branch = steps[1]
	case kind == KindTask && len(steps) == 3 && steps[1] == "branch":
		r.Branch = steps[2]
	case len(steps) >= 2 && steps[1] == "output":
		return bad("An ordering edge names the node itself (" + string(kind) + "." + steps[0] + "), not its output; data references elsewhere create edges on their own.")
	default:
		return bad(forms)
	}
	return r
}

func (d *decoder) decodeTask(n *Node, a hcl.Attributes) {
	t := &TaskSpec{MaxIterations: DefaultMaxIterations, Pool: DefaultPool}
	n.Task = t
	if attr := a["uses"]; attr != nil {
		u, diag := parseUses(attr.Expr, builtin.Names())
		d.add(diag)
		if u != nil {
			t.Uses = *u
		}
	}
	if attr := a["inputs"]; attr != nil {
		t.Inputs = attr.Expr
		n.exprs = append(n.exprs, attr.Expr)
	}
	if attr := a["for_each"]; attr != nil {
		t.ForEach = attr.Expr
		n.exprs = append(n.exprs, attr.Expr)
	}
	if attr := a["concurrency"]; attr != nil {
		if t.ForEach == nil {
			d.add(errorf(attr.NameRange, "Concurrency without for_each",
				"`concurrency` limits how many for_each items run at once; this task has no for_each. Remove it or add for_each."))
		}
		if v, ok := d.static.integer(attr, 1, MaxForEachItems); ok {
			t.Concurrency = int(v)
		}
	}
	if v, ok := d.static.integer(a["max_iterations"], 1, 1000000); ok {
		t.MaxIterations = int(v)
	}
	if attr := a["pool"]; attr != nil {
		d.decodePool(n, t, attr)
	}
}

func (d *decoder) decodeSwitch(n *Node, b *hcl.Block, content *hcl.BodyContent) {
	s := &SwitchSpec{}
	n.Switch = s
	keys := newNameSet("switch case", "Case keys, the default's included, must be unique in a switch.")
	for _, cb := range content.Blocks {
		if cb.Type != "case" && cb.Type != "default" {
			continue // retry: decoded with the common settings
		}
		c := &SwitchCase{Key: cb.Labels[0], DeclRange: cb.DefRange}
		if diag := checkName(c.Key, cb.Type+" key", cb.LabelRanges[0]); diag != nil {
			d.add(diag)
			continue
		}
		if diag := keys.add(c.Key, cb.DefRange); diag != nil {
			d.add(diag)
			continue
		}
		switch cb.Type {
		case "case":
			cc, diags := cb.Body.Content(caseSchema)
			d.add(diags...)
			if attr := cc.Attributes["when"]; attr != nil {
				c.When = attr.Expr
				n.exprs = append(n.exprs, attr.Expr)
			}
			s.Cases = append(s.Cases, c)
		case "default":
			_, diags := cb.Body.Content(&hcl.BodySchema{})
			d.add(diags...)
			if s.Default != nil {
				d.add(errorf(cb.DefRange, "Duplicate default",
					"Switch %q already has a default (%q); a switch has at most one.", n.Addr.Name, s.Default.Key))
				continue
			}
			s.Default = c
		}
	}
	if len(s.Cases) == 0 {
		d.add(errorf(b.DefRange, "Switch without cases",
			"Switch %q needs at least one `case \"KEY\" { when = … }` block.", n.Addr.Name))
	}
}

func (d *decoder) decodeJoin(n *Node, b *hcl.Block, a hcl.Attributes) {
	j := &JoinSpec{Strategy: JoinAll, Merge: MergeKeyed}
	n.Join = j
	if len(n.After) == 0 && a["after"] == nil && a["depends_on"] == nil {
		d.add(errorf(b.DefRange, "Join without branches",
			"Join %q needs `after = [...]` listing the branches it joins.", n.Addr.Name))
	}
	st := &d.static
	if v, ok := st.oneOf(a["strategy"], JoinAll, JoinAny, JoinMofN); ok {
		j.Strategy = v
	}
	if v, ok := st.oneOf(a["merge"], MergeKeyed, MergeAppend, MergeObject, MergeLastWins); ok {
		j.Merge = v
	}
	mAttr := a["m"]
	switch {
	case j.Strategy == JoinMofN && mAttr == nil:
		d.add(errorf(b.DefRange, "Missing m for m_of_n",
			"Join %q has strategy \"m_of_n\" and needs `m`, the number of branches that must succeed (1 to %d).", n.Addr.Name, len(n.After)))
	case j.Strategy != JoinMofN && mAttr != nil:
		d.add(errorf(mAttr.NameRange, "Unexpected m",
			"`m` only applies to strategy \"m_of_n\"; join %q has strategy %q.", n.Addr.Name, j.Strategy))
	case mAttr != nil:
		max := int64(len(n.After))
		if max < 1 {
			max = 1
		}
		if v, ok := st.integer(mAttr, 1, max); ok {
			j.M = int(v)
		}
	}
}

func (d *decoder) decodeLoop(n *Node, b *hcl.Block, content *hcl.BodyContent) {
	l := &LoopSpec{Mode: LoopSequential, OnFailure: OnFailStopFail}
	n.Loop = l
	st, a := &d.static, content.Attributes
	if attr := a["for_each"]; attr != nil {
		l.ForEach = attr.Expr
		n.exprs = append(n.exprs, attr.Expr)
	}
	if v, ok := st.oneOf(a["mode"], LoopSequential, LoopParallel); ok {
		l.Mode = v
	}
	if attr := a["concurrency"]; attr != nil {
		if v, ok := st.integer(attr, 1, MaxForEachItems); ok {
			l.Concurrency = int(v)
		}
		if l.Mode != LoopParallel {
			d.add(errorf(attr.NameRange, "Concurrency in a sequential loop",
				"`concurrency` only applies to `mode = \"parallel\"`; loop %q is sequential.", n.Addr.Name))
		}
	}
	if v, ok := st.oneOf(a["on_failure"], OnFailStopFail, OnFailStopErrors, OnFailContinue); ok {
		l.OnFailure = v
	}
	if attr := a["output"]; attr != nil {
		l.Output = attr.Expr
	}
	for _, bb := range content.Blocks {
		switch bb.Type {
		case "loop":
			d.add(errorf(bb.DefRange, "Nested loop",
				"Loops do not nest: loop %q is inside loop %q. Iterate over both levels in one loop (for_each = setproduct(A, B)), or move the iteration into a sub-workflow and `call` it from outside the loop (a loop body holds no call).",
				bb.Labels[0], n.Addr.Name))
		case "wait", "call":
			d.add(errorf(bb.DefRange, "Unsupported block in loop body",
				"A loop body holds task, switch and join blocks; a %s block is not allowed inside loop %q. Put it outside the loop, or move the body into a sub-workflow.",
				bb.Type, n.Addr.Name))
		case "task", "switch", "join":
			kind, _ := parseNodeKind(bb.Type)
			if bn := d.decodeNode(bb, kind, n.Addr.Name); bn != nil {
				l.Body = append(l.Body, bn)
			}
		}
	}
	bodyBlocks := len(content.Blocks.OfType("task")) + len(content.Blocks.OfType("switch")) + len(content.Blocks.OfType("join"))
	// A body whose only blocks were refused above has had its error; "empty" would be a
	// second report of the same mistake.
	refused := len(content.Blocks.OfType("loop")) + len(content.Blocks.OfType("wait")) + len(content.Blocks.OfType("call"))
	if bodyBlocks == 0 && refused == 0 {
		d.add(errorf(b.DefRange, "Empty loop body",
			"Loop %q needs at least one task, switch or join block in its body.", n.Addr.Name))
	}
}

func (d *decoder) decodeWait(n *Node, b *hcl.Block, content *hcl.BodyContent) {
	w := n.Wait
	if w == nil {
		w = &WaitSpec{}
		n.Wait = w
	}
	st, a := &d.static, content.Attributes
	var kinds []string
	if attr := a["duration"]; attr != nil {
		kinds = append(kinds, WaitDuration)
		if v, ok := st.positiveDuration(attr); ok {
			w.Duration = v
		}
	}
	if attr := a["until"]; attr != nil {
		kinds = append(kinds, WaitUntil)
		if v, ok := st.str(attr); ok {
			t, err := parseTimestamp(v)
			if err != nil {
				d.add(errorf(attr.Expr.Range(), "Invalid timestamp for until",
					"`until` is an RFC 3339 timestamp such as \"2026-12-01T09:00:00Z\"; got %q.", v))
			}
			w.Until = t
		}
	}
	for i, ab := range content.Blocks.OfType("approval") {
		kinds = append(kinds, WaitApproval)
		if i > 0 {
			continue
		}
		ac, diags := ab.Body.Content(approvalSchema)
		d.add(diags...)
		if attr := ac.Attributes["message"]; attr != nil {
			w.Message = attr.Expr
			n.exprs = append(n.exprs, attr.Expr)
		}
	}
	for _, cb := range content.Blocks.OfType("callback") {
		kinds = append(kinds, WaitCallback)
		_, diags := cb.Body.Content(&hcl.BodySchema{})
		d.add(diags...)
	}
	switch len(kinds) {
	case 1:
		w.Kind = kinds[0]
	case 0:
		d.add(errorf(b.DefRange, "Missing wait condition",
			"Wait %q needs exactly one of `duration`, `until`, an `approval {}` block or a `callback {}` block.", n.Addr.Name))
	default:
		d.add(errorf(b.DefRange, "Conflicting wait conditions",
			"Wait %q sets %s; set exactly one of duration, until, approval and callback.", n.Addr.Name, quoteList(kinds)))
	}
}

func (d *decoder) decodeCall(n *Node, a hcl.Attributes) {
	c := &CallSpec{OnFailure: CallPropagate}
	n.Call = c
	if attr := a["workflow"]; attr != nil {
		c.WorkflowRange = attr.Expr.Range()
		if _, isLiteral := attr.Expr.(*hclsyntax.TemplateExpr); !isLiteral || len(attr.Expr.Variables()) > 0 {
			d.add(errorf(attr.Expr.Range(), "Invalid workflow path",
				"`workflow` is a literal path to a .fsc.hcl file, relative to this file, e.g. \"./billing.fsc.hcl\"; it is resolved when the workflow is checked, so it cannot use references."))
		} else if v, ok := d.static.str(attr); ok {
			if !strings.HasSuffix(v, ".fsc.hcl") {
				// Only workflow files are read: a parse error shows the file's lines, and
				// `workflow = "/proc/self/environ"` would print the environment into a CI log.
				d.add(errorf(attr.Expr.Range(), "Invalid workflow path",
					"`workflow` is the path of a .fsc.hcl file, relative to this file, e.g. \"./billing.fsc.hcl\"; %q is not one.", v))
			} else {
				c.Workflow = v
			}
		}
	}
	if attr := a["inputs"]; attr != nil {
		c.Inputs = attr.Expr
		n.exprs = append(n.exprs, attr.Expr)
	}
	if v, ok := d.static.oneOf(a["on_failure"], CallPropagate, CallContinue); ok {
		c.OnFailure = v
	}
}

// terraformHints adds to hcl's "Unsupported argument" the way to write what a Terraform user
// reached for: Fuscia has for_each, not count.
func terraformHints(diags hcl.Diagnostics) hcl.Diagnostics {
	for _, d := range diags {
		if d.Summary == "Unsupported argument" && strings.HasPrefix(d.Detail, `An argument named "count" is not expected here.`) {
			d.Detail += ` Fuscia has no count: to run a task N times, write for_each = range(N) (each.key is then 0 to N-1).`
		}
	}
	return diags
}
