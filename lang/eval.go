package lang

import (
	"iter"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/fuscia/fuscia/lang/builtin"
	"github.com/fuscia/fuscia/lang/funcs"
	"github.com/fuscia/fuscia/lang/schema"
)

var emptyObject = cty.EmptyObjectVal

// NodeValues are a node's expressions evaluated with what is known before the run: variables and
// literals are known, every node output, the trigger payload, each and secrets are not.
type NodeValues struct {
	Inputs  cty.Value // task or call inputs, coerced to the input schema when one is known; cty.NilVal if none
	ForEach cty.Value // cty.NilVal when the node has no for_each
	When    cty.Value // cty.NilVal when the node has no when
}

// Scope is what an expression may read, for NewEvalContext.
type Scope struct {
	Vars    cty.Value // the `var` object
	Secrets cty.Value // the `secret` object (values marked Sensitive)
	Trigger cty.Value // the `trigger` object: payload, name, type
	Each    cty.Value // the `each` object, or cty.NilVal outside an iteration
	// WholeTrigger, when set, says that Trigger's payload holds only the parts TriggerPaths
	// reads (Workflow.PayloadReads); it returns the trigger with all of it, for an expression
	// that reads more.
	WholeTrigger func() cty.Value
	TriggerPaths *schema.Paths
	// Node returns the value of KIND.NAME (an object with an `output` attribute).
	Node func(kind NodeKind, name string) cty.Value
	// Functions is the function table; nil means funcs.Table(). Set it once per workflow when
	// evaluating many expressions: building the table costs more than most expressions.
	Functions map[string]function.Function
	// Iterations is what the `for` expressions evaluated in this scope count their elements
	// against (funcs.MaxIterations); nil gives each evaluation a count of its own. A check of
	// a whole workflow shares one, so that a file of many expressions is bounded as one.
	Iterations *funcs.Iterations
}

// NewEvalContext builds the context to evaluate expr in. It holds only the roots and nodes that
// expr refers to, so that building it costs what the expression costs, not what the workflow
// does; the engine uses it too, with real values.
func NewEvalContext(expr hcl.Expression, s Scope) *hcl.EvalContext {
	return newEvalContext(expr.Variables(), s, true)
}

// EvalContext is NewEvalContext for one of w's own expressions: the references link found for
// it are not walked for again (a walk allocates a visitor per syntax node, at every
// evaluation). An expression w does not hold is walked as NewEvalContext does.
func (w *Workflow) EvalContext(expr hcl.Expression, s Scope) *hcl.EvalContext {
	return newEvalContext(w.variables(expr), s, w.counts(expr))
}

// counts says whether an evaluation of expr needs a count of iterations: unless w was loaded
// (and its file has no for, or expr is one of its attributes without one), it may.
func (w *Workflow) counts(expr hcl.Expression) bool {
	if w.forFree {
		return false
	}
	if !cacheable(expr) {
		return true
	}
	iterates, known := w.iterating[expr]
	return iterates || !known
}

// newEvalContext is NewEvalContext for an expression whose references trs are known. iterates
// says whether it may hold a `for` expression, which needs the scope's count of iterations.
func newEvalContext(trs []hcl.Traversal, s Scope, iterates bool) *hcl.EvalContext {
	fns := s.Functions
	if fns == nil {
		fns = funcs.Table()
	}
	ctx := &hcl.EvalContext{Functions: fns}
	if iterates {
		// The count comes first in the lookup of functions: a child context holding it
		// alone, over the (shared) table.
		it := s.Iterations
		if it == nil {
			it = new(funcs.Iterations)
		}
		ctx = ctx.NewChild()
		ctx.Functions = map[string]function.Function{funcs.IterationsName: it.Func(), funcs.ElementName: it.ElementFunc()}
	}
	ctx.Variables = make(map[string]cty.Value, 2)
	// The node roots referred to (task, switch, …), a few at most: a slice on the stack rather
	// than a map of maps allocated for every expression the engine and the check evaluate.
	type rootNodes struct {
		root   string
		byName map[string]cty.Value
	}
	var buf [2]rootNodes
	nodes := buf[:0]
	for _, tr := range trs {
		root := tr.RootName()
		switch root {
		case "var":
			ctx.Variables[root] = s.Vars
		case "secret":
			ctx.Variables[root] = s.Secrets
		case "trigger":
			if s.WholeTrigger != nil && !triggerCovered(tr, s.TriggerPaths) {
				ctx.Variables[root] = s.WholeTrigger()
				s.WholeTrigger = nil // the rest of trs read it too
			} else if _, set := ctx.Variables[root]; !set {
				ctx.Variables[root] = s.Trigger
			}
		case "each":
			if s.Each != cty.NilVal {
				ctx.Variables[root] = s.Each
			}
		default:
			kind, ok := parseNodeKind(root)
			if !ok || len(tr) < 2 {
				continue
			}
			step, ok := tr[1].(hcl.TraverseAttr)
			if !ok {
				continue
			}
			i := 0
			for i < len(nodes) && nodes[i].root != root {
				i++
			}
			if i == len(nodes) {
				nodes = append(nodes, rootNodes{root: root, byName: make(map[string]cty.Value, 1)})
			}
			nodes[i].byName[step.Name] = s.Node(kind, step.Name)
		}
	}
	for _, n := range nodes {
		ctx.Variables[n.root] = cty.ObjectVal(n.byName)
	}
	return ctx
}

