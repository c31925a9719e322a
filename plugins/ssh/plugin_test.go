package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/plugin"
	"github.com/fuscia/fuscia/plugin/plugintest"
	"github.com/fuscia/fuscia/plugins/internal/execcore"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// TestPluginEndToEnd runs the real fuscia-plugin-ssh binary under Fuscia's plugin manager
// against the test server: the plugin block's config, results and error kinds through gRPC,
// and one pooled connection shared by the calls of the process.
func TestPluginEndToEnd(t *testing.T) {
	f := newFixture(t)
	bin := plugintest.Build(t, "plugins/ssh", "ssh")
	path := plugintest.Install(t, bin, t.TempDir(), "fuscia-plugin-ssh_v"+version)
	digest, err := plugin.Digest(path)
	if err != nil {
		t.Fatal(err)
	}
	target := plugin.Target{Name: "ssh", Path: path, Digest: digest, Version: version}
	m := plugin.NewManager(plugin.Options{})
	defer plugintest.NoneLeft(t, filepath.Dir(path))
	defer m.Close()
	ctx := context.Background()

	config, _ := json.Marshal(Config{User: "tester", PrivateKeyFile: f.key.file, KnownHostsFile: f.knownHosts})
	diags, err := m.Configure(ctx, target, []byte(`{"usr": "typo"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(diags) == 0 {
		t.Error("a config with an unknown key was accepted")
	}
	if diags, err = m.Configure(ctx, target, config, nil); err != nil || len(diags) != 0 {
		t.Errorf("valid config: %v, %v", diags, err)
	}

	env := &plugin.CallEnv{Log: func(string, string) {}}
	call := func(input string) *pluginv1.ExecuteResponse {
		t.Helper()
		resp, err := m.Execute(ctx, target, plugin.Request{Task: "exec", Input: []byte(input), Config: config,
			Context: &pluginv1.CallContext{ExecutionId: "x", Workflow: "w", Node: "task.x", Attempt: 1}}, env)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for i := range 3 {
		resp := call(fmt.Sprintf(`{"host": "127.0.0.1", "port": %d, "command": ["echo", "call", "%d"]}`, f.srv.port(), i))
		var out execcore.Output
		if resp.Type != pluginv1.ExecuteResponse_TYPE_SUCCESS || json.Unmarshal(resp.Output, &out) != nil || out.Stdout != fmt.Sprintf("call %d\n", i) {
			t.Fatalf("call %d: %v", i, resp)
		}
	}
	if n := f.srv.accepted.Load(); n != 1 {
		t.Errorf("%d connections for 3 calls, want 1", n)
	}
	// Arguments from the input reach the remote program as they are, never as shell code.
	resp := call(fmt.Sprintf(`{"host": "127.0.0.1", "port": %d, "command": ["echo", "$(id)", "a;b"]}`, f.srv.port()))
	var out execcore.Output
	if resp.Type != pluginv1.ExecuteResponse_TYPE_SUCCESS || json.Unmarshal(resp.Output, &out) != nil || out.Stdout != "$(id) a;b\n" {
		t.Errorf("echo $(id) a;b: %v", resp)
	}
	resp = call(fmt.Sprintf(`{"host": "127.0.0.1", "port": %d, "command": "echo $(id)"}`, f.srv.port()))
	if resp.Type != pluginv1.ExecuteResponse_TYPE_ERROR || resp.ErrorKind != "validation" || !strings.Contains(resp.Message, "needs a shell") {
		t.Errorf("a command line without shell = true: %v", resp)
	}
	resp = call(fmt.Sprintf(`{"host": "127.0.0.1", "port": %d, "command": "exit 9", "shell": true}`, f.srv.port()))
	if resp.Type != pluginv1.ExecuteResponse_TYPE_ERROR || resp.ErrorKind != "fatal" || !strings.Contains(resp.Message, "code 9") {
		t.Errorf("exit 9: %v", resp)
	}
}
