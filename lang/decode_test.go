package lang_test

import (
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/lang"
)

const validDir = "testdata/valid"

// loadValid loads testdata/valid/name and fails the test on any error or warning.
func loadValid(t *testing.T, name string, opts lang.Options) *lang.Workflow {
	t.Helper()
	file := filepath.Join(validDir, name)
	w, diags := loadSafely(t, file, opts)
	if len(diags) > 0 {
		t.Fatalf("Load(%s) reported diagnostics; want none:\n%s", file, describeDiags(diags))
	}
	if w == nil {
		t.Fatalf("Load(%s) returned no workflow", file)
	}
	return w
}

// TestValidWorkflows loads every file of testdata/valid, which must load without any diagnostic,
// and draws its graph.
func TestValidWorkflows(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(validDir, "*.fsc.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("found %d files in %s; want at least 5", len(files), validDir)
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(strings.TrimSuffix(name, ".fsc.hcl"), func(t *testing.T) {
			w := loadValid(t, name, lang.Options{})
			if w.Graph == nil || w.Graph.Top == nil {
				t.Fatal("Graph is nil after a Load without errors")
			}
			if err := w.Graph.Top.WriteDOT(io.Discard, w.Name); err != nil {
				t.Errorf("WriteDOT: %v", err)
			}
			if got, want := w.Graph.Top.Len(), len(w.TopNodes()); got != want {
				t.Errorf("Graph.Top has %d nodes; the workflow has %d top-level nodes", got, want)
			}
			if len(w.Triggers) == 0 {
				t.Error("no trigger: a workflow without trigger blocks has the implicit manual \"default\"")
			}
			for _, n := range w.Nodes {
				if w.Node(n.Addr) != n {
					t.Errorf("Node(%s) does not return the node", n.Addr)
				}
				if w.Values[n.Addr] == nil {
					t.Errorf("Values[%s] is missing", n.Addr)
				}
			}
		})
	}
}

// dep is the expected form of one lang.Dep.
type dep struct {
	up       string
	kinds    lang.DepKind
	branches []string
}

// decodeCase asserts on the model decoded from one valid file. Maps are by node address as
// written by Addr.String.
type decodeCase struct {
	file string
	opts lang.Options

	nodes      []string              // every node, in file order (a loop before its body)
	deps       map[string][]dep      // upstream groups in order; a node absent from the map is not checked
	stages     [][]string            // Graph.Stages
	bodyStages map[string][][]string // Graph.BodyStages, by loop name
	timeouts   map[string]time.Duration
	retries    map[string]lang.RetryPolicy
	check      func(t *testing.T, w *lang.Workflow)
}

