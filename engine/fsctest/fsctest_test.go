package fsctest

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schema"
)

// runTest runs Test over paths and returns the run reports by name.
func runTest(t *testing.T, opts Options) (*Report, map[string]*RunReport) {
	t.Helper()
	rep, err := Test(context.Background(), opts)
	if err != nil {
		t.Fatalf("Test: %v", err)
	}
	runs := map[string]*RunReport{}
	for _, f := range rep.Files {
		if f.Diags.HasErrors() {
			t.Fatalf("%s: %v", f.Path, f.Diags)
		}
		for _, r := range f.Runs {
			runs[r.Name] = r
		}
	}
	return rep, runs
}

func describe(r *RunReport) string {
	var b strings.Builder
	b.WriteString(string(r.Status) + " run_status=" + r.RunStatus)
	for _, f := range r.Failures {
		b.WriteString("\n  " + f.Summary + ": " + f.Detail + " [" + f.Expr + "]")
		for _, v := range f.Values {
			b.WriteString("\n    " + v.Expr + " = " + v.Value)
		}
	}
	for _, d := range r.Diags {
		b.WriteString("\n  " + d.Error())
	}
	return b.String()
}

// TestMockKinds runs a suite with every kind of mock: task results per attempt, a component's
// and a plugin's tasks, HTTP by URL pattern and method, waits resolved, rejected and timed out,
// and sleeps and backoffs on the virtual clock.
func TestMockKinds(t *testing.T) {
	rep, runs := runTest(t, Options{Paths: []string{"testdata/runner/shop.fsctest.hcl"}})
	for _, name := range []string{"happy_path", "retried_charge", "declined", "rejected", "nobody_answers", "eu_only"} {
		r := runs[name]
		if r == nil {
			t.Fatalf("no report of run %q", name)
		}
		if r.Status != Pass {
			t.Errorf("run %s: %s", name, describe(r))
		}
	}
	if !rep.OK() || rep.Passed != 6 {
		t.Errorf("report: ok=%v passed=%d failed=%d errored=%d", rep.OK(), rep.Passed, rep.Failed, rep.Errored)
	}
	// Two backoffs of an hour and a sleep of ten minutes passed on the virtual clock.
	if v := runs["retried_charge"].Virtual; v != 2*time.Hour+10*time.Minute {
		t.Errorf("retried_charge: the virtual clock moved %s; want the two 1h backoffs and the 10m sleep exactly", v)
	}
	// The approval's 48h timeout passed on the virtual clock.
	if v := runs["nobody_answers"].Virtual; v < 48*time.Hour {
		t.Errorf("nobody_answers: the virtual clock moved %s; want the 48h timeout", v)
	}
	if v := runs["happy_path"].Virtual; v != 10*time.Minute {
		t.Errorf("happy_path: the virtual clock moved %s; want the 10m sleep exactly", v)
	}
}

// write writes files into a new directory and returns it.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const flowWorkflow = `
workflow "flow" {}

component "crm" {
  source  = "acme/crm"
  version = "~> 1.0"
}

task "fetch" {
  uses   = builtin.http
  inputs = { url = "https://crm.example.com/users/1" }
}

task "enrich" {
  uses   = component.crm.enrich
  after  = [task.fetch]
  inputs = { user = task.fetch.output.body }
}

wait "approve" {
  after = [task.enrich]
  approval {}
}

output "score" {
  value = task.enrich.output.score
}
`

// TestErrorsNameWhatIsMissing: what a run cannot do without a mock stops it with an error that
// names the node, the call and the block to add.
func TestErrorsNameWhatIsMissing(t *testing.T) {
	dir := write(t, map[string]string{
		"flow.fsc.hcl": flowWorkflow,
		"flow.fsctest.hcl": `
run "no_http_mock" {}

run "no_component_mock" {
  mock "task.fetch" { output = { status = 200, headers = {}, body = { id = 1 } } }
}

run "no_wait_mock" {
  mock "task.fetch" { output = { status = 200, headers = {}, body = { id = 1 } } }
  mock_component "crm" {
    task "enrich" { output = { score = 3 } }
  }
}

