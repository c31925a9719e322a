package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/lang"
)

// loadWithDiagnostics loads like loadProgram, but a file with errors comes back as a LoadError
// with its diagnostics, as the host's Load returns it.
func loadWithDiagnostics(_ context.Context, file string, _ []byte) (*engine.Program, error) {
	if _, diags := lang.NewParser().Load(file, lang.Options{Planning: true}); diags.HasErrors() {
		return nil, &LoadError{Diagnostics: diags}
	}
	return loadProgram(file)
}

// workflowList is GET /v1/workflows's answer.
type workflowList struct {
	Workflows []workflowInfo `json:"workflows"`
	Errors    []fileErrors   `json:"errors"`
}

func (ts *testServer) workflowList() workflowList {
	ts.t.Helper()
	r := ts.api(http.MethodGet, "/v1/workflows", "")
	var out workflowList
	if err := json.Unmarshal([]byte(r.raw), &out); err != nil || r.code != http.StatusOK {
		ts.t.Fatalf("GET /v1/workflows: %d %s (%v)", r.code, r.raw, err)
	}
	if out.Errors == nil {
		ts.t.Fatalf("GET /v1/workflows: no \"errors\" list in %s", r.raw)
	}
	return out
}

// appendRun journals a finished run of workflow with status, as a run that ended would have.
func appendRun(t *testing.T, st *journal.Store, workflow, status string) string {
	t.Helper()
	id := engine.NewExecutionID()
	err := st.Append(context.Background(), id, true,
		journal.Entry{Type: journal.RunStarted, Run: &journal.RunInfo{Workflow: workflow, Trigger: journal.Trigger{Type: "manual", Name: "go"}}},
		journal.Entry{Type: journal.RunFinished, Status: status})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestWorkflowListDetails: GET /v1/workflows gives each workflow's description, a schedule's
// next occurrence, the counts of its last 100 runs by status and its last run; the files that
// do not load are listed with their diagnostics and lines until they load or are gone.
func TestWorkflowListDetails(t *testing.T) {
	dir := t.TempDir()
	writeWorkflow(t, filepath.Join(dir, "alpha.fsc.hcl"), `workflow "alpha" {
  description = "Nightly numbers"
}

trigger "schedule" "nightly" {
  cron     = "30 3 * * *"
  timezone = "Europe/Paris"
}

trigger "manual" "go" {}

task "echo" {
  uses   = builtin.transform
  inputs = { n = 1 }
}
`)
	broken := filepath.Join(dir, "broken.fsc.hcl")
	writeWorkflow(t, broken, "workflow \"broken\" {}\n\ntask \"x\" {\n  uses = builtin.nosuchthing\n}\n")
	ts := newTestServer(t, dir, loadWithDiagnostics)

	// 101 older runs, then 2 failed ones, then one through the API: the last 100 are 97 + 2 + 1.
	for range 101 {
		appendRun(t, ts.st, "alpha", journal.StatusSucceeded)
	}
	appendRun(t, ts.st, "alpha", journal.StatusFailed)
	appendRun(t, ts.st, "alpha", journal.StatusFailed)
	appendRun(t, ts.st, "other", journal.StatusFailed) // another workflow's: not counted
	ts.startServing()
	r := ts.api(http.MethodPost, "/v1/workflows/alpha/runs?wait=true", `{}`)
	last, _ := r.body["execution_id"].(string)
	if r.code != http.StatusOK || last == "" {
		t.Fatalf("run alpha: %d %s", r.code, r.raw)
	}

	before := time.Now()
	list := ts.workflowList()
	if len(list.Workflows) != 1 {
		t.Fatalf("workflows %+v, want alpha alone", list.Workflows)
	}
	a := list.Workflows[0]
	if a.Name != "alpha" || a.Description != "Nightly numbers" {
		t.Errorf("alpha: name %q description %q", a.Name, a.Description)
	}
	if a.Runs[journal.StatusSucceeded] != 98 || a.Runs[journal.StatusFailed] != 2 || len(a.Runs) != 2 {
		t.Errorf("alpha's runs %v, want 98 succeeded and 2 failed (the last 100)", a.Runs)
	}
	if a.LastRun == nil || a.LastRun.ExecutionID != last || a.LastRun.Status != journal.StatusSucceeded || a.LastRun.FinishedAt == nil {
		t.Errorf("alpha's last run %+v, want %s succeeded with its finish time", a.LastRun, last)
	}
	var nightly *triggerInfo
	for i := range a.Triggers {
		if a.Triggers[i].Name == "nightly" {
			nightly = &a.Triggers[i]
		} else if a.Triggers[i].Next != nil {
			t.Errorf("trigger %s has a next occurrence", a.Triggers[i].Name)
		}
	}
	if nightly == nil || nightly.Next == nil {
		t.Fatalf("the schedule has no next occurrence: %+v", a.Triggers)
	}
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	next := nightly.Next.In(paris)
	if next.Hour() != 3 || next.Minute() != 30 || !next.After(before.Add(-time.Minute)) || next.After(before.Add(25*time.Hour)) {
		t.Errorf("next occurrence %s, want the next 03:30 in Paris after %s", nightly.Next, before)
	}

	if len(list.Errors) != 1 || list.Errors[0].File != broken {
		t.Fatalf("errors %+v, want %s's", list.Errors, broken)
	}
	d := list.Errors[0].Diagnostics
	if len(d) == 0 || d[0].Severity != "error" || d[0].Filename != broken || d[0].Line != 4 || d[0].Column == 0 || d[0].Summary == "" {
		t.Errorf("diagnostics %+v, want an error at %s line 4", d, broken)
	}

	// A second file declaring alpha is not served, and says why.
	dup := ts.writeIn("dup.fsc.hcl", "workflow \"alpha\" {}\n\ntask \"y\" {\n  uses   = builtin.transform\n  inputs = {}\n}\n")
	ts.srv.look()
	list = ts.workflowList()
	if len(list.Errors) != 2 || list.Errors[1].File != dup || !strings.Contains(list.Errors[1].Diagnostics[0].Summary, "alpha") {
		t.Errorf("errors %+v, want broken's and dup's (alpha declared twice)", list.Errors)
	}

	// Fixed, the broken file loads and its errors go; a removed file's go too.
	writeWorkflow(t, broken, "workflow \"broken\" {}\n\ntask \"x\" {\n  uses   = builtin.transform\n  inputs = {}\n}\n")
	if err := os.Remove(dup); err != nil {
		t.Fatal(err)
	}
	ts.srv.look()
	list = ts.workflowList()
	if len(list.Errors) != 0 || len(list.Workflows) != 2 {
		t.Errorf("after the fix: workflows %d, errors %+v; want 2 and none", len(list.Workflows), list.Errors)
	}
	if b := list.Workflows[1]; b.Name != "broken" || b.LastRun != nil || len(b.Runs) != 0 {
		t.Errorf("broken: %+v, want no runs and a null last run", b)
	}
}

// TestDiagnosticsOf: a LoadError's diagnostics keep their places and severities; another error
// is one diagnostic without a line.
func TestDiagnosticsOf(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "w.fsc.hcl")
	writeWorkflow(t, file, "workflow \"w\" {}\n\ntask \"x\" {\n  uses = builtin.transform\n  inputs = { a = nosuch.thing }\n}\n")
	_, err := loadWithDiagnostics(context.Background(), file, nil)
	got := diagnosticsOf(file, err)
	if len(got) == 0 || got[0].Line != 5 || got[0].Filename != file || got[0].Severity != "error" || got[0].Detail == "" {
		t.Errorf("diagnostics %+v, want an error with detail at line 5", got)
	}
	if !strings.Contains(err.Error(), "line 5") {
		t.Errorf("LoadError %q, want its place", err)
	}
	plain := diagnosticsOf(file, os.ErrPermission)
	if len(plain) != 1 || plain[0].Line != 0 || plain[0].Filename != file || plain[0].Summary != os.ErrPermission.Error() {
		t.Errorf("a plain error: %+v", plain)
	}
}

