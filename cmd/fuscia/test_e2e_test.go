package main

// End-to-end tests of `fuscia test` (docs/testing.md, docs/reference/cli.md "test"): the real
// binary runs test files against workflows, with every outside call mocked.

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// greetFlow is a small workflow: builtins only, an HTTP call, a retried task, an output.
const greetFlow = `
workflow "greet" {}

variable "name" {
  type    = string
  default = "world"
}

task "greet" {
  uses = builtin.transform
  inputs = {
    message = "Hello, ${var.name}!"
    letters = length(var.name)
  }
}

task "lookup" {
  uses   = builtin.http
  inputs = { url = "https://people.example.com/${var.name}" }
}

output "message" {
  value = task.greet.output.message
}

output "title" {
  value = task.lookup.output.body.title
}
`

const greetTests = `
mock_http {
  url  = "https://people.example.com/*"
  json = { title = "Dr" }
}

run "greets_the_world" {
  assert {
    condition     = output.message == "Hello, world!" && output.title == "Dr"
    error_message = "the default greeting"
  }
}

run "greets_ada" {
  variables = { name = "Ada" }
  assert {
    condition = node.task.greet.output.letters == 3 && node.task.lookup.input.url == "https://people.example.com/Ada"
  }
}
`

// wantHomeEmpty fails when fuscia test left anything in FUSCIA_HOME: tests run in memory.
func wantHomeEmpty(t *testing.T, h *harness) {
	t.Helper()
	entries, err := os.ReadDir(h.home)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("fuscia test wrote %s into FUSCIA_HOME", e.Name())
	}
}

func TestTestPasses(t *testing.T) {
	h := newHarness(t)
	h.write("greet.fsc.hcl", greetFlow)
	h.write("greet.fsctest.hcl", greetTests)
	r := h.run("test")
	wantCode(t, r, exitOK)
	wantContains(t, "stdout", r.stdout,
		"greet.fsctest.hcl...\n",
		`  run "greets_the_world"... pass`,
		`  run "greets_ada"... pass`,
		"Success! 2 passed, 0 failed.\n")
	wantHomeEmpty(t, h)
}

func TestTestFailingAssertion(t *testing.T) {
	h := newHarness(t)
	h.write("greet.fsc.hcl", greetFlow)
	h.write("greet.fsctest.hcl", `
mock_http {
  url  = "https://people.example.com/*"
  json = { title = "Dr" }
}

run "counts_letters" {
  variables = { name = "Ada" }
  assert {
    condition     = node.task.greet.output.letters == 4
    error_message = "Ada has four letters, says this wrong test"
  }
}
`)
	r := h.run("test")
	wantCode(t, r, exitFailed)
	wantContains(t, "stdout", r.stdout,
		`  run "counts_letters"... fail`,
		"Assertion failed",
		`on greet.fsctest.hcl line 10, in run "counts_letters":`,
		"    condition     = node.task.greet.output.letters == 4",
		" "+strings.Repeat("^", len("node.task.greet.output.letters == 4"))+"\n", // the condition underlined
		"node.task.greet.output.letters = 3",
		"Ada has four letters, says this wrong test",
		"Failure! 0 passed, 1 failed.")
	wantHomeEmpty(t, h)
}

func TestTestBadFile(t *testing.T) {
	h := newHarness(t)
	h.write("greet.fsc.hcl", greetFlow)
	h.write("greet.fsctest.hcl", greetTests)
	h.write("broken.fsctest.hcl", `
run "typo" {
  workflow = "greet.fsc.hcl"
  mokc "task.greet" {}
}
`)
	r := h.run("test", ".")
	wantCode(t, r, exitInvalid)
	wantContains(t, "stderr", r.stderr, "Error: ", `on broken.fsctest.hcl line 4, in run "typo":`, `mokc "task.greet" {}`, `"mock"`)
	wantContains(t, "stdout", r.stdout, "broken.fsctest.hcl... invalid", "1 invalid test file.")
	// The other file still ran and passed: one bad file does not hide the others' results.
	wantContains(t, "stdout", r.stdout, `  run "greets_the_world"... pass`)

	// The same with -json: a diagnostic event with validate's shape.
	r = h.run("test", "-json", "broken.fsctest.hcl")
	wantCode(t, r, exitInvalid)
	var diag struct {
		File       string   `json:"file"`
		Diagnostic jsonDiag `json:"diagnostic"`
	}
	for _, ev := range events(t, r.stdout) {
		if ev.Type == "diagnostic" {
			if err := json.Unmarshal(ev.raw, &diag); err != nil {
				t.Fatal(err)
			}
		}
	}
	if diag.File != "broken.fsctest.hcl" || diag.Diagnostic.Severity != "error" || diag.Diagnostic.Range == nil || diag.Diagnostic.Range.Start.Line != 4 {
		t.Errorf("diagnostic event %+v, want an error of broken.fsctest.hcl at line 4:\n%s", diag, r)
	}
}

