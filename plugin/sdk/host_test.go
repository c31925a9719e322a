package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

func execHost(t *testing.T, r *remote, hostID uint32, callID, op string) map[string]any {
	t.Helper()
	resp, err := r.Execute(context.Background(), &pluginv1.ExecuteRequest{Task: "host", Input: []byte(`{"op":"` + op + `"}`),
		CallId: callID, HostBrokerId: hostID})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Type != pluginv1.ExecuteResponse_TYPE_SUCCESS {
		t.Fatalf("%s: %v", op, resp)
	}
	var out map[string]any
	if err := json.Unmarshal(resp.Output, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestHostCallbacks(t *testing.T) {
	r := start(t, testPlugin(nil, nil))
	host := newFakeHost()
	hostID := r.serveHost(host)

	t.Run("kv", func(t *testing.T) {
		out := execHost(t, r, hostID, "kv-call", "kv")
		want := map[string]any{"value": "v1", "empty_found": true, "empty_nil": false, "after_delete": false}
		if !mapsEqual(out, want) {
			t.Errorf("kv = %v, want %v", out, want)
		}
		if !host.callIDs["kv-call"] {
			t.Errorf("KV requests did not carry the call id: %v", host.callIDs)
		}
	})

	t.Run("log", func(t *testing.T) {
		execHost(t, r, hostID, "log-call", "log")
		host.mu.Lock()
		defer host.mu.Unlock()
		want := []string{"log-call info hello world", "log-call debug 100%", "log-call warn w", "log-call error e", "log-call info direct"}
		if !slices.Equal(host.logs, want) {
			t.Errorf("logs = %q, want %q", host.logs, want)
		}
	})

	t.Run("artifacts", func(t *testing.T) {
		out := execHost(t, r, hostID, "art-call", "artifacts")
		ref, _ := json.Marshal(out["ref"])
		if !strings.Contains(string(ref), `"store":"fake"`) {
			t.Errorf("the ref in the output is not the host's verbatim: %s", ref)
		}
		if out["data"] != "report" || out["size"] != 6.0 || out["not_found"] != true ||
			!strings.Contains(out["not_found_msg"].(string), `"sha256:missing"`) {
			t.Errorf("artifacts = %v", out)
		}
	})

	// Many calls at once share one connection: the host serves Host once, and a second dial
	// of the same broker id would time out.
	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() { execHost(t, r, hostID, "many", "log") })
		}
		wg.Wait()
	})
}

func mapsEqual(a, b map[string]any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// TestCallWithoutHost checks what a plugin's own unit test gets from a Call it built itself.
func TestCallWithoutHost(t *testing.T) {
	var c Call
	ctx := context.Background()
	if _, _, err := c.KV().Get(ctx, "k"); !errors.Is(err, errNoHost) {
		t.Errorf("KV().Get = %v", err)
	}
	if err := c.KV().Set(ctx, "k", nil); !errors.Is(err, errNoHost) {
		t.Errorf("KV().Set = %v", err)
	}
	if _, err := c.Artifacts().Read(ctx, "x"); !errors.Is(err, errNoHost) {
		t.Errorf("Artifacts().Read = %v", err)
	}
	// Log falls back to standard error.
	old := os.Stderr
	rd, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	os.Stderr = w
	c.Info("hello %d", 1)
	(*Call)(nil).Warn("nil call")
	os.Stderr = old
	_ = w.Close()
	b := make([]byte, 1024)
	n, _ := rd.Read(b)
	if got := string(b[:n]); !strings.Contains(got, "[info] hello 1") {
		t.Errorf("stderr = %q", got)
	}
}
