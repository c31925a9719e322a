package fsctest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/funcs"
	"github.com/fuscia/fuscia/lang/testfile"
)

// maxValueText bounds a value shown under a failed assertion.
const maxValueText = 300

func nilValue() cty.Value { return cty.NilVal }

// check compares the ended run with what the run block expects: its status, its expected
// failures, then each assertion.
func (t *tester) check(env *runEnv, w *lang.Workflow, rb *testfile.Run, res *journal.Execution) []Failure {
	var fails []Failure
	want := rb.ExpectStatus
	if want == "" {
		want = journal.StatusSucceeded
		if len(rb.ExpectFailures) > 0 {
			want = journal.StatusFailed
		}
	}
	if res.Status != want {
		fails = append(fails, Failure{
			Summary: "Unexpected run status",
			Detail:  fmt.Sprintf("The run ended %s; expected %s.%s", res.Status, want, whyEnded(res)),
			Range:   statusRange(rb),
		})
	}
	for _, x := range rb.ExpectFailures {
		n := res.Nodes[x.Addr]
		got := "without running"
		if n != nil {
			got = n.Status
		}
		if n == nil || n.Status != journal.StatusFailed {
			fails = append(fails, Failure{
				Summary: "Expected failure did not happen",
				Detail:  fmt.Sprintf("%s ended %s; expect_failures says it fails.", x.Addr, got),
				Range:   x.Range,
			})
		}
	}
	if len(rb.Asserts) == 0 {
		return fails
	}
	ectx, err := t.assertContext(env, w, res, referencedNodes(rb.Asserts))
	if err != nil {
		return append(fails, Failure{Summary: "Assertions cannot be evaluated",
			Detail: fmt.Sprintf("The run's record cannot be read as values: %v.", err), Range: rb.DeclRange})
	}
	for _, a := range rb.Asserts {
		if f := t.evalAssert(a, ectx); f != nil {
			fails = append(fails, *f)
		}
	}
	return fails
}

// statusRange is where the expected status was written, or the run block.
func statusRange(rb *testfile.Run) hcl.Range {
	if rb.ExpectStatusRange.Filename != "" {
		return rb.ExpectStatusRange
	}
	return rb.DeclRange
}

// whyEnded is the run's error and its failed nodes, to follow an unexpected status.
func whyEnded(res *journal.Execution) string {
	var b strings.Builder
	if res.Error != nil {
		fmt.Fprintf(&b, " The run's error: %s.", strings.TrimSuffix(res.Error.Message, "."))
	}
	var failed []string
	for addr, n := range res.Nodes {
		if n.Status == journal.StatusFailed && n.Error != nil {
			failed = append(failed, fmt.Sprintf("%s (%s: %s)", addr, n.Error.Kind, n.Error.Message))
		}
	}
	sort.Strings(failed)
	if len(failed) > 0 {
		fmt.Fprintf(&b, " Failed: %s.", strings.Join(failed, "; "))
	}
	return b.String()
}

// evalAssert evaluates one assertion; nil when it holds.
func (t *tester) evalAssert(a *testfile.Assert, ectx *hcl.EvalContext) *Failure {
	rng := a.Condition.Range()
	f := &Failure{Expr: t.text(rng), Range: rng}
	v, diags := a.Condition.Value(ectx)
	if diags.HasErrors() {
		f.Summary = "Assertion cannot be evaluated"
		f.Detail = diagText(diags)
		f.Values = t.values(a.Condition, ectx)
		return f
	}
	v, _ = v.UnmarkDeep()
	if !v.IsKnown() || v.IsNull() || v.Type() != cty.Bool {
		f.Summary = "Assertion is not a condition"
		f.Detail = fmt.Sprintf("The condition must be true or false; it is %s.", renderValue(v))
		return f
	}
	if v.True() {
		return nil
	}
	f.Summary = "Assertion failed"
	f.Detail = "The condition is false."
	if a.ErrorMessage != nil {
		m, mdiags := a.ErrorMessage.Value(ectx)
		if m, _ = m.Unmark(); !mdiags.HasErrors() && m.Type() == cty.String && m.IsKnown() && !m.IsNull() {
			f.Detail = m.AsString()
		}
	}
	f.Values = t.values(a.Condition, ectx)
	return f
}

// values are the condition's references and what they are, in source order, once each.
func (t *tester) values(expr hcl.Expression, ectx *hcl.EvalContext) []ExprValue {
	var out []ExprValue
	seen := map[string]bool{}
	for _, tr := range expr.Variables() {
		text := t.text(tr.SourceRange())
		if text == "" || seen[text] {
			continue
		}
		seen[text] = true
		v, diags := tr.TraverseAbs(ectx)
		if diags.HasErrors() {
			out = append(out, ExprValue{Expr: text, Value: "(" + strings.TrimSuffix(diagText(diags), ".") + ")"})
			continue
		}
		out = append(out, ExprValue{Expr: text, Value: renderValue(v)})
	}
	return out
}

func diagText(diags hcl.Diagnostics) string {
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			if d.Detail != "" {
				return d.Summary + ": " + d.Detail
			}
			return d.Summary
		}
	}
	return diags.Error()
}

// renderValue shows a value as HCL would write it, cut to maxValueText.
func renderValue(v cty.Value) string {
	if v == cty.NilVal {
		return "null"
	}
	v, _ = v.UnmarkDeep()
	if !v.IsWhollyKnown() {
		return "(known after the run)"
	}
	// hclwrite writes objects over several lines; the renderers indent them.
	s := strings.TrimSpace(string(hclwrite.Format(hclwrite.TokensForValue(v).Bytes())))
	if len(s) > maxValueText {
		s = s[:maxValueText] + "…"
	}
	return s
}

