package engine

import (
	pluginrt "github.com/fuscia/fuscia/engine/internal/runtime/plugins"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/lang"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/hostabi/registry"
	"github.com/fuscia/fuscia/plugin"
	"github.com/fuscia/fuscia/plugin/plugintest"
)

// installRogue installs t/rogue@1.0.0, a component written in WAT whose task "liar" answers
// {"count":"seven"} and "honest" {"count":7}, both declaring {"count": integer} as their
// output_schema. It tells its tasks apart by the first letter of the name, which the request
// JSON holds at a fixed offset: {"kind":"task","name":"…
func installRogue(t *testing.T, te *testEnv) {
	t.Helper()
	const liar, honest = `{"type":"success","output":{"count":"seven"}}`, `{"type":"success","output":{"count":7}}`
	src := t.TempDir()
	wasm, err := wasmtime.Wat2Wasm(`(module (memory (export "memory") 1)
  (data (i32.const 16) "` + strings.ReplaceAll(liar, `"`, `\"`) + `")
  (data (i32.const 256) "` + strings.ReplaceAll(honest, `"`, `\"`) + `")
  (func (export "fuscia_abi_v1"))
  (func (export "fuscia_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "fuscia_call") (param $p i32) (param $n i32) (result i64)
    (if (result i64) (i32.eq (i32.load8_u (i32.add (local.get $p) (i32.const 23))) (i32.const 0x6c))
      (then (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const ` + itoa(len(liar)) + `)))
      (else (i64.or (i64.shl (i64.const 256) (i64.const 32)) (i64.const ` + itoa(len(honest)) + `))))))`)
	if err != nil {
		t.Fatal(err)
	}
	const shape = `{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`
	os.WriteFile(filepath.Join(src, "component.wasm"), wasm, 0o644)
	os.WriteFile(filepath.Join(src, "manifest.json"), []byte(`{"name":"t/rogue","version":"1.0.0","abi":1,"digest":"",
		"capabilities":{"allowed_hosts":[],"allowed_paths":[]},
		"tasks":{"liar":{"output_schema":`+shape+`},"honest":{"output_schema":`+shape+`}}}`), 0o644)
	pkg := filepath.Join(t.TempDir(), "rogue.fcpkg")
	if _, err := registry.Pack(src, pkg); err != nil {
		t.Fatal(err)
	}
	if _, err := registry.Install(filepath.Join(te.dir, "components"), pkg); err != nil {
		t.Fatal(err)
	}
	te.withComponents()
}

// TestComponentOutputSchema: an output that breaks the component's output_schema fails the
// node at once, fatal, naming the component, its version and the JSON Pointer; retry does not
// run it again. A conforming output passes.
func TestComponentOutputSchema(t *testing.T) {
	te := newTestEnv(t)
	installRogue(t, te)
	ex := te.apply(`
workflow "w" {}
component "rogue" { source = "t/rogue" }
task "liar" {
  uses          = component.rogue.liar
  fail_workflow = false
  retry {
    attempts      = 3
    initial_delay = "10ms"
  }
}
task "honest" { uses = component.rogue.honest }
output "count" { value = task.honest.output.count }
`, StartOptions{})
	wantRun(t, ex, journal.StatusCompletedWithErrors)
	n := wantNode(t, ex, "task.liar", journal.StatusFailed)
	wantErr(t, "task.liar", n, "fatal",
		`component t/rogue@1.0.0 task "liar" produced an output that does not match its output_schema: at /count: must be an integer, got string "seven"`)
	if n.Attempts != 1 {
		t.Errorf("task.liar ran %d attempts; an output that breaks its schema is not retried", n.Attempts)
	}
	wantNode(t, ex, "task.honest", journal.StatusSucceeded)
	wantJSON(t, "outputs", mustJSON(t, ex.Outputs), `{"count":7}`)
}

// TestPluginOutputSchema: the same for a plugin task, with the schema the plugin reports
// (declared for "shaped", derived from a Go type for "sparse").
func TestPluginOutputSchema(t *testing.T) {
	te := newTestEnv(t)
	bin := plugintest.Build(t, "cmd/fuscia/testdata/echoplugin", "echo")
	path := plugintest.Install(t, bin, filepath.Join(te.dir, "plugins"), "fuscia-plugin-echo_v0.3.0")
	t.Cleanup(func() { plugintest.NoneLeft(t, path) })
	m := plugin.NewManager(plugin.Options{})
	te.engine.cfg.Tasks.(task.ByKind)[lang.UsesPlugin] = &pluginrt.Dispatcher{Manager: m, Env: plan.Env{Home: te.dir}, Store: te.store}
	t.Cleanup(func() {
		te.engine.Wait()
		m.Close()
	})
	ex := te.apply(`workflow "w" {}
plugin "echo" { source = "echo" }
task "bad" {
  uses          = plugin.echo.shaped
  inputs        = { count = "seven" }
  fail_workflow = false
  retry {
    attempts      = 3
    initial_delay = "10ms"
  }
}
task "good" {
  uses   = plugin.echo.shaped
  inputs = { count = 7 }
}
task "free" {
  uses   = plugin.echo.run
  inputs = { count = "anything" }
}
task "sparse" {
  uses   = plugin.echo.sparse
  inputs = { name = "ada" }
}
`, StartOptions{})
	wantRun(t, ex, journal.StatusCompletedWithErrors)
	n := wantNode(t, ex, "task.bad", journal.StatusFailed)
	wantErr(t, "task.bad", n, "fatal",
		`plugin echo@0.3.0 task "shaped" produced an output that does not match its output_schema: at /count: must be an integer, got string "seven"`)
	if n.Attempts != 1 {
		t.Errorf("task.bad ran %d attempts; an output that breaks its schema is not retried", n.Attempts)
	}
	wantNode(t, ex, "task.good", journal.StatusSucceeded)
	wantNode(t, ex, "task.free", journal.StatusSucceeded)
	// A typed output whose slice, map and pointer are nil (null on the wire) meets the schema
	// the SDK derived from its type.
	n = wantNode(t, ex, "task.sparse", journal.StatusSucceeded)
	wantJSON(t, "task.sparse's output", n.Output, `{"name":"ada","tags":null,"labels":null,"parent":null}`)
}
