package hostabi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The C test component of testdata/components/cguest (a component of world 1.0.0 built on
// 2026-11-26 with clang, wasi-libc and the WASI reactor adapter; its README lists its tasks).
// It must keep running unchanged on every later host: these tests are that promise.

func loadCGuest(t testing.TB, h *testHost) *Module {
	t.Helper()
	wasm, err := os.ReadFile("testdata/components/cguest/cguest.wasm")
	if err != nil {
		t.Fatal(err)
	}
	m := h.load(t, "test/cguest@1.0.0", wasm)
	if !m.IsComponent() {
		t.Fatal("cguest.wasm loaded as a core module")
	}
	return m
}

// memArtifacts keeps artifacts in memory.
type memArtifacts struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (a *memArtifacts) Write(_ context.Context, ct string, data []byte) ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	id := fmt.Sprintf("art-%d", len(a.m)+1)
	a.m[id] = data
	return json.Marshal(map[string]any{"artifact_id": id, "content_type": ct, "size": len(data)})
}

func (a *memArtifacts) Read(_ context.Context, id string) ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	d, ok := a.m[id]
	if !ok {
		return nil, ErrNotFound
	}
	return d, nil
}

func TestCGuestAnswers(t *testing.T) {
	h := newTestHost(t, Options{})
	m := loadCGuest(t, h)
	iter := `,"context":{"execution_id":"e1","workflow":"wf","node":"loop.l/task.n","task_id":"t1","attempt":2,"iteration":4}`
	cases := []struct {
		name, request, want string
	}{
		{"upper", `{"kind":"task","name":"upper","input":{"text":"héllo"}` + iter + `}`, `{"output":{"text":"HéLLO"},"type":"success"}`},
		{"echo", `{"kind":"task","name":"echo","input":[1,{"a":null}]` + iter + `}`, `{"output":[1,{"a":null}],"type":"success"}`},
		{"config", `{"kind":"task","name":"config","input":{"key":"region"}` + iter + `}`, `{"output":{"value":"eu-west"},"type":"success"}`},
		{"config missing", `{"kind":"task","name":"config","input":{"key":"nope"}` + iter + `}`, `{"output":{"value":null},"type":"success"}`},
		{"kv", `{"kind":"task","name":"kv","input":{"key":"k","value":"v1"}` + iter + `}`, `{"output":{"value":"v1"},"type":"success"}`},
		{"kv-delete", `{"kind":"task","name":"kv-delete","input":{"key":"k"}` + iter + `}`, `{"output":{"value":null},"type":"success"}`},
		{"artifact", `{"kind":"task","name":"artifact","input":{"data":"blob","content_type":"text/x"}` + iter + `}`, `{"output":{"artifact_id":"art-1","content":"blob","content_type":"text/x","size":4},"type":"success"}`},
		{"skip", `{"kind":"task","name":"skip","input":{}` + iter + `}`, `{"reason":"cguest: asked to skip","type":"skip"}`},
		{"branch", `{"kind":"task","name":"branch","input":{"selected":"high"}` + iter + `}`, `{"output":{"selected":"high"},"selected":"high","type":"branch"}`},
		{"continue", `{"kind":"task","name":"continue","input":{"steps":4,"delay_ms":7}` + iter + `,"state":{"step":1}}`, `{"delay_ms":7,"output":{"step":2},"progress":0.5,"state":{"step":2},"type":"continue"}`},
		{"error", `{"kind":"task","name":"error-retryable","input":{}` + iter + `}`, `{"backoff_hint_ms":1500,"kind":"retryable","message":"cguest: try again","partial_output":{"done":1},"type":"error"}`},
		{"validation", `{"kind":"task","name":"nonesuch","input":{}` + iter + `}`, `{"kind":"validation","message":"unknown task nonesuch","type":"error"}`},
		{"webhook", `{"kind":"trigger","name":"hook","context":{"workflow":"wf","node":"trigger.t"},"event":{"type":"webhook","request":{"method":"POST","path":"/h","query":{"a":"1"},"headers":{"x":"y"},"body_base64":"aGk="}}}`, `{"payload":{"body":"hi","method":"POST","path":"/h"},"type":"completed"}`},
	}
	kv := &memKV{m: map[string][]byte{}}
	env := &Env{KV: kv, Config: map[string][]byte{"region": []byte("eu-west")}, Artifacts: &memArtifacts{m: map[string][]byte{}}}
	for _, c := range cases {
		out, err := h.Invoke(context.Background(), m, env, []byte(c.request))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var got, want any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Errorf("%s: answer %s: %v", c.name, out, err)
			continue
		}
		json.Unmarshal([]byte(c.want), &want)
		if g, _ := json.Marshal(got); string(g) != string(mustJSON(want)) {
			t.Errorf("%s: answer %s\nwant %s", c.name, g, c.want)
		}
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// TestCGuestPollKeepsState: a trigger's KV scope outlives the attempt (the host keeps it), so
// the second poll is pending; the instance itself is fresh each time.
func TestCGuestPollKeepsState(t *testing.T) {
	h := newTestHost(t, Options{})
	m := loadCGuest(t, h)
	env := &Env{KV: &memKV{m: map[string][]byte{}}}
	poll := []byte(`{"kind":"trigger","name":"rows","context":{"workflow":"wf","node":"trigger.t"},"event":{"type":"poll"}}`)
	for i, want := range []string{`{"payload":{"polled":true},"type":"completed"}`, `{"type":"pending"}`} {
		out, err := h.Invoke(context.Background(), m, env, poll)
		if err != nil || string(out) != want {
			t.Fatalf("poll %d: %s, %v; want %s", i+1, out, err, want)
		}
	}
}

func TestCGuestLogsAndStdout(t *testing.T) {
	h := newTestHost(t, Options{})
	m := loadCGuest(t, h)
	var rec logRec
	if _, err := h.Invoke(context.Background(), m, &Env{Log: rec.log}, componentTask("upper", `{"text":"abc"}`)); err != nil {
		t.Fatal(err)
	}
	got := rec.all()
	for _, want := range []string{"info: cguest: upper of 3 bytes", "info: cguest: upper says ABC"} {
		if !strings.Contains(got, want) {
			t.Errorf("logs %q lack %q", got, want)
		}
	}
}

func TestCGuestFailures(t *testing.T) {
	h := newTestHost(t, Options{})
	m := loadCGuest(t, h)
	run := func(name, input string, env *Env) error {
		_, err := h.Invoke(context.Background(), m, env, componentTask(name, input))
		return err
	}
	wantErr(t, run("trap", `{}`, nil), Fatal, "test/cguest@1.0.0", "trapped in call", "unreachable")
	wantErr(t, run("bad-level", `{}`, nil), Fatal, "discriminant")
	wantErr(t, run("bad-pointer", `{}`, nil), Fatal, "out of bounds")
	wantErr(t, run("bad-utf8", `{}`, nil), Fatal, "utf-8")
	// The host's limit on a kv value, checked in the guest before wasmtime lifts the 2 MiB
	// (argguard.go): the call traps in the guard, the store stays empty.
	bigkv := &memKV{m: map[string][]byte{}}
	wantErr(t, run("bigkv", `{}`, &Env{KV: bigkv}), Fatal, "test/cguest@1.0.0: kv-set: an argument is larger than the host accepts", "values up to 1 MiB")
	if len(bigkv.m) != 0 {
		t.Errorf("bigkv stored %d keys; want none", len(bigkv.m))
	}
	// No key-value scope: the import traps and says so.
	wantErr(t, run("kv", `{"key":"k","value":"v"}`, nil), Fatal, "no key-value scope")

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := h.Invoke(ctx, m, nil, componentTask("loop", `{}`))
	wantErr(t, err, Timeout, "stopped at its timeout")
}

// TestCGuestWASIFiles: WASI 0.2 opens only the allowed paths; a file elsewhere cannot be read,
// and the guest says why.
func TestCGuestWASIFiles(t *testing.T) {
	h := newTestHost(t, Options{})
	m := loadCGuest(t, h)
	allowed, other := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(allowed, "in.txt"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "secret.txt"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := &Env{AllowedPaths: []string{allowed}}
	out, err := h.Invoke(context.Background(), m, env, componentTask("read", `{"path":"`+filepath.Join(allowed, "in.txt")+`"}`))
	if err != nil || !strings.Contains(string(out), `"content":"inside"`) {
		t.Fatalf("read inside: %s, %v", out, err)
	}
	out, err = h.Invoke(context.Background(), m, env, componentTask("read", `{"path":"`+filepath.Join(other, "secret.txt")+`"}`))
	if err != nil || strings.Contains(string(out), "outside") || !strings.Contains(string(out), `"type":"error"`) {
		t.Fatalf("read outside allowed_paths: %s, %v; want the guest's error", out, err)
	}
}

// TestCGuestHTTP: http-request goes through the sandbox: an allowed host is reached; any other
// is refused before traffic and fails the attempt with sandbox_violation whatever the guest
// answers.
func TestCGuestHTTP(t *testing.T) {
	var secret sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret.Store(r.URL.Path, true)
		w.WriteHeader(http.StatusTeapot)
	}))
	defer srv.Close()
	h := newTestHost(t, Options{})
	m := loadCGuest(t, h)
	call := func(path string, allowed ...string) ([]byte, error) {
		x, err := h.HTTPFor(allowed)
		if err != nil {
			t.Fatal(err)
		}
		return h.Invoke(context.Background(), m, &Env{HTTP: x}, componentTask("http", `{"url":"`+srv.URL+path+`"}`))
	}
	out, err := call("/ok", "127.0.0.1")
	if err != nil || string(out) != `{"output":{"status":418},"type":"success"}` {
		t.Fatalf("allowed: %s, %v", out, err)
	}
	_, err = call("/secret", "api.example.com")
	wantErr(t, err, SandboxViolation, "not in allowed_hosts")
	if _, ok := secret.Load("/secret"); ok {
		t.Fatal("the refused request reached the server")
	}
}

