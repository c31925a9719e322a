package query

import (
	"fmt"
	"strings"
	"testing"
)

func labels(items []Completion) string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Label
	}
	return strings.Join(out, " ")
}

func TestComplete(t *testing.T) {
	src, marks := fixture(t, "orders.fsc.hcl")
	tests := []struct {
		name, mark, typed string
		want              string // labels, space-separated
	}{
		{"top-level blocks", "top", "", "call component join loop output plugin secret switch task trigger variable wait workflow"},
		{"top-level prefix", "top", "s", "secret switch"},
		{"trigger types", "top", `trigger "`, "manual poll schedule webhook"},
		{"trigger type prefix", "top", `trigger "we`, "webhook"},
		{"workflow attributes", "wf_body", "", "data description durability max_concurrent_runs max_duration max_parallel on_overlap retry timeout"},
		{"task attributes", "fetch_body", "", "after concurrency depends_on fail_workflow for_each inputs max_iterations pool retry timeout uses when"},
		{"task attribute prefix", "fetch_body", "ma", "max_iterations"},
		{"loop body level", "loop_level", "", "after concurrency depends_on fail_workflow for_each join mode on_failure output retry switch task timeout when"},
		{"http input keys", "inputs_key", "", "allow_hosts body headers max_response_bytes method timeout url"},
		{"component input keys", "charge_body", "inputs = {\n    ", "amount currency"},
		{"uses roots", "fetch_body", "uses = ", "builtin component plugin"},
		{"builtins", "fetch_body", "uses = builtin.", "fail http sleep transform"},
		{"components", "fetch_body", "uses = component.", "stripe"},
		{"component tasks", "fetch_body", "uses = component.stripe.", "charge refund"},
		{"component task prefix", "fetch_body", "uses = component.stripe.re", "refund"},
		{"plugin tasks", "fetch_body", "uses = plugin.sh.", "exec"},
		{"quoted uses", "fetch_body", `uses = "component.stripe.`, "charge refund"},
		{"quoted uses root", "fetch_body", `uses = "bu`, "builtin"},
		{"other strings", "fetch_body", `pool = "component.stripe.`, ""},
		{"tasks from a task", "shape_body", "when = task.", "charge fetch"},
		{"tasks in an interpolation", "shape_body", `when = "${task.`, "charge fetch"},
		{"switches", "shape_body", "when = switch.", "tier"},
		{"loops", "shape_body", "when = loop.", "ship"},
		{"waits", "shape_body", "when = wait.", "approve"},
		{"node steps", "shape_body", "when = task.fetch.", "output"},
		{"builtin.http output", "shape_body", "when = task.fetch.output.", "body headers status"},
		{"component output schema", "shape_body", "when = task.charge.output.", "amount id"},
		{"switch output", "shape_body", "when = switch.tier.output.", "selected"},
		{"keyed join output", "shape_body", "when = join.done.output.", "charge shape"},
		{"keyed join branch", "shape_body", "when = join.done.output.charge.", "error output status"},
		{"loop output: the last body nodes", "shape_body", "when = loop.ship.output[0].", "notify"},
		{"loop output item fields", "shape_body", "when = loop.ship.output[0].notify.", "body headers status"},
		{"transform output: its inputs", "charge_body", "when = task.shape.output.", "id rows"},
		{"variables", "shape_body", "when = var.", "limits shop"},
		{"variable object type", "shape_body", "when = var.limits.", "rows timeout"},
		{"secrets", "shape_body", "when = secret.", "token"},
		{"trigger", "shape_body", "when = trigger.", "name payload type"},
		{"webhook payload", "shape_body", "when = trigger.payload.", "body body_base64 headers method path query"},
		{"no each outside an iteration", "shape_body", "when = each.", ""},
		{"functions and roots", "shape_body", "when = upp", "upper"},
		{"roots", "shape_body", "when = tr", "transpose trigger trim trimprefix trimspace trimsuffix try"},
		{"each in a loop body", "label_body", "when = each.", "index key value"},
		{"body siblings and top-level nodes", "label_body", "when = task.", "charge fetch notify shape"},
		{"a body node cannot read its loop", "label_body", "when = loop.", ""},
		{"plugin output schema", "label_body", "when = task.label.output.", "exit_code stderr stdout"},
		{"after: node kinds only", "charge_body", "depends_on = [", "call join loop switch task wait"},
		{"after: switch branches", "charge_body", "depends_on = [switch.tier.", "big small"},
		{"after: task branch", "charge_body", "depends_on = [task.fetch.", "branch"},
		{"open bracket: nodes after the cursor", "fetch_body", "depends_on = [task.", "charge shape"},
		{"settings read var only", "fetch_body", "timeout = v", "values var"},
		{"in a comment", "shape_body", "# task.", ""},
		{"in a string", "shape_body", `when = "task.`, ""},
		{"after a number", "shape_body", "when = 1.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, off := typeAt(t, src, marks, tt.mark, tt.typed)
			got := Complete(NewDoc("orders.fsc.hcl", text), off, testEnv)
			if l := labels(got); l != tt.want {
				t.Errorf("typed %q at %s: got %q, want %q", tt.typed, tt.mark, l, tt.want)
			}
		})
	}
}

