package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// poolsWorkflow names pools on tasks of every shape a task has: at the top level, with
// for_each, in a loop body, without a pool, and on a builtin that runs in the coordinator
// (a warning). Its `pool` line in task.fetch is not in `fmt` form.
const poolsWorkflow = `workflow "pools" {}

variable "base" {
  type = string
}

task "fetch" {
  uses = builtin.http
    pool="edge"
  inputs = { url = "${var.base}/rows" }
}

task "probe" {
  uses     = builtin.http
  pool     = "edge-2"
  for_each = ["a", "b"]
  inputs   = { url = "${var.base}/probe/${each.value}" }
}

task "shape" {
  uses   = builtin.transform
  pool   = "gpu"
  inputs = { n = length(task.fetch.output.body.rows) }
}

loop "rows" {
  for_each = task.fetch.output.body.rows

  task "store" {
    uses   = builtin.http
    pool   = "near-db"
    inputs = { url = "${var.base}/store/${each.value}" }
  }
}

task "plain" {
  uses   = builtin.http
  inputs = { url = "${var.base}/plain" }
}
`

// shapePoolLine is the line of task.shape's pool in poolsWorkflow, before and after fmt.
const shapePoolLine = 22

// planBlocks splits a text plan into the lines of each node, by address.
func planBlocks(out string) map[string]string {
	head := regexp.MustCompile(`^\s*\+ (\S+) \(`)
	blocks := map[string]string{}
	cur := ""
	for _, line := range strings.Split(out, "\n") {
		if m := head.FindStringSubmatch(line); m != nil {
			cur = m[1]
		} else if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "body stage") {
			cur = ""
		}
		if cur != "" {
			blocks[cur] += line + "\n"
		}
	}
	return blocks
}