// checker evaluates a linked workflow's expressions with plan-time knowledge.
type checker struct {
	w     *Workflow
	scope Scope
	diags hcl.Diagnostics
}

// check evaluates what is known and validates it: conditions are booleans, for_each is a
// collection within the limit, inputs match their schemas. It skips the nodes (and outputs)
// that f says had errors already.
func check(w *Workflow, f *faults) hcl.Diagnostics {
	secrets := make(map[string]cty.Value, len(w.Secrets))
	for _, s := range w.Secrets {
		secrets[s.Name] = cty.UnknownVal(cty.String).Mark(Sensitive)
	}
	trigger := map[string]cty.Value{
		"payload": cty.DynamicVal,
		"name":    cty.UnknownVal(cty.String),
		"type":    cty.UnknownVal(cty.String),
	}
	// Known when every run comes through one trigger: the workflow's only one, and that one
	// manual, since apply and the API start any workflow as a manual run (engine, Start).
	if len(w.Triggers) == 1 && w.Triggers[0].Type == TriggerManual {
		trigger["name"] = cty.StringVal(w.Triggers[0].Name)
		trigger["type"] = cty.StringVal(w.Triggers[0].Type)
	}
	c := &checker{w: w}
	iterations := new(funcs.Iterations) // one count for the whole check
	c.scope = Scope{
		Vars:       w.varValues,
		Secrets:    cty.ObjectVal(secrets),
		Trigger:    cty.ObjectVal(trigger),
		Node:       UnknownNode,
		Functions:  iterations.Table(),
		Iterations: iterations,
	}
	w.Values = make(map[Addr]*NodeValues, len(w.Nodes))
	for _, n := range w.Nodes {
		if !f.nodes[n] {
			c.node(n)
		}
	}
	if !f.outputs {
		for _, o := range w.Outputs {
			c.eval(o.Value, cty.NilVal)
		}
	}
	return c.diags
}

// UnknownNode is the value of a node before it ran: an object whose output is unknown. A
// switch's output has a known shape, so a typo in `switch.x.output.selected` is caught early.
func UnknownNode(kind NodeKind, _ string) cty.Value {
	if kind == KindSwitch {
		return unknownSwitch
	}
	return unknownOutput
}

// The values UnknownNode returns, built once: a plan checks every reference with them, and
// building a cty object (its type's attribute map included) per reference was a tenth of
// the check's allocations.
var (
	unknownOutput = cty.ObjectVal(map[string]cty.Value{"output": cty.DynamicVal})
	unknownSwitch = cty.ObjectVal(map[string]cty.Value{
		"output": cty.UnknownVal(cty.Object(map[string]cty.Type{"selected": cty.String})),
	})
)

var unknownEach = cty.ObjectVal(map[string]cty.Value{
	"key": cty.DynamicVal, "value": cty.DynamicVal, "index": cty.UnknownVal(cty.Number),
})

func (c *checker) eval(expr hcl.Expression, each cty.Value) cty.Value {
	if expr == nil {
		return cty.NilVal
	}
	s := c.scope
	s.Each = each
	v, diags := expr.Value(newEvalContext(c.w.variables(expr), s, false)) // the table counts
	c.diags = append(c.diags, Dedupe(diags)...)
	if diags.HasErrors() {
		return cty.DynamicVal
	}
	return v
}

