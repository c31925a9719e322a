package fsctest

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

var update = flag.Bool("update", false, "rewrite the golden files of the report tests")

// The files of the sample report; the ranges below point into them.
const (
	reportDir    = "testdata/report"
	ordersTest   = reportDir + "/orders.fsctest.hcl"
	ordersFlow   = reportDir + "/orders.fsc.hcl"
	badTest      = reportDir + "/bad.fsctest.hcl"
	goldenSuffix = ".golden"
)

// at is the range of the n-th (from 1) occurrence of text in file.
func at(t *testing.T, file, text string, n int) hcl.Range {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	off := -1
	for i := 0; i < n; i++ {
		next := bytes.Index(src[off+1:], []byte(text))
		if next < 0 {
			t.Fatalf("%s has no occurrence %d of %q", file, n, text)
		}
		off += 1 + next
	}
	pos := func(o int) hcl.Pos {
		line := 1 + bytes.Count(src[:o], []byte("\n"))
		col := 1 + o - (bytes.LastIndexByte(src[:o], '\n') + 1)
		return hcl.Pos{Line: line, Column: col, Byte: o}
	}
	return hcl.Range{Filename: file, Start: pos(off), End: pos(off + len(text))}
}

func ptr(r hcl.Range) *hcl.Range { return &r }

// sampleReport is a test of two files with a run of each status and a file that does not load:
// what a real Test would report for testdata/report.
func sampleReport(t *testing.T) *Report {
	t.Helper()
	sources := map[string]*hcl.File{}
	for _, name := range []string{ordersTest, ordersFlow, badTest} {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatalf("%s: %s", name, diags)
		}
		sources[name] = f
	}
	pass := &RunReport{File: ordersTest, Name: "charges_once", Range: at(t, ordersTest, `run "charges_once"`, 1),
		Workflow: ordersFlow, Status: Pass, Elapsed: 12 * time.Millisecond, RunStatus: "succeeded",
		Nodes: []NodeLine{{Addr: "task.charge", Status: "succeeded", Attempts: 1}, {Addr: "task.ship", Status: "succeeded", Attempts: 1}}}
	fail := &RunReport{File: ordersTest, Name: "retries_declined_cards", Range: at(t, ordersTest, `run "retries_declined_cards"`, 1),
		Workflow: ordersFlow, Status: Fail, Elapsed: 31 * time.Millisecond, Virtual: 3 * time.Second, RunStatus: "succeeded",
		Failures: []Failure{
			{Summary: "Assertion failed", Detail: "a declined card is tried again until it is charged",
				Expr:   `node.task.charge.attempts == 3 && output.charge_id == "ch_3"`,
				Range:  at(t, ordersTest, `node.task.charge.attempts == 3 && output.charge_id == "ch_3"`, 1),
				Values: []ExprValue{{Expr: "node.task.charge.attempts", Value: "2"}, {Expr: "output.charge_id", Value: `"ch_2"`}}},
			{Summary: "Assertion failed", Detail: "The condition is false.",
				Expr:   `node.task.ship.output.status == 201`,
				Range:  at(t, ordersTest, `node.task.ship.output.status == 201`, 1),
				Values: []ExprValue{{Expr: "node.task.ship.output", Value: "{\n  body   = {\n    tracking = \"T1\"\n  }\n  status = 200\n}"}}},
		},
		Nodes: []NodeLine{{Addr: "task.charge", Status: "succeeded", Attempts: 2}, {Addr: "task.ship", Status: "succeeded", Attempts: 1}}}
	errored := &RunReport{File: ordersTest, Name: "unmocked_charge", Range: at(t, ordersTest, `run "unmocked_charge"`, 1),
		Workflow: ordersFlow, Status: Error, Elapsed: 2 * time.Millisecond, RunStatus: "failed",
		Diags: hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Component task not mocked",
			Detail:  `task.charge calls component.stripe.charge, which no mock answers; tests are hermetic: mock it with a mock "task.charge" block in the run, or a mock_component "stripe" block.`,
			Subject: ptr(at(t, ordersFlow, "component.stripe.charge", 1))}},
		Nodes: []NodeLine{{Addr: "task.charge", Status: "failed", Attempts: 1, Error: "no mock answers component.stripe.charge"}, {Addr: "task.ship", Status: "skipped"}}}
	skip := &RunReport{File: ordersTest, Name: "slow_path", Range: at(t, ordersTest, `run "slow_path"`, 1), Workflow: ordersFlow, Status: Skip}
	bad := &FileReport{Path: badTest, Diags: hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Unsupported block type",
		Detail:  `Blocks of type "mokc" are not expected here. Did you mean "mock"?`,
		Subject: ptr(at(t, badTest, "mokc", 1))}}}
	return &Report{
		Files:  []*FileReport{bad, {Path: ordersTest, Runs: []*RunReport{pass, fail, errored, skip}}},
		Passed: 1, Failed: 1, Errored: 1, Skipped: 1,
		Elapsed: 50 * time.Millisecond,
		Sources: sources,
	}
}

