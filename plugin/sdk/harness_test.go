package sdk

import (
	"context"
	"strconv"
	"sync"
	"testing"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// clientPlugin is the SDK's grpcPlugin with a client half. The real client half is the host, in
// package plugin, written separately; these tests drive the provider through go-plugin's
// in-memory connection instead, so that they exercise the real gRPC and broker plumbing.
type clientPlugin struct {
	grpcPlugin
}

// remote is what the test's client half gets: the Provider client and the host's broker.
type remote struct {
	pluginv1.ProviderClient
	broker *goplugin.GRPCBroker
}

func (*clientPlugin) GRPCClient(_ context.Context, b *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &remote{ProviderClient: pluginv1.NewProviderClient(c), broker: b}, nil
}

// start serves p over an in-memory go-plugin connection and returns the host's end.
func start(t *testing.T, p Plugin) *remote {
	t.Helper()
	if err := p.check(); err != nil {
		t.Fatalf("check: %v", err)
	}
	tp := &clientPlugin{grpcPlugin{provider: newProvider(p)}}
	client, _ := goplugin.TestPluginGRPCConn(t, false, map[string]goplugin.Plugin{PluginKey: tp})
	// Close asks the server to stop, as the host does; stopping it here too races in go-plugin.
	t.Cleanup(func() { _ = client.Close() })
	raw, err := client.Dispense(PluginKey)
	if err != nil {
		t.Fatalf("dispense: %v", err)
	}
	return raw.(*remote)
}

// serveHost serves h as the Host service on the broker, as Fuscia does once per plugin
// process, and returns the broker id to put in requests.
func (r *remote) serveHost(h pluginv1.HostServer) uint32 {
	id := r.broker.NextId()
	go r.broker.AcceptAndServe(id, func(opts []grpc.ServerOption) *grpc.Server {
		s := grpc.NewServer(opts...)
		pluginv1.RegisterHostServer(s, h)
		return s
	})
	return id
}

// fakeHost is a minimal Host: a KV and an artifact store shared by every call, and a log. It
// stands in for package plugin's host server, which is written concurrently with this SDK.
type fakeHost struct {
	pluginv1.UnimplementedHostServer

	mu        sync.Mutex // guards everything below
	kv        map[string][]byte
	artifacts map[string][]byte
	logs      []string // "call-id level message"
	callIDs   map[string]bool
}

func newFakeHost() *fakeHost {
	return &fakeHost{kv: map[string][]byte{}, artifacts: map[string][]byte{}, callIDs: map[string]bool{}}
}

func (h *fakeHost) saw(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.callIDs[id] = true
}

func (h *fakeHost) Log(_ context.Context, req *pluginv1.LogRequest) (*pluginv1.LogResponse, error) {
	h.saw(req.CallId)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logs = append(h.logs, req.CallId+" "+req.Level+" "+req.Message)
	return &pluginv1.LogResponse{}, nil
}

func (h *fakeHost) KVGet(_ context.Context, req *pluginv1.KVGetRequest) (*pluginv1.KVGetResponse, error) {
	h.saw(req.CallId)
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.kv[req.Key]
	return &pluginv1.KVGetResponse{Found: ok, Value: v}, nil
}

func (h *fakeHost) KVSet(_ context.Context, req *pluginv1.KVSetRequest) (*pluginv1.KVSetResponse, error) {
	h.saw(req.CallId)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.kv[req.Key] = req.Value
	return &pluginv1.KVSetResponse{}, nil
}

func (h *fakeHost) KVDelete(_ context.Context, req *pluginv1.KVDeleteRequest) (*pluginv1.KVDeleteResponse, error) {
	h.saw(req.CallId)
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.kv, req.Key)
	return &pluginv1.KVDeleteResponse{}, nil
}

func (h *fakeHost) ArtifactWrite(_ context.Context, req *pluginv1.ArtifactWriteRequest) (*pluginv1.ArtifactWriteResponse, error) {
	h.saw(req.CallId)
	h.mu.Lock()
	defer h.mu.Unlock()
	id := "sha256:fake" + string(rune('a'+len(h.artifacts)))
	h.artifacts[id] = req.Data
	ref := `{"artifact_id":"` + id + `","content_type":"` + req.ContentType + `","size":` +
		strconv.Itoa(len(req.Data)) + `,"store":"fake"}`
	return &pluginv1.ArtifactWriteResponse{Ref: []byte(ref), ArtifactId: id}, nil
}

func (h *fakeHost) ArtifactRead(_ context.Context, req *pluginv1.ArtifactReadRequest) (*pluginv1.ArtifactReadResponse, error) {
	h.saw(req.CallId)
	h.mu.Lock()
	defer h.mu.Unlock()
	b, ok := h.artifacts[req.ArtifactId]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "artifact %q: not found", req.ArtifactId)
	}
	return &pluginv1.ArtifactReadResponse{Data: b}, nil
}
