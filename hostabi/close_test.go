package hostabi

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestCloseWaitsForCalls: Close frees the engine only after the call under way returned, and
// calls after Close fail with an error instead of crashing the process.
func TestCloseWaitsForCalls(t *testing.T) {
	h, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	th := &testHost{Host: h, dir: t.TempDir()}
	body := `(call $log (i32.const 1) (i32.const 1024) (i32.const 2)) (loop $spin (br $spin)) (unreachable)`
	m := th.load(t, "t/spin", wat(t, "", body, "go", ""))
	started := make(chan struct{}, 1)
	env := &Env{Log: func(Level, string) {
		select {
		case started <- struct{}{}:
		default:
		}
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	called := make(chan error, 1)
	go func() {
		_, err := h.Invoke(ctx, m, env, []byte(`{}`))
		called <- err
	}()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the guest did not start")
	}
	closed := make(chan struct{})
	go func() {
		h.Close()
		close(closed)
	}()
	// Close waits for the guest; nothing but the cancellation below ends it. (A Close that did
	// not wait would free the engine under it and crash the test binary.)
	cancel()
	select {
	case err := <-called:
		wantErr(t, err, Cancelled)
	case <-time.After(30 * time.Second):
		t.Fatal("the cancelled guest did not return")
	}
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return after the call did")
	}
	if _, err := h.Invoke(context.Background(), m, nil, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Invoke after Close: %v; want an error saying the host is closed", err)
	}
	if _, err := h.Load("t/spin", "/nonexistent.wasm", "sha256:00"); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Load after Close: %v; want an error saying the host is closed", err)
	}
	if err := h.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}