// TestCompletePayload completes trigger.payload from a component trigger's payload schema.
func TestCompletePayload(t *testing.T) {
	src := "workflow \"w\" {}\n\ncomponent \"stripe\" {\n  source = \"acme/stripe\"\n}\n\ntrigger \"poll\" \"charges\" {\n  interval = \"1m\"\n  uses     = component.stripe.events\n}\n\ntask \"a\" {\n  uses   = builtin.transform\n  inputs = { x = trigger.payload. }\n}\n"
	off := strings.Index(src, "trigger.payload.") + len("trigger.payload.")
	env := EnvFuncs{ComponentFunc: func(source, version string) (*Package, bool) {
		return &Package{Source: source, Triggers: []TaskInfo{{Name: "events",
			OutputSchema: []byte(`{"type":"object","properties":{"event_id":{"type":"string"},"kind":{"type":"string"}}}`)}}}, true
	}}
	if got := labels(Complete(NewDoc("w.fsc.hcl", []byte(src)), off, env)); got != "event_id kind" {
		t.Errorf("got %q, want the trigger's payload fields", got)
	}
	// A trigger's uses completes the triggers of the component, not its tasks.
	src2 := strings.Replace(src, "component.stripe.events", "component.stripe.", 1)
	off2 := strings.Index(src2, "component.stripe.") + len("component.stripe.")
	if got := labels(Complete(NewDoc("w.fsc.hcl", []byte(src2)), off2, env)); got != "events" {
		t.Errorf("got %q, want the component's triggers", got)
	}
}

// TestCompletionItems pins what items say besides their labels: kind, detail and
// documentation.
func TestCompletionItems(t *testing.T) {
	src, marks := fixture(t, "orders.fsc.hcl")
	kinds := map[CompletionKind]string{KindBlock: "block", KindAttribute: "attribute", KindNode: "node", KindVariable: "variable",
		KindSecret: "secret", KindField: "field", KindFunction: "function", KindModule: "module", KindKeyword: "keyword"}
	cases := []struct{ mark, typed string }{
		{"fetch_body", "re"},
		{"fetch_body", "uses = builtin."},
		{"fetch_body", "uses = component.stripe."},
		{"shape_body", "when = task."},
		{"shape_body", "when = task.fetch.output."},
		{"shape_body", "when = var."},
		{"shape_body", "when = secret."},
		{"shape_body", "when = lookup"},
		{"inputs_key", "hea"},
		{"top", `trigger "`},
	}
	var b strings.Builder
	for _, c := range cases {
		text, off := typeAt(t, src, marks, c.mark, c.typed)
		items := Complete(NewDoc("orders.fsc.hcl", text), off, testEnv)
		fmt.Fprintf(&b, "## %q at %s\n\n", c.typed, c.mark)
		for _, it := range items {
			fmt.Fprintf(&b, "- %s (%s) %q, replaces %q\n  %s\n", it.Label, kinds[it.Kind], it.Detail,
				text[it.Range.Start.Byte:it.Range.End.Byte], strings.ReplaceAll(it.Documentation, "\n", "\n  "))
		}
		b.WriteString("\n")
	}
	golden(t, "completion-items.md", b.String())
}

// TestCompleteEachInForEach offers each in a for_each task's inputs, not in its for_each.
func TestCompleteEachInForEach(t *testing.T) {
	src := "workflow \"w\" {}\n\ntask \"a\" {\n  uses     = builtin.http\n  for_each = [\"x\", \"y\"]\n  inputs   = { url = each. }\n}\n"
	off := strings.Index(src, "each.") + len("each.")
	if got := labels(Complete(NewDoc("w.fsc.hcl", []byte(src)), off, nil)); got != "index key value" {
		t.Errorf("in inputs: got %q, want each's attributes", got)
	}
	src2 := strings.Replace(src, `for_each = ["x", "y"]`, "for_each = each.", 1)
	src2 = strings.Replace(src2, "url = each. ", "url = \"u\" ", 1)
	off2 := strings.Index(src2, "each.") + len("each.")
	if got := labels(Complete(NewDoc("w.fsc.hcl", []byte(src2)), off2, nil)); got != "" {
		t.Errorf("in for_each: got %q, want nothing", got)
	}
}

// TestCompleteDeepNesting: completion in a file nested far past the language's limit answers
// without parsing the block (hclsyntax's recursion would overflow the stack: a fatal error,
// not a panic), as hover and the file's diagnostics do.
func TestCompleteDeepNesting(t *testing.T) {
	for _, open := range []string{"(", "[", "{a="} {
		src := "workflow \"w\" {}\ntask \"t\" {\n  uses = builtin.transform\n  inputs = { x = " + strings.Repeat(open, 70000) + "\n}\n"
		off := strings.Index(src, "x = ") + len("x = ")
		_ = Complete(NewDoc("w.fsc.hcl", []byte(src)), off, testEnv) // must return
	}
}

// BenchmarkCompleteOpenQuotes: completion at the end of a block of 5,000 lines that each leave
// a string open, which re-lexed the rest of the block at each one (quadratic: minutes).
func BenchmarkCompleteOpenQuotes(b *testing.B) {
	src := "workflow \"w\" {}\ntask \"t\" {\n" + strings.Repeat(" x = \"\n", 5000) + "  uses = builtin.\n"
	doc := NewDoc("w.fsc.hcl", []byte(src))
	for range b.N {
		_ = Complete(doc, len(src)-1, testEnv)
	}
}
