package sdk

import (
	"context"
	"errors"
	"fmt"
)

type hostIn struct {
	Op string `json:"op"`
}

// hostTask exercises every host callback; the output says what it saw.
func hostTask(ctx context.Context, call *Call, in hostIn) (map[string]any, error) {
	switch in.Op {
	case "kv":
		kv := call.KV()
		if _, ok, err := kv.Get(ctx, "k"); err != nil || ok {
			return nil, fmt.Errorf("get before set: ok=%v err=%v", ok, err)
		}
		if err := kv.Set(ctx, "k", []byte("v1")); err != nil {
			return nil, err
		}
		v, ok, err := kv.Get(ctx, "k")
		if err != nil || !ok {
			return nil, fmt.Errorf("get after set: ok=%v err=%v", ok, err)
		}
		if err := kv.Set(ctx, "empty", nil); err != nil {
			return nil, err
		}
		e, eok, err := kv.Get(ctx, "empty")
		if err != nil {
			return nil, err
		}
		if err := kv.Delete(ctx, "k"); err != nil {
			return nil, err
		}
		_, after, err := kv.Get(ctx, "k")
		if err != nil {
			return nil, err
		}
		return map[string]any{"value": string(v), "empty_found": eok, "empty_nil": e == nil, "after_delete": after}, nil
	case "log":
		call.Info("hello %s", "world")
		call.Debug("%d%%", 100)
		call.Warn("w")
		call.Error("e")
		call.Log(LevelInfo, "direct")
		return nil, nil
	case "artifacts":
		ref, err := call.Artifacts().Write(ctx, "text/plain", []byte("report"))
		if err != nil {
			return nil, err
		}
		data, err := call.Artifacts().Read(ctx, ref.ArtifactID)
		if err != nil {
			return nil, err
		}
		_, err = call.Artifacts().Read(ctx, "sha256:missing")
		return map[string]any{"ref": ref, "data": string(data), "id": ref.ArtifactID, "size": ref.Size,
			"not_found": errors.Is(err, ErrArtifactNotFound), "not_found_msg": fmt.Sprint(err)}, nil
	}
	return nil, Validation("unknown op %q", in.Op)
}
