package query

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
	"github.com/fuscia/fuscia/lang/funcs"
)

// schemas are lang's decode schemas (lang.BlockSchemas); read-only.
var schemas = sync.OnceValue(lang.BlockSchemas)

// funcDocs are the functions' docs, by name; read-only.
var funcDocs = sync.OnceValue(func() map[string]funcs.Doc {
	out := map[string]funcs.Doc{}
	for _, d := range funcs.Docs() {
		out[d.Name] = d
	}
	return out
})

// signature writes a function's signature as docs/reference/functions.md does.
func signature(d funcs.Doc) string {
	params := make([]string, 0, len(d.Params)+1)
	for _, p := range d.Params {
		params = append(params, p.Name+" "+p.Type)
	}
	if d.VarParam != nil {
		params = append(params, d.VarParam.Name+" ..."+d.VarParam.Type)
	}
	return fmt.Sprintf("%s(%s) → %s", d.Name, strings.Join(params, ", "), d.Returns)
}

func funcMarkdown(d funcs.Doc) string {
	return fmt.Sprintf("```\n%s\n```\n\n%s\n\nExample: `%s` → `%s`", signature(d), d.Summary, d.Example, d.Result)
}

// Complete returns the completion items at offset, sorted by label: the block types and
// attribute names a block accepts where an attribute starts; the trigger types in a trigger's
// first label; the properties of a task's input schema in its `inputs` object; and in an
// expression, the roots (var, task, …), the names after them (the file's nodes, variables,
// secrets, components and plugins, the installed tasks), the fields of an output whose shape is
// known, and the functions. Items carry the range of the word they replace.
func Complete(d Doc, offset int, env Env) []Completion {
	if offset < 0 || offset > len(d.Src) || len(d.Src) > lang.MaxFileSize {
		return nil
	}
	a := d.lightAnalysis()
	from := a.safeStart(offset)
	c := cursorAt(d.Src, d.Filename, from, offset, a.pos(from))
	var items []Completion
	switch c.kind {
	case ctxBody:
		items = a.completeBody(c)
	case ctxLabel:
		items = a.completeLabel(c)
	case ctxObjectKey:
		items = a.completeKey(c, env)
	case ctxExpr:
		items = a.completeExpr(c, env)
	}
	rng := a.rng(c.start, offset)
	out := items[:0]
	seen := map[string]bool{}
	for _, it := range items {
		if !strings.HasPrefix(it.Label, c.prefix) || seen[it.Label] {
			continue
		}
		seen[it.Label] = true
		it.Range = rng
		out = append(out, it)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Label < out[j].Label })
	return out
}

// safeStart returns where to start reading the tokens before off: the start of the last
// top-level block that starts at or before it, where no bracket or string is open.
func (a *analysis) safeStart(off int) int {
	i := sort.Search(len(a.tops), func(i int) bool { return a.tops[i].start > off })
	if i == 0 {
		return 0
	}
	return a.tops[i-1].start
}

// bodyKey returns the key (of lang.BlockSchemas or testBlocks) of the innermost block of c.
func (a *analysis) bodyKey(blocks []blockFrame) string {
	if a.test {
		key := ""
		for _, b := range blocks {
			key = testBlockKey(key, b.typ, b.labels)
		}
		return key
	}
	if len(blocks) == 0 {
		return ""
	}
	b := blocks[len(blocks)-1]
	return blockKey(b.typ, b.labels)
}

// completeBody offers the attributes and blocks the enclosing block accepts.
func (a *analysis) completeBody(c cursor) []Completion {
	key := a.bodyKey(c.blocks)
	var items []Completion
	if a.test {
		tb, ok := testBlocks[key]
		if !ok {
			return nil
		}
		for name, d := range tb.attrs {
			items = append(items, Completion{Label: name, Kind: KindAttribute, Detail: d.typ, Documentation: attrMarkdown(name, d)})
		}
		for typ, k := range testBlockTypes(key) {
			items = append(items, Completion{Label: typ, Kind: KindBlock, Detail: "block", Documentation: testBlocks[k].doc})
		}
		return items
	}
	s := schemas()[key]
	if s == nil {
		return nil
	}
	docs := blockDocs()[key]
	for _, at := range s.Attributes {
		d := docs.attrs[at.Name]
		items = append(items, Completion{Label: at.Name, Kind: KindAttribute, Detail: d.typ, Documentation: attrMarkdown(at.Name, d)})
	}
	for _, bs := range s.Blocks {
		if key == "loop" && (bs.Type == "loop" || bs.Type == "wait" || bs.Type == "call") {
			continue // accepted only to be rejected with a better message
		}
		detail := bs.Type
		for _, l := range bs.LabelNames {
			detail += " \"" + strings.ToUpper(l) + "\""
		}
		items = append(items, Completion{Label: bs.Type, Kind: KindBlock, Detail: detail + " { … }", Documentation: blockDocs()[bs.Type].doc})
	}
	return items
}

