package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/plugin"
	"github.com/fuscia/fuscia/plugin/plugintest"
	"github.com/fuscia/fuscia/plugins/internal/execcore"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// TestPluginEndToEnd runs the real fuscia-plugin-shell binary under Fuscia's plugin manager:
// the wiring of main.go (schema, validation, results and error kinds) through gRPC.
func TestPluginEndToEnd(t *testing.T) {
	bin := plugintest.Build(t, "plugins/shell", "shell")
	dir := t.TempDir()
	path := plugintest.Install(t, bin, dir, "fuscia-plugin-shell_v"+version)
	digest, err := plugin.Digest(path)
	if err != nil {
		t.Fatal(err)
	}
	target := plugin.Target{Name: "shell", Path: path, Digest: digest, Version: version}
	m := plugin.NewManager(plugin.Options{})
	defer plugintest.NoneLeft(t, filepath.Dir(path))
	defer m.Close()
	ctx := context.Background()

	schema, err := m.Schema(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	if schema.Name != "shell" || schema.Version != version || schema.Tasks["exec"].Input == nil {
		t.Fatalf("schema = %+v", schema)
	}

	diags, err := m.ValidateInput(ctx, target, "exec", []byte(`{"command": "echo", "workdir": null}`), []byte("{}"), []string{"/workdir"})
	if err != nil {
		t.Fatal(err)
	}
	if len(diags) != 1 || diags[0].Path != "/command" {
		t.Errorf("diagnostics = %v, want one at /command", diags)
	}

	env := &plugin.CallEnv{Log: func(string, string) {}}
	call := func(input string) *pluginv1.ExecuteResponse {
		t.Helper()
		resp, err := m.Execute(ctx, target, plugin.Request{Task: "exec", Input: []byte(input), Config: []byte("{}"),
			Context: &pluginv1.CallContext{ExecutionId: "x", Workflow: "w", Node: "task.x", Attempt: 1}}, env)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	output := func(resp *pluginv1.ExecuteResponse) execcore.Output {
		t.Helper()
		var out execcore.Output
		if err := json.Unmarshal(resp.Output, &out); err != nil {
			t.Fatalf("output %q: %v", resp.Output, err)
		}
		return out
	}

	resp := call(`{"command": "/bin/echo", "args": ["hi", "a b"]}`)
	if resp.Type != pluginv1.ExecuteResponse_TYPE_SUCCESS || output(resp).Stdout != "hi a b\n" {
		t.Errorf("echo: %v", resp)
	}
	resp = call(`{"command": "/bin/sh", "args": ["-c", "echo out; echo bad >&2; exit 4"]}`)
	if resp.Type != pluginv1.ExecuteResponse_TYPE_ERROR || resp.ErrorKind != "fatal" || !strings.Contains(resp.Message, "code 4") {
		t.Errorf("exit 4: %v", resp)
	} else if out := output(resp); out.ExitCode != 4 || out.Stdout != "out\n" || out.Stderr != "bad\n" {
		t.Errorf("exit 4 partial output: %+v", out)
	}
	resp = call(`{"command": "sh"}`)
	if resp.Type != pluginv1.ExecuteResponse_TYPE_ERROR || resp.ErrorKind != "validation" || !strings.Contains(resp.Message, "command") {
		t.Errorf("relative command: %v", resp)
	}
}
