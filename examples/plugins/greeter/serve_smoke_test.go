package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/fuscia/fuscia/plugin/sdk"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// This smoke test builds the greeter and runs it as Fuscia does (a child process, go-plugin's
// handshake, AutoMTLS, Host served over the broker), with a minimal client half and Host: the
// real ones are package plugin's. It checks that sdk.Serve works end to end.

type clientPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
}

type remote struct {
	pluginv1.ProviderClient
	broker *goplugin.GRPCBroker
}

func (clientPlugin) GRPCServer(*goplugin.GRPCBroker, *grpc.Server) error { return nil }

func (clientPlugin) GRPCClient(_ context.Context, b *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &remote{ProviderClient: pluginv1.NewProviderClient(c), broker: b}, nil
}

// kvHost is a Host with one KV for everything and a log.
type kvHost struct {
	pluginv1.UnimplementedHostServer
	mu   sync.Mutex // guards kv and logs
	kv   map[string][]byte
	logs []string
}

func (h *kvHost) Log(_ context.Context, req *pluginv1.LogRequest) (*pluginv1.LogResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logs = append(h.logs, req.Level+" "+req.Message)
	return &pluginv1.LogResponse{}, nil
}

func (h *kvHost) KVGet(_ context.Context, req *pluginv1.KVGetRequest) (*pluginv1.KVGetResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.kv[req.Key]
	return &pluginv1.KVGetResponse{Found: ok, Value: v}, nil
}

func (h *kvHost) KVSet(_ context.Context, req *pluginv1.KVSetRequest) (*pluginv1.KVSetResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.kv[req.Key] = req.Value
	return &pluginv1.KVSetResponse{}, nil
}

func TestServeSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the plugin")
	}
	bin := filepath.Join(t.TempDir(), "fuscia-plugin-greeter_v0.1.0")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	// As Fuscia does, the sockets of both ends go in a directory of their own, which the test
	// removes: without it, go-plugin makes them in the temporary directory itself.
	cmd := exec.Command(bin)
	cmd.Env = []string{goplugin.EnvUnixSocketDir + "=" + t.TempDir()}
	client := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		Plugins:          goplugin.PluginSet{sdk.PluginKey: clientPlugin{}},
		Cmd:              cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		AutoMTLS:         true,
	})
	defer client.Kill()
	rpc, err := client.Client()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := rpc.Dispense(sdk.PluginKey)
	if err != nil {
		t.Fatal(err)
	}
	r := raw.(*remote)
	host := &kvHost{kv: map[string][]byte{}}
	hostID := r.broker.NextId()
	go r.broker.AcceptAndServe(hostID, func(opts []grpc.ServerOption) *grpc.Server {
		s := grpc.NewServer(opts...)
		pluginv1.RegisterHostServer(s, host)
		return s
	})
	ctx := context.Background()

	s, err := r.GetSchema(ctx, &pluginv1.GetSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "greeter" || s.Version != "0.1.0" || len(s.Tasks) != 5 || len(s.Triggers) != 1 {
		t.Errorf("schema = %v", s)
	}

	v, err := r.ValidateInput(ctx, &pluginv1.ValidateInputRequest{Task: "greet", Input: []byte(`{"name":""}`)})
	if err != nil || len(v.Diagnostics) != 1 || v.Diagnostics[0].Path != "/name" {
		t.Errorf("ValidateInput = %v, %v", v, err)
	}

	for i, want := range []string{`{"message":"Hello, Ada!"}`, `{"message":"Hi, Bob!"}`} {
		input := []string{`{"name":"Ada"}`, `{"name":"Bob","greeting":"Hi"}`}[i]
		resp, err := r.Execute(ctx, &pluginv1.ExecuteRequest{Task: "greet", Input: []byte(input), CallId: "g", HostBrokerId: hostID})
		if err != nil || string(resp.Output) != want {
			t.Errorf("greet %s = %v, %v", input, resp, err)
		}
	}
	if got := string(host.kv["greetings"]); got != "2" {
		t.Errorf("greetings = %q, want 2", got)
	}

	resp, err := r.Execute(ctx, &pluginv1.ExecuteRequest{Task: "fail", Input: []byte(`{"kind":"fatal","message":"no"}`)})
	if err != nil || resp.ErrorKind != "fatal" || resp.Message != "no" {
		t.Errorf("fail = %v, %v", resp, err)
	}

	var state []byte
	for call := 1; ; call++ {
		resp, err := r.Execute(ctx, &pluginv1.ExecuteRequest{Task: "count", State: state})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Type == pluginv1.ExecuteResponse_TYPE_SUCCESS {
			if call != 4 || string(resp.Output) != `{"calls":3}` {
				t.Errorf("count succeeded on call %d with %s", call, resp.Output)
			}
			break
		}
		if call > 4 {
			t.Fatalf("count still continues on call %d", call)
		}
		state = resp.State
	}

	tr, err := r.HandleTrigger(ctx, &pluginv1.HandleTriggerRequest{Trigger: "tick", Event: []byte(`{"type":"poll"}`), HostBrokerId: hostID})
	if err != nil || string(tr.Payload) != `{"n":1}` {
		t.Errorf("tick = %v, %v", tr, err)
	}

	// crash sets its mark and exits; the call fails and the process is gone.
	if _, err := r.Execute(ctx, &pluginv1.ExecuteRequest{Task: "crash", Input: []byte(`{}`), HostBrokerId: hostID}); err == nil {
		t.Error("crash answered")
	}
	if got := string(host.kv["crashed"]); got != "1" {
		t.Errorf("crashed = %q", got)
	}
}