run "wait_cannot_time_out" {
  mock "task.fetch" { output = { status = 200, headers = {}, body = { id = 1 } } }
  mock_component "crm" {
    task "enrich" { output = { score = 3 } }
  }
  mock "wait.approve" { timeout = true }
}
`,
	})
	_, runs := runTest(t, Options{Paths: []string{dir}})
	want := map[string][]string{
		"no_http_mock":         {"HTTP request not mocked", "task.fetch sends GET https://crm.example.com/users/1", "mock_http"},
		"no_component_mock":    {"Task not mocked", `task.enrich calls component "crm"'s task "enrich"`, `mock_component "crm"`},
		"no_wait_mock":         {"Wait not mocked", "wait.approve", `mock "wait.approve"`},
		"wait_cannot_time_out": {"Wait cannot time out", "wait.approve", "has no timeout"},
	}
	for name, parts := range want {
		r := runs[name]
		if r == nil || r.Status != Error || len(r.Diags) == 0 {
			t.Errorf("run %s: want an error, got %v", name, r)
			continue
		}
		text := r.Diags[0].Summary + ": " + r.Diags[0].Detail
		for _, p := range parts {
			if !strings.Contains(text, p) {
				t.Errorf("run %s: the error %q does not say %q", name, text, p)
			}
		}
	}
}

// schemaSource answers one output schema for every component task.
type schemaSource struct{ out *schema.Schema }

func (s schemaSource) TaskSchemas(_ *lang.Workflow, uses lang.Uses) (in, out *schema.Schema) {
	if uses.Kind == lang.UsesComponent {
		return nil, s.out
	}
	return nil, nil
}

// TestMockCheckedAgainstOutputSchema: a mock cannot answer what the installed task could never
// return.
func TestMockCheckedAgainstOutputSchema(t *testing.T) {
	out, err := schema.Compile("enrich output", []byte(`{"type": "object", "required": ["score"],
		"properties": {"score": {"type": "integer"}}, "additionalProperties": false}`))
	if err != nil {
		t.Fatal(err)
	}
	dir := write(t, map[string]string{
		"flow.fsc.hcl": flowWorkflow,
		"flow.fsctest.hcl": `
mock_http {
  url  = "https://crm.example.com/*"
  json = { id = 1 }
}

run "good" {
  mock_component "crm" {
    task "enrich" { output = { score = 3 } }
  }
  mock "wait.approve" { data = {} }
}

run "bad" {
  mock_component "crm" {
    task "enrich" { output = { score = "high" } }
  }
  mock "wait.approve" { data = {} }
}
`,
	})
	_, runs := runTest(t, Options{Paths: []string{dir}, Schemas: schemaSource{out}})
	if r := runs["good"]; r.Status != Pass {
		t.Errorf("good: %s", describe(r))
	}
	r := runs["bad"]
	if r.Status != Error || len(r.Diags) == 0 || r.Diags[0].Summary != "Mocked output does not match the output schema" {
		t.Fatalf("bad: %s", describe(r))
	}
	if d := r.Diags[0]; !strings.Contains(d.Detail, "score") || d.Subject == nil || d.Subject.Start.Line != 16 {
		t.Errorf("bad: the error should name score and point at the mock's output (line 16): %s at %v", d.Detail, d.Subject)
	}
}

// TestFailedAssertionShowsValues: a failed assertion reports its expression, its message, its
// range and the values of its references.
func TestFailedAssertionShowsValues(t *testing.T) {
	dir := write(t, map[string]string{
		"flow.fsc.hcl": flowWorkflow,
		"flow.fsctest.hcl": `
mock_http {
  url  = "https://crm.example.com/*"
  json = { id = 1 }
}
mock_component "crm" {
  task "enrich" { output = { score = input.user.id + 1 } }
}

run "wrong_score" {
  mock "wait.approve" { data = {} }
  assert {
    condition     = output.score == 5 && node.task.fetch.status == "succeeded"
    error_message = "the score is one more than the user id"
  }
}

run "wrong_status" {
  mock "wait.approve" { reject = true }
}
`,
	})
	rep, runs := runTest(t, Options{Paths: []string{dir}})
	r := runs["wrong_score"]
	if r.Status != Fail || len(r.Failures) != 1 {
		t.Fatalf("wrong_score: %s", describe(r))
	}
	f := r.Failures[0]
	if f.Summary != "Assertion failed" || f.Detail != "the score is one more than the user id" ||
		f.Expr != `output.score == 5 && node.task.fetch.status == "succeeded"` || f.Range.Start.Line != 13 {
		t.Errorf("wrong_score failure: %+v", f)
	}
	got := map[string]string{}
	for _, v := range f.Values {
		got[v.Expr] = v.Value
	}
	if got["output.score"] != "2" || got["node.task.fetch.status"] != `"succeeded"` {
		t.Errorf("wrong_score values: %v", got)
	}
	r = runs["wrong_status"]
	if r.Status != Fail || len(r.Failures) != 1 || r.Failures[0].Summary != "Unexpected run status" ||
		!strings.Contains(r.Failures[0].Detail, "wait.approve") {
		t.Errorf("wrong_status: %s", describe(r))
	}
	if rep.OK() || rep.Failed != 2 {
		t.Errorf("report: ok=%v failed=%d", rep.OK(), rep.Failed)
	}
}