func TestTestNoTestFiles(t *testing.T) {
	h := newHarness(t)
	h.write("greet.fsc.hcl", greetFlow) // a workflow is not a test file
	r := h.run("test")
	wantCode(t, r, exitInvalid)
	wantContains(t, "stderr", r.stderr, "No test files to run", "*.fsctest.hcl")

	r = h.run("test", "missing")
	wantCode(t, r, exitInvalid)
	wantContains(t, "stderr", r.stderr, "missing")

	for _, args := range [][]string{{"test", "-run", "("}, {"test", "-parallel", "-1"}, {"test", "-timeout", "-1s"}, {"test", "-nope"}} {
		wantCode(t, h.run(args...), exitInvalid)
	}
}

func TestTestRunFilter(t *testing.T) {
	h := newHarness(t)
	h.write("greet.fsc.hcl", greetFlow)
	h.write("greet.fsctest.hcl", greetTests)
	r := h.run("test", "-run", "ada$", "-v")
	wantCode(t, r, exitOK)
	wantContains(t, "stdout", r.stdout,
		`  run "greets_the_world"... skip`,
		`  run "greets_ada"... pass (`,
		"task.greet   succeeded  1 attempt",
		"Success! 1 passed, 0 failed, 1 skipped.")
}

// TestTestTimeout: a run block past -timeout (real time) errors as "Timed out", naming the
// bound, and the next block still runs.
func TestTestTimeout(t *testing.T) {
	h := newHarness(t)
	h.write("spin.fsc.hcl", `
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
    inputs = { h = sha256(format("%0500000d", each.value)) }
  }
}
`)
	h.write("spin.fsctest.hcl", `
run "long" {}
run "short" {
  variables = { items = 1 }
}
`)
	r := h.run("test", "-timeout", "200ms", "-parallel", "1")
	wantCode(t, r, exitFailed)
	wantContains(t, "stdout", r.stdout,
		`  run "long"... error`, "Error: Timed out", "-timeout 200ms of real time",
		`  run "short"... pass`, "Failure! 1 passed, 0 failed, 1 errored.")
}

// event is one line of `fuscia test -json`.
type event struct {
	Type      string `json:"type"`
	Timestamp string `json:"@timestamp"`
	File      string `json:"file"`
	Run       string `json:"run"`
	Status    string `json:"status"`
	RunStatus string `json:"run_status"`
	Failures  []struct {
		Summary, Detail, Expr string
		Range                 *jsonRange
		Values                []struct{ Expr, Value string }
	} `json:"failures"`
	Diagnostics []jsonDiag `json:"diagnostics"`
	Passed      int        `json:"passed"`
	Failed      int        `json:"failed"`
	Errored     int        `json:"errored"`
	OK          *bool      `json:"ok"`
	raw         json.RawMessage
}

func events(t *testing.T, stdout string) []event {
	t.Helper()
	var out []event
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not a JSON line: %v\n%s", err, sc.Text())
		}
		if ev.Type == "" || ev.Timestamp == "" {
			t.Errorf("event without type or @timestamp: %s", sc.Text())
		}
		ev.raw = append(json.RawMessage(nil), sc.Bytes()...)
		out = append(out, ev)
	}
	return out
}

