package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/internal/version"
	"github.com/fuscia/fuscia/lang"
)

// Plan assembly without the binary: testdata/assembly/main.fsc.hcl has one node of every kind;
// these tests build its plan against a component and a plugin installed in a temporary home and
// check what each node dispatches to, its timeout, retry, grants and known inputs, the text
// rendering, the saved plan's round trip, and the lock file.

var update = flag.Bool("update", false, "rewrite testdata/assembly/plan.txt from the current rendering")

// geoWasm stands for the module of acme/geo: plan never runs it, only digests it.
var geoWasm = []byte("\x00asm\x01\x00\x00\x00")

// echoBin is the content of the echo plugin's binary: plan digests it, never starts it.
var echoBin = []byte("#!/bin/sh\nexit 1\n")

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

const geoManifest = `{
  "name": "acme/geo", "version": "1.0.0", "abi": 1, "digest": "%s",
  "capabilities": {"allowed_hosts": ["api.geo.example", "tiles.geo.example"], "allowed_paths": ["/data/geo"]},
  "limits": {"max_memory": "64MiB", "max_fuel": 1000000},
  "tasks": {"lookup": {"schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
}`

// assemblyEnv installs what testdata/assembly/main.fsc.hcl uses in a new home: acme/geo 1.0.0,
// and fuscia-plugin-echo_v1.2.3 in a -plugin-dir. It returns the env and the plugin's path.
func assemblyEnv(t *testing.T) (Env, string) {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, "components", "acme--geo--1.0.0")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "manifest.json"), fmt.Appendf(nil, geoManifest, digestOf(geoWasm)), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "component.wasm"), geoWasm, 0o644))
	plugins := t.TempDir()
	bin := filepath.Join(plugins, "fuscia-plugin-echo_v1.2.3")
	must(t, os.WriteFile(bin, echoBin, 0o755))
	return Env{Home: home, PluginDirs: []string{plugins}}, bin
}

// assembly is the loaded workflow, its resolution and plan, and the parser's sources.
type assembly struct {
	w       *lang.Workflow
	res     *Resolution
	plan    *Plan
	sources map[string][]byte
	env     Env
	bin     string
}

// loadAssembly loads testdata/assembly/main.fsc.hcl from dir (the testdata directory itself, or
// a copy) and builds its plan.
func loadAssembly(t *testing.T, dir string) *assembly {
	t.Helper()
	env, bin := assemblyEnv(t)
	p := lang.NewParser()
	w, diags := p.Load(filepath.Join(dir, "main.fsc.hcl"), lang.Options{Planning: true})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	res, diags := Resolve(w, env, hcl.DiagError)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	sources := map[string][]byte{}
	for name, f := range p.Files() {
		sources[name] = f.Bytes
	}
	return &assembly{w: w, res: res, plan: Build(w, res), sources: sources, env: env, bin: bin}
}

var assemblyDir = filepath.Join("testdata", "assembly")

// copyAssembly copies the workflow files of testdata/assembly to a new directory, for tests
// that write beside them (the lock file).
func copyAssembly(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"main.fsc.hcl", "child.fsc.hcl"} {
		b, err := os.ReadFile(filepath.Join(assemblyDir, name))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	return dir
}

// TestBuildStagesAndOrder: stages are the graph's, and Order lists each loop's body right after
// the loop.
func TestBuildStagesAndOrder(t *testing.T) {
	a := loadAssembly(t, assemblyDir)
	p := a.plan
	wantStages := [][]string{
		{"task.fetch", "task.locate", "task.say", "task.fan", "wait.launch"},
		{"task.locate_all", "switch.tier", "loop.each_item", "call.bill"},
		{"task.pay_high", "task.pay_std"},
		{"join.paid"},
		{"wait.cool_down"},
		{"wait.approve"},
	}
	if !reflect.DeepEqual(p.Stages, wantStages) {
		t.Errorf("stages %v\nwant %v", p.Stages, wantStages)
	}
	wantOrder := []string{
		"task.fetch", "task.locate", "task.say", "task.fan", "wait.launch",
		"task.locate_all", "switch.tier", "loop.each_item", "loop.each_item/task.check", "loop.each_item/task.report", "call.bill",
		"task.pay_high", "task.pay_std", "join.paid", "wait.cool_down", "wait.approve",
	}
	if !reflect.DeepEqual(p.Order, wantOrder) {
		t.Errorf("order %v\nwant %v", p.Order, wantOrder)
	}
	if len(p.Nodes) != len(wantOrder) {
		t.Errorf("%d nodes, want %d", len(p.Nodes), len(wantOrder))
	}
	if p.Workflow != "assembly" || p.File != filepath.Join(assemblyDir, "main.fsc.hcl") || p.FormatVersion != version.PlanFormat {
		t.Errorf("plan of %q in %q, format %q", p.Workflow, p.File, p.FormatVersion)
	}
	if got, want := p.Summary(), "Plan: 16 nodes in 6 stages, 1 plugins, 2 components."; got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
	if got := p.Nodes["loop.each_item"].BodyStages; !reflect.DeepEqual(got, [][]string{{"loop.each_item/task.check"}, {"loop.each_item/task.report"}}) {
		t.Errorf("loop body stages %v", got)
	}
}

