package hostabi

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCacheRemovesStaleTemps: the first entry a host writes also removes the temporary files
// of the cache over an hour old (what a process killed during a write leaves); younger ones
// may be another process's write under way and stay, and so does every other file.
func TestCacheRemovesStaleTemps(t *testing.T) {
	cache := t.TempDir()
	old := time.Now().Add(-2 * time.Hour)
	file := func(name string, mtime time.Time) string { return agedFile(t, cache, name, mtime) }
	stale := file(".tmp-111.cwasm", old)
	young := file(".tmp-222.cwasm", time.Now())
	other := file(".tmp-333.other", old)
	entry := file("0123456789abcdef0123456789abcdef.cwasm", old)

	wasm := wat(t, "", packed(1024, len(okResponse)), okResponse, "")
	h := newTestHost(t, Options{CacheDir: cache})
	if m := h.load(t, "t/temps", wasm); m.Loaded != "compiled" {
		t.Fatalf("first load: %s", m.Loaded)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a temporary file two hours old is still there: %v", err)
	}
	for _, keep := range []string{young, other, entry} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(keep), err)
		}
	}
}

// agedFile writes a file of one byte at dir/name, modified at mtime, and returns its path.
func agedFile(t *testing.T, dir, name string, mtime time.Time) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return path
}
