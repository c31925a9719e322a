package fsctest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/plugin"
	"github.com/fuscia/fuscia/plugin/plugintest"
)

// TestInstalledSchemas finds a component's schemas in its installed manifest and a plugin's by
// asking the real binary, as validate does; blocks not installed have none; nothing is written
// to the home.
func TestInstalledSchemas(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	manifest := `{"name": "acme/stripe", "version": "1.2.0", "abi": 1, "digest": "sha256:00",
	  "tasks": {"charge": {
	    "schema": {"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]},
	    "output_schema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}}}}`
	compDir := filepath.Join(home, "components", "acme--stripe--1.2.0")
	if err := os.MkdirAll(compDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(compDir, "manifest.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	pluginDir := t.TempDir()
	plugintest.Install(t, plugintest.Build(t, "examples/plugins/greeter", "greeter"), pluginDir, "fuscia-plugin-greeter")

	wf := filepath.Join(dir, "w.fsc.hcl")
	src := `
workflow "w" {}
component "stripe" { source = "acme/stripe" }
component "old" {
  source  = "acme/stripe"
  version = "< 1.0"
}
plugin "greeter" { source = "greeter" }
plugin "gone" { source = "nowhere" }
task "charge" { uses = component.stripe.charge }
task "greet" {
  uses   = plugin.greeter.greet
  inputs = { name = "Ada" }
}
`
	if err := os.WriteFile(wf, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	w, diags := lang.NewParser().Load(wf, lang.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	before := listTree(t, home)

	m := plugin.NewManager(plugin.Options{}) // no CacheDir: nothing on disk
	defer m.Close()
	src2 := InstalledSchemas(context.Background(), plan.Env{Home: home, PluginDirs: []string{pluginDir}}, m)

	in, out := src2.TaskSchemas(w, lang.Uses{Kind: lang.UsesComponent, Local: "stripe", Name: "charge"})
	if in == nil || out == nil {
		t.Fatalf("component stripe task charge: input %v, output %v; want both", in, out)
	}
	if !strings.Contains(string(out.Raw()), `"id"`) || !strings.Contains(string(in.Raw()), `"amount"`) {
		t.Errorf("component schemas are not the manifest's: input %s, output %s", in.Raw(), out.Raw())
	}
	if in2, _ := src2.TaskSchemas(w, lang.Uses{Kind: lang.UsesComponent, Local: "stripe", Name: "charge"}); in2 != in {
		t.Errorf("a second lookup compiled the schema again")
	}
	_, out = src2.TaskSchemas(w, lang.Uses{Kind: lang.UsesPlugin, Local: "greeter", Name: "greet"})
	if out == nil || !strings.Contains(string(out.Raw()), `"message"`) {
		t.Errorf("plugin greeter task greet: output schema %v, want the plugin's (with message)", out)
	}
	for _, u := range []lang.Uses{
		{Kind: lang.UsesComponent, Local: "old", Name: "charge"},    // no version matches
		{Kind: lang.UsesComponent, Local: "stripe", Name: "refund"}, // no such task
		{Kind: lang.UsesComponent, Local: "nope", Name: "charge"},   // no such block
		{Kind: lang.UsesPlugin, Local: "gone", Name: "x"},           // no binary
		{Kind: lang.UsesPlugin, Local: "greeter", Name: "nope"},     // no such task
		{Kind: lang.UsesBuiltin, Name: "http"},
	} {
		if in, out := src2.TaskSchemas(w, u); in != nil || out != nil {
			t.Errorf("%s: schemas %v, %v; want none", u, in, out)
		}
	}
	if after := listTree(t, home); after != before {
		t.Errorf("the home changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func listTree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		b.WriteString(rel + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
