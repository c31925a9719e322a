package lang

import (
	"path/filepath"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/fuscia/fuscia/lang/funcs"
)

// decoder holds the state of decoding one file.
type decoder struct {
	w      *Workflow
	static staticEval
	nodes  *nameSet
	diags  hcl.Diagnostics
	faults *faults

	// bodyErrors counts the errors of loop body nodes decoded so far, so that a loop is not
	// blamed for its body's errors (see decodeNode).
	bodyErrors int

	// fns is the function table of the static evaluations, whose `for` expressions count
	// against one bound for the whole file.
	fns map[string]function.Function
}

// functions returns the decoder's function table, made at the first call.
func (d *decoder) functions() map[string]function.Function {
	if d.fns == nil {
		d.fns = new(funcs.Iterations).Table()
	}
	return d.fns
}

func (d *decoder) add(diags ...*hcl.Diagnostic) { d.diags = appendDiags(d.diags, diags...) }

// diagMark is a position in a decoder's diagnostics (its own and its static evaluator's).
type diagMark struct{ diags, static int }

func (d *decoder) mark() diagMark { return diagMark{len(d.diags), len(d.static.diags)} }

// errorsSince counts the errors reported since m.
func (d *decoder) errorsSince(m diagMark) int {
	n := 0
	for _, ds := range []hcl.Diagnostics{d.diags[m.diags:], d.static.diags[m.static:]} {
		for _, diag := range ds {
			if diag.Severity == hcl.DiagError {
				n++
			}
		}
	}
	return n
}

// decodeFile decodes the body of a parsed file. vars supplies variable values (see Load). The
// nodes it reports errors in, and the node names it rejected, are added to f.
func decodeFile(filename string, body hcl.Body, f *faults, vars func([]*Variable) (map[string]cty.Value, hcl.Diagnostics)) (*Workflow, hcl.Diagnostics) {
	d := &decoder{
		w:      &Workflow{Filename: filename, byAddr: make(map[Addr]*Node), Calls: map[string]*Workflow{}},
		nodes:  newNameSet("node", "Node names are shared by task, switch, join, loop, wait and call blocks, loop bodies included, and must be unique in a file."),
		faults: f,
	}
	content, diags := body.Content(fileSchema)
	d.add(diags...)

	// Variables first: settings may refer to them.
	varNames := newNameSet("variable", "Variable names must be unique in a file.")
	for _, b := range content.Blocks.OfType("variable") {
		if v := d.decodeVariable(b, varNames); v != nil {
			d.w.Variables = append(d.w.Variables, v)
		}
	}
	values, vdiags := vars(d.w.Variables)
	d.add(vdiags...)
	d.w.varValues = varObject(d.w.Variables, values)
	d.static.ctx = &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": d.w.varValues},
		Functions: d.functions(),
	}

	d.decodeWorkflowBlock(filename, content.Blocks.OfType("workflow"))

	secretNames := newNameSet("secret", "Secret names must be unique in a file.")
	for _, b := range content.Blocks.OfType("secret") {
		if s := d.decodeSecret(b, secretNames); s != nil {
			d.w.Secrets = append(d.w.Secrets, s)
		}
	}
	componentNames := newNameSet("component", "Component local names must be unique in a file.")
	for _, b := range content.Blocks.OfType("component") {
		if c := d.decodeComponent(b, componentNames); c != nil {
			d.w.Components = append(d.w.Components, c)
		}
	}
	pluginNames := newNameSet("plugin", "Plugin local names must be unique in a file.")
	for _, b := range content.Blocks.OfType("plugin") {
		if p := d.decodePlugin(b, pluginNames); p != nil {
			d.w.Plugins = append(d.w.Plugins, p)
		}
	}
	triggerNames := newNameSet("trigger", "Trigger names must be unique in a file.")
	for _, b := range content.Blocks.OfType("trigger") {
		if t := d.decodeTrigger(b, triggerNames); t != nil {
			d.w.Triggers = append(d.w.Triggers, t)
		}
	}
	if len(d.w.Triggers) == 0 {
		d.w.Triggers = []*Trigger{{Type: TriggerManual, Name: "default", Implicit: true, DeclRange: d.w.DeclRange}}
	}

	// Nodes in file order, whatever their kind: plan and graph list them that way.
	for _, b := range content.Blocks {
		if kind, ok := parseNodeKind(b.Type); ok {
			d.decodeNode(b, kind, "")
		}
	}
	if len(d.w.Nodes) > MaxNodes {
		d.add(errorf(fileStart(filename), "Too many nodes",
			"The workflow has %d nodes (loop bodies included); the limit is %d. Split it into sub-workflows with `call` blocks.",
			len(d.w.Nodes), MaxNodes))
	}

	outputNames := newNameSet("output", "Output names must be unique in a file.")
	for _, b := range content.Blocks.OfType("output") {
		if o := d.decodeOutput(b, outputNames); o != nil {
			d.w.Outputs = append(d.w.Outputs, o)
		}
	}
	d.add(d.static.diags...)
	return d.w, d.diags
}

