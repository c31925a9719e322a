package wasm

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
)

func load(t *testing.T, src string) *lang.Workflow {
	t.Helper()
	file := filepath.Join(t.TempDir(), "w.fsc.hcl")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	w, diags := lang.NewParser().Load(file, lang.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return w
}

func eval(e hcl.Expression) (cty.Value, *outcome.Error) {
	v, diags := e.Value(nil)
	if diags.HasErrors() {
		return cty.NilVal, outcome.Errorf(outcome.Validation, "%s", diags.Error())
	}
	return v, nil
}

// TestBind: a binding carries the plan's lock (only for the block's own source) and the
// config as config_get serves it: strings as their bytes, anything else as JSON.
func TestBind(t *testing.T) {
	w := load(t, `
workflow "w" {}
component "text" {
  source = "acme/text"
  config = { greeting = "hi", sizes = [1, 2], on = true }
}
task "a" { uses = component.text.upper }
`)
	d := &Dispatcher{}
	uses := lang.Uses{Kind: lang.UsesComponent, Local: "text", Name: "upper"}
	locks := plan.Locks{Components: map[string]plan.ComponentLock{"text": {Source: "acme/text", Version: "1.2.0", Digest: "sha256:aa"}}}
	b, err := d.Bind(context.Background(), task.Block{Uses: uses, Workflow: w, Locks: locks, Eval: eval})
	if err != nil {
		t.Fatal(err)
	}
	bb := b.(*binding)
	if bb.Version != "1.2.0" || bb.Digest != "sha256:aa" {
		t.Errorf("lock %s %s; want 1.2.0 sha256:aa", bb.Version, bb.Digest)
	}
	want := map[string]string{"greeting": "hi", "sizes": "[1,2]", "on": "true"}
	for k, v := range want {
		if string(bb.Config[k]) != v {
			t.Errorf("config %s = %q; want %q", k, bb.Config[k], v)
		}
	}
	// A lock of another source (the block was edited since plan) is not used.
	locks.Components["text"] = plan.ComponentLock{Source: "acme/other", Version: "9.9.9"}
	b, _ = d.Bind(context.Background(), task.Block{Uses: uses, Workflow: w, Locks: locks, Eval: eval})
	if bb := b.(*binding); bb.Version != "" {
		t.Errorf("a lock for another source was used: %s", bb.Version)
	}
}

func TestBindErrors(t *testing.T) {
	w := load(t, `
workflow "w" {}
component "text" {
  source = "acme/text"
  config = "not an object"
}
task "a" { uses = component.text.upper }
`)
	d := &Dispatcher{}
	_, err := d.Bind(context.Background(), task.Block{Uses: lang.Uses{Kind: lang.UsesComponent, Local: "text", Name: "upper"}, Workflow: w, Eval: eval})
	if err == nil || err.Kind != outcome.Validation || err.Message != `the config of component "text" must be an object; got string` {
		t.Errorf("string config: %v; want a validation error", err)
	}
	_, err = d.Bind(context.Background(), task.Block{Uses: lang.Uses{Kind: lang.UsesComponent, Local: "nope", Name: "upper"}, Workflow: w, Eval: eval})
	if err == nil || err.Kind != outcome.Fatal {
		t.Errorf("unknown block: %v; want a fatal error", err)
	}
}
