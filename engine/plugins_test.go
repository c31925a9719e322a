package engine

import (
	"context"
	"encoding/json"
	pluginrt "github.com/fuscia/fuscia/engine/internal/runtime/plugins"
	"github.com/fuscia/fuscia/engine/task"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/plugin"
	"github.com/fuscia/fuscia/plugin/plugintest"
)

// withGreeter installs the example greeter plugin into te's ./plugins and gives the engine a
// plugin host; the process check runs after the host is closed.
func withGreeter(t *testing.T, te *testEnv) *pluginrt.Dispatcher {
	t.Helper()
	bin := plugintest.Build(t, "examples/plugins/greeter", "greeter")
	path := plugintest.Install(t, bin, filepath.Join(te.dir, "plugins"), "fuscia-plugin-greeter_v0.1.0")
	t.Cleanup(func() { plugintest.NoneLeft(t, path) })
	m := plugin.NewManager(plugin.Options{})
	pl := &pluginrt.Dispatcher{Manager: m, Env: plan.Env{Home: te.dir}, Store: te.store}
	te.engine.cfg.Tasks.(task.ByKind)[lang.UsesPlugin] = pl
	t.Cleanup(func() {
		te.engine.Wait()
		m.Close()
	})
	return pl
}

func TestPluginTaskRunsWithExecutionKV(t *testing.T) {
	te := newTestEnv(t)
	withGreeter(t, te)
	ex := te.apply(`workflow "w" {}
plugin "greeter" { source = "greeter" }
task "a" {
  uses   = plugin.greeter.greet
  inputs = { name = "Ada" }
}
task "b" {
  uses   = plugin.greeter.greet
  inputs = { name = task.a.output.message, greeting = "Hi" }
}
task "c" {
  uses   = plugin.greeter.count
  inputs = {}
}
output "b" { value = task.b.output.message }
`, StartOptions{})
	if ex.Status != journal.StatusSucceeded {
		t.Fatalf("status %s: %s", ex.Status, jsonOf(t, ex))
	}
	if got := jsonOf(t, ex.Outputs); !strings.Contains(got, "Hi, Hello, Ada!!") {
		t.Errorf("outputs %s", got)
	}
	// greet counts the greetings of the execution in its KV: two tasks, one scope.
	v, ok, err := te.store.KVGet(journal.ExecutionScope(ex.ID), "greetings")
	if err != nil || !ok || string(v) != "2" {
		t.Errorf("KV greetings = %q %v %v; want 2", v, ok, err)
	}
}

func TestPluginTrigger(t *testing.T) {
	te := newTestEnv(t)
	pl := withGreeter(t, te)
	w, diags := lang.NewParser().Load(te.write("t.fsc.hcl", `workflow "w" {}
plugin "greeter" { source = "greeter" }
trigger "poll" "tick" {
  interval = "1m"
  uses     = plugin.greeter.tick
}
`), lang.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	pc, berr := pl.Bind(context.Background(), task.Block{Uses: lang.Uses{Kind: lang.UsesPlugin, Local: "greeter", Name: "tick"}, Workflow: w})
	if berr != nil {
		t.Fatal(berr)
	}
	for want := 1; want <= 2; want++ {
		r := pl.Trigger(context.Background(), pc, task.TriggerCall{Workflow: "w", Trigger: "tick", Name: "tick", Event: task.TriggerEvent{Type: "poll"}})
		var payload struct{ N int }
		if r.Type != "completed" || json.Unmarshal(r.Payload, &payload) != nil || payload.N != want {
			t.Fatalf("invocation %d: %+v", want, r)
		}
	}
	// The count lives in the trigger's own scope, across invocations.
	if _, ok, _ := te.store.KVGet(journal.TriggerScope("w", "tick"), "n"); !ok {
		t.Error("the trigger's KV scope holds no n")
	}
	if r := pl.Trigger(context.Background(), pc, task.TriggerCall{Workflow: "w", Trigger: "tick", Name: "nope", Event: task.TriggerEvent{Type: "poll"}}); r.Type != "error" {
		t.Errorf("an unknown trigger: %+v", r)
	}
}