// varObject is the value of `var` in expressions: each variable's value, its default, or an
// unknown value of its type when it has neither (validate time).
func varObject(decls []*Variable, values map[string]cty.Value) cty.Value {
	attrs := make(map[string]cty.Value, len(decls))
	for _, v := range decls {
		val, ok := values[v.Name]
		switch {
		case ok:
		case v.HasDefault:
			val = v.Default
		default:
			val = cty.UnknownVal(v.Type)
		}
		if v.Sensitive {
			val = val.Mark(Sensitive)
		}
		attrs[v.Name] = val
	}
	return cty.ObjectVal(attrs)
}

func (d *decoder) decodeWorkflowBlock(filename string, blocks hcl.Blocks) {
	w := d.w
	w.DeclRange = fileStart(filename)
	w.Settings = WorkflowSettings{
		Timeout:     DefaultTimeout,
		MaxParallel: DefaultMaxParallel,
		OnOverlap:   "queue",
		Durability:  "strict",
		Retry:       DefaultRetry,
		Data:        DataLimits{MaxNodeOutput: DefaultMaxNodeOutput, MaxTotal: DefaultMaxTotal, OnExceed: "fail"},
	}
	switch {
	case len(blocks) == 0:
		d.add(errorf(fileStart(filename), "Missing workflow block",
			"Every workflow file needs exactly one `workflow \"NAME\" { … }` block that names it."))
		return
	case len(blocks) > 1:
		for _, b := range blocks[1:] {
			d.add(errorf(b.DefRange, "Duplicate workflow block",
				"A file holds exactly one workflow; the first `workflow` block is at line %d. Put other workflows in their own files.",
				blocks[0].DefRange.Start.Line))
		}
	}
	b := blocks[0]
	w.DeclRange = b.DefRange
	w.Name = b.Labels[0]
	d.add(checkName(w.Name, "workflow name", b.LabelRanges[0]))
	content, diags := b.Body.Content(workflowSchema)
	d.add(diags...)
	s, st := &w.Settings, &d.static
	a := content.Attributes
	if v, ok := st.str(a["description"]); ok {
		s.Description = v
	}
	if v, ok := st.positiveDuration(a["timeout"]); ok {
		s.Timeout = v
	}
	if v, ok := st.positiveDuration(a["max_duration"]); ok {
		s.MaxDuration = v
	}
	if v, ok := st.integer(a["max_parallel"], 1, 10000); ok {
		s.MaxParallel = int(v)
	}
	if v, ok := st.integer(a["max_concurrent_runs"], 1, 1000000); ok {
		s.MaxConcurrentRuns = int(v)
	}
	if v, ok := st.oneOf(a["on_overlap"], "queue", "skip"); ok {
		s.OnOverlap = v
	}
	if v, ok := st.oneOf(a["durability"], "strict", "relaxed"); ok {
		s.Durability = v
	}
	for i, rb := range content.Blocks.OfType("retry") {
		if i > 0 {
			d.add(duplicateBlock(rb, "retry"))
			continue
		}
		if r := d.decodeRetry(rb); r != nil {
			s.Retry = *r
		}
	}
	for i, db := range content.Blocks.OfType("data") {
		if i > 0 {
			d.add(duplicateBlock(db, "data"))
			continue
		}
		dc, diags := db.Body.Content(dataSchema)
		d.add(diags...)
		for _, lim := range []struct {
			name string
			dst  *int64
		}{{"max_node_output", &s.Data.MaxNodeOutput}, {"max_total", &s.Data.MaxTotal}} {
			v, ok := st.size(dc.Attributes[lim.name])
			switch {
			case ok && v == 0:
				// 0 would read as "not set" and leave the default in force.
				d.add(errorf(dc.Attributes[lim.name].Expr.Range(), "Invalid "+lim.name,
					"%s must be more than 0 bytes (\"1KiB\", \"10MiB\"); leave it out for the default.", lim.name))
			case ok:
				*lim.dst = v
			}
		}
		if v, ok := st.oneOf(dc.Attributes["on_exceed"], "fail", "spill"); ok {
			s.Data.OnExceed = v
		}
	}
}

