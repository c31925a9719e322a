package builtins

import (
	"context"
	"testing"

	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
)

// TestDispatcher: each builtin binds to its own table entry (its schema), runs through the
// Runner, and has no triggers; an unknown builtin fails the bind.
func TestDispatcher(t *testing.T) {
	runner := builtin.New(builtin.Options{})
	defer runner.Close()
	d := New(runner)
	ctx := context.Background()
	b, err := d.Bind(ctx, task.Block{Uses: lang.Uses{Kind: lang.UsesBuiltin, Name: "transform"}})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := builtin.InputSchema("transform")
	if d.InputSchema(b, "transform") != want {
		t.Error("InputSchema is not the table's transform schema")
	}
	res := d.Call(ctx, b, task.Call{Uses: lang.Uses{Kind: lang.UsesBuiltin, Name: "transform"}, Input: []byte(`{"a":1}`)})
	if res.Type != outcome.Success || string(res.Output) != `{"a":1}` {
		t.Errorf("transform: %+v", res)
	}
	if r := d.Trigger(ctx, b, task.TriggerCall{Trigger: "t"}); r.Type != "error" || r.Kind != outcome.Fatal {
		t.Errorf("trigger: %+v; want a fatal error", r)
	}
	if _, err := d.Bind(ctx, task.Block{Uses: lang.Uses{Kind: lang.UsesBuiltin, Name: "nope"}}); err == nil || err.Kind != outcome.Fatal {
		t.Errorf("unknown builtin: %v", err)
	}
}