// TestBuildNodes checks each node's kind, what it runs, its effective timeout and retry, its
// stage, dependencies, criticality and kind-specific detail.
func TestBuildNodes(t *testing.T) {
	a := loadAssembly(t, assemblyDir)
	geo := digestOf(geoWasm)
	wfRetry := Retry{Attempts: 3, Backoff: "fixed", InitialDelay: "2s", MaxDelay: "1m"}
	cases := []struct {
		addr, kind, uses, dispatch, timeout string
		retry                               Retry
		stage                               int
		deps                                []string
		critical                            bool
		detail, loop                        string
	}{
		// A node retry block replaces the workflow's whole: backoff is exponential again.
		{"task.fetch", "task", "builtin.http", "builtin", "1m30s", Retry{5, "exponential", "500ms", "1h"}, 1, nil, true, "", ""},
		{"task.locate", "task", "component.geo.lookup", "component acme/geo@1.0.0 (" + geo + ")", "45s", wfRetry, 1, nil, true, "", ""},
		{"task.locate_all", "task", "component.geo_all.lookup", "component acme/geo@1.0.0 (" + geo + ")", "45s", wfRetry, 2, []string{"task.fetch"}, true, "", ""},
		{"task.say", "task", "plugin.echo.say", "plugin echo@1.2.3", "45s", wfRetry, 1, nil, false, "", ""},
		{"task.fan", "task", "builtin.transform", "builtin", "45s", wfRetry, 1, nil, true, "concurrency 2", ""},
		{"switch.tier", "switch", "", "switch", "45s", wfRetry, 2, []string{"task.fetch"}, true, "cases high, standard (default)", ""},
		{"task.pay_high", "task", "builtin.transform", "builtin", "45s", wfRetry, 3, []string{"switch.tier"}, true, "", ""},
		{"task.pay_std", "task", "builtin.transform", "builtin", "45s", Retry{1, "exponential", "1s", "1m"}, 3, []string{"switch.tier"}, true, "", ""},
		{"join.paid", "join", "", "join", "45s", wfRetry, 4, []string{"task.pay_high", "task.pay_std"}, true, "strategy m_of_n (m = 1), merge append", ""},
		{"loop.each_item", "loop", "", "loop", "45s", wfRetry, 2, []string{"task.fetch"}, true, "parallel, concurrency 4, on_failure continue", ""},
		{"loop.each_item/task.check", "task", "builtin.transform", "builtin", "45s", wfRetry, 1, nil, true, "", "loop.each_item"},
		{"loop.each_item/task.report", "task", "builtin.transform", "builtin", "45s", wfRetry, 2, []string{"loop.each_item/task.check"}, true, "", "loop.each_item"},
		{"wait.launch", "wait", "", "wait", "none", wfRetry, 1, nil, true, "until 2026-12-01T09:00:00Z", ""},
		{"wait.cool_down", "wait", "", "wait", "none", wfRetry, 5, []string{"join.paid"}, true, "duration 10m", ""},
		{"wait.approve", "wait", "", "wait", "2h", wfRetry, 6, []string{"wait.cool_down"}, true, "approval", ""},
		{"call.bill", "call", "", "call ./child.fsc.hcl", "45s", wfRetry, 2, []string{"task.fetch"}, true, "on_failure continue", ""},
	}
	for _, c := range cases {
		t.Run(c.addr, func(t *testing.T) {
			n := a.plan.Nodes[c.addr]
			if n == nil {
				t.Fatalf("no node %s in the plan", c.addr)
			}
			uses := ""
			if n.Uses != nil {
				uses = *n.Uses
			}
			deps := c.deps
			if deps == nil {
				deps = []string{}
			}
			if n.Kind != c.kind || uses != c.uses || n.Dispatch != c.dispatch {
				t.Errorf("kind %q uses %q dispatch %q, want %q %q %q", n.Kind, uses, n.Dispatch, c.kind, c.uses, c.dispatch)
			}
			if n.Timeout != c.timeout || n.Retry != c.retry {
				t.Errorf("timeout %q retry %+v, want %q %+v", n.Timeout, n.Retry, c.timeout, c.retry)
			}
			if n.Stage != c.stage || !reflect.DeepEqual(n.DependsOn, deps) {
				t.Errorf("stage %d after %v, want %d after %v", n.Stage, n.DependsOn, c.stage, deps)
			}
			if n.FailWorkflow != c.critical || n.Detail != c.detail || n.Loop != c.loop {
				t.Errorf("fail_workflow %v detail %q loop %q, want %v %q %q", n.FailWorkflow, n.Detail, n.Loop, c.critical, c.detail, c.loop)
			}
			if (c.kind == "task" && n.Uses == nil) || (c.kind != "task" && n.Uses != nil) {
				t.Errorf("uses %v: only a task has uses", n.Uses)
			}
		})
	}
}