func duplicateBlock(b *hcl.Block, typ string) *hcl.Diagnostic {
	return errorf(b.DefRange, "Duplicate "+typ+" block", "Only one %q block is allowed here.", typ)
}

func (d *decoder) decodeRetry(b *hcl.Block) *RetryPolicy {
	content, diags := b.Body.Content(retrySchema)
	d.add(diags...)
	if diags.HasErrors() {
		return nil
	}
	r := RetryPolicy{Attempts: 1, Backoff: "exponential", InitialDelay: DefaultInitialDelay, MaxDelay: DefaultMaxDelay}
	st, a := &d.static, content.Attributes
	if v, ok := st.integer(a["attempts"], 1, 1000); ok {
		r.Attempts = int(v)
	}
	if v, ok := st.oneOf(a["backoff"], "exponential", "fixed"); ok {
		r.Backoff = v
	}
	initialOK := a["initial_delay"] == nil
	if v, ok := st.duration(a["initial_delay"]); ok {
		r.InitialDelay, initialOK = v, true
	}
	if v, ok := st.duration(a["max_delay"]); ok {
		r.MaxDelay = v
	}
	// Compared with the initial_delay given: one that did not parse is reported already, and
	// the default in its place would make this error about a value nobody wrote.
	if r.MaxDelay < r.InitialDelay && a["max_delay"] != nil && initialOK {
		d.add(errorf(a["max_delay"].Expr.Range(), "Invalid retry delays",
			"max_delay (%s) is shorter than initial_delay (%s); make max_delay at least as long.", r.MaxDelay, r.InitialDelay))
	}
	return &r
}

func (d *decoder) decodeVariable(b *hcl.Block, names *nameSet) *Variable {
	v := &Variable{Name: b.Labels[0], DeclRange: b.DefRange, Type: cty.DynamicPseudoType}
	d.add(checkName(v.Name, "variable name", b.LabelRanges[0]))
	d.add(names.add(v.Name, b.DefRange))
	content, diags := b.Body.Content(variableSchema)
	d.add(diags...)
	// Variables cannot refer to each other, so their attributes are evaluated without any variables.
	st := &staticEval{ctx: &hcl.EvalContext{Functions: d.functions()}}
	a := content.Attributes
	if attr := a["type"]; attr != nil {
		ty, tdiags := typeexpr.TypeConstraint(attr.Expr)
		d.add(tdiags...)
		if !tdiags.HasErrors() {
			v.Type = ty
		}
	}
	if s, ok := st.str(a["description"]); ok {
		v.Description = s
	}
	if s, ok := st.boolean(a["sensitive"]); ok {
		v.Sensitive = s
	}
	if attr := a["default"]; attr != nil {
		val, vdiags := attr.Expr.Value(nil)
		d.add(literalOnly(vdiags, "A variable's default")...)
		if !vdiags.HasErrors() {
			cv, err := convertValue(val, v.Type)
			if err != nil {
				d.add(errorf(attr.Expr.Range(), "Invalid default value for variable",
					"The default of variable %q does not match its type %s: %s.", v.Name, typeexpr.TypeString(v.Type), err))
			} else {
				v.Default, v.HasDefault = cv, true
			}
		}
	}
	d.add(st.diags...)
	return v
}

