package testfile

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/lang"
)

// exprText is the source text of expr in src, "" for nil.
func exprText(src []byte, expr hcl.Expression) string {
	if expr == nil {
		return ""
	}
	return string(expr.Range().SliceBytes(src))
}

func mustEqualValue(t *testing.T, what string, got, want cty.Value) {
	t.Helper()
	if got == cty.NilVal || want == cty.NilVal {
		if got != want {
			t.Errorf("%s = %#v, want %#v", what, got, want)
		}
		return
	}
	if !got.RawEquals(want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

func mustEqualVars(t *testing.T, what string, got, want map[string]cty.Value) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s has %d variables, want %d: %v", what, len(got), len(want), got)
	}
	for k, w := range want {
		mustEqualValue(t, what+"."+k, got[k], w)
	}
}

// line is the start line of rng, for checks of where things were decoded from.
func line(rng hcl.Range) int { return rng.Start.Line }

// TestDecodeValid decodes testdata/valid/orders.fsctest.hcl, which uses every construct, and
// checks every field of the result.
func TestDecodeValid(t *testing.T) {
	const file = "testdata/valid/orders.fsctest.hcl"
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f, diags := Load(file)
	if len(diags) > 0 {
		t.Fatalf("unexpected diagnostics:\n%s", describe(diags))
	}
	text := func(e hcl.Expression) string { return exprText(src, e) }

	if f.Path != file {
		t.Errorf("Path = %q", f.Path)
	}
	fileVars := map[string]cty.Value{
		"region": cty.StringVal("eu"),
		"limits": cty.ObjectVal(map[string]cty.Value{"max": cty.NumberIntVal(3)}),
	}
	mustEqualVars(t, "file variables", f.Variables, fileVars)
	if line(f.VariableRanges["region"]) != 3 || line(f.VariableRanges["limits"]) != 4 {
		t.Errorf("file VariableRanges = %v", f.VariableRanges)
	}

	// File-level mocks.
	if len(f.Mocks.Nodes) != 0 {
		t.Errorf("file node mocks = %d, want 0", len(f.Mocks.Nodes))
	}
	if len(f.Mocks.Components) != 1 || len(f.Mocks.Plugins) != 1 || len(f.Mocks.HTTP) != 1 {
		t.Fatalf("file mocks: %d components, %d plugins, %d http; want 1 each",
			len(f.Mocks.Components), len(f.Mocks.Plugins), len(f.Mocks.HTTP))
	}
	stripe := f.Mocks.Components[0]
	if stripe.Name != "stripe" || line(stripe.DeclRange) != 7 || len(stripe.Tasks) != 1 {
		t.Errorf("component mock = %+v", stripe)
	}
	charge := stripe.Tasks["charge"]
	if charge == nil || charge.Name != "charge" || line(charge.DeclRange) != 8 || len(charge.Results) != 1 {
		t.Fatalf("stripe.charge = %+v", charge)
	}
	if got := text(charge.Results[0].Output); got != `{ id = "ch_1", amount = input.amount }` || charge.Results[0].Error != nil {
		t.Errorf("stripe.charge output = %q, error %v", got, charge.Results[0].Error)
	}
	shell := f.Mocks.Plugins[0]
	if shell.Name != "shell" || line(shell.DeclRange) != 13 || shell.Tasks["exec"] == nil ||
		text(shell.Tasks["exec"].Results[0].Output) != `{ exit_code = 0, stdout = "ok\n", stderr = "" }` {
		t.Errorf("plugin mock = %+v", shell)
	}
	h := f.Mocks.HTTP[0]
	if h.URL != "https://api.example.com/orders/*" || h.Method != "GET" || h.Status != 201 || line(h.DeclRange) != 19 {
		t.Errorf("mock_http = %+v", h)
	}
	if text(h.Headers) != `{ "content-type" = "application/json" }` || text(h.Body) != `"{\"id\": 42}"` || h.JSON != nil {
		t.Errorf("mock_http headers %q body %q json %v", text(h.Headers), text(h.Body), h.JSON)
	}

	if len(f.Runs) != 3 {
		t.Fatalf("runs = %d, want 3", len(f.Runs))
	}

	// The full run.
	r := f.Runs[0]
	if r.Name != "pays_enterprise_orders" || line(r.DeclRange) != 27 {
		t.Errorf("run 0 = %q at %v", r.Name, r.DeclRange)
	}
	if want := filepath.Join("testdata", "valid", "sub", "orders.fsc.hcl"); r.Workflow != want || line(r.WorkflowRange) != 28 {
		t.Errorf("Workflow = %q at %v, want %q", r.Workflow, r.WorkflowRange, want)
	}
	if r.Trigger != "start" || line(r.TriggerRange) != 29 {
		t.Errorf("Trigger = %q at %v", r.Trigger, r.TriggerRange)
	}
	mustEqualVars(t, "run variables", r.Variables, map[string]cty.Value{
		"region": cty.StringVal("US"), // the run's, over the file's; functions are evaluated
		"tier":   cty.StringVal("high"),
		"limits": fileVars["limits"],
	})
	if line(r.VariableRanges["region"]) != 30 || line(r.VariableRanges["tier"]) != 30 || line(r.VariableRanges["limits"]) != 4 {
		t.Errorf("run VariableRanges = %v", r.VariableRanges)
	}
	mustEqualValue(t, "Payload", r.Payload, cty.ObjectVal(map[string]cty.Value{"order_id": cty.NumberIntVal(7)}))
	if r.ExpectStatus != "completed_with_errors" || line(r.ExpectStatusRange) != 58 {
		t.Errorf("ExpectStatus = %q at %v", r.ExpectStatus, r.ExpectStatusRange)
	}
	if len(r.ExpectFailures) != 2 || r.ExpectFailures[0].Addr != "task.charge" || r.ExpectFailures[1].Addr != "loop.items" ||
		line(r.ExpectFailures[0].Range) != 59 || r.ExpectFailures[1].Range.Start.Column != 35 {
		t.Errorf("ExpectFailures = %+v", r.ExpectFailures)
	}
	if len(r.Asserts) != 2 {
		t.Fatalf("asserts = %d, want 2", len(r.Asserts))
	}
	if a := r.Asserts[0]; text(a.Condition) != `output.paid_by == "enterprise" && node.task.charge.attempts == 2` ||
		text(a.ErrorMessage) != `"enterprise orders are paid by the enterprise flow"` || line(a.DeclRange) != 61 {
		t.Errorf("assert 0: %q / %q at %v", text(a.Condition), text(a.ErrorMessage), a.DeclRange)
	}
	if a := r.Asserts[1]; text(a.Condition) != `status == "completed_with_errors"` || a.ErrorMessage != nil {
		t.Errorf("assert 1: %q / %v", text(a.Condition), a.ErrorMessage)
	}
	if len(r.Mocks.Components) != 0 || len(r.Mocks.Plugins) != 0 || len(r.Mocks.HTTP) != 1 {
		t.Errorf("run group/http mocks: %+v", r.Mocks)
	}
	if rh := r.Mocks.HTTP[0]; rh.URL != "https://api.example.com/*" || rh.Method != "" || rh.Status != 200 ||
		rh.Body != nil || rh.Headers != nil || text(rh.JSON) != "{ ok = true }" {
		t.Errorf("run mock_http = %+v", rh)
	}

	type nodeWant struct {
		kind, name, addr string
		line             int
		outputs, errors  []string // per attempt: the output or error text ("" when the other)
		wait             *WaitMock
		data             string
	}
	wants := []nodeWant{
		{kind: "task", name: "charge", addr: "task.charge", line: 33,
			outputs: []string{"", `{ id = "ch_2" }`},
			errors:  []string{`{ kind = "retryable", message = "card declined" }`, ""}},
		{kind: "task", name: "ship", addr: "task.ship", line: 41, outputs: []string{`{ tracking = "T1" }`}, errors: []string{""}},
		{kind: "wait", name: "approve", addr: "wait.approve", line: 44, wait: &WaitMock{}, data: "{ approved = true }"},
		{kind: "wait", name: "manager", addr: "wait.manager", line: 47, wait: &WaitMock{Reject: true}},
		{kind: "wait", name: "callback", addr: "wait.callback", line: 50, wait: &WaitMock{Timeout: true}},
	}
	if len(r.Mocks.Nodes) != len(wants) {
		t.Fatalf("node mocks = %d, want %d", len(r.Mocks.Nodes), len(wants))
	}
	for i, w := range wants {
		nm := r.Mocks.Nodes[i]
		if nm.Kind != w.kind || nm.Name != w.name || nm.Addr != w.addr || line(nm.DeclRange) != w.line {
			t.Errorf("node mock %d = %s %s %s at %v; want %s %s %s at line %d", i, nm.Kind, nm.Name, nm.Addr, nm.DeclRange, w.kind, w.name, w.addr, w.line)
		}
		if w.wait == nil {
			if nm.Wait != nil || len(nm.Results) != len(w.outputs) {
				t.Errorf("%s: wait %v, %d results; want %d results", w.addr, nm.Wait, len(nm.Results), len(w.outputs))
				continue
			}
			for j, res := range nm.Results {
				if text(res.Output) != w.outputs[j] || text(res.Error) != w.errors[j] {
					t.Errorf("%s attempt %d: output %q error %q; want %q, %q", w.addr, j+1, text(res.Output), text(res.Error), w.outputs[j], w.errors[j])
				}
			}
			continue
		}
		if nm.Wait == nil || len(nm.Results) != 0 {
			t.Errorf("%s: wait %v, %d results", w.addr, nm.Wait, len(nm.Results))
			continue
		}
		if nm.Wait.Reject != w.wait.Reject || nm.Wait.Timeout != w.wait.Timeout || text(nm.Wait.Data) != w.data {
			t.Errorf("%s: wait %+v data %q; want %+v data %q", w.addr, nm.Wait, text(nm.Wait.Data), w.wait, w.data)
		}
	}
	// The attempts' ranges are their own blocks.
	if rs := r.Mocks.Nodes[0].Results; line(rs[0].DeclRange) != 34 || line(rs[1].DeclRange) != 37 {
		t.Errorf("attempt ranges %v, %v", rs[0].DeclRange, rs[1].DeclRange)
	}

	// Defaults: the workflow beside the file, expect_status failed with expect_failures.
	d := f.Runs[1]
	if d.Name != "defaults" || d.Workflow != filepath.Join("testdata", "valid", "orders.fsc.hcl") || d.WorkflowRange != d.DeclRange {
		t.Errorf("run 1: %q workflow %q at %v", d.Name, d.Workflow, d.WorkflowRange)
	}
	if d.Trigger != "" || d.TriggerRange != d.DeclRange || d.Payload != cty.NilVal {
		t.Errorf("run 1: trigger %q at %v, payload %#v", d.Trigger, d.TriggerRange, d.Payload)
	}
	mustEqualVars(t, "run 1 variables", d.Variables, fileVars)
	if d.ExpectStatus != StatusFailed || d.ExpectStatusRange != d.DeclRange {
		t.Errorf("run 1: ExpectStatus %q at %v, want failed by default with expect_failures", d.ExpectStatus, d.ExpectStatusRange)
	}
	if len(d.Mocks.Nodes) != 1 || text(d.Mocks.Nodes[0].Results[0].Error) != `{ kind = "fatal", message = "no ${var.region}" }` {
		t.Errorf("run 1 mocks: %+v", d.Mocks.Nodes)
	}
	p := f.Runs[2]
	if p.Name != "plain" || p.ExpectStatus != StatusSucceeded || len(p.ExpectFailures) != 0 || len(p.Asserts) != 0 ||
		len(p.Mocks.Nodes)+len(p.Mocks.Components)+len(p.Mocks.Plugins)+len(p.Mocks.HTTP) != 0 {
		t.Errorf("run 2 = %+v", p)
	}
	// A run's variables are its own map: changing one run's does not change the file's.
	d.Variables["region"] = cty.StringVal("x")
	if f.Variables["region"].AsString() != "eu" {
		t.Error("a run's Variables share the file's map")
	}
}