// TestBuildCapabilities: a component task is granted the block's narrowing where it sets one and
// the manifest's grant elsewhere, with the smaller of each limit; other nodes have none.
func TestBuildCapabilities(t *testing.T) {
	a := loadAssembly(t, assemblyDir)
	want := map[string]*Capabilities{
		"task.locate":     {AllowedHosts: []string{"api.geo.example"}, AllowedPaths: []string{"/data/geo"}, MaxMemory: 64 << 20, MaxFuel: 500},
		"task.locate_all": {AllowedHosts: []string{"api.geo.example", "tiles.geo.example"}, AllowedPaths: []string{"/data/geo"}, MaxMemory: 64 << 20, MaxFuel: 1000000},
	}
	for addr, n := range a.plan.Nodes {
		if !reflect.DeepEqual(n.Capabilities, want[addr]) {
			t.Errorf("%s: capabilities %+v, want %+v", addr, n.Capabilities, want[addr])
		}
	}
	geo := a.plan.Components["geo"]
	if geo == nil || geo.Source != "acme/geo" || geo.Version != "1.0.0" || geo.Constraints != "~> 1.0" || geo.Digest != digestOf(geoWasm) {
		t.Errorf("component geo %+v", geo)
	}
	if all := a.plan.Components["geo_all"]; all == nil || all.Constraints != "~> 1.0" || all.Digest != digestOf(geoWasm) {
		t.Errorf("component geo_all %+v", all)
	}
	echo := a.plan.Plugins["echo"]
	if echo == nil || echo.Source != "echo" || echo.Version != "1.2.3" || echo.FileVersion != "1.2.3" || echo.Digest != digestOf(echoBin) || echo.Path != a.bin {
		t.Errorf("plugin echo %+v", echo)
	}
}