// render streams rep's files and runs through r, as Test's OnFile and OnRun would, and
// finishes.
func render(r Renderer, rep *Report) {
	for _, f := range rep.Files {
		r.File(f)
		for _, run := range f.Runs {
			r.Run(run)
		}
	}
	r.Finish(rep)
}

// golden compares got with testdata/report/NAME.golden, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(reportDir, name+goldenSuffix)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the output (run with -update to accept it)\n--- got:\n%s\n--- want:\n%s", path, got, want)
	}
}

func TestHumanGolden(t *testing.T) {
	for _, verbose := range []bool{false, true} {
		name := "human"
		if verbose {
			name = "human_verbose"
		}
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			render(NewHuman(&out, &errOut, verbose), sampleReport(t))
			golden(t, name, "--- stdout\n"+out.String()+"--- stderr\n"+errOut.String())
		})
	}
}

// TestHumanReadsSourcesWhileStreaming: runs are rendered before the Report (and its Sources)
// exists, so their snippets come from the files on disk, the same as from the Report's.
func TestHumanReadsSourcesWhileStreaming(t *testing.T) {
	rep := sampleReport(t)
	var streamed, finished bytes.Buffer
	h := NewHuman(&streamed, io.Discard, false)
	h2 := NewHuman(&finished, io.Discard, false)
	h2.addSources(rep.Sources)
	fail := rep.Files[1].Runs[1]
	h.Run(fail)
	h2.Run(fail)
	if streamed.String() != finished.String() {
		t.Errorf("streamed:\n%s\nwith the report's sources:\n%s", streamed.String(), finished.String())
	}
	if !strings.Contains(streamed.String(), "   23:     condition     = node.task.charge.attempts == 3") {
		t.Errorf("the failure does not show the condition's source line:\n%s", streamed.String())
	}
}

func TestHumanSummary(t *testing.T) {
	bad := &FileReport{Path: "x.fsctest.hcl", Diags: hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "bad"}}}
	warned := &FileReport{Path: "y.fsctest.hcl", Diags: hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "meh"}}}
	tests := []struct {
		rep  *Report
		want string
	}{
		{&Report{Passed: 12}, "Success! 12 passed, 0 failed."},
		{&Report{Passed: 10, Skipped: 2}, "Success! 10 passed, 0 failed, 2 skipped."},
		{&Report{Passed: 10, Failed: 2, Errored: 1}, "Failure! 10 passed, 2 failed, 1 errored."},
		{&Report{Errored: 1}, "Failure! 0 passed, 0 failed, 1 errored."},
		{&Report{Passed: 3, Files: []*FileReport{bad}}, "Failure! 3 passed, 0 failed, 1 invalid test file."},
		{&Report{Files: []*FileReport{bad, bad}}, "Failure! 0 passed, 0 failed, 2 invalid test files."},
		{&Report{Passed: 1, Files: []*FileReport{warned}}, "Success! 1 passed, 0 failed."},
	}
	for _, tt := range tests {
		if got := HumanSummary(tt.rep); got != tt.want {
			t.Errorf("HumanSummary(%+v) = %q, want %q", tt.rep, got, tt.want)
		}
	}
}

// normaliseJSON replaces what changes from run to run (timestamps) with fixed text.
var jsonTimestamp = regexp.MustCompile(`"@timestamp":"[^"]*"`)

