package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Pools in plans: testdata/pool/main.fsc.hcl has tasks with and without a pool, in a loop body
// and with for_each, next to nodes of other kinds.

var poolDir = filepath.Join("testdata", "pool")

// TestBuildPools: every task node carries its pool, "default" when it sets none; other node
// kinds have none.
func TestBuildPools(t *testing.T) {
	a := loadAssembly(t, poolDir)
	want := map[string]string{
		"task.fetch":         "edge",
		"task.locate":        "gpu",
		"task.probe":         "edge",
		"task.status":        "default",
		"task.shape":         "default",
		"loop.rows":          "",
		"loop.rows/task.say": "near-db",
		"wait.pause":         "",
	}
	if len(a.plan.Nodes) != len(want) {
		t.Errorf("%d nodes, want %d", len(a.plan.Nodes), len(want))
	}
	for addr, pool := range want {
		n := a.plan.Nodes[addr]
		if n == nil {
			t.Errorf("no node %s in the plan", addr)
			continue
		}
		if n.Pool != pool {
			t.Errorf("%s: pool %q, want %q", addr, n.Pool, pool)
		}
	}
}

// TestPlanJSONPools: in the JSON plan every task node has "pool", and no other node has it.
func TestPlanJSONPools(t *testing.T) {
	for _, dir := range []string{poolDir, assemblyDir} {
		a := loadAssembly(t, dir)
		b, err := json.Marshal(a.plan)
		must(t, err)
		var doc struct {
			Nodes map[string]map[string]json.RawMessage `json:"nodes"`
		}
		must(t, json.Unmarshal(b, &doc))
		for addr, n := range doc.Nodes {
			pool, has := n["pool"]
			switch kind := string(n["kind"]); {
			case kind == `"task"` && !has:
				t.Errorf("%s: task %s has no \"pool\": %s", dir, addr, b)
			case kind == `"task"` && string(pool) != `"`+a.plan.Nodes[addr].Pool+`"`:
				t.Errorf("%s: task %s has pool %s, want %q", dir, addr, pool, a.plan.Nodes[addr].Pool)
			case kind != `"task"` && has:
				t.Errorf("%s: %s node %s has a pool: %s", dir, kind, addr, pool)
			}
		}
	}
	a := loadAssembly(t, poolDir)
	b, err := json.Marshal(a.plan.Nodes["loop.rows/task.say"])
	must(t, err)
	if !bytes.Contains(b, []byte(`"pool":"near-db"`)) {
		t.Errorf("the body task's JSON has no \"pool\":\"near-db\": %s", b)
	}
}

// TestPlanTextPools compares the text rendering with testdata/pool/plan.txt (go test -update
// rewrites it): a pool line for each task whose pool is not "default", none for the others,
// so that a plan without pools (testdata/assembly/plan.txt) reads as it always did.
func TestPlanTextPools(t *testing.T) {
	a := loadAssembly(t, poolDir)
	got := checkGoldenText(t, a, poolDir, "TestPlanTextPools")
	poolLine := regexp.MustCompile(`(?m)^\s+pool\s+(\S+)$`)
	var pools []string
	for _, m := range poolLine.FindAllStringSubmatch(got, -1) {
		pools = append(pools, m[1])
	}
	if strings.Join(pools, " ") != "edge gpu edge near-db" {
		t.Errorf("pool lines show %v, want edge gpu edge near-db (in plan order, none for the default pool)", pools)
	}
	for _, line := range []string{
		"  + task.fetch (builtin.http)\n      timeout   1h\n      retry     1 attempt (no retry)\n      pool      edge\n",
		"        + loop.rows/task.say (plugin.echo.say, plugin echo@1.2.3)\n",
		"            pool      near-db\n",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("the text plan has no %q", line)
		}
	}

	// A workflow without pools has no pool line at all.
	var plain bytes.Buffer
	must(t, loadAssembly(t, assemblyDir).plan.WriteText(&plain))
	if poolLine.MatchString(plain.String()) {
		t.Errorf("a plan without pools shows a pool line:\n%s", plain.String())
	}
}

// TestSavedPools: a saved plan keeps each task's pool; a plan saved before pools existed (its
// task nodes have no "pool") is the same plan as one built now with the default pool, and
// still applies; a pool that changed since plan makes it stale at that node.
func TestSavedPools(t *testing.T) {
	a := loadAssembly(t, poolDir)
	data, err := Encode(a.plan, a.w, a.sources, nil)
	must(t, err)
	s, err := Decode("pools.fsplan", data)
	must(t, err)
	if got := s.Plan.Nodes["loop.rows/task.say"].Pool; got != "near-db" {
		t.Errorf("the saved body task's pool is %q, want near-db", got)
	}
	if got := s.Plan.Nodes["task.shape"].Pool; got != "default" {
		t.Errorf("the saved default pool is %q, want default", got)
	}
	must(t, s.Rebuilt(Build(a.w, a.res)))

	again := Build(a.w, a.res)
	again.Nodes["task.locate"].Pool = "cpu"
	if err := s.Rebuilt(again); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "node task.locate (pool differ)") {
		t.Errorf("a changed pool: %v, want ErrStale naming task.locate's pool", err)
	}

	// The same plan file as a fuscia without pools wrote it: no "pool" in its nodes, sealed
	// again so that only the missing field differs.
	b := loadAssembly(t, assemblyDir)
	data, err = Encode(b.plan, b.w, b.sources, nil)
	must(t, err)
	noPool := regexp.MustCompile(`\n\s*"pool": "default",`)
	tasks := 0
	for _, n := range b.plan.Nodes {
		if n.Kind == "task" {
			tasks++
		}
	}
	legacy := rezip(t, data, func(ms []zipMember) []zipMember {
		members := map[string][]byte{}
		for i, m := range ms {
			if m.name == manifestEntry {
				if n := len(noPool.FindAll(m.data, -1)); n != tasks || n == 0 {
					t.Fatalf("the assembly's manifest has %d default pools, want one per task (%d):\n%s", n, tasks, m.data)
				}
				ms[i].data = noPool.ReplaceAll(m.data, nil)
			}
			if ms[i].name != integrityEntry {
				members[ms[i].name] = ms[i].data
			}
		}
		seal, err := sealMembers(members)
		must(t, err)
		for i := range ms {
			if ms[i].name == integrityEntry {
				ms[i].data = seal
			}
		}
		return ms
	})
	old, err := Decode("legacy.fsplan", legacy)
	must(t, err)
	if bytes.Contains(old.planJSON, []byte(`"pool"`)) {
		t.Fatal("the legacy plan still has pools")
	}
	if got := old.Plan.Nodes["task.fetch"].Pool; got != "" {
		t.Errorf("a legacy task decodes with pool %q, want none", got)
	}
	if err := old.Rebuilt(Build(b.w, b.res)); err != nil {
		t.Errorf("a plan saved before pools, built again: %v", err)
	}
	// The tolerance is for the missing field only: another difference is still found.
	again = Build(b.w, b.res)
	again.Nodes["task.fetch"].Timeout = "7m"
	if err := old.Rebuilt(again); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "node task.fetch (timeout differ)") {
		t.Errorf("a legacy plan with a changed timeout: %v", err)
	}
	again = Build(b.w, b.res)
	again.Nodes["task.fetch"].Pool = "edge"
	if err := old.Rebuilt(again); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "node task.fetch (pool differ)") {
		t.Errorf("a legacy plan rebuilt with another pool: %v", err)
	}
}
