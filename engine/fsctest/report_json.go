package fsctest

import (
	"encoding/json"
	"io"
	"time"

	"github.com/fuscia/fuscia/internal/diagrender"
)

// JSONFormatVersion is the version of the `fuscia test -json` stream: a minor bump only adds
// fields or event types, so a reader ignores what it does not know.
const JSONFormatVersion = "1.0"

// JSON renders a test as NDJSON events for programs (docs/reference/cli.md, "`test -json`"):
// first a `version` event, then for each test file a `diagnostic` event per diagnostic it has
// and for each of its run blocks `run_start` and `run_end`, and last a `summary`. Every event
// has `type` and `@timestamp`.
type JSON struct {
	W io.Writer
	// Fuscia is the version of fuscia, for the version event.
	Fuscia string
	// Now stamps the events; nil means time.Now.
	Now func() time.Time

	// Owned by the caller of Run and Finish (one goroutine at a time).
	enc     *json.Encoder
	started map[*RunReport]bool  // runs whose run_start went out before their end was known
	shown   map[*FileReport]bool // files whose diagnostics went out
}

// NewJSON returns a JSON renderer writing to w.
func NewJSON(w io.Writer, fuscia string) *JSON {
	return &JSON{W: w, Fuscia: fuscia}
}

// The events of the stream. Every one begins with jsonHead.
type (
	jsonHead struct {
		Type      string    `json:"type"`
		Timestamp time.Time `json:"@timestamp"`
	}
	jsonVersion struct {
		jsonHead
		Fuscia        string `json:"fuscia"`
		FormatVersion string `json:"format_version"`
	}
	jsonRunStart struct {
		jsonHead
		File     string `json:"file"`
		Run      string `json:"run"`
		Workflow string `json:"workflow,omitempty"`
	}
	jsonRunEnd struct {
		jsonHead
		File        string            `json:"file"`
		Run         string            `json:"run"`
		Workflow    string            `json:"workflow,omitempty"`
		Status      Status            `json:"status"`
		ElapsedMS   int64             `json:"elapsed_ms"`
		VirtualMS   int64             `json:"virtual_ms"`
		RunStatus   string            `json:"run_status"`
		Failures    []jsonFailure     `json:"failures"`
		Diagnostics []diagrender.Diag `json:"diagnostics"`
		Nodes       []jsonNode        `json:"nodes"`
	}
	jsonFailure struct {
		Summary string            `json:"summary"`
		Detail  string            `json:"detail"`
		Expr    string            `json:"expr,omitempty"`
		Range   *diagrender.Range `json:"range,omitempty"`
		Values  []jsonValue       `json:"values"`
	}
	jsonNode struct {
		Node     string `json:"node"`
		Status   string `json:"status"`
		Attempts int    `json:"attempts"`
		Error    string `json:"error,omitempty"`
	}
	jsonDiagnostic struct {
		jsonHead
		File       string          `json:"file"`
		Diagnostic diagrender.Diag `json:"diagnostic"`
	}
	jsonSummary struct {
		jsonHead
		Passed       int   `json:"passed"`
		Failed       int   `json:"failed"`
		Errored      int   `json:"errored"`
		Skipped      int   `json:"skipped"`
		InvalidFiles int   `json:"invalid_files"`
		ElapsedMS    int64 `json:"elapsed_ms"`
		OK           bool  `json:"ok"`
	}
)

// jsonValue is one reference of a failed condition and its value.
type jsonValue struct {
	Expr  string `json:"expr"`
	Value string `json:"value"`
}

// Run writes the run's run_start and run_end events. A report whose Status is still "" (a
// run that started but has not ended) gets its run_start only; its run_end follows when Run
// is called again with the same report.
func (j *JSON) Run(r *RunReport) {
	j.begin()
	if j.started == nil {
		j.started = map[*RunReport]bool{}
	}
	if !j.started[r] {
		j.emit(&jsonRunStart{jsonHead: j.head("run_start"), File: r.File, Run: r.Name, Workflow: r.Workflow})
		j.started[r] = true
	}
	if r.Status == "" {
		return
	}
	delete(j.started, r)
	ev := &jsonRunEnd{jsonHead: j.head("run_end"), File: r.File, Run: r.Name, Workflow: r.Workflow,
		Status: r.Status, ElapsedMS: r.Elapsed.Milliseconds(), VirtualMS: r.Virtual.Milliseconds(), RunStatus: r.RunStatus,
		Failures: make([]jsonFailure, 0, len(r.Failures)), Diagnostics: diagrender.JSON(r.Diags), Nodes: make([]jsonNode, 0, len(r.Nodes))}
	for _, f := range r.Failures {
		jf := jsonFailure{Summary: f.Summary, Detail: f.Detail, Expr: f.Expr, Values: make([]jsonValue, 0, len(f.Values))}
		if f.Range.Filename != "" {
			rng := diagrender.RangeOf(f.Range)
			jf.Range = &rng
		}
		for _, v := range f.Values {
			jf.Values = append(jf.Values, jsonValue(v))
		}
		ev.Failures = append(ev.Failures, jf)
	}
	for _, n := range r.Nodes {
		ev.Nodes = append(ev.Nodes, jsonNode{Node: n.Addr, Status: n.Status, Attempts: n.Attempts, Error: n.Error})
	}
	j.emit(ev)
}

// File writes a diagnostic event for each diagnostic of the test file.
func (j *JSON) File(f *FileReport) {
	j.begin()
	if j.shown == nil {
		j.shown = map[*FileReport]bool{}
	}
	if j.shown[f] {
		return
	}
	j.shown[f] = true
	for _, d := range diagrender.JSON(f.Diags) {
		j.emit(&jsonDiagnostic{jsonHead: j.head("diagnostic"), File: f.Path, Diagnostic: d})
	}
}

// Finish writes the diagnostics of the test files File did not get, then the summary.
func (j *JSON) Finish(rep *Report) {
	j.begin()
	for _, f := range rep.Files {
		j.File(f)
	}
	j.emit(&jsonSummary{jsonHead: j.head("summary"), Passed: rep.Passed, Failed: rep.Failed, Errored: rep.Errored,
		Skipped: rep.Skipped, InvalidFiles: invalidFiles(rep), ElapsedMS: rep.Elapsed.Milliseconds(), OK: rep.OK()})
}

// begin writes the version event, once, before anything else: every method calls it first,
// so that the version's timestamp is not later than the next event's.
func (j *JSON) begin() {
	if j.enc != nil {
		return
	}
	j.enc = json.NewEncoder(j.W)
	j.enc.SetEscapeHTML(false)
	_ = j.enc.Encode(&jsonVersion{jsonHead: j.head("version"), Fuscia: j.Fuscia, FormatVersion: JSONFormatVersion})
}

// emit writes one event on its own line.
func (j *JSON) emit(ev any) {
	_ = j.enc.Encode(ev)
}

func (j *JSON) head(typ string) jsonHead {
	now := time.Now
	if j.Now != nil {
		now = j.Now
	}
	return jsonHead{Type: typ, Timestamp: now().UTC()}
}