// TestBuildInputs: the inputs known before the run are in the plan; what a secret or a sensitive
// variable gives is {"sensitive": true}, what depends on a run is {"unknown": true}.
func TestBuildInputs(t *testing.T) {
	a := loadAssembly(t, assemblyDir)
	b, err := json.Marshal(a.plan)
	must(t, err)
	var doc struct {
		Nodes map[string]struct {
			Inputs  json.RawMessage `json:"inputs"`
			ForEach json.RawMessage `json:"for_each"`
			When    json.RawMessage `json:"when"`
			Uses    json.RawMessage `json:"uses"`
		} `json:"nodes"`
	}
	must(t, json.Unmarshal(b, &doc))
	cases := []struct{ addr, field, want string }{
		{"task.fetch", "inputs", `{"headers":{"Authorization":{"sensitive":true}},"url":"https://example.com/eu/orders"}`},
		{"task.locate", "inputs", `{"city":"Lyon","odd key":[1,true,null],"pin":{"sensitive":true}}`},
		{"task.locate_all", "inputs", `{"city":{"unknown":true}}`},
		{"task.say", "inputs", `{"empty":{},"none":[],"text":"hello"}`},
		{"task.say", "when", `true`},
		{"task.fan", "inputs", `{"n":{"unknown":true},"name":{"unknown":true}}`},
		{"task.fan", "for_each", `{"a":1,"b":2.5}`},
		{"task.pay_std", "inputs", `{}`},
		{"loop.each_item", "for_each", `{"unknown":true}`},
		{"call.bill", "inputs", `{"order":{"unknown":true}}`},
		{"switch.tier", "inputs", `null`},
		{"switch.tier", "uses", `null`},
		{"join.paid", "when", ``},
	}
	for _, c := range cases {
		n, ok := doc.Nodes[c.addr]
		if !ok {
			t.Errorf("no node %s in the JSON plan", c.addr)
			continue
		}
		got := map[string]json.RawMessage{"inputs": n.Inputs, "for_each": n.ForEach, "when": n.When, "uses": n.Uses}[c.field]
		if string(got) != c.want {
			t.Errorf("%s %s = %s, want %s", c.addr, c.field, got, c.want)
		}
	}
	// The JSON form carries no display order, and names every documented top-level key.
	var top map[string]json.RawMessage
	must(t, json.Unmarshal(b, &top))
	for _, k := range []string{"format_version", "workflow", "file", "stages", "nodes", "components", "plugins"} {
		if _, ok := top[k]; !ok {
			t.Errorf("the JSON plan has no %q", k)
		}
	}
	if len(top) != 7 {
		t.Errorf("the JSON plan has %d keys, want 7: %s", len(top), b)
	}
}

// TestPlanText compares the text rendering with testdata/assembly/plan.txt (go test -update
// rewrites it).
func TestPlanText(t *testing.T) {
	a := loadAssembly(t, assemblyDir)
	got := checkGoldenText(t, a, assemblyDir, "TestPlanText")
	for _, line := range []string{
		"      retry     5 attempts, exponential backoff 500ms to 1h\n",
		"      retry     3 attempts, fixed delay 2s\n",
		"      retry     1 attempt (no retry)\n",
		"      grants    hosts api.geo.example; paths /data/geo\n",
		"      grants    hosts api.geo.example, tiles.geo.example; paths /data/geo\n",
		"      critical  no (fail_workflow = false)\n",
		"          Authorization = (sensitive)\n",
		"        pin       = (sensitive)\n",
		"  + task.say (plugin.echo.say, plugin echo@1.2.3)\n",
		"plugin.echo: echo@1.2.3 (ECHO_DIGEST)\n",
		"\nPlan: 16 nodes in 6 stages, 1 plugins, 2 components.\n",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("the text plan has no line %q", line)
		}
	}
}