// TestWorkflowGraph: GET /v1/workflows/{name}/graph gives the picture `fuscia graph` draws:
// every node with its kind, name and what it uses, a loop's body as a group, edges with the
// switch's branch keys and the loop's "each" edges; 404 for an unknown workflow.
func TestWorkflowGraph(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A hidden directory is not served: the child is only called.
	writeWorkflow(t, filepath.Join(dir, ".lib", "child.fsc.hcl"), "workflow \"child\" {}\n\ntask \"c\" {\n  uses   = builtin.transform\n  inputs = {}\n}\n")
	writeWorkflow(t, filepath.Join(dir, "shapes.fsc.hcl"), `workflow "shapes" {}

trigger "manual" "go" {}

task "fetch" {
  uses   = builtin.transform
  inputs = { items = [1, 2] }
}

switch "pick" {
  case "big" { when = length(task.fetch.output.items) > 1 }
  default "small" {}
}

task "each" {
  uses     = builtin.transform
  for_each = task.fetch.output.items
  after    = [switch.pick.big]
  inputs   = { v = each.value }
}

loop "l" {
  for_each = task.fetch.output.items
  after    = [switch.pick.small]

  task "a" {
    uses   = builtin.transform
    inputs = { v = each.value }
  }

  task "b" {
    uses   = builtin.transform
    inputs = { v = task.a.output.v }
  }
}

join "done" {
  after    = [task.each, loop.l]
  strategy = "any"
}

wait "pause" {
  after    = [join.done]
  duration = "1s"
}

call "child" {
  workflow = "./.lib/child.fsc.hcl"
  after    = [wait.pause]
}
`)
	ts := newTestServer(t, dir, nil)
	ts.startServing()

	r := ts.api(http.MethodGet, "/v1/workflows/shapes/graph", "")
	var g workflowGraph
	if err := json.Unmarshal([]byte(r.raw), &g); err != nil || r.code != http.StatusOK {
		t.Fatalf("graph: %d %s (%v)", r.code, r.raw, err)
	}
	if g.Workflow != "shapes" {
		t.Errorf("workflow %q", g.Workflow)
	}
	var nodes []string
	for _, n := range g.Nodes {
		nodes = append(nodes, strings.Join([]string{n.ID, n.Kind, n.Label, n.Uses, n.Group, n.Calls}, " "))
	}
	want := []string{
		"task.fetch task fetch builtin.transform  ",
		"switch.pick switch pick   ",
		"task.each task each builtin.transform  ",
		"loop.l loop l   ",
		"join.done join done   ",
		"wait.pause wait pause   ",
		"call.child call child   child",
		"loop.l/task.a task a builtin.transform loop.l ",
		"loop.l/task.b task b builtin.transform loop.l ",
	}
	if strings.Join(nodes, "\n") != strings.Join(want, "\n") {
		t.Errorf("nodes:\n%s\nwant:\n%s", strings.Join(nodes, "\n"), strings.Join(want, "\n"))
	}
	for _, n := range g.Nodes {
		if n.ForEach != (n.ID == "task.each") {
			t.Errorf("%s: for_each %v", n.ID, n.ForEach)
		}
	}
	if len(g.Groups) != 1 || g.Groups[0] != (graphGroup{ID: "loop.l", Kind: "loop", Label: "l"}) {
		t.Errorf("groups %+v, want loop.l", g.Groups)
	}
	edges := map[string]bool{}
	for _, e := range g.Edges {
		edges[e.From+" "+e.To+" "+e.Label] = true
	}
	for _, e := range []string{
		"task.fetch switch.pick ", "switch.pick task.each big", "switch.pick loop.l small",
		"loop.l loop.l/task.a each", "loop.l/task.a loop.l/task.b ", "task.each join.done ",
		"loop.l join.done ", "join.done wait.pause ", "wait.pause call.child ",
	} {
		if !edges[e] {
			t.Errorf("no edge %q in %v", e, g.Edges)
		}
	}

	if r := ts.api(http.MethodGet, "/v1/workflows/nosuch/graph", ""); r.code != http.StatusNotFound || r.body["code"] != "not_found" {
		t.Errorf("unknown workflow: %d %s, want 404 not_found", r.code, r.raw)
	}
	if r := ts.send(http.MethodGet, "/v1/workflows/shapes/graph", "", nil); r.code != http.StatusUnauthorized {
		t.Errorf("without a token: %d, want 401", r.code)
	}
}