// text is the source text of rng, from the test file.
func (t *tester) text(rng hcl.Range) string {
	src := t.sourceBytes(rng.Filename)
	if rng.Start.Byte < 0 || rng.End.Byte > len(src) || rng.Start.Byte > rng.End.Byte {
		return ""
	}
	return string(src[rng.Start.Byte:rng.End.Byte])
}

// assertContext is the scope of assertions: output, status, node, var, payload and the
// functions.
func (t *tester) assertContext(env *runEnv, w *lang.Workflow, res *journal.Execution, refs nodeRefs) (*hcl.EvalContext, error) {
	doc := map[string]any{
		"status":  res.Status,
		"output":  rawOr(res.Outputs, "{}"),
		"payload": rawOr(res.Trigger.Payload, "{}"),
	}
	kinds := map[string]map[string]any{}
	for addr, n := range res.Nodes {
		kind, name, ok := strings.Cut(addr, ".")
		if !ok || strings.Contains(name, "/") {
			continue // only top-level nodes
		}
		if kinds[kind] == nil {
			kinds[kind] = map[string]any{}
		}
		if !refs.all && !refs.kinds[kind] && !refs.nodes[addr] {
			// Not read by any assertion: present, so that references to it resolve, but
			// without the cost of its output and items.
			kinds[kind][name] = map[string]any{"status": n.Status, "attempts": n.Attempts}
			continue
		}
		kinds[kind][name] = nodeDoc(env, addr, n)
	}
	nodes := map[string]any{}
	for k, m := range kinds {
		nodes[k] = m
	}
	doc["node"] = nodes
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	v, err := decodeValue(b)
	if err != nil {
		return nil, err
	}
	vars := map[string]cty.Value{}
	for name, val := range v.AsValueMap() {
		vars[name] = val
	}
	vars["var"] = cty.EmptyObjectVal
	if vv := w.VarValues(); vv != cty.NilVal && !vv.IsNull() {
		vars["var"] = vv
	}
	return &hcl.EvalContext{Variables: vars, Functions: funcs.Shared()}, nil
}

// nodeDoc is what an assertion sees of a node: every field present (null when it has none),
// so that `node.task.x.output` is null rather than an unknown attribute.
func nodeDoc(env *runEnv, addr string, n *journal.NodeView) map[string]any {
	d := map[string]any{
		"status":   n.Status,
		"attempts": n.Attempts,
		"output":   rawOr(n.Output, "null"),
		"error":    nil,
		"reason":   n.Reason,
		"input":    rawOr(env.input(addr, -1), "null"),
	}
	if n.Error != nil {
		d["error"] = map[string]any{"kind": string(n.Error.Kind), "message": n.Error.Message}
	}
	if len(n.Instances) > 0 {
		items := make([]any, 0, len(n.Instances))
		for i, in := range n.Instances {
			b, _ := json.Marshal(in)
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			if m == nil {
				m = map[string]any{}
			}
			m["input"] = rawOr(env.input(addr, i), "null")
			for _, k := range []string{"output", "error", "attempts", "status"} {
				if _, ok := m[k]; !ok {
					m[k] = nil
				}
			}
			items = append(items, m)
		}
		d["instances"] = items
	} else {
		d["instances"] = []any{}
	}
	if len(n.Iterations) > 0 {
		d["iterations"] = n.Iterations
	} else {
		d["iterations"] = []any{}
	}
	return d
}

func rawOr(b json.RawMessage, def string) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage(def)
	}
	return b
}

// nodeLines are the run's top-level nodes for -v, in address order.
func nodeLines(res *journal.Execution) []NodeLine {
	var out []NodeLine
	for addr, n := range res.Nodes {
		l := NodeLine{Addr: addr, Status: n.Status, Attempts: n.Attempts}
		if n.Error != nil {
			l.Error = n.Error.Message
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	return out
}

// nodeRefs are the nodes the assertions read: whole kinds (`node.task`), single nodes
// (`node.task.x`), or everything (`node` alone).
type nodeRefs struct {
	all   bool
	kinds map[string]bool
	nodes map[string]bool
}

// referencedNodes finds the nodes the assertions' expressions read.
func referencedNodes(asserts []*testfile.Assert) nodeRefs {
	refs := nodeRefs{kinds: map[string]bool{}, nodes: map[string]bool{}}
	for _, a := range asserts {
		exprs := []hcl.Expression{a.Condition}
		if a.ErrorMessage != nil {
			exprs = append(exprs, a.ErrorMessage)
		}
		for _, e := range exprs {
			for _, tr := range e.Variables() {
				if tr.RootName() != "node" {
					continue
				}
				kind, ok1 := traverseName(tr, 1)
				name, ok2 := traverseName(tr, 2)
				switch {
				case !ok1:
					refs.all = true
				case !ok2:
					refs.kinds[kind] = true
				default:
					refs.nodes[kind+"."+name] = true
				}
			}
		}
	}
	return refs
}

// traverseName is the attribute name (or string index) of step i of tr.
func traverseName(tr hcl.Traversal, i int) (string, bool) {
	if len(tr) <= i {
		return "", false
	}
	switch s := tr[i].(type) {
	case hcl.TraverseAttr:
		return s.Name, true
	case hcl.TraverseIndex:
		if s.Key.Type() == cty.String && s.Key.IsKnown() && !s.Key.IsNull() {
			return s.Key.AsString(), true
		}
	}
	return "", false
}