func (c *checker) node(n *Node) {
	vals := &NodeValues{}
	c.w.Values[n.Addr] = vals
	inIteration := n.Addr.Loop != "" || (n.Task != nil && n.Task.ForEach != nil)
	each := cty.NilVal
	if inIteration {
		each = unknownEach
	}
	if n.When != nil {
		vals.When = c.boolean(n.When, each, "when")
	}
	switch {
	case n.Task != nil:
		if n.Task.ForEach != nil {
			vals.ForEach = c.collection(n.Task.ForEach, n.Addr.Loop != "")
		}
		vals.Inputs = c.inputs(n, n.Task.Inputs, each)
	case n.Loop != nil:
		vals.ForEach = c.collection(n.Loop.ForEach, false)
		// The loop's output is evaluated per iteration, in the body's scope; check it once now.
		c.eval(n.Loop.Output, unknownEach)
	case n.Switch != nil:
		for _, cs := range n.Switch.Cases {
			c.boolean(cs.When, each, "when")
		}
	case n.Wait != nil && n.Wait.Message != nil:
		c.typed(n.Wait.Message, each, cty.String, "message", "a string")
	case n.Call != nil:
		vals.Inputs = c.object(n, n.Call.Inputs, each)
		c.callInputTypes(n, vals.Inputs)
	}
}

// callInputTypes checks the known inputs of a call against the types of the called workflow's
// variables, as the run converts them: a string for a number variable failed only at run time.
func (c *checker) callInputTypes(n *Node, in cty.Value) {
	child := c.w.Calls[n.Addr.Name]
	if child == nil || in == cty.NilVal || !in.IsKnown() {
		return
	}
	uv, marks := in.Unmark()
	if uv.IsNull() || !(uv.Type().IsObjectType() || uv.Type().IsMapType()) {
		return
	}
	for name, val := range uv.AsValueMap() {
		v := child.Variable(name)
		if v == nil {
			continue // reported by loadCall
		}
		plain, _ := val.UnmarkDeep()
		if _, err := convert.Convert(plain, v.Type); err != nil {
			c.diags = append(c.diags, errorf(attrRange(n.Call.Inputs, name), "Invalid input for called workflow",
				"%s declares variable %q as %s; this call gives %s: %s.",
				n.Call.Workflow, name, typeexpr.TypeString(v.Type), describeValue(val.WithMarks(marks)), err))
		}
	}
}

func (c *checker) boolean(expr hcl.Expression, each cty.Value, attr string) cty.Value {
	return c.typed(expr, each, cty.Bool, attr, "a boolean (true or false)")
}

func (c *checker) typed(expr hcl.Expression, each cty.Value, ty cty.Type, attr, what string) cty.Value {
	v := c.eval(expr, each)
	if v == cty.NilVal || !v.IsKnown() {
		return v
	}
	cv, err := convert.Convert(v, ty)
	if err != nil || cv.IsNull() {
		c.diags = append(c.diags, errorf(expr.Range(), "Invalid value for "+attr,
			"%q must be %s; this expression gives %s.", attr, what, describeValue(v)))
		return cty.UnknownVal(ty)
	}
	return cv
}

func (c *checker) collection(expr hcl.Expression, each bool) cty.Value {
	e := cty.NilVal
	if each {
		e = unknownEach
	}
	v := c.eval(expr, e)
	if !v.IsKnown() {
		return v
	}
	uv, _ := v.Unmark()
	ty := uv.Type()
	if uv.IsNull() || !(ty.IsListType() || ty.IsSetType() || ty.IsMapType() || ty.IsTupleType() || ty.IsObjectType()) {
		c.diags = append(c.diags, errorf(expr.Range(), "Invalid for_each value",
			"for_each must be a list, set or map; this expression gives %s.", describeValue(v)))
		return cty.DynamicVal
	}
	if n := uv.LengthInt(); n > MaxForEachItems {
		c.diags = append(c.diags, errorf(expr.Range(), "Too many for_each items",
			"for_each has %d items; the limit is %d items. Split the work, or page through it with a loop over a call.", n, MaxForEachItems))
	}
	return v
}

// inputs evaluates a task's inputs and checks the known part against the builtin's schema.
// Component and plugin schemas are checked by the engine's plan, which can see the registry.
func (c *checker) inputs(n *Node, expr hcl.Expression, each cty.Value) cty.Value {
	if expr == nil {
		expr = hcl.StaticExpr(emptyObject, n.DeclRange)
	}
	v := c.object(n, expr, each)
	if n.Task.Uses.Kind != UsesBuiltin || !v.IsKnown() && v.Type() == cty.DynamicPseudoType {
		return v
	}
	s, ok := builtin.InputSchema(n.Task.Uses.Name)
	if !ok {
		return v
	}
	out, problems := s.Check(v)
	c.diags = append(c.diags, InputProblems(n, expr, problems)...)
	return out
}