// TestRunGraph: GET /v1/executions/{id}/graph is the graph of the workflow as the run started
// it, from its journaled plan: after the file renamed a node, the run's graph still has the
// old one (the workflow's graph, the new one). The web UI drew a run with the current graph.
func TestRunGraph(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "x.fsc.hcl")
	writeWorkflow(t, file, hookSource("x", "/hooks/x", "v1"))
	ts := newTestServer(t, dir, nil)
	ts.startServing()
	id := ts.postJSON("/hooks/x", "{}").startedID(t, "POST /hooks/x")
	ts.waitSucceeded(id)

	writeWorkflow(t, file, strings.ReplaceAll(hookSource("x", "/hooks/x", "v2"), "echo", "renamed"))
	ts.srv.look()
	ids := func(r reply) string {
		t.Helper()
		if r.code != http.StatusOK {
			t.Fatalf("%d %s", r.code, r.raw)
		}
		var g workflowGraph
		if err := json.Unmarshal([]byte(r.raw), &g); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range g.Nodes {
			out = append(out, n.ID)
		}
		return strings.Join(out, " ")
	}
	if got := ids(ts.api(http.MethodGet, "/v1/executions/"+id+"/graph", "")); got != "task.echo" {
		t.Errorf("the run's graph has nodes %q, want the run's task.echo", got)
	}
	if got := ids(ts.api(http.MethodGet, "/v1/workflows/x/graph", "")); got != "task.renamed" {
		t.Errorf("the workflow's graph has nodes %q, want task.renamed", got)
	}
	if r := ts.api(http.MethodGet, "/v1/executions/01NOPE0000000000000000000Z/graph", ""); r.code != http.StatusNotFound {
		t.Errorf("the graph of no run: %d %s, want 404", r.code, r.raw)
	}
}
