package task

import (
	"context"
	"testing"

	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schema"
)

// kindStub answers with its name, so a test sees which dispatcher a call reached.
type kindStub struct{ name string }

func (k kindStub) Bind(_ context.Context, b Block) (Binding, *outcome.Error) {
	if b.Uses.Name == "unbindable" {
		return nil, outcome.Errorf(outcome.Validation, "no")
	}
	return k.name + ":" + b.Uses.Block(), nil
}
func (k kindStub) InputSchema(Binding, string) *schema.Schema { return nil }
func (k kindStub) Call(_ context.Context, b Binding, _ Call) outcome.Result {
	return outcome.OK([]byte(`"` + b.(string) + `"`))
}
func (k kindStub) Trigger(_ context.Context, b Binding, _ TriggerCall) TriggerResult {
	return TriggerResult{Type: "completed", Payload: []byte(`"` + b.(string) + `"`)}
}

func TestByKind(t *testing.T) {
	ctx := context.Background()
	d := ByKind{lang.UsesBuiltin: kindStub{"builtins"}, lang.UsesPlugin: kindStub{"plugins"}}
	b, err := d.Bind(ctx, Block{Uses: lang.Uses{Kind: lang.UsesPlugin, Local: "sh", Name: "exec"}})
	if err != nil {
		t.Fatal(err)
	}
	if r := d.Call(ctx, b, Call{}); string(r.Output) != `"plugins:plugin.sh"` {
		t.Errorf("Call reached %s", r.Output)
	}
	if r := d.Trigger(ctx, b, TriggerCall{}); string(r.Payload) != `"plugins:plugin.sh"` {
		t.Errorf("Trigger reached %s", r.Payload)
	}
	if _, err := d.Bind(ctx, Block{Uses: lang.Uses{Kind: lang.UsesBuiltin, Name: "unbindable"}}); err == nil || err.Kind != outcome.Validation {
		t.Errorf("a kind's bind error: %v; want it passed on", err)
	}
	_, err = d.Bind(ctx, Block{Uses: lang.Uses{Kind: lang.UsesComponent, Local: "c", Name: "t"}})
	if err == nil || err.Kind != outcome.Fatal || err.Message != "component.c.t: component tasks cannot run in this process" {
		t.Errorf("a kind without a dispatcher: %v", err)
	}
	if r := d.Call(ctx, "foreign", Call{Uses: lang.Uses{Kind: lang.UsesBuiltin, Name: "x"}}); r.Type != outcome.Failure || r.Kind != outcome.Fatal {
		t.Errorf("a binding ByKind did not make: %+v", r)
	}
	if d.InputSchema("foreign", "x") != nil {
		t.Error("InputSchema of a foreign binding")
	}
	if r := d.Trigger(ctx, "foreign", TriggerCall{Trigger: "t"}); r.Type != "error" {
		t.Errorf("Trigger of a foreign binding: %+v", r)
	}
}