func TestDecode(t *testing.T) {
	defaultName := "a234567890123456789012345678901234567890123456789012345678901234"
	workflowRetry := lang.RetryPolicy{Attempts: 3, Backoff: "fixed", InitialDelay: time.Second, MaxDelay: time.Minute}
	cases := []decodeCase{
		{
			file:     "defaults.fsc.hcl",
			nodes:    []string{"task." + defaultName},
			deps:     map[string][]dep{"task." + defaultName: nil},
			stages:   [][]string{{"task." + defaultName}},
			timeouts: map[string]time.Duration{"task." + defaultName: time.Hour},
			retries:  map[string]lang.RetryPolicy{"task." + defaultName: {Attempts: 1, Backoff: "exponential", InitialDelay: time.Second, MaxDelay: time.Minute}},
			check: func(t *testing.T, w *lang.Workflow) {
				s := w.Settings
				if s.MaxParallel != 16 || s.Timeout != time.Hour || s.MaxDuration != 0 || s.MaxConcurrentRuns != 0 {
					t.Errorf("settings = max_parallel %d, timeout %s, max_duration %s, max_concurrent_runs %d; want 16, 1h, none, unlimited",
						s.MaxParallel, s.Timeout, s.MaxDuration, s.MaxConcurrentRuns)
				}
				if s.OnOverlap != "queue" || s.Durability != "strict" {
					t.Errorf("on_overlap %q, durability %q; want queue, strict", s.OnOverlap, s.Durability)
				}
				if s.Retry != lang.DefaultRetry || s.Retry.Attempts != 1 {
					t.Errorf("workflow retry = %+v; want one attempt (%+v)", s.Retry, lang.DefaultRetry)
				}
				if s.Data.MaxNodeOutput != 10<<20 || s.Data.MaxTotal != 100<<20 {
					t.Errorf("data limits = %d, %d; want 10 MiB, 100 MiB", s.Data.MaxNodeOutput, s.Data.MaxTotal)
				}
				if len(w.Triggers) != 1 {
					t.Fatalf("triggers = %d; want the implicit one", len(w.Triggers))
				}
				tr := w.Triggers[0]
				if tr.Type != lang.TriggerManual || tr.Name != "default" || !tr.Implicit {
					t.Errorf("trigger = %s %q implicit=%v; want the implicit manual \"default\"", tr.Type, tr.Name, tr.Implicit)
				}
				n := w.Nodes[0]
				if n.TimeoutSet || n.Retry != nil || !n.FailWorkflow {
					t.Errorf("node settings: timeout set %v, retry %v, fail_workflow %v; want unset, nil, true", n.TimeoutSet, n.Retry, n.FailWorkflow)
				}
				if n.Task.Uses.Kind != lang.UsesBuiltin || n.Task.Uses.Name != "transform" || n.Task.Uses.String() != "builtin.transform" {
					t.Errorf("uses = %+v", n.Task.Uses)
				}
				if n.Task.MaxIterations != lang.DefaultMaxIterations || n.Task.Concurrency != 0 || n.Task.ForEach != nil {
					t.Errorf("task defaults: max_iterations %d, concurrency %d, for_each %v", n.Task.MaxIterations, n.Task.Concurrency, n.Task.ForEach)
				}
				// No inputs: the task receives {}.
				if v := w.Values[n.Addr].Inputs; !v.RawEquals(cty.EmptyObjectVal) {
					t.Errorf("inputs of a task without inputs = %#v; want {}", v)
				}
			},
		},
		{
			file:  "branches.fsc.hcl",
			nodes: []string{"task.fetch", "switch.tier", "task.route", "task.pay_high", "task.pay_std", "join.paid"},
			deps: map[string][]dep{
				"task.fetch":    nil,
				"switch.tier":   {{"task.fetch", lang.DepData, nil}},
				"task.route":    nil,
				"task.pay_high": {{"switch.tier", lang.DepData | lang.DepBranch, []string{"high"}}, {"task.fetch", lang.DepData, nil}},
				"task.pay_std":  {{"switch.tier", lang.DepBranch, []string{"standard"}}, {"task.route", lang.DepBranch, []string{"fast", "slow"}}},
				"join.paid":     {{"task.pay_high", lang.DepOrder, nil}, {"task.pay_std", lang.DepOrder, nil}},
			},
			stages: [][]string{{"task.fetch", "task.route"}, {"switch.tier"}, {"task.pay_high", "task.pay_std"}, {"join.paid"}},
			timeouts: map[string]time.Duration{
				"task.fetch":    30 * time.Second,
				"task.pay_high": 2 * time.Minute, // var.slow's default
				"task.pay_std":  30 * time.Second,
			},
			retries: map[string]lang.RetryPolicy{
				"task.fetch": workflowRetry,
				// A node's retry block replaces the workflow's completely: backoff is not inherited.
				"task.pay_std": {Attempts: 5, Backoff: "exponential", InitialDelay: time.Second, MaxDelay: time.Minute},
			},
			check: func(t *testing.T, w *lang.Workflow) {
				if w.Name != "branches" || w.Settings.Timeout != 30*time.Second || w.Settings.Retry != workflowRetry {
					t.Errorf("workflow %q timeout %s retry %+v", w.Name, w.Settings.Timeout, w.Settings.Retry)
				}
				sw := node(t, w, "switch.tier").Switch
				if len(sw.Cases) != 1 || sw.Cases[0].Key != "high" || sw.Default == nil || sw.Default.Key != "standard" {
					t.Errorf("switch cases = %v, default %v", sw.Cases, sw.Default)
				}
				if !sw.Key("high") || !sw.Key("standard") || sw.Key("low") {
					t.Error("SwitchSpec.Key does not match the cases")
				}
				after := node(t, w, "task.pay_std").After
				if len(after) != 3 || after[1].Target.String() != "task.route" || after[1].Branch != "fast" {
					t.Errorf("after = %+v", after)
				}
				j := node(t, w, "join.paid").Join
				if j.Strategy != lang.JoinMofN || j.M != 1 || j.Merge != lang.MergeAppend {
					t.Errorf("join = %+v", j)
				}
				edge(t, w, "switch.tier", "task.pay_high", "high")
				edge(t, w, "task.route", "task.pay_std", "fast", "slow")
				edge(t, w, "task.fetch", "switch.tier")
				// The switch's output has a known shape; its value is not known before the run.
				in := w.Values[mustAddr(t, "task.pay_high")].Inputs
				sel := attr(t, in, "selected")
				if sel.IsKnown() || sel.Type() != cty.String {
					t.Errorf("inputs.selected = %#v; want an unknown string", sel)
				}
				if id := attr(t, in, "id"); id.IsKnown() {
					t.Errorf("inputs.id = %#v; want unknown (an upstream output)", id)
				}
				url := attr(t, w.Values[mustAddr(t, "task.fetch")].Inputs, "url")
				if !url.RawEquals(cty.StringVal("https://example.com/orders")) {
					t.Errorf("inputs.url of task.fetch = %#v", url)
				}
				if len(w.Outputs) != 1 || w.Outputs[0].Name != "tier" {
					t.Errorf("outputs = %v", w.Outputs)
				}
			},
		},
		{
			// Planning with -var: the variable's value replaces its default where it is used.
			file:     "branches.fsc.hcl",
			opts:     lang.Options{Planning: true, Vars: lang.VarInputs{Flags: []string{"slow=5m"}}},
			timeouts: map[string]time.Duration{"task.pay_high": 5 * time.Minute, "task.pay_std": 30 * time.Second},
		},
		{
			file: "loops.fsc.hcl",
			nodes: []string{"task.list", "task.config", "loop.each_item",
				"loop.each_item/task.check", "loop.each_item/task.report", "task.fan"},
			deps: map[string][]dep{
				"task.list": nil,
				// The loop waits for what its for_each and its body read outside it.
				"loop.each_item":             {{"task.list", lang.DepData, nil}, {"task.config", lang.DepData, nil}},
				"loop.each_item/task.check":  {{"task.config", lang.DepData, nil}},
				"loop.each_item/task.report": {{"loop.each_item/task.check", lang.DepData, nil}},
				"task.fan":                   nil,
			},
			stages:     [][]string{{"task.list", "task.config", "task.fan"}, {"loop.each_item"}},
			bodyStages: map[string][][]string{"each_item": {{"loop.each_item/task.check"}, {"loop.each_item/task.report"}}},
			check: func(t *testing.T, w *lang.Workflow) {
				top := make([]string, 0, 4)
				for _, n := range w.TopNodes() {
					top = append(top, n.Addr.String())
				}
				if want := []string{"task.list", "task.config", "loop.each_item", "task.fan"}; !slices.Equal(top, want) {
					t.Errorf("TopNodes = %v; want %v", top, want)
				}
				check := node(t, w, "loop.each_item/task.check")
				if check.Addr.Loop != "each_item" || check.Addr.Local() != "task.check" || check.Addr.LoopAddr().String() != "loop.each_item" {
					t.Errorf("body address = %#v", check.Addr)
				}
				l := node(t, w, "loop.each_item").Loop
				if l.Mode != lang.LoopParallel || l.Concurrency != 4 || l.OnFailure != lang.OnFailContinue || l.Output == nil {
					t.Errorf("loop = mode %q concurrency %d on_failure %q output %v", l.Mode, l.Concurrency, l.OnFailure, l.Output)
				}
				var body []string
				for _, n := range l.Body {
					body = append(body, n.Addr.String())
				}
				if want := []string{"loop.each_item/task.check", "loop.each_item/task.report"}; !slices.Equal(body, want) {
					t.Errorf("loop body = %v; want %v", body, want)
				}
				bg := w.Graph.Bodies["each_item"]
				if bg == nil || bg.Len() != 2 || w.Graph.Top.Has("loop.each_item/task.check") {
					t.Errorf("the body's nodes belong to Graph.Bodies[\"each_item\"] only")
				}
				if ups := w.Graph.Top.Upstream("loop.each_item"); !slices.Equal(ups, []string{"task.list", "task.config"}) {
					t.Errorf("Graph.Top upstream of the loop = %v", ups)
				}

				// var.region has no value at validate: the url is unknown; the secret is unknown
				// and marked sensitive.
				in := w.Values[mustAddr(t, "task.list")].Inputs
				if url := attr(t, in, "url"); url.IsKnown() {
					t.Errorf("url = %#v; want unknown while var.region is unset", url)
				}
				auth := attr(t, attr(t, in, "headers"), "Authorization")
				if auth.IsKnown() || !auth.HasMark(lang.Sensitive) {
					t.Errorf("Authorization = %#v; want an unknown value marked lang.Sensitive", auth)
				}
				if v := w.VarValues().GetAttr("region"); v.IsKnown() {
					t.Errorf("VarValues().region = %#v; want unknown at validate", v)
				}

				fan := node(t, w, "task.fan")
				if fan.Task.ForEach == nil || fan.Task.Concurrency != 2 {
					t.Errorf("task.fan for_each %v concurrency %d", fan.Task.ForEach, fan.Task.Concurrency)
				}
				vals := w.Values[fan.Addr]
				if !vals.ForEach.IsKnown() || vals.ForEach.LengthInt() != 2 {
					t.Errorf("for_each of task.fan = %#v; want the known 2 items", vals.ForEach)
				}
				if name := attr(t, vals.Inputs, "name"); name.IsKnown() {
					t.Errorf("inputs.name = each.key = %#v; want unknown before the run", name)
				}
				if v := w.Values[check.Addr].ForEach; v != cty.NilVal {
					t.Errorf("Values.ForEach of a body task = %#v; want cty.NilVal", v)
				}
			},
		},
		{
			file:  "loops.fsc.hcl",
			opts:  lang.Options{Planning: true, Vars: lang.VarInputs{Flags: []string{"region=eu"}}},
			nodes: []string{"task.list", "task.config", "loop.each_item", "loop.each_item/task.check", "loop.each_item/task.report", "task.fan"},
			check: func(t *testing.T, w *lang.Workflow) {
				url := attr(t, w.Values[mustAddr(t, "task.list")].Inputs, "url")
				if !url.RawEquals(cty.StringVal("https://example.com/eu/items")) {
					t.Errorf("url = %#v; want the known https://example.com/eu/items", url)
				}
			},
		},
		{
			file:   "call.fsc.hcl",
			nodes:  []string{"task.fetch", "call.bill"},
			deps:   map[string][]dep{"call.bill": {{"task.fetch", lang.DepData, nil}}},
			stages: [][]string{{"task.fetch"}, {"call.bill"}},
			check: func(t *testing.T, w *lang.Workflow) {
				c := node(t, w, "call.bill").Call
				if c.Workflow != "./call-child.fsc.hcl" || c.OnFailure != lang.CallContinue {
					t.Errorf("call = %+v", c)
				}
				if want := filepath.Join(validDir, "call-child.fsc.hcl"); filepath.Clean(c.Path) != want {
					t.Errorf("call Path = %q; want %q", c.Path, want)
				}
				child := w.Calls["bill"]
				if child == nil {
					t.Fatal("Calls[\"bill\"] is nil")
				}
				if child.Name != "child" || len(child.Variables) != 2 || len(child.Outputs) != 1 {
					t.Errorf("child = %q with %d variables and %d outputs", child.Name, len(child.Variables), len(child.Outputs))
				}
				in := w.Values[mustAddr(t, "call.bill")].Inputs
				if order := attr(t, in, "order"); order.IsKnown() {
					t.Errorf("inputs.order = %#v; want unknown (task.fetch's output)", order)
				}
				if note := attr(t, in, "note"); !note.RawEquals(cty.StringVal("paid")) {
					t.Errorf("inputs.note = %#v", note)
				}
				if w.Graph.Top.Len() != 2 {
					t.Errorf("the child's nodes leaked into the parent's graph: %v", w.Graph.Top.Nodes())
				}
			},
		},
		{
			file:  "waits-triggers.fsc.hcl",
			nodes: []string{"wait.cool_down", "wait.launch", "wait.approve", "wait.hook", "task.ship"},
			deps: map[string][]dep{
				"wait.approve": {{"wait.cool_down", lang.DepOrder, nil}},
				"task.ship":    {{"wait.approve", lang.DepOrder, nil}, {"wait.launch", lang.DepOrder, nil}},
			},
			stages: [][]string{{"wait.cool_down", "wait.launch", "wait.hook"}, {"wait.approve"}, {"task.ship"}},
			check: func(t *testing.T, w *lang.Workflow) {
				s := w.Settings
				if s.Description != "Waits and triggers" || s.MaxDuration != 24*time.Hour || s.MaxParallel != 4 ||
					s.MaxConcurrentRuns != 1 || s.OnOverlap != "skip" || s.Durability != "relaxed" {
					t.Errorf("settings = %+v", s)
				}
				if s.Data != (lang.DataLimits{MaxNodeOutput: 1 << 20, MaxTotal: 10_000_000, OnExceed: "spill"}) {
					t.Errorf("data = %+v", s.Data)
				}
				if len(w.Triggers) != 2 {
					t.Fatalf("triggers = %d; want the 2 declared, without the implicit one", len(w.Triggers))
				}
				sched, hook := w.Triggers[0], w.Triggers[1]
				if sched.Type != lang.TriggerSchedule || sched.Cron != "0 2 * * *" || sched.Timezone != "Europe/Berlin" || sched.Implicit {
					t.Errorf("schedule trigger = %+v", sched)
				}
				if hook.Method != "PUT" || hook.Path != "/hooks/orders" || hook.MaxBodyBytes != 64<<10 ||
					hook.HMAC == nil || hook.HMAC.Secret != "hook" || hook.HMAC.Header != "X-Signature" {
					t.Errorf("webhook trigger = %+v (hmac %+v)", hook, hook.HMAC)
				}
				if sec := w.Secrets; len(sec) != 1 || sec[0].File != "/run/secrets/hook" || sec[0].Env != "" {
					t.Errorf("secrets = %+v", sec)
				}
				want := map[string]lang.WaitSpec{
					"wait.cool_down": {Kind: lang.WaitDuration, Duration: 10 * time.Minute},
					"wait.launch":    {Kind: lang.WaitUntil, Until: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)},
					"wait.approve":   {Kind: lang.WaitApproval, WaitTimeout: 2 * time.Hour},
					"wait.hook":      {Kind: lang.WaitCallback},
				}
				for addr, ws := range want {
					n := node(t, w, addr)
					got := *n.Wait
					got.Message = nil
					if !got.Until.Equal(ws.Until) {
						t.Errorf("%s until = %s; want %s", addr, got.Until, ws.Until)
					}
					got.Until, ws.Until = time.Time{}, time.Time{}
					if got != ws {
						t.Errorf("%s = %+v; want %+v", addr, got, ws)
					}
					// A wait's timeout bounds the wait, not an attempt.
					if n.TimeoutSet {
						t.Errorf("%s: Node.TimeoutSet is true; a wait's timeout belongs to WaitSpec", addr)
					}
				}
				if node(t, w, "wait.approve").Wait.Message == nil {
					t.Error("approval message is nil")
				}
				ship := node(t, w, "task.ship")
				if ship.FailWorkflow || ship.When == nil {
					t.Errorf("task.ship fail_workflow %v when %v; want false and set", ship.FailWorkflow, ship.When)
				}
				if v := w.Values[ship.Addr].When; v.IsKnown() || v.Type() != cty.Bool {
					t.Errorf("when = %#v; want an unknown bool (two triggers: trigger.type is not known)", v)
				}
			},
		},
		{
			// A retry block sits beside the cases without being one.
			file:    "switch-retry.fsc.hcl",
			nodes:   []string{"switch.s"},
			retries: map[string]lang.RetryPolicy{"switch.s": {Attempts: 2, Backoff: "exponential", InitialDelay: time.Second, MaxDelay: time.Minute}},
			check: func(t *testing.T, w *lang.Workflow) {
				sw := node(t, w, "switch.s").Switch
				if len(sw.Cases) != 1 || sw.Cases[0].Key != "a" || sw.Default != nil {
					t.Errorf("cases = %+v, default %+v", sw.Cases, sw.Default)
				}
			},
		},
		{
			file:  "sensitive-setting.fsc.hcl",
			nodes: []string{"task.send"},
			check: func(t *testing.T, w *lang.Workflow) {
				if len(w.Components) != 1 {
					t.Fatalf("components = %d", len(w.Components))
				}
				c := w.Components[0]
				if c.Source != "acme/mailer" || c.Version != "~> 1.2" || !slices.Equal(c.AllowedHosts, []string{"api.example.com"}) {
					t.Errorf("component = %+v", c)
				}
				if u := node(t, w, "task.send").Task.Uses; u.Kind != lang.UsesComponent || u.Local != "mailer" || u.Name != "send" {
					t.Errorf("uses = %+v", u)
				}
				if v := w.VarValues().GetAttr("host"); !v.HasMark(lang.Sensitive) {
					t.Errorf("var.host = %#v; want it marked lang.Sensitive", v)
				}
			},
		},
	}
	for _, tc := range cases {
		name := strings.TrimSuffix(tc.file, ".fsc.hcl")
		if tc.opts.Planning {
			name += "/plan"
		}
		t.Run(name, func(t *testing.T) {
			w := loadValid(t, tc.file, tc.opts)
			if tc.nodes != nil {
				var got []string
				for _, n := range w.Nodes {
					got = append(got, n.Addr.String())
				}
				if !slices.Equal(got, tc.nodes) {
					t.Errorf("nodes = %v\nwant    %v", got, tc.nodes)
				}
			}
			for addr, want := range tc.deps {
				checkDeps(t, node(t, w, addr), want)
			}
			if tc.stages != nil {
				if got := addrStrings(w.Graph.Stages); !slices.EqualFunc(got, tc.stages, slices.Equal) {
					t.Errorf("Graph.Stages = %v\nwant           %v", got, tc.stages)
				}
			}
			for loop, want := range tc.bodyStages {
				if got := addrStrings(w.Graph.BodyStages[loop]); !slices.EqualFunc(got, want, slices.Equal) {
					t.Errorf("Graph.BodyStages[%q] = %v; want %v", loop, got, want)
				}
			}
			for addr, want := range tc.timeouts {
				if got := node(t, w, addr).EffectiveTimeout(w); got != want {
					t.Errorf("EffectiveTimeout(%s) = %s; want %s", addr, got, want)
				}
			}
			for addr, want := range tc.retries {
				if got := node(t, w, addr).EffectiveRetry(w); got != want {
					t.Errorf("EffectiveRetry(%s) = %+v; want %+v", addr, got, want)
				}
			}
			if tc.check != nil {
				tc.check(t, w)
			}
		})
	}
}

