package lsp

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/plugin"
	"github.com/fuscia/fuscia/plugin/discover"
	"github.com/fuscia/fuscia/plugin/plugintest"
)

// TestInstalledComponent: lang/query is told a component's tasks and triggers, with their
// schemas, from the manifest of the newest installed version that matches.
func TestInstalledComponent(t *testing.T) {
	home := t.TempDir()
	manifest := func(version, description string) string {
		return `{"name": "acme/stripe", "version": "` + version + `", "description": "` + description + `", "abi": 1, "digest": "sha256:00",
  "capabilities": {"allowed_hosts": [], "allowed_paths": []},
  "tasks": {"refund": {"description": "Refund a charge"}, "charge": {"description": "Charge a card", "schema": {"type": "object"}, "output_schema": {"type": "object", "properties": {"id": {"type": "string"}}}}},
  "triggers": {"paid": {"description": "A payment arrived", "trigger_type": {"type": "webhook"}}}}`
	}
	for v, desc := range map[string]string{"1.2.0": "Payments", "2.0.0": "Payments, version 2"} {
		writeFile(t, filepath.Join(home, "components", "acme--stripe--"+v, "manifest.json"), manifest(v, desc))
	}
	env := installed{env: plan.Env{Home: home}, plugins: plugin.NewManager(plugin.Options{}), file: filepath.Join(t.TempDir(), "w.fsc.hcl")}

	p, ok := env.Component("acme/stripe", "~> 1.0")
	if !ok {
		t.Fatal("acme/stripe ~> 1.0 not found")
	}
	if p.Version != "1.2.0" || p.Description != "Payments" {
		t.Errorf("found %s %q; want 1.2.0, the newest matching ~> 1.0", p.Version, p.Description)
	}
	var tasks []string
	for _, task := range p.Tasks {
		tasks = append(tasks, task.Name)
	}
	if !slices.Equal(tasks, []string{"charge", "refund"}) || p.Tasks[0].Description != "Charge a card" || !json.Valid(p.Tasks[0].OutputSchema) || p.Tasks[0].InputSchema == nil {
		t.Errorf("tasks %+v; want charge (with its schemas) and refund, sorted", p.Tasks)
	}
	if len(p.Triggers) != 1 || p.Triggers[0].Name != "paid" {
		t.Errorf("triggers %+v; want paid", p.Triggers)
	}
	if p, ok := env.Component("acme/stripe", ""); !ok || p.Version != "2.0.0" {
		t.Errorf("without a constraint: %+v; want 2.0.0", p)
	}
	if _, ok := env.Component("acme/nope", ""); ok {
		t.Error("acme/nope found; nothing is installed under that name")
	}
}

// TestPluginFromPluginDir: a plugin in a -plugin-dir is asked for its schema by the check, so
// a task it does not have is an error, and completion then offers its tasks; the plugin
// process ends with the server.
func TestPluginFromPluginDir(t *testing.T) {
	pluginDir := t.TempDir()
	plugintest.Install(t, plugintest.Build(t, "cmd/fuscia/testdata/echoplugin", "echo"), pluginDir, "fuscia-plugin-echo_v0.3.0")
	defer plugintest.NoneLeft(t, pluginDir)

	uri := uriOf(filepath.Join(t.TempDir(), "w.fsc.hcl"))
	text := "workflow \"w\" {}\n\nplugin \"echo\" {\n  source = \"echo\"\n}\n\ntask \"a\" {\n  uses = plugin.echo.nope\n}\n"
	c, wait := inProcess(t, New(Config{Env: plan.Env{Home: t.TempDir(), PluginDirs: []string{pluginDir}}}))
	c.initialize()
	c.open(uri, text)
	p, _ := c.waitDiagnostics(uri, 0, versionAtLeast(1))
	if len(p.Diagnostics) != 1 || !strings.Contains(p.Diagnostics[0].Message, "Unknown plugin task") {
		t.Fatalf("diagnostics %+v; want the unknown plugin task", p.Diagnostics)
	}

	typing := strings.Replace(text, "plugin.echo.nope", "plugin.echo.", 1)
	c.change(uri, 2, typing)
	var items []protocol.CompletionItem
	c.mustCall(protocol.MethodTextDocumentCompletion, protocol.CompletionParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: uri},
		Position:     newText([]byte(typing)).position(strings.Index(typing, "plugin.echo.") + len("plugin.echo.")),
	}}, &items)
	var labels []string
	for _, it := range items {
		labels = append(labels, it.Label)
	}
	if !slices.Equal(labels, []string{"run", "shaped", "sparse"}) {
		t.Errorf("completion after plugin.echo.: %q; want the plugin's tasks", labels)
	}

	c.mustCall(protocol.MethodShutdown, nil, nil)
	c.notify(protocol.MethodExit, nil)
	if code := wait(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

// Checks and completions share the plugin manager's digest cache, so that an unchanged plugin
// binary is read once, not at every check; a cache the caller gave is kept.
func TestPlanEnvUsesThePluginManagersDigests(t *testing.T) {
	m := plugin.NewManager(plugin.Options{})
	defer m.Close()
	s := &Server{plugins: m}
	if got := s.planEnv().Digests; got == nil || got != m.Digests() {
		t.Fatalf("planEnv().Digests = %p; want the manager's cache %p", got, m.Digests())
	}
	own := discover.NewDigests()
	s.cfg.Env.Digests = own
	if got := s.planEnv().Digests; got != own {
		t.Fatalf("planEnv().Digests = %p; want the configured cache %p", got, own)
	}
}
