package plugins

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fuscia/fuscia/engine/internal/runtime/internal/benchpair"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/plugin"
	"github.com/fuscia/fuscia/plugin/plugintest"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// BenchmarkDispatcherCall is one plugin call through the engine's plugin runtime, as a node
// makes it: the binding's target and config (cached), the Execute round trip to the real
// greeter plugin, and the decoding of its answer. The task (fail) answers at once without
// calling the host, so this is the bare round trip; p50 and p99 are reported.
//
// Each iteration also makes the same call through plugin.Manager.Execute alone (bare-p50-µs),
// alternately, so that what the engine's path adds (engine-extra-µs, the difference of the
// two p50s) is measured under the same load as the round trip itself.
func BenchmarkDispatcherCall(b *testing.B) { dispatcherCall(b) }

// BenchmarkDispatcherCallPluginProcs1 is BenchmarkDispatcherCall with the plugin process
// started with GOMAXPROCS=1 (the host keeps its own): what a plugin that sets
// runtime.GOMAXPROCS(1) gets, its gRPC server's goroutine hand-offs (reader, handler,
// writer) staying on one thread instead of waking an idle one for each.
func BenchmarkDispatcherCallPluginProcs1(b *testing.B) {
	b.Setenv("GOMAXPROCS", "1") // read by the plugin process at its start; ours has started
	dispatcherCall(b)
}

func dispatcherCall(b *testing.B) {
	home := b.TempDir()
	bin := plugintest.Build(b, "examples/plugins/greeter", "greeter")
	plugintest.Install(b, bin, filepath.Join(home, "plugins"), "fuscia-plugin-greeter_v0.1.0")
	src := "workflow \"w\" {}\nplugin \"g\" { source = \"greeter\" }\ntask \"a\" { uses = plugin.g.fail }\n"
	w := loadWorkflow(b, home, src)
	m := plugin.NewManager(plugin.Options{})
	defer m.Close()
	d := &Dispatcher{Manager: m, Env: plan.Env{Home: home}}
	uses := lang.Uses{Kind: lang.UsesPlugin, Local: "g", Name: "fail"}
	bd, berr := d.Bind(context.Background(), task.Block{Uses: uses, Workflow: w, Eval: eval})
	if berr != nil {
		b.Fatal(berr)
	}
	input := []byte(`{"kind": "fatal", "message": "x"}`)
	call := task.Call{Uses: uses, ExecutionID: "x", Workflow: "w", Node: "task.a", Attempt: 1,
		Input: input, Log: func(string, string) {}}
	do := func() {
		if res := d.Call(context.Background(), bd, call); res.Type != outcome.Failure || res.Message != "x" {
			b.Fatalf("result %+v; want the fatal failure asked for", res)
		}
	}
	do() // starts the plugin and configures the block
	tg, err := d.target(bd.(*binding))
	if err != nil {
		b.Fatal(err)
	}
	req := plugin.Request{Task: "fail", Input: input, Config: []byte("{}"),
		Context: &pluginv1.CallContext{ExecutionId: "x", Workflow: "w", Node: "task.a", Attempt: 1}}
	bare := func() {
		if _, err := m.Execute(context.Background(), tg, req, nil); err != nil {
			b.Fatal(err)
		}
	}
	benchpair.Measure(b, do, bare, "engine-extra-µs")
}