// completeLabel offers the trigger types in a trigger's first label.
func (a *analysis) completeLabel(c cursor) []Completion {
	b := c.blocks[len(c.blocks)-1]
	if a.test || b.typ != "trigger" || c.label != 0 || len(c.blocks) != 1 {
		return nil
	}
	var items []Completion
	for _, t := range []string{lang.TriggerManual, lang.TriggerSchedule, lang.TriggerWebhook, lang.TriggerPoll} {
		items = append(items, Completion{Label: t, Kind: KindKeyword, Detail: "trigger type", Documentation: blockDocs()["trigger."+t].doc})
	}
	return items
}

// enclosingNode returns the declaration of the innermost node block in blocks, and whether
// that node is the innermost block.
func (a *analysis) enclosingNode(blocks []blockFrame) (*decl, bool) {
	for i := len(blocks) - 1; i >= 0; i-- {
		b := blocks[i]
		if isNodeKind(b.typ) && len(b.labels) > 0 {
			if d := a.byName[spaceNode][b.labels[0]]; d != nil && string(d.kind) == b.typ {
				return d, i == len(blocks)-1
			}
			return nil, false
		}
	}
	return nil, false
}

// completeKey offers the properties of a task's input schema in its `inputs` object.
func (a *analysis) completeKey(c cursor, env Env) []Completion {
	if a.test || c.attr != "inputs" {
		return nil
	}
	n, innermost := a.enclosingNode(c.blocks)
	if n == nil || !innermost || n.kind != lang.KindTask || a.bodyOf(n) == nil {
		return nil
	}
	var props []field
	t := a.usesTarget(a.bodyOf(n), env, false)
	switch {
	case len(t.steps) == 2 && t.steps[0] == "builtin":
		props = schemaProperties(builtinInputSchema(t.steps[1]), c.keys)
	case t.info != nil:
		props = schemaProperties(t.info.InputSchema, c.keys)
	}
	var items []Completion
	for _, p := range props {
		items = append(items, Completion{Label: p.name, Kind: KindField, Detail: p.shape.typeString(), Documentation: p.shape.doc})
	}
	return items
}

// nodeExprAttrs are the attributes, by block type, that are node expressions: they may read
// variables, secrets, the trigger and node outputs (docs/reference/language.md, "What each
// attribute may read"). The other attributes of node blocks are settings.
var nodeExprAttrs = map[string][]string{
	"task":     {"inputs", "when", "for_each"},
	"switch":   {"when"},
	"join":     {"when"},
	"loop":     {"when", "for_each", "output"},
	"wait":     {"when"},
	"call":     {"when", "inputs"},
	"case":     {"when"},
	"approval": {"message"},
	"output":   {"value"},
}

var rootDocs = map[string]string{
	"var":       "A variable: `var.NAME`.",
	"secret":    "A secret (sensitive): `secret.NAME`.",
	"trigger":   "The trigger that started the run: `trigger.payload`, `trigger.name`, `trigger.type`.",
	"each":      "The current item: `each.value`, `each.key`, `each.index`.",
	"task":      "A task's output: `task.NAME.output`.",
	"switch":    "A switch's output: `switch.NAME.output.selected`; in `after`, a branch: `switch.NAME.KEY`.",
	"join":      "A join's output: `join.NAME.output`.",
	"loop":      "A loop's output: `loop.NAME.output`, one entry per iteration.",
	"wait":      "A wait's output: `wait.NAME.output`.",
	"call":      "A call's output: `call.NAME.output`, the called workflow's outputs.",
	"builtin":   "A builtin task: `builtin.NAME`.",
	"component": "A task or trigger of a component block: `component.LOCAL.TASK`.",
	"plugin":    "A task or trigger of a plugin block: `plugin.LOCAL.TASK`.",
	"event":     "The polled event's payload.",
	// test files
	"input":   "The mocked call's input (for `mock_http`: `{ method, url, headers, body }`).",
	"attempt": "The attempt number, from 1.",
	"output":  "The workflow's outputs: `output.NAME`.",
	"status":  "The run's status.",
	"node":    "A node's result: `node.KIND.NAME.{status, attempts, input, output, error, instances, iterations}`.",
	"payload": "The run's trigger payload.",
}