func (d *decoder) decodeSecret(b *hcl.Block, names *nameSet) *Secret {
	s := &Secret{Name: b.Labels[0], DeclRange: b.DefRange}
	d.add(checkName(s.Name, "secret name", b.LabelRanges[0]))
	d.add(names.add(s.Name, b.DefRange))
	content, diags := b.Body.Content(secretSchema)
	d.add(diags...)
	st, a := &d.static, content.Attributes
	if v, ok := st.str(a["description"]); ok {
		s.Description = v
	}
	if v, ok := st.str(a["env"]); ok {
		s.Env = v
	}
	if v, ok := st.str(a["file"]); ok {
		s.File = v
	}
	switch {
	case a["env"] != nil && a["file"] != nil:
		d.add(errorf(b.DefRange, "Conflicting secret sources",
			"Secret %q sets both env and file; set exactly one.", s.Name))
	case a["env"] == nil && a["file"] == nil:
		d.add(errorf(b.DefRange, "Missing secret source",
			"Secret %q needs `env = \"NAME\"` or `file = \"/path\"` to say where its value comes from.", s.Name))
	}
	return s
}

func (d *decoder) decodeComponent(b *hcl.Block, names *nameSet) *Component {
	c := &Component{Name: b.Labels[0], DeclRange: b.DefRange}
	d.add(checkName(c.Name, "component name", b.LabelRanges[0]))
	d.add(names.add(c.Name, b.DefRange))
	content, diags := b.Body.Content(componentSchema)
	d.add(diags...)
	st, a := &d.static, content.Attributes
	if v, ok := st.str(a["source"]); ok {
		c.Source = v
		if !validComponentSource(v) {
			d.add(errorf(a["source"].Expr.Range(), "Invalid component source",
				"A component source is \"org/name\" (lowercase letters, digits, \"_\" and \"-\"); got %q.", v))
		}
	}
	// Without a usable source or version the block cannot be resolved (an error said why).
	c.Invalid = !validComponentSource(c.Source)
	if attr := a["version"]; attr != nil {
		// A version that is not known yet (a variable, at validate) constrains nothing.
		before := len(st.diags)
		v, ok := st.str(attr)
		c.Version = v
		switch {
		case ok:
			if diag := checkVersionConstraint(v, attr.Expr.Range()); diag != nil {
				d.add(diag)
				c.Invalid = true
			}
		case st.diags[before:].HasErrors():
			c.Invalid = true
		}
	}
	if attr := a["config"]; attr != nil {
		c.Config = attr.Expr
	}
	if v, ok := st.strList(a["allowed_hosts"]); ok {
		c.AllowedHosts, c.AllowedHostsRange = v, a["allowed_hosts"].Expr.Range()
	}
	if v, ok := st.strList(a["allowed_paths"]); ok {
		// Cleaned: the guest sees each at the path given, and `/a//b/./c` is not a path a
		// program opens.
		for i, p := range v {
			v[i] = filepath.Clean(p)
		}
		c.AllowedPaths, c.AllowedPathsRange = v, a["allowed_paths"].Expr.Range()
	}
	if v, ok := st.size(a["max_memory"]); ok {
		c.MaxMemory = v
	}
	if v, ok := st.integer(a["max_fuel"], 1, 1<<62); ok {
		c.MaxFuel = uint64(v)
	}
	return c
}