func TestJSONGolden(t *testing.T) {
	var out bytes.Buffer
	render(NewJSON(&out, "0.0.0-test"), sampleReport(t))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	var types []string
	for i, line := range lines {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %d is not a JSON object: %v\n%s", i+1, err, line)
		}
		ts, _ := ev["@timestamp"].(string)
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
			t.Errorf("line %d: @timestamp %q is not RFC 3339: %v", i+1, ts, err)
		}
		types = append(types, ev["type"].(string))
	}
	want := "version diagnostic run_start run_end run_start run_end run_start run_end run_start run_end summary"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("event types\n got %s\nwant %s", got, want)
	}
	golden(t, "events.ndjson", jsonTimestamp.ReplaceAllString(out.String(), `"@timestamp":"TIMESTAMP"`))
}

// TestJSONRunStartedEarly: a run reported once when it starts (Status "") and again when it
// ends gets one run_start, then its run_end.
func TestJSONRunStartedEarly(t *testing.T) {
	var out bytes.Buffer
	j := NewJSON(&out, "0.0.0-test")
	j.Now = func() time.Time { return time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC) }
	r := &RunReport{File: "a.fsctest.hcl", Name: "one"}
	j.Run(r)
	r.Status, r.RunStatus, r.Elapsed = Pass, "succeeded", 1500*time.Millisecond
	j.Run(r)
	j.Finish(&Report{Files: []*FileReport{{Path: "a.fsctest.hcl", Runs: []*RunReport{r}}}, Passed: 1, Elapsed: 2 * time.Second})
	want := `{"type":"version","@timestamp":"2026-11-26T09:00:00Z","fuscia":"0.0.0-test","format_version":"1.0"}
{"type":"run_start","@timestamp":"2026-11-26T09:00:00Z","file":"a.fsctest.hcl","run":"one"}
{"type":"run_end","@timestamp":"2026-11-26T09:00:00Z","file":"a.fsctest.hcl","run":"one","status":"pass","elapsed_ms":1500,"virtual_ms":0,"run_status":"succeeded","failures":[],"diagnostics":[],"nodes":[]}
{"type":"summary","@timestamp":"2026-11-26T09:00:00Z","passed":1,"failed":0,"errored":0,"skipped":0,"invalid_files":0,"elapsed_ms":2000,"ok":true}
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

var junitTime = regexp.MustCompile(`time="[0-9.]+"`)

func TestJUnitGolden(t *testing.T) {
	var out bytes.Buffer
	if err := WriteJUnit(&out, sampleReport(t)); err != nil {
		t.Fatal(err)
	}
	// Well-formed XML with the counts CI reads.
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name      string    `xml:"name,attr"`
				Classname string    `xml:"classname,attr"`
				Failure   *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("not valid XML: %v\n%s", err, out.String())
	}
	if doc.Tests != 5 || doc.Failures != 1 || doc.Errors != 2 || doc.Skipped != 1 || len(doc.Suites) != 2 {
		t.Errorf("tests=%d failures=%d errors=%d skipped=%d suites=%d, want 5 1 2 1 2", doc.Tests, doc.Failures, doc.Errors, doc.Skipped, len(doc.Suites))
	}
	if c := doc.Suites[1].Cases[1]; c.Name != "retries_declined_cards" || c.Classname != ordersTest || c.Failure == nil {
		t.Errorf("second case of %s = %+v, want the failed run retries_declined_cards", ordersTest, c)
	}
	golden(t, "junit.xml", junitTime.ReplaceAllString(out.String(), `time="T"`))
}

// TestJUnitEscapes: text that is not valid in XML (control characters, "]]>", quotes in
// attributes) still makes a document that parses, with the text kept where XML can hold it.
func TestJUnitEscapes(t *testing.T) {
	r := &RunReport{File: `q"<&>.fsctest.hcl`, Name: `a "quoted" <name>`, Status: Fail,
		Failures: []Failure{{Summary: "Assertion failed", Detail: "bell \a and ]]> and \x00 end"}}}
	var out bytes.Buffer
	if err := WriteJUnit(&out, &Report{Files: []*FileReport{{Path: r.File, Runs: []*RunReport{r}}}, Failed: 1}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("not valid XML: %v\n%s", err, out.String())
	}
	c := doc.Suites[0].Cases[0]
	if c.Name != r.Name || !strings.Contains(c.Failure.Text, "]]> and") || !strings.Contains(c.Failure.Message, "Assertion failed: bell") {
		t.Errorf("case %+v lost its text:\n%s", c, out.String())
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestJUnitWriteError(t *testing.T) {
	if err := WriteJUnit(failingWriter{}, &Report{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("WriteJUnit to a failing writer returned %v, want its error", err)
	}
}
