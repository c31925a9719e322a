package hostabi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// loadWAT compiles a component from the text format (testdata/wat) into a Module, as Load does
// for a binary; Load itself is tested with binaries.
func loadWAT(t testing.TB, h *testHost, file string) *Module {
	t.Helper()
	text, err := os.ReadFile("testdata/wat/" + file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.linkerForComponents(); err != nil {
		t.Fatal(err)
	}
	comp, err := compileComponent(h.engine, text)
	if err != nil {
		t.Fatalf("compile %s: %v", file, err)
	}
	m := &Module{Name: "test/" + strings.TrimSuffix(file, ".wat"), comp: comp}
	t.Cleanup(m.close)
	return m
}

// componentTask is an ABI v1 task request for task name with input.
func componentTask(name, input string) []byte {
	return []byte(`{"kind":"task","name":"` + name + `","context":{"execution_id":"e1","workflow":"wf","node":"task.n","task_id":"t1","attempt":1},"input":` + input + `,"state":null}`)
}

func TestComponentAnswers(t *testing.T) {
	h := newTestHost(t, Options{})
	m := loadWAT(t, h, "minimal.wat")
	if !m.IsComponent() {
		t.Fatal("IsComponent is false for a component")
	}
	var logs logRec
	for i := 0; i < 3; i++ { // a fresh instance each time: the bump allocator starts over
		out, err := h.Invoke(context.Background(), m, &Env{Log: logs.log}, componentTask("write", `{"text":"héllo"}`))
		if err != nil {
			t.Fatal(err)
		}
		var resp struct {
			Type   string          `json:"type"`
			Output json.RawMessage `json:"output"`
		}
		if err := json.Unmarshal(out, &resp); err != nil || resp.Type != "success" || string(resp.Output) != `{"text":"héllo"}` {
			t.Fatalf("answer %s (%v); want success with the input", out, err)
		}
	}
	if got := logs.all(); strings.Count(got, `info: {"text":"héllo"}`) != 3 {
		t.Fatalf("logs %q; want the input logged at info once per call", got)
	}
}

func TestComponentFailures(t *testing.T) {
	h := newTestHost(t, Options{})
	m := loadWAT(t, h, "minimal.wat")
	_, err := h.Invoke(context.Background(), m, nil, componentTask("trap", `{}`))
	wantErr(t, err, Fatal, "test/minimal", "trapped in call", "unreachable")
	// A host import called with a list outside linear memory: wasmtime refuses to read it.
	_, err = h.Invoke(context.Background(), m, nil, componentTask("kv", `{}`))
	wantErr(t, err, Fatal, "out of bounds")
	// A request the engine never sends is refused before the guest runs.
	_, err = h.Invoke(context.Background(), m, nil, []byte(`{"kind":"neither"}`))
	wantErr(t, err, Fatal, "not task or trigger")
	// An answer that breaks the world's contract (its output is not JSON) fails the attempt.
	_, err = h.Invoke(context.Background(), m, nil, []byte(`{"kind":"task","name":"echo","context":{},"input":null}`))
	if err != nil {
		t.Fatalf("null input: %v", err)
	}
	_, err = h.Invoke(context.Background(), m, nil, []byte(`{"kind":"trigger","name":"echo","context":{},"event":{"type":"poll"}}`))
	wantErr(t, err, Fatal, "does not fit world fuscia:host/component@1.0.0", "not valid JSON")
}

func TestComponentTimeoutAndCancel(t *testing.T) {
	h := newTestHost(t, Options{})
	m := loadWAT(t, h, "minimal.wat")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := h.Invoke(ctx, m, nil, componentTask("loop", `{}`))
	wantErr(t, err, Timeout, "stopped at its timeout")

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	_, err = h.Invoke(ctx, m, nil, componentTask("loop", `{}`))
	wantErr(t, err, Cancelled, "run was cancelled")
}

func TestComponentFuel(t *testing.T) {
	h := newTestHost(t, Options{Fuel: true})
	m := loadWAT(t, h, "minimal.wat")
	_, err := h.Invoke(context.Background(), m, &Env{MaxFuel: 100_000}, componentTask("loop", `{}`))
	wantErr(t, err, Fatal, "CPU budget of 100000 fuel")
	if _, err := h.Invoke(context.Background(), m, &Env{MaxFuel: 10_000_000}, componentTask("echo", `{}`)); err != nil {
		t.Fatalf("within its fuel: %v", err)
	}
}

func TestComponentImportsMustFitTheWorld(t *testing.T) {
	h := newTestHost(t, Options{})
	m := loadWAT(t, h, "extra-import.wat")
	_, err := h.Invoke(context.Background(), m, nil, componentTask("echo", `{}`))
	// Refused before instantiation, by name (wasmtime would refuse it there too).
	wantErr(t, err, Fatal, "it imports steal from fuscia:host/host@1.0.0, which world fuscia:host/component@1.0.0 does not have")
}

func TestComponentCallOfAnotherType(t *testing.T) {
	h := newTestHost(t, Options{})
	m := loadWAT(t, h, "wrong-call.wat")
	_, err := h.Invoke(context.Background(), m, nil, componentTask("echo", `{}`))
	wantErr(t, err, Fatal, "its export `call` is not func(request: request) -> response of world fuscia:host/component@1.0.0", "rebuild it against hostabi/wit/fuscia.wit")
}

// TestComponentWebhookBodyBound: a webhook body past what a component can take is refused
// before the guest runs, naming the setting to lower.
func TestComponentWebhookBodyBound(t *testing.T) {
	body := base64.StdEncoding.EncodeToString(make([]byte, maxComponentBytes+1))
	_, err := ParseRequest([]byte(`{"kind":"trigger","name":"h","context":{},"event":{"type":"webhook","request":{"method":"POST","path":"/","body_base64":"` + body + `"}}}`))
	if err == nil || !strings.Contains(err.Error(), "max_body_bytes") {
		t.Fatalf("a %d-byte webhook body: %v; want a refusal naming max_body_bytes", maxComponentBytes+1, err)
	}
}

// TestComponentInstantiationTimed: serve's instantiation metric (Options.OnInstantiate) counts
// component attempts too, once each.
func TestComponentInstantiationTimed(t *testing.T) {
	var n atomic.Int64
	var total atomic.Int64
	h := newTestHost(t, Options{OnInstantiate: func(d time.Duration) { n.Add(1); total.Add(int64(d)) }})
	m := loadWAT(t, h, "minimal.wat")
	for range 3 {
		if _, err := h.Invoke(context.Background(), m, nil, componentTask("echo", `{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if n.Load() != 3 || total.Load() <= 0 {
		t.Fatalf("OnInstantiate was told %d times (%v in all); want 3, with durations", n.Load(), time.Duration(total.Load()))
	}
}

// TestComponentOutputAfterAttempt: a component's stdout line that wasmtime delivers from a
// thread of its own (the guest did not flush it before returning) may arrive after the
// attempt has ended and its store is gone. It must neither crash the host (its sink was freed
// under it) nor reach the log once Invoke has returned.
func TestComponentOutputAfterAttempt(t *testing.T) {
	h := newTestHost(t, Options{})
	m := loadWAT(t, h, "asyncout.wat")
	var mu sync.Mutex
	late := 0
	for range 60 {
		returned := false
		log := func(Level, string) {
			mu.Lock()
			defer mu.Unlock()
			if returned {
				late++
			}
		}
		if _, err := h.Invoke(context.Background(), m, &Env{Log: log}, componentTask("out", `{}`)); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		returned = true
		mu.Unlock()
	}
	// Long enough for a background writer to deliver what it still held.
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if late > 0 {
		t.Errorf("%d stdout lines reached the log after their attempt had returned", late)
	}
}