// TestSavedAssemblyRoundTrip: a saved plan gives back the plan, the sources of the workflow and
// of the one it calls, and the locks; a plan built again is the saved one until a grant changes.
func TestSavedAssemblyRoundTrip(t *testing.T) {
	a := loadAssembly(t, assemblyDir)
	data, err := Encode(a.plan, a.w, a.sources, nil)
	must(t, err)
	s, err := Decode("assembly.fsplan", data)
	must(t, err)

	want, err := json.Marshal(a.plan)
	must(t, err)
	got, err := json.Marshal(s.Plan)
	must(t, err)
	if !bytes.Equal(got, want) {
		t.Errorf("the saved plan differs from the built one:\n%s\n%s", got, want)
	}
	if s.Workflow != a.w.Filename || s.ABI != version.ABI || s.FormatVersion != version.PlanFormat {
		t.Errorf("saved workflow %q abi %d format %q", s.Workflow, s.ABI, s.FormatVersion)
	}
	if len(s.Files) != 2 || s.Files[0].Path != a.w.Filename || s.Files[0].Entry != "workflows/0" ||
		filepath.Base(s.Files[1].Path) != "child.fsc.hcl" {
		t.Errorf("file index %+v, want the planned file first, then the called one", s.Files)
	}
	for _, f := range s.Files {
		if !bytes.Equal(s.Sources[filepath.Clean(f.Path)], a.sources[f.Path]) {
			t.Errorf("the saved source of %s differs from the file", f.Path)
		}
	}
	geo := a.res.Components["geo"]
	if g := s.Components["geo"]; g.Source != geo.Source || g.Version != geo.Version || g.Constraints != geo.Constraints || g.Digest != geo.Digest ||
		s.Plugins["echo"].Version != "1.2.3" || s.Plugins["echo"].Digest != digestOf(echoBin) || s.Plugins["echo"].Path != "" {
		t.Errorf("saved locks %+v %+v", s.Components, s.Plugins)
	}
	if err := CheckLocks(s, a.res); err != nil {
		t.Errorf("CheckLocks against the same resolution: %v", err)
	}
	if err := s.Rebuilt(Build(a.w, a.res)); err != nil {
		t.Errorf("the same plan built again: %v", err)
	}

	// A grant that changed without a digest that changed: the plan is stale at that node.
	again := Build(a.w, a.res)
	again.Nodes["task.locate_all"].Capabilities.AllowedHosts = []string{"*"}
	if err := s.Rebuilt(again); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "node task.locate_all (capabilities differ)") {
		t.Errorf("a widened grant: %v, want ErrStale naming task.locate_all's capabilities", err)
	}
	again = Build(a.w, a.res)
	again.Stages = again.Stages[:1]
	if err := s.Rebuilt(again); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "its stages, components or plugins") {
		t.Errorf("other stages: %v", err)
	}

	// Tampering with a lock in the file is an integrity failure before anything else.
	edited := rezip(t, data, replaceIn(t, manifestEntry, digestOf(echoBin), digestOf([]byte("another binary"))))
	if _, err := Decode("assembly.fsplan", edited); !errors.Is(err, ErrIntegrity) || !strings.Contains(err.Error(), "member fuscia-plan.json (the plan, its variables and locks) was changed") {
		t.Errorf("an edited lock: %v, want ErrIntegrity", err)
	}
}

// TestCheckLocks: a saved plan is stale when a locked component or plugin resolves now to
// another digest, or to nothing.
func TestCheckLocks(t *testing.T) {
	a := loadAssembly(t, assemblyDir)
	data, err := Encode(a.plan, a.w, a.sources, nil)
	must(t, err)
	s, err := Decode("assembly.fsplan", data)
	must(t, err)
	clone := func() *Resolution {
		r := &Resolution{Components: map[string]*ComponentLock{}, Plugins: map[string]*PluginLock{}}
		for k, v := range a.res.Components {
			c := *v
			r.Components[k] = &c
		}
		for k, v := range a.res.Plugins {
			p := *v
			r.Plugins[k] = &p
		}
		return r
	}
	other := digestOf([]byte("other"))
	cases := []struct {
		name string
		edit func(*Resolution)
		want string
	}{
		{"component digest", func(r *Resolution) { r.Components["geo_all"].Digest = other },
			`component "geo_all" was planned with acme/geo@1.0.0 (` + digestOf(geoWasm) + `), but resolves now to ` + other},
		{"component gone", func(r *Resolution) { delete(r.Components, "geo") }, `component "geo" was planned with acme/geo@1.0.0 (` + digestOf(geoWasm) + `), but resolves now to nothing installed`},
		{"plugin digest", func(r *Resolution) { r.Plugins["echo"].Digest = other },
			`plugin "echo" was planned with version 1.2.3 (` + digestOf(echoBin) + `), but resolves now to ` + other},
		{"plugin gone", func(r *Resolution) { delete(r.Plugins, "echo") }, "resolves now to nothing installed"},
	}
	for _, c := range cases {
		r := clone()
		c.edit(r)
		err := CheckLocks(s, r)
		if !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "run `fuscia plan` again") {
			t.Errorf("%s: %v, want ErrStale saying %q", c.name, err, c.want)
		}
	}
	// A plugin found at another path with the same digest is the same plugin.
	r := clone()
	r.Plugins["echo"].Path = "/elsewhere/fuscia-plugin-echo"
	if err := CheckLocks(s, r); err != nil {
		t.Errorf("same digest at another path: %v", err)
	}
}