// TestDecodeDepRanges: a Dep's range is where the upstream is first referenced, so that an
// error about the edge (a cycle, a failed branch) can point at it.
func TestDecodeDepRanges(t *testing.T) {
	w := loadValid(t, "branches.fsc.hcl", lang.Options{})
	for _, tc := range []struct {
		node, up string
		line     int
	}{
		{"switch.tier", "task.fetch", 22},
		{"task.pay_std", "task.route", 40},
		{"join.paid", "task.pay_std", 47},
	} {
		var found *lang.Dep
		for _, d := range node(t, w, tc.node).Deps {
			if d.Upstream.String() == tc.up {
				found = d
			}
		}
		switch {
		case found == nil:
			t.Errorf("%s has no dep on %s", tc.node, tc.up)
		case found.Range.Start.Line != tc.line || found.Range.Filename != filepath.Join(validDir, "branches.fsc.hcl"):
			t.Errorf("%s -> %s: range %s; want line %d", tc.up, tc.node, found.Range, tc.line)
		}
	}
}

func checkDeps(t *testing.T, n *lang.Node, want []dep) {
	t.Helper()
	var got []dep
	for _, d := range n.Deps {
		got = append(got, dep{d.Upstream.String(), d.Kinds, d.Branches})
	}
	eq := func(a, b dep) bool { return a.up == b.up && a.kinds == b.kinds && slices.Equal(a.branches, b.branches) }
	if !slices.EqualFunc(got, want, eq) {
		t.Errorf("Deps of %s = %+v\nwant %+v", n.Addr, got, want)
	}
}

