//go:build unix

package hostabi

import (
	"os"
	"path/filepath"
	"testing"
)

// TestModuleCacheIsPrivate: the compile cache, and a home it creates, are the user's alone
// (docs/security.md, "Local socket and files").
func TestModuleCacheIsPrivate(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	cache := filepath.Join(home, "cache")
	wasm := wat(t, "", packed(1024, len(okResponse)), okResponse, "")
	h := newTestHost(t, Options{CacheDir: cache})
	if m := h.load(t, "t/private", wasm); m.Loaded != "compiled" {
		t.Fatalf("first load: %s", m.Loaded)
	}
	for path, want := range map[string]os.FileMode{home: 0o700, cache: 0o700, h.CachePath(digestOf(wasm)): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %04o, want %04o", path, got, want)
		}
	}
}