// TestPoolE2E drives `pool` through the binary: fmt keeps it, validate accepts it (with a
// warning on a coordinator builtin), plan shows it in text and JSON, a saved plan keeps it, and
// apply on one machine runs every task as if there were no pools. A pool that is not a literal
// string, or not a valid name, is an error naming the file and line.
func TestPoolE2E(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/rows" {
			_, _ = w.Write([]byte(`{"rows": ["x", "y"]}`))
			return
		}
		_, _ = w.Write([]byte(`{"ok": true}`))
	}))
	t.Cleanup(srv.Close)
	f := h.write("pools.fsc.hcl", poolsWorkflow)

	// fmt aligns the pool line and keeps every pool.
	wantCode(t, h.run("fmt", f), 0)
	formatted := h.read(f)
	wantContains(t, "the formatted workflow", formatted,
		"  uses   = builtin.http\n  pool   = \"edge\"\n  inputs = {", `pool     = "edge-2"`, `pool   = "gpu"`, `pool   = "near-db"`)
	if got, want := strings.Count(formatted, "pool"), strings.Count(poolsWorkflow, "pool"); got != want {
		t.Errorf("fmt kept %d mentions of pool, want %d:\n%s", got, want, formatted)
	}
	wantCode(t, h.run("fmt", "-check", f), 0)

	// validate: valid, with one warning at task.shape's pool.
	r := h.run("validate", f)
	wantCode(t, r, 0)
	wantContains(t, "validate's stderr", r.stderr, "Warning: Pool has no effect", "on pools.fsc.hcl line 22",
		"pool has no effect: builtin.transform runs in the coordinator")
	if strings.Count(r.stderr, "Warning:") != 1 || strings.Contains(r.stderr, "Error:") {
		t.Errorf("validate: want exactly one warning:\n%s", r)
	}
	v := decodeValidate(t, h.run("validate", "-json", f).stdout)
	if !v.Valid || v.ErrorCount != 0 || v.WarningCount != 1 {
		t.Fatalf("validate -json: %+v, want valid with one warning", v)
	}
	if d := v.Diagnostics[0]; d.Severity != "warning" || d.Range == nil || d.Range.Filename != f || d.Range.Start.Line != shapePoolLine {
		t.Errorf("the warning is %+v at %+v, want a warning at %s line %d", d, d.Range, f, shapePoolLine)
	}

	// plan: a pool line for each task whose pool is not the default.
	r = h.run("plan", f, "-var", "base="+srv.URL)
	wantCode(t, r, 0)
	blocks := planBlocks(r.stdout)
	poolLine := regexp.MustCompile(`(?m)^\s+pool\s+(\S+)$`)
	for addr, want := range map[string]string{
		"task.fetch": "edge", "task.probe": "edge-2", "task.shape": "gpu", "loop.rows/task.store": "near-db",
		"task.plain": "", "loop.rows": "",
	} {
		block, ok := blocks[addr]
		if !ok {
			t.Errorf("plan does not list %s:\n%s", addr, r.stdout)
			continue
		}
		got := ""
		if m := poolLine.FindStringSubmatch(block); m != nil {
			got = m[1]
		}
		if got != want {
			t.Errorf("plan shows pool %q for %s, want %q:\n%s", got, addr, want, block)
		}
	}

	// plan -json: "pool" on every task node, "default" when unset, on no other node.
	r = h.run("plan", f, "-json", "-var", "base="+srv.URL)
	wantCode(t, r, 0)
	decodePlan(t, r.stdout)
	var doc struct {
		Nodes map[string]map[string]json.RawMessage `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	wantJSON := map[string]string{
		"task.fetch": `"edge"`, "task.probe": `"edge-2"`, "task.shape": `"gpu"`, "loop.rows/task.store": `"near-db"`,
		"task.plain": `"default"`, "loop.rows": "",
	}
	for addr, want := range wantJSON {
		n, ok := doc.Nodes[addr]
		if !ok {
			t.Errorf("plan -json has no node %s", addr)
			continue
		}
		if got := string(n["pool"]); got != want {
			t.Errorf("plan -json: %s has pool %s, want %s", addr, got, cmpOrNone(want))
		}
	}

	// A saved plan keeps the pools and applies on one machine as if there were none.
	r = h.run("plan", f, "-var", "base="+srv.URL, "-out", "pools.fsplan")
	wantCode(t, r, 0)
	r = h.run("apply", "pools.fsplan", "-json")
	wantCode(t, r, 0)
	if ex := finishedExecution(t, r.stdout); ex["status"] != "succeeded" {
		t.Fatalf("apply of the saved plan: status %v, want succeeded:\n%s", ex["status"], r)
	}
	mu.Lock()
	got := map[string]int{}
	for k, n := range seen {
		got[k] = n
	}
	mu.Unlock()
	want := map[string]int{"/rows": 1, "/probe/a": 1, "/probe/b": 1, "/store/x": 1, "/store/y": 1, "/plain": 1}
	for path, n := range want {
		if got[path] != n {
			t.Errorf("the server saw %s %d times, want %d (all requests: %v)", path, got[path], n, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the server saw %v, want exactly %v", got, want)
	}

	// Errors: a pool that is not a literal string, and one that is not a pool name.
	bad := h.write("bad.fsc.hcl", `workflow "bad" {}

variable "p" {
  default = "gpu"
}

task "a" {
  uses   = builtin.http
  pool   = var.p
  inputs = { url = "https://example.com" }
}

task "b" {
  uses   = builtin.http
  pool   = "GPU.large"
  inputs = { url = "https://example.com" }
}
`)
	r = h.run("validate", bad)
	wantCode(t, r, 2)
	wantContains(t, "validate's stderr", r.stderr,
		"Error: Invalid pool\n", "on bad.fsc.hcl line 9", "`pool` must be a literal string",
		"Error: Invalid pool name", "on bad.fsc.hcl line 15", `The pool name "GPU.large" is not valid`)
	r = h.run("validate", "-json", bad)
	wantCode(t, r, 2)
	v = decodeValidate(t, r.stdout)
	var lines []int
	for _, d := range v.Diagnostics {
		if d.Range == nil || d.Range.Filename != bad {
			t.Errorf("diagnostic %+v does not name %s", d, bad)
			continue
		}
		lines = append(lines, d.Range.Start.Line)
	}
	if v.ErrorCount != 2 || !slices.Equal(lines, []int{9, 15}) {
		t.Errorf("validate -json: %d errors at lines %v, want 2 at 9 and 15: %+v", v.ErrorCount, lines, v.Diagnostics)
	}
}

func cmpOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
