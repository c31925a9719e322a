package hostabi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/hostabi/guesttest"
)

// These tests run the example components, written with the Go guest SDK and built with the Go
// toolchain alone (GOOS=wasip1), in the real host.

func taskRequest(name string, input any) []byte {
	in, _ := json.Marshal(input)
	b, _ := json.Marshal(map[string]any{
		"kind": "task", "name": name, "input": json.RawMessage(in), "state": nil,
		"context": map[string]any{"execution_id": "01TEST", "workflow": "w", "node": "task.t", "task_id": "t1", "attempt": 1},
	})
	return b
}

type guestResponse struct {
	Type    string          `json:"type"`
	Output  json.RawMessage `json:"output"`
	Kind    string          `json:"kind"`
	Message string          `json:"message"`
}

func invokeGuest(t *testing.T, h *testHost, m *Module, env *Env, ctx context.Context, task string, input any) (guestResponse, error) {
	t.Helper()
	resp, err := h.Invoke(ctx, m, env, taskRequest(task, input))
	if err != nil {
		return guestResponse{}, err
	}
	var r guestResponse
	if err := json.Unmarshal(resp, &r); err != nil {
		t.Fatalf("response %q: %v", resp, err)
	}
	return r, nil
}

func TestGoGuestText(t *testing.T) {
	h := newTestHost(t, Options{})
	m := h.loadSnapshot(t, "fuscia/text@1.0.0", guesttest.Wasm(t, "text"))
	ctx := context.Background()

	r, err := invokeGuest(t, h, m, nil, ctx, "upper", map[string]any{"text": "héllo"})
	if err != nil || r.Type != "success" || string(r.Output) != `{"length":5,"text":"HÉLLO"}` && string(r.Output) != `{"text":"HÉLLO","length":5}` {
		t.Fatalf("upper: %+v, %v", r, err)
	}
	r, err = invokeGuest(t, h, m, nil, ctx, "upper", map[string]any{"txt": 1})
	if err != nil || r.Type != "error" || r.Kind != "validation" {
		t.Fatalf("bad input: %+v, %v", r, err)
	}
	// A guest's globals start from zero on every attempt.
	for range 3 {
		r, err = invokeGuest(t, h, m, nil, ctx, "count", map[string]any{})
		if err != nil || !strings.Contains(string(r.Output), `"count":1`) {
			t.Fatalf("count: %+v, %v; want 1 every time (fresh instance)", r, err)
		}
	}

	// A panic in the guest fails the attempt; the host carries on.
	r, err = invokeGuest(t, h, m, nil, ctx, "crash", map[string]any{})
	if err == nil && !(r.Type == "error" && r.Kind == "fatal") {
		t.Fatalf("crash: %+v; want a fatal error", r)
	}

	// An endless loop is stopped at the deadline.
	tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = invokeGuest(t, h, m, nil, tctx, "spin", map[string]any{})
	wantErr(t, err, Timeout)

	// A memory bomb is stopped at the cap, with a message naming it.
	_, err = invokeGuest(t, h, m, &Env{MaxMemory: 32 << 20}, ctx, "leak", map[string]any{"mib": 64})
	wantErr(t, err, Fatal, "memory limit of 32 MiB (max_memory) exceeded")

	// And the host still works.
	if r, err := invokeGuest(t, h, m, nil, ctx, "slugify", map[string]any{"text": "Hello, World!"}); err != nil || !strings.Contains(string(r.Output), `"hello-world"`) {
		t.Fatalf("slugify: %+v, %v", r, err)
	}
}

func TestGoGuestKV(t *testing.T) {
	h := newTestHost(t, Options{})
	m := h.load(t, "fuscia/kvcounter@1.0.0", guesttest.Wasm(t, "kvcounter"))
	kv := &memKV{m: map[string][]byte{}}
	var logs logRec
	env := &Env{KV: kv, Log: logs.log, Config: map[string][]byte{"prefix": []byte("p:")}}
	for want := 1; want <= 3; want++ {
		r, err := invokeGuest(t, h, m, env, context.Background(), "incr", map[string]any{"key": "hits"})
		if err != nil || r.Type != "success" {
			t.Fatalf("incr: %+v, %v", r, err)
		}
		var out struct{ Value int }
		json.Unmarshal(r.Output, &out)
		if out.Value != want {
			t.Fatalf("incr %d: %s", want, r.Output)
		}
	}
	if len(kv.m) != 1 {
		t.Fatalf("kv: %q", kv.m)
	}
	if logs.all() == "" {
		t.Error("no log lines from the guest")
	}
}