// TestDecodeCases are small files checked for one thing each: defaults, paths, accepted
// spellings and the errors that need a generated input.
func TestDecodeCases(t *testing.T) {
	abs := filepath.Join(t.TempDir(), "abs.fsc.hcl")
	cases := []struct {
		name     string
		filename string
		src      string
		errors   []string // "LINE: SUMMARY"
		check    func(t *testing.T, f *File)
	}{
		{name: "empty file", filename: "dir/e.fsctest.hcl", src: "",
			check: func(t *testing.T, f *File) {
				if len(f.Runs) != 0 || len(f.Variables) != 0 {
					t.Errorf("%+v", f)
				}
			}},
		{name: "absolute workflow", filename: "dir/a.fsctest.hcl", src: `run "a" { workflow = "` + filepath.ToSlash(abs) + `" }`,
			check: func(t *testing.T, f *File) {
				if f.Runs[0].Workflow != abs {
					t.Errorf("Workflow = %q, want %q", f.Runs[0].Workflow, abs)
				}
			}},
		{name: "relative workflow", filename: "dir/a.fsctest.hcl", src: `run "a" { workflow = "../w/x.fsc.hcl" }`,
			check: func(t *testing.T, f *File) {
				if want := filepath.Join("w", "x.fsc.hcl"); f.Runs[0].Workflow != want {
					t.Errorf("Workflow = %q, want %q", f.Runs[0].Workflow, want)
				}
			}},
		{name: "expect_status wins over the expect_failures default", filename: "a.fsctest.hcl",
			src: "run \"a\" {\n  expect_failures = [task.x]\n  expect_status = \"completed_with_errors\"\n}\n",
			check: func(t *testing.T, f *File) {
				if f.Runs[0].ExpectStatus != "completed_with_errors" {
					t.Errorf("ExpectStatus = %q", f.Runs[0].ExpectStatus)
				}
			}},
		{name: "empty expect_failures", filename: "a.fsctest.hcl", src: "run \"a\" {\n  expect_failures = []\n}\n",
			check: func(t *testing.T, f *File) {
				if f.Runs[0].ExpectStatus != StatusFailed || len(f.Runs[0].ExpectFailures) != 0 {
					t.Errorf("ExpectStatus = %q, failures %v", f.Runs[0].ExpectStatus, f.Runs[0].ExpectFailures)
				}
			}},
		{name: "every error kind and run status", filename: "a.fsctest.hcl", src: everyKindAndStatus(),
			check: func(t *testing.T, f *File) {
				if len(f.Runs) != len(runStatuses) {
					t.Errorf("runs = %d", len(f.Runs))
				}
			}},
		{name: "wait mock without anything", filename: "a.fsctest.hcl", src: "run \"a\" {\n  mock \"wait.w\" {}\n}\n",
			check: func(t *testing.T, f *File) {
				w := f.Runs[0].Mocks.Nodes[0].Wait
				if w == nil || w.Data != nil || w.Reject || w.Timeout {
					t.Errorf("wait = %+v", w)
				}
			}},
		{name: "reject with data, false timeout", filename: "a.fsctest.hcl",
			src: "run \"a\" {\n  mock \"wait.w\" {\n    reject = true\n    data = { why = \"no\" }\n    timeout = false\n  }\n}\n",
			check: func(t *testing.T, f *File) {
				w := f.Runs[0].Mocks.Nodes[0].Wait
				if w == nil || w.Data == nil || !w.Reject || w.Timeout {
					t.Errorf("wait = %+v", w)
				}
			}},
		{name: "quoted keys in error", filename: "a.fsctest.hcl",
			src: "run \"a\" {\n  mock \"task.t\" {\n    error = { \"kind\" = \"timeout\", \"message\" = \"slow\" }\n  }\n}\n"},
		{name: "node mocks at file level", filename: "a.fsctest.hcl", src: "mock \"task.t\" {\n  output = {}\n}\n\nrun \"a\" {\n  mock \"task.t\" {\n    output = { n = 1 }\n  }\n}\n",
			check: func(t *testing.T, f *File) {
				if len(f.Mocks.Nodes) != 1 || len(f.Runs[0].Mocks.Nodes) != 1 {
					t.Errorf("file %d, run %d node mocks", len(f.Mocks.Nodes), len(f.Runs[0].Mocks.Nodes))
				}
			}},
		{name: "method is upper-cased", filename: "a.fsctest.hcl", src: "mock_http {\n  url = \"x\"\n  method = \"patch\"\n}\n",
			check: func(t *testing.T, f *File) {
				if f.Mocks.HTTP[0].Method != "PATCH" {
					t.Errorf("Method = %q", f.Mocks.HTTP[0].Method)
				}
			}},
		{name: "status bounds", filename: "a.fsctest.hcl",
			src:    "mock_http {\n  url = \"a\"\n  status = 100\n}\nmock_http {\n  url = \"b\"\n  status = 599\n}\nmock_http {\n  url = \"c\"\n  status = 99\n}\n",
			errors: []string{"11: Invalid value for status"},
			check: func(t *testing.T, f *File) {
				if len(f.Mocks.HTTP) != 3 || f.Mocks.HTTP[0].Status != 100 || f.Mocks.HTTP[1].Status != 599 {
					t.Errorf("HTTP = %+v", f.Mocks.HTTP)
				}
			}},
		{name: "no default workflow", filename: "checks.hcl", src: "run \"a\" {}\n\nrun \"b\" {\n  workflow = \"w.fsc.hcl\"\n}\n",
			errors: []string{"1: Missing workflow"}},
		{name: "binary", filename: "b.fsctest.hcl", src: "run \"a\" {}\n\x00\xff", errors: []string{"1: Test file is not text"}},
		{name: "invalid utf-8", filename: "b.fsctest.hcl", src: "# caf\xe9\n", errors: []string{"1: Test file is not text"}},
		{name: "too large", filename: "b.fsctest.hcl", src: strings.Repeat("#", lang.MaxFileSize+1), errors: []string{"1: Test file too large"}},
		{name: "largest allowed", filename: "b.fsctest.hcl", src: strings.Repeat("#", lang.MaxFileSize-1) + "\n"},
		{name: "nested too deeply", filename: "b.fsctest.hcl", src: "run \"a\" {\n  payload = " + strings.Repeat("[", 300) + strings.Repeat("]", 300) + "\n}\n",
			errors: []string{"2: Expression nested too deeply"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, diags := Decode(tc.filename, []byte(tc.src))
			var got []string
			for _, d := range diags {
				if d.Severity != hcl.DiagError {
					continue
				}
				l := 0
				if d.Subject != nil {
					l = d.Subject.Start.Line
				}
				got = append(got, strings.Join([]string{itoa(l), d.Summary}, ": "))
			}
			if !slices.Equal(got, tc.errors) {
				t.Fatalf("errors = %q, want %q\n%s", got, tc.errors, describe(diags))
			}
			if tc.check != nil {
				if f == nil {
					t.Fatal("no File")
				}
				tc.check(t, f)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// everyKindAndStatus is a file with one run per run status, each mocking an error of every kind.
func everyKindAndStatus() string {
	var b strings.Builder
	for _, s := range runStatuses {
		b.WriteString("run \"" + s + "\" {\n  expect_status = \"" + s + "\"\n")
		for _, k := range errorKinds {
			b.WriteString("  mock \"task." + strings.ReplaceAll(string(k), "_", "-") + "\" {\n    error = { kind = \"" + string(k) + "\", message = \"m\" }\n  }\n")
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// TestWorkflowMustBeWorkflowFile: a run's workflow names a .fsc.hcl file; any other file (whose
// lines a report would show, /proc/self/environ say) is refused before it is read.
func TestWorkflowMustBeWorkflowFile(t *testing.T) {
	_, diags := Decode("w.fsctest.hcl", []byte("run \"env\" {\n  workflow = \"/proc/self/environ\"\n}\n"))
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "is not one") {
		t.Fatalf("workflow = \"/proc/self/environ\": %v; want it refused", diags)
	}
}
