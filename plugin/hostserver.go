package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// Limits of the Host service: those of the Wasm host imports (docs/reference/abi-v1.md), so a task behaves
// the same whichever way it runs.
const (
	maxKeyBytes      = 1 << 10
	maxValueBytes    = 1 << 20
	maxLogBytes      = 16 << 10
	maxArtifactBytes = 64 << 20
)

// KV is a call's key-value scope: its execution's for a task, its trigger's for a trigger.
type KV interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Set(ctx context.Context, key string, value []byte) error
	Delete(ctx context.Context, key string) error
}

// Artifacts stores and reads the blobs of a call's execution.
type Artifacts interface {
	// Write stores data and returns the reference as JSON: {"artifact_id", "content_type",
	// "size", ...}.
	Write(ctx context.Context, contentType string, data []byte) ([]byte, error)
	// Read returns an artifact's bytes; an error that wraps ErrArtifactNotFound when there is
	// none.
	Read(ctx context.Context, id string) ([]byte, error)
}

// ErrArtifactNotFound is what Artifacts.Read wraps when the execution has no such artifact.
var ErrArtifactNotFound = errors.New("artifact not found")

// CallEnv is what the Host service gives one call. Nil fields are refused.
type CallEnv struct {
	// Log receives the plugin's log lines (level "debug", "info", "warn" or "error").
	Log       func(level, message string)
	KV        KV
	Artifacts Artifacts
}

// hostServer serves Host to one plugin process: a request names its call, and gets that
// call's environment while the call runs.
type hostServer struct {
	pluginv1.UnimplementedHostServer

	next  atomic.Uint64
	mu    sync.RWMutex
	calls map[string]*CallEnv
}

func newHostServer() *hostServer { return &hostServer{calls: map[string]*CallEnv{}} }

// register makes env reachable under a new call id until the returned func is called.
func (h *hostServer) register(env *CallEnv) (string, func()) {
	id := strconv.FormatUint(h.next.Add(1), 10)
	h.mu.Lock()
	h.calls[id] = env
	h.mu.Unlock()
	return id, func() {
		h.mu.Lock()
		delete(h.calls, id)
		h.mu.Unlock()
	}
}

func (h *hostServer) env(id string) (*CallEnv, error) {
	h.mu.RLock()
	env, ok := h.calls[id]
	h.mu.RUnlock()
	if !ok {
		return nil, status.Errorf(codes.FailedPrecondition, "call %q is not running (it ended, or Fuscia gave up on it)", id)
	}
	return env, nil
}

func tooLarge(what string, n, max int) error {
	if n > max {
		return status.Errorf(codes.InvalidArgument, "%s is %d bytes; the limit is %d", what, n, max)
	}
	return nil
}

func (h *hostServer) Log(_ context.Context, req *pluginv1.LogRequest) (*pluginv1.LogResponse, error) {
	env, err := h.env(req.CallId)
	if err != nil {
		return nil, err
	}
	env.log(req.Level, req.Message)
	return &pluginv1.LogResponse{}, nil
}

// log passes a plugin's log line to the call's Log, with its limits: a line sent through
// Host.Log and one carried in an answer (ExecuteResponse.logs) are treated alike.
func (env *CallEnv) log(level, msg string) {
	if env == nil || env.Log == nil {
		return
	}
	if len(msg) > maxLogBytes {
		msg = msg[:maxLogBytes] + "…"
	}
	switch level {
	case "debug", "info", "warn", "error":
	default:
		level = "info"
	}
	env.Log(level, msg)
}

func (h *hostServer) kv(id, key string) (KV, error) {
	env, err := h.env(id)
	if err != nil {
		return nil, err
	}
	if err := tooLarge("the key", len(key), maxKeyBytes); err != nil {
		return nil, err
	}
	if env.KV == nil {
		return nil, status.Error(codes.FailedPrecondition, "this call has no key-value scope")
	}
	return env.KV, nil
}

func (h *hostServer) KVGet(ctx context.Context, req *pluginv1.KVGetRequest) (*pluginv1.KVGetResponse, error) {
	kv, err := h.kv(req.CallId, req.Key)
	if err != nil {
		return nil, err
	}
	v, ok, err := kv.Get(ctx, req.Key)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "kv get %q: %v", req.Key, err)
	}
	return &pluginv1.KVGetResponse{Found: ok, Value: v}, nil
}

func (h *hostServer) KVSet(ctx context.Context, req *pluginv1.KVSetRequest) (*pluginv1.KVSetResponse, error) {
	kv, err := h.kv(req.CallId, req.Key)
	if err != nil {
		return nil, err
	}
	if err := tooLarge("the value", len(req.Value), maxValueBytes); err != nil {
		return nil, err
	}
	if err := kv.Set(ctx, req.Key, req.Value); err != nil {
		return nil, status.Errorf(codes.Internal, "kv set %q: %v", req.Key, err)
	}
	return &pluginv1.KVSetResponse{}, nil
}

func (h *hostServer) KVDelete(ctx context.Context, req *pluginv1.KVDeleteRequest) (*pluginv1.KVDeleteResponse, error) {
	kv, err := h.kv(req.CallId, req.Key)
	if err != nil {
		return nil, err
	}
	if err := kv.Delete(ctx, req.Key); err != nil {
		return nil, status.Errorf(codes.Internal, "kv delete %q: %v", req.Key, err)
	}
	return &pluginv1.KVDeleteResponse{}, nil
}

func (h *hostServer) artifacts(id string) (Artifacts, error) {
	env, err := h.env(id)
	if err != nil {
		return nil, err
	}
	if env.Artifacts == nil {
		return nil, status.Error(codes.FailedPrecondition, "this call has no artifact store (triggers run before there is an execution)")
	}
	return env.Artifacts, nil
}

func (h *hostServer) ArtifactWrite(ctx context.Context, req *pluginv1.ArtifactWriteRequest) (*pluginv1.ArtifactWriteResponse, error) {
	a, err := h.artifacts(req.CallId)
	if err != nil {
		return nil, err
	}
	if err := tooLarge("the content type", len(req.ContentType), maxKeyBytes); err != nil {
		return nil, err
	}
	if err := tooLarge("the artifact", len(req.Data), maxArtifactBytes); err != nil {
		return nil, err
	}
	ref, err := a.Write(ctx, req.ContentType, req.Data)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "artifact write: %v", err)
	}
	var id struct {
		ArtifactID string `json:"artifact_id"`
	}
	if err := json.Unmarshal(ref, &id); err != nil {
		return nil, status.Errorf(codes.Internal, "artifact write: the store answered %q: %v", ref, err)
	}
	return &pluginv1.ArtifactWriteResponse{Ref: ref, ArtifactId: id.ArtifactID}, nil
}

func (h *hostServer) ArtifactRead(ctx context.Context, req *pluginv1.ArtifactReadRequest) (*pluginv1.ArtifactReadResponse, error) {
	a, err := h.artifacts(req.CallId)
	if err != nil {
		return nil, err
	}
	data, err := a.Read(ctx, req.ArtifactId)
	if errors.Is(err, ErrArtifactNotFound) {
		return nil, status.Errorf(codes.NotFound, "artifact %q: not found in this execution", req.ArtifactId)
	}
	if err != nil {
		return nil, status.Errorf(codes.Internal, "artifact read %q: %v", req.ArtifactId, err)
	}
	return &pluginv1.ArtifactReadResponse{Data: data}, nil
}