// TestOrderAndFilter: at any parallelism reports come in source order, and -run skips what it
// does not match.
func TestOrderAndFilter(t *testing.T) {
	var b strings.Builder
	var names []string
	for i := range 24 {
		name := "run_" + string(rune('a'+i))
		names = append(names, name)
		// Later runs sleep less, so that they would end first if nothing ordered them.
		b.WriteString(`run "` + name + `" {
  variables = { pause = ` + strconv.Itoa(24-i) + ` }
  assert { condition = output.done == "` + name + `" }
}
`)
	}
	dir := write(t, map[string]string{
		"order.fsc.hcl": `
workflow "order" {}
variable "pause" { type = number }
task "nap" {
  uses   = builtin.sleep
  inputs = { duration = "${var.pause}s" }
}
output "done" { value = "run_${substr("abcdefghijklmnopqrstuvwx", 24 - var.pause, 1)}" }
`,
		"order.fsctest.hcl": b.String(),
	})
	var mu sync.Mutex
	var seen []string
	rep, runs := runTest(t, Options{Paths: []string{dir}, Parallel: 4, OnRun: func(r *RunReport) {
		mu.Lock()
		seen = append(seen, r.Name)
		mu.Unlock()
	}})
	if strings.Join(seen, ",") != strings.Join(names, ",") {
		t.Errorf("order: %v", seen)
	}
	for _, n := range names {
		if runs[n].Status != Pass {
			t.Errorf("%s: %s", n, describe(runs[n]))
		}
	}
	if rep.Passed != 24 {
		t.Errorf("passed %d", rep.Passed)
	}

	_, runs = runTest(t, Options{Paths: []string{dir}, Filter: regexp.MustCompile(`run_[ab]$`)})
	for _, n := range names {
		want := Skip
		if n == "run_a" || n == "run_b" {
			want = Pass
		}
		if runs[n].Status != want {
			t.Errorf("filtered %s: %s, want %s", n, runs[n].Status, want)
		}
	}
}