func (d *decoder) decodePlugin(b *hcl.Block, names *nameSet) *Plugin {
	p := &Plugin{Name: b.Labels[0], DeclRange: b.DefRange}
	d.add(checkName(p.Name, "plugin name", b.LabelRanges[0]))
	d.add(names.add(p.Name, b.DefRange))
	content, diags := b.Body.Content(pluginSchema)
	d.add(diags...)
	st, a := &d.static, content.Attributes
	if v, ok := st.str(a["source"]); ok {
		p.Source = v
		if !validName(v) {
			d.add(errorf(a["source"].Expr.Range(), "Invalid plugin source",
				"A plugin source is the plugin's name, as in its file name fuscia-plugin-<name>; got %q.", v))
		}
	}
	// Without a usable source or version the block cannot be resolved (an error said why).
	p.Invalid = !validName(p.Source)
	if attr := a["version"]; attr != nil {
		// A version that is not known yet (a variable, at validate) constrains nothing.
		before := len(st.diags)
		v, ok := st.str(attr)
		p.Version, p.VersionRange = v, attr.Expr.Range()
		switch {
		case ok:
			if diag := checkVersionConstraint(v, attr.Expr.Range()); diag != nil {
				d.add(diag)
				p.Invalid = true
			}
		case st.diags[before:].HasErrors():
			p.Invalid = true
		}
	}
	if attr := a["config"]; attr != nil {
		p.Config = attr.Expr
	}
	return p
}

func validComponentSource(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return validName(s[:i]) && validName(s[i+1:])
		}
	}
	return false
}

func (d *decoder) decodeOutput(b *hcl.Block, names *nameSet) *Output {
	o := &Output{Name: b.Labels[0], DeclRange: b.DefRange}
	d.add(checkName(o.Name, "output name", b.LabelRanges[0]))
	d.add(names.add(o.Name, b.DefRange))
	content, diags := b.Body.Content(outputSchema)
	d.add(diags...)
	st, a := &d.static, content.Attributes
	if v, ok := st.str(a["description"]); ok {
		o.Description = v
	}
	if v, ok := st.boolean(a["sensitive"]); ok {
		o.Sensitive = v
	}
	if attr := a["value"]; attr != nil {
		o.Value = attr.Expr
	} else {
		o.Value = hcl.StaticExpr(cty.NullVal(cty.DynamicPseudoType), b.DefRange)
	}
	return o
}

// parseUses parses `uses = builtin.NAME | component.LOCAL.TASK | plugin.LOCAL.TASK`.
func parseUses(expr hcl.Expression, builtins []string) (*Uses, *hcl.Diagnostic) {
	bad := func(detail string) (*Uses, *hcl.Diagnostic) {
		return nil, errorf(expr.Range(), "Invalid uses", "%s", detail)
	}
	const forms = "`uses` is a reference: builtin.NAME, component.LOCAL.TASK or plugin.LOCAL.TASK (without quotes)."
	if _, isTemplate := expr.(*hclsyntax.TemplateExpr); isTemplate {
		return bad(forms)
	}
	tr, diags := hcl.AbsTraversalForExpr(expr)
	if diags.HasErrors() {
		return bad(forms)
	}
	steps := make([]string, 0, len(tr))
	steps = append(steps, tr.RootName())
	for _, s := range tr[1:] {
		a, ok := s.(hcl.TraverseAttr)
		if !ok {
			return bad(forms)
		}
		steps = append(steps, a.Name)
	}
	u := &Uses{Range: expr.Range()}
	switch steps[0] {
	case "builtin":
		if len(steps) != 2 {
			return bad(forms)
		}
		u.Kind, u.Name = UsesBuiltin, steps[1]
		for _, b := range builtins {
			if b == u.Name {
				return u, nil
			}
		}
		return bad("There is no builtin task named " + quote(u.Name) + "; the builtins are " + quoteList(prefixAll("builtin.", builtins)) + ".")
	case "component", "plugin":
		if len(steps) != 3 {
			return bad(forms)
		}
		u.Kind, u.Local, u.Name = UsesKind(steps[0]), steps[1], steps[2]
		return u, nil
	}
	return bad(forms)
}

func prefixAll(prefix string, items []string) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = prefix + s
	}
	return out
}

func quote(s string) string { return "\"" + s + "\"" }
