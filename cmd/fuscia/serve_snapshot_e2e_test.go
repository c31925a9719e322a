package main

// End-to-end test of when serve takes a Go component's snapshot (docs/wasm.md,
// "Pre-initialization"): after the component's first load, in the background, in serve's
// compile child, and not again once it is in the cache.

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeSnapshotsInBackground: serve says it serves with the ticker Go component loaded as
// installed, then takes its snapshot in a child process (its log says so) and leaves it in the
// cache beside the module's entry; the component keeps answering throughout, and the next
// start, which finds the snapshot, takes none.
func TestServeSnapshotsInBackground(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	crInstall(t, h, "ticker")
	f := h.write("tickhook.fsc.hcl", tickerHookWorkflow)
	const taken = "Wasm component snapshot taken in a child process"

	sp := startServe(t, h, nil, f)
	if code, b := sp.request(http.MethodPost, "/hooks/ticker", strings.NewReader("hello"), http.Header{"Content-Type": {"text/plain"}}); code != http.StatusAccepted {
		t.Fatalf("POST /hooks/ticker: %d %s, want 202\n%s", code, b, sp)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(sp.stderr.String()+sp.stdout.String(), taken) {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not log %q within 3 minutes of serving:\n%s", taken, sp)
		}
		time.Sleep(50 * time.Millisecond)
	}
	entries, err := os.ReadDir(filepath.Join(h.home, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	sums := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".cwasm.sum") {
			sums++
		}
		if strings.HasSuffix(e.Name(), ".refused") {
			t.Errorf("the ticker's snapshot was refused: %s", e.Name())
		}
	}
	if sums != 2 {
		t.Errorf("%d complete cache entries, want 2 (the module as installed and its snapshot): %v", sums, entries)
	}
	if code, b := sp.request(http.MethodPost, "/hooks/ticker", strings.NewReader("again"), http.Header{"Content-Type": {"text/plain"}}); code != http.StatusAccepted {
		t.Fatalf("POST /hooks/ticker after the snapshot: %d %s, want 202\n%s", code, b, sp)
	}
	sp.stopOK()

	again := startServe(t, h, nil, f)
	if code, b := again.request(http.MethodPost, "/hooks/ticker", strings.NewReader("hello"), http.Header{"Content-Type": {"text/plain"}}); code != http.StatusAccepted {
		t.Fatalf("POST /hooks/ticker on the next start: %d %s, want 202\n%s", code, b, again)
	}
	again.stopOK()
	if out := again.stderr.String() + again.stdout.String(); strings.Contains(out, taken) || strings.Contains(out, "compiled in a child process") {
		t.Errorf("the next start compiled or snapshotted again, with both entries in the cache:\n%s", again)
	}
}
