package plugins

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/plugin"
	"github.com/fuscia/fuscia/plugin/plugintest"
)

// BenchmarkDispatcherCall is one plugin call through the engine's plugin runtime, as a node
// makes it: the binding's target and config (cached), the Execute round trip to the real
// greeter plugin, and the decoding of its answer. The task (fail) answers at once without
// calling the host, so this is the bare round trip; p50 and p99 are reported.
func BenchmarkDispatcherCall(b *testing.B) {
	home := b.TempDir()
	bin := plugintest.Build(b, "examples/plugins/greeter", "greeter")
	plugintest.Install(b, bin, filepath.Join(home, "plugins"), "fuscia-plugin-greeter_v0.1.0")
	file := filepath.Join(home, "w.fsc.hcl")
	src := "workflow \"w\" {}\nplugin \"g\" { source = \"greeter\" }\ntask \"a\" { uses = plugin.g.fail }\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	w, diags := lang.NewParser().Load(file, lang.Options{})
	if diags.HasErrors() {
		b.Fatal(diags.Error())
	}
	m := plugin.NewManager(plugin.Options{})
	defer m.Close()
	d := &Dispatcher{Manager: m, Env: plan.Env{Home: home}}
	uses := lang.Uses{Kind: lang.UsesPlugin, Local: "g", Name: "fail"}
	bd, berr := d.Bind(context.Background(), task.Block{Uses: uses, Workflow: w, Eval: eval})
	if berr != nil {
		b.Fatal(berr)
	}
	call := task.Call{Uses: uses, ExecutionID: "x", Workflow: "w", Node: "task.a", Attempt: 1,
		Input: []byte(`{"kind": "fatal", "message": "x"}`), Log: func(string, string) {}}
	do := func() {
		if res := d.Call(context.Background(), bd, call); res.Type != outcome.Failure || res.Message != "x" {
			b.Fatalf("result %+v; want the fatal failure asked for", res)
		}
	}
	do() // starts the plugin and configures the block
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		do()
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
