package hostabi

import (
	"context"
	"encoding/json"
	"testing"
)

// TestComponentMemoryDenied: a component that is refused memory past max_memory fails the
// attempt, although it answers success after the refusal (minimal.wat's task "grow").
func TestComponentMemoryDenied(t *testing.T) {
	h := newTestHost(t, Options{})
	m := h.load(t, "test/minimal", readTestdata(t, "testdata/wat/bin/minimal.wasm"))
	_, err := h.Invoke(context.Background(), m, &Env{MaxMemory: 4 << 20}, componentTask("grow", `{}`))
	wantErr(t, err, Fatal, "component test/minimal: memory limit of 4 MiB (max_memory) exceeded: memory.grow was denied", "raise max_memory")
	// The guard changes nothing else.
	wantSuccess(t, h, m, &Env{MaxMemory: 4 << 20}, "write")
	_, err = h.Invoke(context.Background(), m, nil, componentTask("trap", `{}`))
	wantErr(t, err, Fatal, "trapped in call", "unreachable")
}

// TestComponentMemoryDeniedC: the same for a component built by a real toolchain (clang,
// wasi-libc, wit-component's WASI adapter), whose malloc gets a null and which would answer
// with an error of its own.
func TestComponentMemoryDeniedC(t *testing.T) {
	h := newTestHost(t, Options{})
	m := h.load(t, "test/cguest", readTestdata(t, "testdata/components/cguest/cguest.wasm"))
	_, err := h.Invoke(context.Background(), m, &Env{MaxMemory: 4 << 20}, componentTask("grow", `{}`))
	wantErr(t, err, Fatal, "memory limit of 4 MiB (max_memory) exceeded")
}

// TestComponentMemoryOwnMaximum: a growth refused by the module's own declared maximum is the
// guest's to handle; one within it but past the cap fails the attempt. For a 32-bit and a
// 64-bit memory (memory-max.wat).
func TestComponentMemoryOwnMaximum(t *testing.T) {
	h := newTestHost(t, Options{})
	m := h.load(t, "test/memory-max", readTestdata(t, "testdata/wat/bin/memory-max.wasm"))
	capped := &Env{MaxMemory: 4 << 20}
	for _, task := range []string{"own", "wide"} {
		wantSuccess(t, h, m, capped, task)
		wantSuccess(t, h, m, nil, task)
	}
	for _, task := range []string{"cap", "vast"} {
		_, err := h.Invoke(context.Background(), m, capped, componentTask(task, `{}`))
		wantErr(t, err, Fatal, "memory limit of 4 MiB (max_memory) exceeded")
		wantSuccess(t, h, m, nil, task) // within the default cap, the growth succeeds
	}
}

// TestComponentMemoryDeniedFromCache: a component loaded from the disk cache is guarded, and
// a cache entry written before components were guarded is not reused.
func TestComponentMemoryDeniedFromCache(t *testing.T) {
	cache := t.TempDir()
	wasm := readTestdata(t, "testdata/wat/bin/minimal.wasm")

	// The entry an earlier version wrote: the component's code as it is, under the kind
	// ";component".
	old := newTestHost(t, Options{CacheDir: cache})
	if _, err := old.linkerForComponents(); err != nil {
		t.Fatal(err)
	}
	comp, err := compileComponent(old.engine, wasm)
	if err != nil {
		t.Fatal(err)
	}
	body, err := comp.serialize()
	comp.close()
	if err != nil {
		t.Fatal(err)
	}
	if err := old.toCache(digestOf(wasm), ";component", body); err != nil {
		t.Fatal(err)
	}

	for _, loaded := range []string{"compiled", "cache"} {
		h := newTestHost(t, Options{CacheDir: cache})
		m := h.load(t, "test/minimal", wasm)
		if m.Loaded != loaded {
			t.Fatalf("loaded from %s; want %s", m.Loaded, loaded)
		}
		_, err := h.Invoke(context.Background(), m, &Env{MaxMemory: 4 << 20}, componentTask("grow", `{}`))
		wantErr(t, err, Fatal, "memory limit of 4 MiB (max_memory) exceeded")
	}
}

// wantSuccess calls task and fails the test unless the component answers success.
func wantSuccess(t *testing.T, h *testHost, m *Module, env *Env, task string) {
	t.Helper()
	out, err := h.Invoke(context.Background(), m, env, componentTask(task, `{}`))
	if err != nil {
		t.Fatalf("task %s: %v", task, err)
	}
	var resp struct{ Type string }
	if err := json.Unmarshal(out, &resp); err != nil || resp.Type != "success" {
		t.Fatalf("task %s answered %s (%v); want success", task, out, err)
	}
}

// TestComponentInitialMemoryTooLarge: a component whose memory starts above max_memory cannot
// be instantiated, and the error says which limit to raise.
func TestComponentInitialMemoryTooLarge(t *testing.T) {
	h := newTestHost(t, Options{})
	m := loadCGuest(t, h)
	_, err := h.Invoke(context.Background(), m, &Env{MaxMemory: 64 << 10}, componentTask("echo", `{}`))
	wantErr(t, err, Fatal, "initial memory is larger than the memory limit of 64 KiB (max_memory)", "raise max_memory")
}

// TestComponentMemoriesCounted: max_memory caps each linear memory, and an attempt may define
// at most maxMemoriesPerAttempt of them, so a component of many core instances, each with a
// memory within the cap, cannot take many times max_memory (or the pool's slots).
func TestComponentMemoriesCounted(t *testing.T) {
	h := newTestHost(t, Options{})
	extra := func(n int) string {
		s := "(core module $M1 (memory 1))\n"
		for range n {
			s += "  (core instance (instantiate $M1))\n"
		}
		return s + "  (core instance $host-core"
	}
	m := loadWATText(t, h, "memories-ok", minimalWith(t, "(core instance $host-core", extra(maxMemoriesPerAttempt-1)))
	wantSuccess(t, h, m, nil, "write")
	m = loadWATText(t, h, "memories", minimalWith(t, "(core instance $host-core", extra(maxMemoriesPerAttempt)))
	_, err := h.Invoke(context.Background(), m, nil, componentTask("write", `{"text":"x"}`))
	wantErr(t, err, Fatal, "component test/memories: it defines more than 4 linear memories")
}