// object evaluates the inputs of a task or call, which must be an object.
func (c *checker) object(n *Node, expr hcl.Expression, each cty.Value) cty.Value {
	if expr == nil {
		return emptyObject
	}
	v := c.eval(expr, each)
	if v.IsKnown() {
		uv, _ := v.Unmark()
		if uv.IsNull() || !(uv.Type().IsObjectType() || uv.Type().IsMapType()) {
			c.diags = append(c.diags, errorf(expr.Range(), "Invalid inputs",
				"The inputs of %s must be an object, e.g. { name = \"…\" }; this expression gives %s.", n.Addr, describeValue(v)))
			return cty.DynamicVal
		}
	}
	return v
}

// InputProblems turns schema problems of a node's inputs into diagnostics that point at the
// attribute at fault when the inputs are written as an object literal.
func InputProblems(n *Node, expr hcl.Expression, problems []schema.Problem) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, p := range problems {
		// An unknown attribute is reported on the object; point at the attribute instead.
		if p.Path == "" && p.Attribute != "" {
			p.Path = p.Attribute
		}
		rng := attrRange(expr, p.Path)
		uses := ""
		if n.Task != nil {
			uses = " (" + n.Task.Uses.String() + ")"
		}
		diags = append(diags, errorf(rng, "Invalid input for "+n.Addr.String(),
			"Input %s of %s%s: %s", inputName(p.Path), n.Addr, uses, Sentence(p.Message)))
	}
	return diags
}

func inputName(path string) string {
	if path == "" {
		return "object"
	}
	return quote(path)
}

// InputRange is the range of the top-level attribute of a node's inputs that path (a problem
// path such as "args[0]") starts with, or of the whole inputs expression.
func InputRange(inputs hcl.Expression, path string) hcl.Range { return attrRange(inputs, path) }

// attrRange finds the expression of the top-level attribute that path starts with.
func attrRange(expr hcl.Expression, path string) hcl.Range {
	obj, ok := expr.(*hclsyntax.ObjectConsExpr)
	if !ok || path == "" {
		return expr.Range()
	}
	first := path
	for i, r := range path {
		if r == '.' || r == '[' {
			first = path[:i]
			break
		}
	}
	for _, item := range obj.Items {
		key, diags := item.KeyExpr.Value(nil)
		if diags.HasErrors() || !key.IsKnown() || key.Type() != cty.String {
			continue
		}
		if key.AsString() == first {
			return item.ValueExpr.Range()
		}
	}
	return expr.Range()
}

// describeValue names a value's type for messages, with the value when it is short and not sensitive.
func describeValue(v cty.Value) string {
	if v.IsMarked() {
		return typeName(v.Type()) + " (sensitive)"
	}
	if v.IsNull() {
		return "null"
	}
	if v.IsKnown() && v.Type() == cty.String && len(v.AsString()) <= 40 {
		return "string " + quote(v.AsString())
	}
	if v.IsKnown() && v.Type() == cty.Bool {
		return "bool " + map[bool]string{true: "true", false: "false"}[v.True()]
	}
	return typeName(v.Type())
}

// payloadPath is the path into trigger.payload that a reference trigger.payload… reads, by
// attribute names (and string keys): up to its first other step (a number, a splat), from
// which the value is read whole.
func payloadPath(tr hcl.Traversal) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, step := range tr[min(2, len(tr)):] {
			name, ok := stepName(step)
			if !ok || !yield(name) {
				return
			}
		}
	}
}

// triggerCovered reports whether a trigger built with only the payload's parts paths reads
// gives reference tr what the whole trigger gives it.
func triggerCovered(tr hcl.Traversal, paths *schema.Paths) bool {
	if len(tr) < 2 {
		return false
	}
	switch name, _ := stepName(tr[1]); name {
	case "name", "type":
		return true
	case "payload":
		return paths.Covers(payloadPath(tr))
	}
	return false
}

// stepName is the attribute name a traversal step reads: its name, or its key when that is a
// known string.
func stepName(step hcl.Traverser) (string, bool) {
	switch s := step.(type) {
	case hcl.TraverseAttr:
		return s.Name, true
	case hcl.TraverseIndex:
		if s.Key.IsKnown() && !s.Key.IsNull() && s.Key.Type() == cty.String {
			return s.Key.AsString(), true
		}
	}
	return "", false
}
