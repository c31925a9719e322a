package plugins

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/plugin"
	"github.com/fuscia/fuscia/plugin/plugintest"
)

// TestCallHandsOverDecodedOutput: an answer checked against its task's output_schema is
// handed to the engine as the check decoded it (numbers exact), so that the engine does not
// decode it again; an answer that breaks its schema, or one with no schema to check, is not.
func TestCallHandsOverDecodedOutput(t *testing.T) {
	home := t.TempDir()
	bin := plugintest.Build(t, "cmd/fuscia/testdata/echoplugin", "echo")
	path := plugintest.Install(t, bin, filepath.Join(home, "plugins"), "fuscia-plugin-echo_v0.3.0")
	t.Cleanup(func() { plugintest.NoneLeft(t, path) })
	src := "workflow \"w\" {}\nplugin \"e\" { source = \"echo\" }\ntask \"a\" { uses = plugin.e.shaped }\ntask \"b\" { uses = plugin.e.run }\n"
	w := loadWorkflow(t, home, src)
	m := plugin.NewManager(plugin.Options{})
	t.Cleanup(func() { m.Close() })
	d := &Dispatcher{Manager: m, Env: plan.Env{Home: home}}
	call := func(name, input string) (outcome.Result, *task.DecodedOutput) {
		t.Helper()
		uses := lang.Uses{Kind: lang.UsesPlugin, Local: "e", Name: name}
		bd, berr := d.Bind(context.Background(), task.Block{Uses: uses, Workflow: w, Eval: eval})
		if berr != nil {
			t.Fatal(berr)
		}
		out := &task.DecodedOutput{}
		res := d.Call(context.Background(), bd, task.Call{Uses: uses, ExecutionID: "x", Workflow: "w",
			Node: "task.a", Attempt: 1, Input: []byte(input), Log: func(string, string) {}, Output: out})
		return res, out
	}

	res, out := call("shaped", `{"count": 123456789012345678901234567890, "tags": ["a", null]}`)
	if res.Type != outcome.Success {
		t.Fatalf("shaped: %+v; want success", res)
	}
	want := map[string]any{"count": json.Number("123456789012345678901234567890"), "tags": []any{"a", nil}}
	if !out.Set || !reflect.DeepEqual(out.Doc, want) {
		t.Errorf("shaped: decoded output %+v (set %v); want %#v, numbers exact", out.Doc, out.Set, want)
	}

	// Twice: the schema and the words naming the task are worked out by the first call and
	// kept (Dispatcher.outputSchema); the second call must check and say the same.
	for range 2 {
		res, out = call("shaped", `{"count": "seven"}`)
		if res.Type != outcome.Failure || !strings.Contains(res.Message, `plugin echo@0.3.0 task "shaped" produced an output that does not match its output_schema: at /count`) {
			t.Errorf("shaped, count seven: %+v; want the schema's failure, naming the plugin, its version and the task", res)
		}
		if out.Set {
			t.Errorf("shaped, count seven: a decoded output %+v was handed over for an output that failed its check", out.Doc)
		}
	}

	res, out = call("run", `{"count": "seven"}`)
	if res.Type != outcome.Success || out.Set {
		t.Errorf("run (no output_schema): %+v, decoded %v; want success and nothing decoded (the engine decodes it)", res, out.Set)
	}
}