// TestWriteFileAndIsPlanFile: WriteFile leaves the plan under its name and no temporary file;
// a path it cannot write is an error naming it.
func TestWriteFileAndIsPlanFile(t *testing.T) {
	a := loadAssembly(t, assemblyDir)
	dir := t.TempDir()
	out := filepath.Join(dir, "assembly.fsplan")
	must(t, WriteFile(out, a.plan, a.w, a.sources, nil))
	if !IsPlanFile(out) || IsPlanFile(filepath.Join(assemblyDir, "main.fsc.hcl")) || IsPlanFile(filepath.Join(dir, "nosuch")) {
		t.Error("IsPlanFile does not tell a plan from a workflow or a missing file")
	}
	if _, err := os.Stat(out + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left: %v", err)
	}
	s, err := ReadFile(out)
	must(t, err)
	if s.Plan.Workflow != "assembly" {
		t.Errorf("read back the plan of %q", s.Plan.Workflow)
	}
	bad := filepath.Join(dir, "nosuch", "x.fsplan")
	if err := WriteFile(bad, a.plan, a.w, a.sources, nil); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("WriteFile into a missing directory: %v, want an error naming %s", err, bad)
	}
	if _, err := ReadFile(filepath.Join(dir, "nosuch.fsplan")); err == nil || !strings.Contains(err.Error(), "nosuch.fsplan") {
		t.Errorf("ReadFile of a missing file: %v", err)
	}
	// A source missing from what the parser read cannot be saved.
	if _, err := Encode(a.plan, a.w, map[string][]byte{a.w.Filename: a.sources[a.w.Filename]}, nil); err == nil || !strings.Contains(err.Error(), "no source for") {
		t.Errorf("Encode without the called workflow's source: %v", err)
	}
}

// checkGoldenText renders a's plan as text and compares it with dir/plan.txt (go test -run
// test -update rewrites it); it returns the rendering.
func checkGoldenText(t *testing.T, a *assembly, dir, test string) string {
	t.Helper()
	var buf bytes.Buffer
	must(t, a.plan.WriteText(&buf))
	// The digests are the test's own bytes; the golden file names them by what they are.
	got := strings.ReplaceAll(buf.String(), digestOf(geoWasm), "GEO_DIGEST")
	got = strings.ReplaceAll(got, digestOf(echoBin), "ECHO_DIGEST")
	golden := filepath.Join(dir, "plan.txt")
	if *update {
		must(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	must(t, err)
	if got != string(want) {
		t.Errorf("the text plan differs from %s (go test -run %s -update rewrites it):\n%s", golden, test, got)
	}
	return got
}

// TestHugeInputsNotShown: known inputs that are small in memory but huge written out (5,000
// references to one 200 KB string: 1 GB of JSON) are not shown by the plan, which stays small
// to encode; serve encodes every plan it loads, and such a file ran it out of memory.
func TestHugeInputsNotShown(t *testing.T) {
	refs := strings.TrimSuffix(strings.Repeat("var.s, ", 5000), ", ")
	src := "workflow \"vb\" {}\nvariable \"s\" {\n  type    = string\n  default = \"" + strings.Repeat("B", 200_000) + "\"\n}\n" +
		"task \"big\" {\n  uses   = builtin.transform\n  inputs = { x = [" + refs + "] }\n}\n" +
		"task \"small\" {\n  uses   = builtin.transform\n  inputs = { x = 1 }\n}\n"
	p := lang.NewParser()
	p.Sources = map[string][]byte{"vb.fsc.hcl": []byte(src)}
	w, diags := p.Load("vb.fsc.hcl", lang.Options{Planning: true})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	res, diags := Resolve(w, Env{Home: t.TempDir()}, hcl.DiagError)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	pl := Build(w, res)
	data, err := Encode(pl, w, map[string][]byte{"vb.fsc.hcl": []byte(src)}, nil)
	must(t, err)
	if len(data) > 2<<20 {
		t.Errorf("the saved plan is %d bytes; the huge inputs were written out", len(data))
	}
	if in, _ := pl.Nodes["task.big"].Inputs.(map[string]any); in["not_shown"] != true {
		t.Errorf("task.big's inputs = %.200v, want not_shown", pl.Nodes["task.big"].Inputs)
	}
	if in, _ := pl.Nodes["task.small"].Inputs.(map[string]any); in == nil || in["x"] == nil {
		t.Errorf("task.small's inputs = %v, want them shown", pl.Nodes["task.small"].Inputs)
	}
}