var nodeKinds = []string{"task", "switch", "join", "loop", "wait", "call"}

// exprRoots returns the root words an expression may start with where the cursor is, and
// whether functions may be called there.
func (a *analysis) exprRoots(c cursor) (roots []string, fns bool) {
	if a.test {
		return []string{"var", "input", "attempt", "output", "status", "node", "payload", "task", "wait"}, true
	}
	if len(c.blocks) == 0 {
		return nil, false
	}
	inner := c.blocks[len(c.blocks)-1]
	switch {
	case c.attr == "uses" && inner.typ == "trigger":
		return []string{"component", "plugin"}, false
	case c.attr == "uses":
		return []string{"builtin", "component", "plugin"}, false
	case c.attr == "after" || c.attr == "depends_on":
		return nodeKinds, false
	case c.attr == "dedup_key":
		return []string{"event", "var"}, true
	case inner.typ == "hmac_sha256" && c.attr == "secret":
		return []string{"secret"}, false
	case c.attr == "config" && (inner.typ == "component" || inner.typ == "plugin"):
		return []string{"var", "secret"}, true
	case inner.typ == "variable":
		return nil, true
	case c.attr == "pool" || (inner.typ == "call" && c.attr == "workflow"):
		return nil, false
	}
	if slices.Contains(nodeExprAttrs[inner.typ], c.attr) {
		roots = append([]string{"var", "secret", "trigger"}, nodeKinds...)
		if a.eachAvailable(c) {
			roots = append(roots, "each")
		}
		return roots, true
	}
	return []string{"var"}, true
}

// eachAvailable reports whether `each` exists where the cursor is: in a loop's body and
// output, and in the inputs and when of a task with for_each.
func (a *analysis) eachAvailable(c cursor) bool {
	n, innermost := a.enclosingNode(c.blocks)
	if n == nil {
		return false
	}
	if n.loop != nil {
		return true
	}
	switch n.kind {
	case lang.KindLoop:
		return innermost && c.attr == "output"
	case lang.KindTask:
		body := a.bodyOf(n)
		return body != nil && body.Attributes["for_each"] != nil && c.attr != "for_each"
	}
	return false
}

// completeExpr offers what may come next in the reference being typed.
func (a *analysis) completeExpr(c cursor, env Env) []Completion {
	roots, fns := a.exprRoots(c)
	if c.root == "" {
		var items []Completion
		for _, r := range roots {
			items = append(items, Completion{Label: r, Kind: KindKeyword, Documentation: rootDocs[r]})
		}
		if fns {
			for _, d := range funcDocs() {
				items = append(items, Completion{Label: d.Name, Kind: KindFunction, Detail: signature(d), Documentation: d.Summary})
			}
		}
		if len(c.blocks) > 0 && c.blocks[len(c.blocks)-1].typ == "variable" && c.attr == "type" {
			for _, t := range []string{"string", "number", "bool", "any", "list", "set", "map", "tuple", "object", "optional"} {
				items = append(items, Completion{Label: t, Kind: KindKeyword, Detail: "type"})
			}
		}
		return items
	}
	if !slices.Contains(roots, c.root) || a.test {
		return nil
	}
	from, innermost := a.enclosingNode(c.blocks)
	switch c.root {
	case "var":
		return a.completeVar(c)
	case "secret":
		if len(c.path) > 0 {
			return nil
		}
		var items []Completion
		for _, d := range a.declsIn(spaceSecret) {
			items = append(items, Completion{Label: d.name, Kind: KindSecret, Detail: "string (sensitive)", Documentation: a.secretMarkdown(d)})
		}
		return items
	case "each":
		if len(c.path) > 0 {
			return nil
		}
		return fieldItems(eachShape.fields)
	case "trigger":
		switch {
		case len(c.path) == 0:
			return fieldItems(triggerShape.fields)
		case c.path[0].name == "payload" && !c.path[0].index:
			if s := a.payloadShape(env).at(c.path[1:]); s != nil {
				return fieldItems(s.fields)
			}
		}
		return nil
	case "builtin":
		if len(c.path) > 0 {
			return nil
		}
		var items []Completion
		for _, name := range builtin.Names() {
			items = append(items, Completion{Label: name, Kind: KindModule, Detail: "builtin." + name, Documentation: builtinMarkdown(name)})
		}
		return items
	case "component", "plugin":
		sp := space(c.root)
		switch len(c.path) {
		case 0:
			var items []Completion
			for _, d := range a.declsIn(sp) {
				detail := c.root
				if src, ok := staticString(a.bodyOf(d), "source"); ok {
					detail += " " + src
				}
				items = append(items, Completion{Label: d.name, Kind: KindModule, Detail: detail})
			}
			return items
		case 1:
			p, _ := a.pkg(sp, c.path[0].name, env)
			trigger := len(c.blocks) > 0 && c.blocks[len(c.blocks)-1].typ == "trigger"
			kind := "task"
			if trigger {
				kind = "trigger"
			}
			var items []Completion
			for _, t := range p.entries(trigger) {
				items = append(items, Completion{Label: t.Name, Kind: KindModule, Detail: kind + " of " + p.Source, Documentation: t.Description})
			}
			return items
		}
		return nil
	}
	// A node kind.
	kind := lang.NodeKind(c.root)
	inLoopOutput := innermost && from != nil && from.kind == lang.KindLoop && c.attr == "output"
	if len(c.path) == 0 {
		var items []Completion
		for _, d := range a.visibleNodes(kind, from, inLoopOutput) {
			items = append(items, Completion{Label: d.name, Kind: KindNode, Detail: a.nodeDetail(d)})
		}
		return items
	}
	target := a.byName[spaceNode][c.path[0].name]
	if target == nil || target.kind != kind {
		return nil
	}
	if c.attr == "after" || c.attr == "depends_on" {
		if len(c.path) != 1 {
			return nil
		}
		switch kind {
		case lang.KindSwitch:
			var items []Completion
			if body := a.bodyOf(target); body != nil {
				for _, b := range body.Blocks {
					if (b.Type == "case" || b.Type == "default") && len(b.Labels) == 1 {
						items = append(items, Completion{Label: b.Labels[0], Kind: KindField, Detail: "branch: " + b.Type})
					}
				}
			}
			return items
		case lang.KindTask:
			return []Completion{{Label: "branch", Kind: KindKeyword, Documentation: "`task.NAME.branch.KEY`: run only when the task answered with branch KEY."}}
		}
		return nil
	}
	if len(c.path) == 1 {
		return []Completion{{Label: "output", Kind: KindField, Detail: a.shapeOf(target, env).typeString(), Documentation: "The node's output."}}
	}
	if c.path[1].name != "output" || c.path[1].index {
		return nil
	}
	s := a.shapeOf(target, env).at(c.path[2:])
	if s == nil {
		return nil
	}
	return fieldItems(s.fields)
}