// TestComponentCache: a second process (a fresh Host on the same cache) loads the component's
// compiled code from the disk cache and runs it.
func TestComponentCache(t *testing.T) {
	dir := t.TempDir()
	for i, want := range []string{"compiled", "cache"} {
		h := newTestHost(t, Options{CacheDir: dir})
		m := loadCGuest(t, h)
		if m.Loaded != want {
			t.Fatalf("load %d: from %s; want %s", i+1, m.Loaded, want)
		}
		out, err := h.Invoke(context.Background(), m, nil, componentTask("echo", `{"n":1}`))
		if err != nil || string(out) != `{"output":{"n":1},"type":"success"}` {
			t.Fatalf("load %d: %s, %v", i+1, out, err)
		}
		h.Close()
	}
	// A damaged entry (one byte of the code changed, the sidecar's sum no longer matching) is
	// never mapped: the component is compiled again, and the entry rewritten.
	h := newTestHost(t, Options{CacheDir: dir})
	wasm, err := os.ReadFile("testdata/components/cguest/cguest.wasm")
	if err != nil {
		t.Fatal(err)
	}
	code := h.cachePath(digestOf(wasm), kindComponent)
	b, err := os.ReadFile(code)
	if err != nil {
		t.Fatalf("the cache has no code file for the component: %v", err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(code, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if m := loadCGuest(t, h); m.Loaded != "compiled" {
		t.Fatalf("a damaged cache entry was loaded from %s; want it compiled again", m.Loaded)
	}
	if _, err := h.entryFromCache(digestOf(wasm), kindComponent); err != nil {
		t.Fatalf("the entry was not rewritten: %v", err)
	}
}