func TestTestJSON(t *testing.T) {
	h := newHarness(t)
	h.write("greet.fsc.hcl", greetFlow)
	h.write("greet.fsctest.hcl", greetTests+`
run "wrong" {
  assert {
    condition = output.message == "Hi"
  }
}
`)
	r := h.run("test", "-json")
	wantCode(t, r, exitFailed)
	evs := events(t, r.stdout)
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type+":"+ev.Run)
	}
	want := "version: run_start:greets_the_world run_end:greets_the_world run_start:greets_ada run_end:greets_ada run_start:wrong run_end:wrong summary:"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("events\n got %s\nwant %s\n%s", got, want, r)
	}
	if !strings.Contains(string(evs[0].raw), `"format_version":"1.0"`) {
		t.Errorf("version event %s has no format_version 1.0", evs[0].raw)
	}
	end := evs[6]
	if end.Status != "fail" || end.RunStatus != "succeeded" || end.File != "greet.fsctest.hcl" || len(end.Failures) != 1 {
		t.Fatalf("run_end of wrong = %s", end.raw)
	}
	f := end.Failures[0]
	if f.Expr != `output.message == "Hi"` || f.Range == nil || f.Range.Start.Line != 23 ||
		len(f.Values) != 1 || f.Values[0].Expr != "output.message" || f.Values[0].Value != `"Hello, world!"` {
		t.Errorf("failure = %+v", f)
	}
	sum := evs[len(evs)-1]
	if sum.Passed != 2 || sum.Failed != 1 || sum.Errored != 0 || sum.OK == nil || *sum.OK {
		t.Errorf("summary = %s", sum.raw)
	}
}

func TestTestJUnit(t *testing.T) {
	h := newHarness(t)
	h.write("greet.fsc.hcl", greetFlow)
	h.write("greet.fsctest.hcl", greetTests+`
run "wrong" {
  assert {
    condition     = output.title == "Prof"
    error_message = "titles are looked up"
  }
}
`)
	r := h.run("test", "-junit", "out/report.xml")
	wantCode(t, r, exitFailed) // out/ does not exist: the report cannot be written
	wantContains(t, "stderr", r.stderr, "Cannot write the JUnit report")

	r = h.run("test", "-junit", "report.xml", "-run", "world|wrong")
	wantCode(t, r, exitFailed)
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Skipped *struct{} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(h.read("report.xml")), &doc); err != nil {
		t.Fatalf("report.xml is not valid XML: %v\n%s", err, h.read("report.xml"))
	}
	if doc.Tests != 3 || doc.Failures != 1 || doc.Skipped != 1 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 3 {
		t.Fatalf("report.xml: %+v", doc)
	}
	c := doc.Suites[0].Cases[2]
	if c.Name != "wrong" || c.Classname != "greet.fsctest.hcl" || c.Failure == nil ||
		!strings.Contains(c.Failure.Message, "titles are looked up") || !strings.Contains(c.Failure.Text, `output.title = "Dr"`) {
		t.Errorf("the failed case: %+v", c)
	}
	if doc.Suites[0].Cases[1].Skipped == nil {
		t.Errorf("greets_ada is not skipped: %+v", doc.Suites[0].Cases[1])
	}
	wantHomeEmpty(t, h)

	// -junit given a test file or a workflow (the report's name forgotten) is refused, and
	// the file is left as it was.
	for _, f := range []string{"greet.fsctest.hcl", "greet.fsc.hcl"} {
		before := h.read(f)
		r = h.run("test", "-junit", f)
		wantCode(t, r, exitInvalid)
		wantContains(t, "stderr", r.stderr, "Invalid -junit", "report.xml")
		if h.read(f) != before {
			t.Errorf("-junit %s changed the file", f)
		}
	}
	// No test files to run: an existing report stays as it was, and no temporary file is left.
	h.write("empty/.keep", "")
	before := h.read("report.xml")
	r = h.run("test", "-junit", "report.xml", "empty")
	wantCode(t, r, exitInvalid)
	if h.read("report.xml") != before {
		t.Error("a -junit run with no test files changed the existing report")
	}
	if left, _ := filepath.Glob(filepath.Join(h.dir, ".report.xml.*")); len(left) != 0 {
		t.Errorf("temporary reports left: %v", left)
	}
}

