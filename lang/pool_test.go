package lang_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/lang"
)

// TestDecodePools: a task's pool is what it says, "default" without one, in a loop body and
// with for_each too; the attribute's range is kept when it is set.
func TestDecodePools(t *testing.T) {
	w := loadValid(t, "pools.fsc.hcl", lang.Options{})
	want := map[string]string{
		"task.fetch":           "edge",
		"task.locate":          "gpu-2",
		"task.probe":           "0_edge",
		"task.shape":           lang.DefaultPool,
		"loop.rows/task.store": "near-db",
		"task.plain":           "default",
	}
	for addr, pool := range want {
		task := node(t, w, addr).Task
		if task == nil {
			t.Fatalf("%s has no task spec", addr)
		}
		if task.Pool != pool {
			t.Errorf("%s: pool %q, want %q", addr, task.Pool, pool)
		}
		set := addr != "task.shape"
		if got := task.PoolRange.Start.Line > 0; got != set {
			t.Errorf("%s: PoolRange %s; set %v, want %v", addr, task.PoolRange, got, set)
		}
	}
	if r := node(t, w, "task.fetch").Task.PoolRange; r.Start.Line != 16 || r.Filename != filepath.Join(validDir, "pools.fsc.hcl") {
		t.Errorf("task.fetch's PoolRange = %s; want line 16 of pools.fsc.hcl", r)
	}
}

// TestPoolWarning: a pool on a builtin that runs in the coordinator is a warning naming the
// builtin, at the attribute; on builtin.http, a component or a plugin it is silent. Either way
// the workflow loads and the pool is recorded.
func TestPoolWarning(t *testing.T) {
	const head = `workflow "w" {}

component "geo" {
  source = "acme/geo"
}

plugin "db" {
  source = "db"
}

`
	for _, c := range []struct {
		uses, inputs string
		warn         bool
	}{
		{"builtin.transform", `{ x = 1 }`, true},
		{"builtin.sleep", `{ duration = "1s" }`, true},
		{"builtin.fail", `{ message = "no" }`, true},
		{"builtin.http", `{ url = "https://example.com" }`, false},
		{"component.geo.lookup", `{ city = "Lyon" }`, false},
		{"plugin.db.insert", `{ row = 1 }`, false},
	} {
		t.Run(c.uses, func(t *testing.T) {
			src := head + "task \"t\" {\n  uses   = " + c.uses + "\n  pool   = \"gpu\"\n  inputs = " + c.inputs + "\n}\n"
			file := filepath.Join(t.TempDir(), "w.fsc.hcl")
			if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			w, diags := loadSafely(t, file, lang.Options{})
			if diags.HasErrors() || w == nil {
				t.Fatalf("Load reported errors:\n%s", describeDiags(diags))
			}
			if got := w.Node(mustAddr(t, "task.t")).Task.Pool; got != "gpu" {
				t.Errorf("pool %q, want \"gpu\"", got)
			}
			if w.Values[mustAddr(t, "task.t")] == nil {
				t.Error("the task's values were not evaluated: the warning must not mark it faulty")
			}
			if !c.warn {
				if len(diags) > 0 {
					t.Errorf("want no diagnostic:\n%s", describeDiags(diags))
				}
				return
			}
			if len(diags) != 1 {
				t.Fatalf("want one warning:\n%s", describeDiags(diags))
			}
			d := diags[0]
			wantDetail := "pool has no effect: " + c.uses + " runs in the coordinator"
			if d.Severity != hcl.DiagWarning || d.Summary != "Pool has no effect" || !strings.Contains(d.Detail, wantDetail) {
				t.Errorf("got %s; want a warning \"Pool has no effect\" saying %q", describeDiags(diags), wantDetail)
			}
			if d.Subject == nil || d.Subject.Filename != file || d.Subject.Start.Line != 13 {
				t.Errorf("warning at %v; want %s line 13 (the pool attribute)", d.Subject, file)
			}
		})
	}
}

// TestValidPoolName is the pool name rule, and CheckPoolName's words for what breaks it.
func TestValidPoolName(t *testing.T) {
	if !strings.Contains(lang.PoolNameRule, " 1 to "+strconv.Itoa(lang.MaxPoolNameLength)+" ") {
		t.Errorf("PoolNameRule does not state MaxPoolNameLength (%d): %s", lang.MaxPoolNameLength, lang.PoolNameRule)
	}
	for _, c := range []struct {
		name string
		ok   bool
		why  string
	}{
		{"default", true, ""},
		{"gpu", true, ""},
		{"g", true, ""},
		{"7", true, ""},
		{"0_edge", true, ""},
		{"near-db_2", true, ""},
		{strings.Repeat("a", 64), true, ""},
		{strings.Repeat("a", 65), false, "is 65 characters long"},
		{"", false, "not valid"},
		{"GPU", false, "not valid"},
		{"-gpu", false, "not valid"},
		{"_gpu", false, "not valid"},
		{"gpu.large", false, "not valid"},
		{"gpu*", false, "not valid"},
		{"gpu>", false, "not valid"},
		{"gpu large", false, "not valid"},
		{"gpú", false, "not valid"},
	} {
		if got := lang.ValidPoolName(c.name); got != c.ok {
			t.Errorf("ValidPoolName(%q) = %v, want %v", c.name, got, c.ok)
		}
		err := lang.CheckPoolName(c.name)
		switch {
		case c.ok && err != nil:
			t.Errorf("CheckPoolName(%q) = %v, want nil", c.name, err)
		case !c.ok && (err == nil || !strings.Contains(err.Error(), c.why) || !strings.Contains(err.Error(), lang.PoolNameRule)):
			t.Errorf("CheckPoolName(%q) = %v, want an error saying %q and the rule", c.name, err, c.why)
		}
	}
}

// TestRunsOnWorker: components, plugins and builtin.http leave the coordinator; the other
// builtins do not.
func TestRunsOnWorker(t *testing.T) {
	for _, c := range []struct {
		uses lang.Uses
		want bool
	}{
		{lang.Uses{Kind: lang.UsesBuiltin, Name: "http"}, true},
		{lang.Uses{Kind: lang.UsesComponent, Local: "geo", Name: "lookup"}, true},
		{lang.Uses{Kind: lang.UsesPlugin, Local: "db", Name: "insert"}, true},
		{lang.Uses{Kind: lang.UsesBuiltin, Name: "transform"}, false},
		{lang.Uses{Kind: lang.UsesBuiltin, Name: "sleep"}, false},
		{lang.Uses{Kind: lang.UsesBuiltin, Name: "fail"}, false},
	} {
		if got := c.uses.RunsOnWorker(); got != c.want {
			t.Errorf("%s.RunsOnWorker() = %v, want %v", c.uses, got, c.want)
		}
	}
}