// TestTimeout: a run block still running after Options.Timeout of real time is cancelled and
// reported as errored, naming the bound, and the next block runs.
func TestTimeout(t *testing.T) {
	dir := write(t, map[string]string{
		// Each iteration formats and hashes 4 MB: tens of milliseconds; 1,000 take a minute or
		// more, far past the bound, and one takes far less than it even on a busy machine (at
		// 500 KB and a 300ms bound, the one-item run was cut at 364ms there).
		"spin.fsc.hcl": `
workflow "spin" {}
variable "items" {
  type    = number
  default = 1000
}
loop "spin" {
  for_each = range(var.items)
  mode     = "sequential"
  task "step" {
    uses   = builtin.transform
    inputs = { h = sha256(format("%04000000d", each.value)) }
  }
}
`,
		"spin.fsctest.hcl": `
run "long" {}
run "short" {
  variables = { items = 1 }
}
`,
	})
	rep, err := Test(context.Background(), Options{Paths: []string{filepath.Join(dir, "spin.fsctest.hcl")}, Timeout: 3 * time.Second, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]*RunReport{}
	for _, r := range rep.Files[0].Runs {
		runs[r.Name] = r
	}
	long := runs["long"]
	if long == nil || long.Status != Error || len(long.Diags) != 1 || long.Diags[0].Summary != "Timed out" ||
		!strings.Contains(long.Diags[0].Detail, "-timeout 3s") {
		t.Fatalf("the long run: %v", long)
	}
	// The 1,000 iterations take a minute or more; the bound cut them short.
	if long.Elapsed > 30*time.Second {
		t.Errorf("the long run took %s to be cut at 3s", long.Elapsed)
	}
	if r := runs["short"]; r == nil || r.Status != Pass {
		t.Errorf("the short run after it: %v", r)
	}
}

// TestLargeOutputs: a task's output over 1 MiB (Badger in memory's largest value) and under
// max_node_output is journaled, read by the next node and asserted on, as `apply` does, in
// each of several runs.
func TestLargeOutputs(t *testing.T) {
	dir := write(t, map[string]string{
		"big.fsc.hcl": `
workflow "big" {}
variable "blocks" {
  type    = number
  default = 17
}
task "make" {
  uses   = builtin.transform
  inputs = { text = join("", [for i in range(var.blocks) : format("%065536d", i)]) }
}
task "compare" {
  uses   = builtin.transform
  inputs = { same = task.make.output.text == join("", [for i in range(var.blocks) : format("%065536d", i)]) }
}
output "same" {
  value = task.compare.output.same
}
`,
		// 17 and 48 blocks of 64 KiB: 1.06 and 3 MiB.
		"big.fsctest.hcl": `
run "just_over_a_mib" {
  assert {
    condition = output.same
  }
}
run "three_mib" {
  variables = { blocks = 48 }
  assert {
    condition = output.same && node.task.make.status == "succeeded"
  }
}
`,
	})
	rep, runs := runTest(t, Options{Paths: []string{filepath.Join(dir, "big.fsctest.hcl")}})
	for _, name := range []string{"just_over_a_mib", "three_mib"} {
		if r := runs[name]; r == nil || r.Status != Pass {
			t.Errorf("run %s: %v", name, r)
			if r != nil {
				t.Log(describe(r))
			}
		}
	}
	if rep.Passed != 2 {
		t.Errorf("%d runs passed, want 2", rep.Passed)
	}
}

// TestNoTestFiles: a path without test files is an error that names it.
func TestNoTestFiles(t *testing.T) {
	dir := t.TempDir()
	_, err := Test(context.Background(), Options{Paths: []string{dir}})
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("want an error naming %s, got %v", dir, err)
	}
}

// TestSubWorkflowsAndItems: a call runs its sub-workflow with the file's mocks (and its sleeps
// on the same virtual clock); a for_each task's items and a loop's iterations are visible to
// assertions, each item with the input it was called with.
func TestSubWorkflowsAndItems(t *testing.T) {
	dir := write(t, map[string]string{
		"child.fsc.hcl": `
workflow "child" {}
variable "n" { type = number }
task "pause" {
  uses   = builtin.sleep
  inputs = { duration = "50m" }
}
task "square" {
  uses   = builtin.transform
  after  = [task.pause]
  inputs = { v = var.n * var.n }
}
output "square" { value = task.square.output.v }
`,
		"parent.fsc.hcl": `
workflow "parent" {}
task "price" {
  uses     = builtin.http
  for_each = { a = 1, b = 2, c = 3 }
  inputs   = { url = "https://prices.example.com/${each.key}" }
}
call "sq" {
  workflow = "./child.fsc.hcl"
  inputs   = { n = task.price.output["b"].body.p }
}
loop "double" {
  for_each = [1, 2, 3]
  task "twice" {
    uses   = builtin.transform
    inputs = { v = each.value * 2 }
  }
}
output "square" { value = call.sq.output.square }
`,
		"parent.fsctest.hcl": `
mock_http {
  url  = "https://prices.example.com/*"
  json = { p = length(input.url) - 25 }
}
run "all" {
  assert { condition = output.square == 9 }
  assert { condition = length(node.task.price.instances) == 3 }
  assert { condition = node.task.price.instances[1].input.url == "https://prices.example.com/b" }
  assert { condition = node.call.sq.status == "succeeded" && length(node.loop.double.iterations) == 3 }
}
`,
	})
	_, runs := runTest(t, Options{Paths: []string{dir}})
	r := runs["all"]
	if r.Status != Pass {
		t.Fatalf("all: %s", describe(r))
	}
	if r.Virtual != 50*time.Minute {
		t.Errorf("the sub-workflow's 50m sleep moved the clock %s", r.Virtual)
	}
}