// TestTestVirtualClock: backoff, sleeps and waits of hours end at once on the virtual clock.
// Nothing is asserted about time but that the command ends within the harness's timeout.
func TestTestVirtualClock(t *testing.T) {
	h := newHarness(t)
	h.write("slow.fsc.hcl", `
workflow "slow" {
  max_duration = "72h"
}

task "charge" {
  uses    = builtin.http
  timeout = "3h"
  inputs  = { url = "https://pay.example.com/charge", method = "POST" }
  retry {
    attempts      = 4
    backoff       = "fixed"
    initial_delay = "1h"
  }
}

task "nap" {
  uses    = builtin.sleep
  after   = [task.charge]
  timeout = "3h"
  inputs  = { duration = "2h" }
}

wait "cool_down" {
  after    = [task.nap]
  duration = "24h"
}

wait "approve" {
  after   = [wait.cool_down]
  timeout = "12h"
  approval {
    message = "go?"
  }
}
`)
	h.write("slow.fsctest.hcl", `
run "retries_for_hours" {
  mock "task.charge" {
    attempt { error = { kind = "retryable", message = "declined" } }
    attempt { error = { kind = "retryable", message = "declined" } }
    attempt { output = { status = 200, body = { id = "ch_${attempt}" } } }
  }
  mock "wait.approve" { data = { ok = true } }
  assert {
    condition = node.task.charge.attempts == 3 && node.task.charge.output.body.id == "ch_3"
  }
  assert {
    condition = node.wait.approve.output == { ok = true } && node.task.nap.status == "succeeded"
  }
}

run "approval_times_out" {
  mock "task.charge" { output = { status = 200 } }
  mock "wait.approve" { timeout = true }
  expect_failures = [wait.approve]
  assert {
    condition = node.wait.approve.error.kind == "timeout"
  }
}
`)
	r := h.run("test", "-v")
	wantCode(t, r, exitOK)
	wantContains(t, "stdout", r.stdout, `run "retries_for_hours"... pass`, `run "approval_times_out"... pass`, "virtual clock +")
}

// TestTestHermetic: an HTTP request or a component task that no mock answers is an error of the
// run, named, and never reaches the network.
func TestTestHermetic(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"ok": true}`))
	}))
	defer srv.Close()

	h := newHarness(t)
	h.write("calls.fsc.hcl", `
workflow "calls" {}

variable "url" {
  type = string
}

component "stripe" {
  source = "acme/stripe"
}

task "fetch" {
  uses   = builtin.http
  inputs = { url = var.url }
}

task "charge" {
  uses   = component.stripe.charge
  inputs = { amount = 3 }
}
`)
	h.write("calls.fsctest.hcl", `
variables { url = "`+srv.URL+`/real" }

run "unmocked_http" {
  mock "task.charge" { output = { id = "ch_1" } }
}

run "unmocked_component" {
  mock_http {
    url  = "`+srv.URL+`/*"
    json = { ok = false }
  }
}

run "all_mocked" {
  mock_http {
    url  = "`+srv.URL+`/*"
    json = { ok = false }
  }
  mock_component "stripe" {
    task "charge" { output = { id = "ch_${input.amount}" } }
  }
  assert {
    condition = node.task.fetch.output.body.ok == false && node.task.charge.output.id == "ch_3"
  }
}
`)
	r := h.run("test")
	wantCode(t, r, exitFailed)
	wantContains(t, "stdout", r.stdout,
		`run "unmocked_http"... error`, "HTTP request not mocked", "GET "+srv.URL+"/real",
		`run "unmocked_component"... error`, "Task not mocked", `"stripe"`, `"charge"`,
		`run "all_mocked"... pass`,
		"Failure! 1 passed, 0 failed, 2 errored.")
	if n := hits.Load(); n != 0 {
		t.Errorf("the real server got %d requests; tests must never reach the network", n)
	}
	wantHomeEmpty(t, h)
}

// TestTestExamples runs the examples' test files, as `make test` does.
func TestTestExamples(t *testing.T) {
	h := newHarness(t)
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	r := h.run("test", examples)
	wantCode(t, r, exitOK)
	wantContains(t, "stdout", r.stdout, "errors.fsctest.hcl...", "approval.fsctest.hcl...", "Success! ")
	wantHomeEmpty(t, h)
}