// shapeOf is a node's output shape; nil when nothing is known (a declaration read from
// broken text).
func (a *analysis) shapeOf(d *decl, env Env) *shape {
	if a.bodyOf(d) == nil {
		return anyShape
	}
	return a.nodeShape(d, env)
}

func fieldItems(fields []field) []Completion {
	items := make([]Completion, 0, len(fields))
	for _, f := range fields {
		items = append(items, Completion{Label: f.name, Kind: KindField, Detail: f.shape.typeString(), Documentation: f.shape.doc})
	}
	return items
}

// declsIn returns the declarations of a namespace, in file order.
func (a *analysis) declsIn(sp space) []*decl {
	var out []*decl
	for _, d := range a.decls {
		if d.space == sp && a.byName[sp][d.name] == d {
			out = append(out, d)
		}
	}
	return out
}

func (a *analysis) completeVar(c cursor) []Completion {
	if len(c.path) == 0 {
		var items []Completion
		for _, d := range a.declsIn(spaceVariable) {
			items = append(items, Completion{Label: d.name, Kind: KindVariable, Detail: a.varType(d), Documentation: a.varMarkdown(d)})
		}
		return items
	}
	d := a.byName[spaceVariable][c.path[0].name]
	if d == nil {
		return nil
	}
	s := a.varShape(d).at(c.path[1:])
	if s == nil {
		return nil
	}
	return fieldItems(s.fields)
}

// varType is a variable's type constraint as written; "any" without one.
func (a *analysis) varType(d *decl) string {
	body := a.bodyOf(d)
	if body == nil {
		return "any"
	}
	if attr := body.Attributes["type"]; attr != nil {
		return strings.Join(strings.Fields(a.text(attr.Expr.Range())), " ")
	}
	return "any"
}

// varShape is a variable's shape from its type constraint.
func (a *analysis) varShape(d *decl) *shape {
	body := a.bodyOf(d)
	if body == nil {
		return nil
	}
	attr := body.Attributes["type"]
	if attr == nil {
		return nil
	}
	t, _, diags := typeexpr.TypeConstraintWithDefaults(attr.Expr)
	if diags.HasErrors() {
		return nil
	}
	return ctyShape(t, 0)
}

