package local

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/internal/runtime/builtins"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
)

// runViewSecret is the secret of runViewWorkflow: no answer may hold it.
const runViewSecret = "s3cr3t-7c1d-runview"

const runViewWorkflow = `
workflow "views" {}
secret "token" { env = "VIEWS_TOKEN" }
task "call" {
  uses   = builtin.transform
  inputs = { url = "https://example.com", auth = "Bearer ${secret.token}", n = 1 }
}
task "each" {
  uses     = builtin.transform
  for_each = ["a", "b", "c", "d"]
  inputs   = { v = each.value, token = secret.token }
}
task "plain" {
  uses   = builtin.transform
  after  = [task.call]
  inputs = { m = 2 }
}
`

// runWorkflow runs src to its end with a real engine on st, its builtins in this process.
func runWorkflow(t *testing.T, st *journal.Store, src string, env map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "wf.fsc.hcl")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p := lang.NewParser()
	w, diags := p.Load(file, lang.Options{Planning: true})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	res, rdiags := plan.Resolve(w, plan.Env{Home: dir}, hcl.DiagError)
	if rdiags.HasErrors() {
		t.Fatal(rdiags.Error())
	}
	sources := map[string][]byte{}
	for name, f := range p.Files() {
		sources[name] = f.Bytes
	}
	blob, err := plan.Encode(plan.Build(w, res), w, sources, w.VarValues().AsValueMap())
	if err != nil {
		t.Fatal(err)
	}
	runner := builtin.New(builtin.Options{})
	defer runner.Close()
	eng := engine.New(engine.Config{Store: st, Tasks: task.ByKind{lang.UsesBuiltin: builtins.New(runner)}, Getenv: func(k string) string { return env[k] }})
	r, err := eng.Start(context.Background(), engine.NewProgram(w, blob), engine.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Done():
	case <-time.After(2 * time.Minute):
		t.Fatal("the run did not end")
	}
	eng.Wait()
	return r.ID()
}

func getJSON(t *testing.T, url string, out any) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %v in %s", url, err, b)
		}
	}
	return resp.StatusCode, string(b)
}

// TestRunViewsAPI: a real run's timeline and node details through the owner's API: the node
// detail has the attempts, the input (its secret parts {"sensitive": true}), the output and a
// page of items, an item's own detail by its address; no answer holds the secret; an unknown
// run or node is 404 and a bad address, offset or limit 400.
func TestRunViewsAPI(t *testing.T) {
	home := shortHome(t)
	o := ownHome(t, home)
	id := runWorkflow(t, o.Store, runViewWorkflow, map[string]string{"VIEWS_TOKEN": runViewSecret})
	srv := httptest.NewServer(o.Handler())
	defer srv.Close()
	base := srv.URL + "/v1/executions/" + id

	var answers []string
	var tl journal.Timeline
	code, raw := getJSON(t, base+"/timeline", &tl)
	answers = append(answers, raw)
	if code != http.StatusOK || tl.ExecutionID != id || tl.Status != journal.StatusSucceeded || tl.FinishedAt == nil {
		t.Fatalf("timeline: %d %s", code, raw)
	}
	seen := map[string]bool{}
	for _, n := range tl.Nodes {
		seen[n.Node] = true
		if n.Node == "task.call" && (len(n.Attempts) != 1 || n.Attempts[0].Status != journal.StatusSucceeded || n.Attempts[0].FinishedAt == nil || n.StartedAt == nil) {
			t.Errorf("task.call in the timeline: %+v", n)
		}
	}
	if !seen["task.call"] || !seen["task.each"] || !seen["task.plain"] || len(tl.Nodes) != 7 {
		t.Errorf("timeline nodes %d (%v), want task.call, task.plain, task.each and its 4 items", len(tl.Nodes), seen)
	}

	var call journal.NodeDetail
	code, raw = getJSON(t, base+"/nodes/task.call", &call)
	answers = append(answers, raw)
	if code != http.StatusOK || call.Status != journal.StatusSucceeded || len(call.Attempts) != 1 {
		t.Fatalf("task.call: %d %s", code, raw)
	}
	var in map[string]any
	if err := json.Unmarshal(call.Input, &in); err != nil || in["url"] != "https://example.com" || in["n"] != float64(1) || !strings.Contains(string(call.Input), `"auth":{"sensitive":true}`) {
		t.Errorf("task.call's input %s (%v): want the plain parts and auth as {\"sensitive\": true}", call.Input, err)
	}
	// builtin.transform's output is its input, marks and all.
	if !strings.Contains(string(call.Output), `"auth":{"sensitive":true}`) {
		t.Errorf("task.call's output %s, want auth as the marker", call.Output)
	}

	var each journal.NodeDetail
	code, raw = getJSON(t, base+"/nodes/task.each?offset=1&limit=2", &each)
	answers = append(answers, raw)
	if code != http.StatusOK || each.ItemsTotal != 4 || len(each.Items) != 2 || each.Items[0].Index[0] != 1 || each.Items[1].Index[0] != 2 ||
		each.Items[0].Status != journal.StatusSucceeded || each.Items[0].Attempts != 1 || string(each.Items[0].Key) != "1" {
		t.Errorf("task.each items 1-2: %d %s", code, raw)
	}
	var item journal.NodeDetail
	code, raw = getJSON(t, base+"/nodes/task.each[3]", &item)
	answers = append(answers, raw)
	if code != http.StatusOK || item.Node != "task.each[3]" || string(item.Input) != `{"token":{"sensitive":true},"v":"d"}` {
		t.Errorf("task.each[3]: %d %s", code, raw)
	}
	var plain journal.NodeDetail
	code, raw = getJSON(t, base+"/nodes/task.plain", &plain)
	answers = append(answers, raw)
	if code != http.StatusOK || string(plain.Input) != `{"m":2}` || string(plain.Output) != `{"m":2}` {
		t.Errorf("task.plain: %d %s", code, raw)
	}
	// The execution object and the events, for good measure: the same store.
	_, raw = getJSON(t, base, nil)
	answers = append(answers, raw)
	for _, a := range answers {
		if strings.Contains(a, runViewSecret) {
			t.Errorf("an answer holds the secret: %s", a)
		}
	}

	for _, c := range []struct {
		path string
		code int
	}{
		{"/v1/executions/" + id + "/nodes/task.nosuch", http.StatusNotFound},
		{"/v1/executions/01NOSUCHRUN0000000000000000/timeline", http.StatusNotFound},
		{"/v1/executions/01NOSUCHRUN0000000000000000/nodes/task.call", http.StatusNotFound},
		{"/v1/executions/" + id + "/nodes/nonsense", http.StatusBadRequest},
		{"/v1/executions/" + id + "/nodes/task.each[x]", http.StatusBadRequest},
		{"/v1/executions/" + id + "/nodes/task.each?offset=-1", http.StatusBadRequest},
		{"/v1/executions/" + id + "/nodes/task.each?limit=many", http.StatusBadRequest},
	} {
		if code, raw := getJSON(t, srv.URL+c.path, nil); code != c.code {
			t.Errorf("GET %s: %d %s, want %d", c.path, code, raw, c.code)
		}
	}
}