func addrStrings(stages [][]lang.Addr) [][]string {
	out := make([][]string, len(stages))
	for i, s := range stages {
		for _, a := range s {
			out[i] = append(out[i], a.String())
		}
	}
	return out
}

func mustAddr(t *testing.T, s string) lang.Addr {
	t.Helper()
	a, ok := lang.ParseAddr(s)
	if !ok {
		t.Fatalf("bad address %q in the test", s)
	}
	return a
}

func node(t *testing.T, w *lang.Workflow, addr string) *lang.Node {
	t.Helper()
	n := w.Node(mustAddr(t, addr))
	if n == nil {
		t.Fatalf("no node %s", addr)
	}
	return n
}

func edge(t *testing.T, w *lang.Workflow, from, to string, labels ...string) {
	t.Helper()
	e, ok := w.Graph.Top.Edge(from, to)
	if !ok {
		t.Errorf("Graph.Top has no edge %s -> %s", from, to)
		return
	}
	if !slices.Equal(e.Labels, labels) {
		t.Errorf("edge %s -> %s labels = %v; want %v", from, to, e.Labels, labels)
	}
}

// attr reads an attribute of an object or map value, marks and all.
func attr(t *testing.T, v cty.Value, name string) cty.Value {
	t.Helper()
	if v == cty.NilVal || !v.IsKnown() || v.IsNull() {
		t.Fatalf("reading %q of %#v", name, v)
	}
	ty := v.Type()
	switch {
	case ty.IsObjectType() && ty.HasAttribute(name):
		return v.GetAttr(name)
	case ty.IsMapType():
		return v.Index(cty.StringVal(name))
	}
	t.Fatalf("%#v has no attribute %q", v, name)
	return cty.NilVal
}