func (a *analysis) varMarkdown(d *decl) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**variable** `%s`: %s", d.name, a.varType(d))
	if body := a.bodyOf(d); body != nil {
		if desc, ok := staticString(body, "description"); ok && desc != "" {
			b.WriteString("\n\n" + desc)
		}
		if attr := body.Attributes["default"]; attr != nil {
			fmt.Fprintf(&b, "\n\nDefault: `%s`", a.text(attr.Expr.Range()))
		} else {
			b.WriteString("\n\nRequired: no default.")
		}
		if attr := body.Attributes["sensitive"]; attr != nil && a.text(attr.Expr.Range()) == "true" {
			b.WriteString(" Sensitive.")
		}
	}
	return b.String()
}

func (a *analysis) secretMarkdown(d *decl) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**secret** `%s`: string (sensitive)", d.name)
	if body := a.bodyOf(d); body != nil {
		if desc, ok := staticString(body, "description"); ok && desc != "" {
			b.WriteString("\n\n" + desc)
		}
		if env, ok := staticString(body, "env"); ok {
			fmt.Fprintf(&b, "\n\nRead from the environment variable `%s`.", env)
		}
		if file, ok := staticString(body, "file"); ok {
			fmt.Fprintf(&b, "\n\nRead from the file `%s`.", file)
		}
	}
	return b.String()
}

func builtinMarkdown(name string) string {
	s := "**builtin." + name + "**"
	if raw := builtinInputSchema(name); raw != nil {
		if d := schemaDescription(raw); d != "" {
			s += "\n\n" + d
		}
	}
	return s
}

var eachShape = object("The current item.",
	field{"value", prim("any", "The element (list or set), or the value (map or object).")},
	field{"key", prim("any", "The position from 0 (list or set), or the key (map or object).")},
	field{"index", prim("number", "The position, from 0 (in key order for a map).")},
)

var triggerShape = object("The trigger that started the run.",
	field{"payload", prim("any", "The payload of the trigger that started the run; `{}` when there is none.")},
	field{"name", prim("string", "The name of the trigger that started the run.")},
	field{"type", prim("string", "The type of the trigger that started the run: manual, schedule, webhook, poll (or call, for a sub-workflow).")},
)

// payloadShapes are the payloads of the trigger types that have a fixed one.
var payloadShapes = map[string]*shape{
	lang.TriggerSchedule: object("A schedule's payload.",
		field{"scheduled_at", prim("string", "The occurrence's time (RFC 3339, UTC).")},
		field{"fired_at", prim("string", "The actual firing time (RFC 3339, UTC).")},
		field{"timezone", prim("string", "The schedule's time zone.")},
	),
	lang.TriggerWebhook: object("A webhook's payload.",
		field{"method", prim("string", "The request method.")},
		field{"path", prim("string", "The request path.")},
		field{"query", &shape{typ: "map", elem: prim("string", ""), doc: "Each query parameter's values joined with `\", \"`."}},
		field{"headers", &shape{typ: "map", elem: prim("string", ""), doc: "Each header's values joined with `\", \"`, by canonical name."}},
		field{"body", prim("any", "The parsed JSON when the media type is JSON, else the text.")},
		field{"body_base64", prim("string", "The body in standard Base64 when it is not UTF-8 (body is then null).")},
	),
}

// payloadShape is trigger.payload's shape when the file says what it is: every trigger gives
// the same fixed payload (a webhook's, a schedule's), or the file has one trigger and it runs
// a component or plugin trigger whose payload schema env knows. nil otherwise.
func (a *analysis) payloadShape(env Env) *shape {
	trigs := a.declsIn(spaceTrigger)
	if len(trigs) == 1 {
		if body := a.bodyOf(trigs[0]); body != nil && body.Attributes["uses"] != nil {
			if t := a.usesTarget(body, env, true); t.info != nil {
				return jsonShape(t.info.OutputSchema)
			}
			return nil
		}
	}
	var typ string
	for _, d := range trigs {
		b := a.blockOf(d)
		if b == nil || len(b.Labels) < 2 || b.Body.Attributes["uses"] != nil {
			return nil
		}
		t := b.Labels[0]
		if typ != "" && t != typ {
			return nil
		}
		typ = t
	}
	return payloadShapes[typ]
}

// exprsAt returns the expressions within e that contain off, outermost first.
func exprsAt(e hclsyntax.Expression, off int) []hclsyntax.Node {
	var out []hclsyntax.Node
	_ = hclsyntax.VisitAll(e, func(n hclsyntax.Node) hcl.Diagnostics {
		if contains(n.Range(), off) {
			out = append(out, n)
		}
		return nil
	})
	return out
}
