package plugins

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

func eval(e hcl.Expression) (cty.Value, *outcome.Error) {
	v, diags := e.Value(nil)
	if diags.HasErrors() {
		return cty.NilVal, outcome.Errorf(outcome.Validation, "%s", diags.Error())
	}
	return v, nil
}

// loadWorkflow writes src to w.fsc.hcl in dir and loads it (plugins are looked for beside it).
func loadWorkflow(tb testing.TB, dir, src string) *lang.Workflow {
	tb.Helper()
	file := filepath.Join(dir, "w.fsc.hcl")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		tb.Fatal(err)
	}
	w, diags := lang.NewParser().Load(file, lang.Options{})
	if diags.HasErrors() {
		tb.Fatal(diags.Error())
	}
	return w
}

// TestBind: a plugin binding carries the workflow's file (plugins are looked for beside it),
// the plan's lock for the block's source, and the config as one JSON object; a config that is
// not an object, or a block that does not exist, fails the bind.
func TestBind(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "w.fsc.hcl")
	src := `
workflow "w" {}
plugin "sh" {
  source = "shell"
  config = { dir = "/tmp", retries = 2 }
}
plugin "bad" {
  source = "shell"
  config = 3
}
task "a" { uses = plugin.sh.exec }
task "b" { uses = plugin.bad.exec }
`
	w := loadWorkflow(t, dir, src)
	d := &Dispatcher{}
	locks := plan.Locks{Plugins: map[string]plan.PluginLock{"sh": {Source: "shell", Version: "0.3.0", Digest: "sha256:bb"}}}
	b, err := d.Bind(context.Background(), task.Block{Uses: lang.Uses{Kind: lang.UsesPlugin, Local: "sh", Name: "exec"}, Workflow: w, Locks: locks, Eval: eval})
	if err != nil {
		t.Fatal(err)
	}
	pb := b.(*binding)
	if pb.Workflow != file || pb.Version != "0.3.0" || pb.Digest != "sha256:bb" || string(pb.Config) != `{"dir":"/tmp","retries":2}` {
		t.Errorf("binding %+v config %s", pb, pb.Config)
	}
	if _, err := d.Bind(context.Background(), task.Block{Uses: lang.Uses{Kind: lang.UsesPlugin, Local: "bad", Name: "exec"}, Workflow: w, Eval: eval}); err == nil || err.Kind != outcome.Validation {
		t.Errorf("number config: %v; want a validation error", err)
	}
	if _, err := d.Bind(context.Background(), task.Block{Uses: lang.Uses{Kind: lang.UsesPlugin, Local: "nope", Name: "exec"}, Workflow: w, Eval: eval}); err == nil || err.Kind != outcome.Fatal {
		t.Errorf("unknown block: %v; want a fatal error", err)
	}
}
