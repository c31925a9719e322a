package hostabi

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestCacheTrimsUnusedEntries: the first entry a host writes also removes the entries of the
// cache unused for 30 days — the code, its sidecar and a refusal together, and only when every
// one of them is that old — and leaves younger entries and every other file. The trim's time
// is kept, and a second host within a day does not trim again.
func TestCacheTrimsUnusedEntries(t *testing.T) {
	cache := t.TempDir()
	now := time.Now()
	unused := now.Add(-31 * 24 * time.Hour)
	file := func(name string, mtime time.Time) string { return agedFile(t, cache, name, mtime) }
	const a, b, c, d = "0123456789abcdef0123456789abcdef.cwasm", "11111111111111111111111111111111.cwasm",
		"22222222222222222222222222222222.cwasm", "33333333333333333333333333333333.cwasm"
	gone := []string{file(a, unused), file(a+".sum", unused), file(b+".refused", unused), file(c, unused)}
	kept := []string{
		file(d, unused), file(d+".sum", now.Add(-29*24*time.Hour)), // used within 30 days
		file("notanentry.cwasm", unused), file(a+".other", unused), file("ABCDEF0123456789ABCDEF0123456789.cwasm", unused),
	}
	if err := os.MkdirAll(filepath.Join(cache, "plugins"), 0o700); err != nil {
		t.Fatal(err)
	}
	kept = append(kept, file(filepath.Join("plugins", "x.json"), unused))

	wasm := wat(t, "", packed(1024, len(okResponse)), okResponse, "")
	h := newTestHost(t, Options{CacheDir: cache})
	if m := h.load(t, "t/trim", wasm); m.Loaded != "compiled" {
		t.Fatalf("first load: %s", m.Loaded)
	}
	for _, path := range gone {
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s, unused for 31 days, is still there: %v", filepath.Base(path), err)
		}
	}
	for _, path := range kept {
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(path), err)
		}
	}
	stamp, err := os.ReadFile(filepath.Join(cache, cacheTrimFile))
	if err != nil {
		t.Fatalf("the trim's time was not kept: %v", err)
	}
	if sec, err := strconv.ParseInt(string(stamp[:len(stamp)-1]), 10, 64); err != nil || now.Unix()-sec > 60 {
		t.Fatalf("trim.txt holds %q, want the time of the trim", stamp)
	}

	// Within a day of that trim, another host's first write does not trim.
	again := file("44444444444444444444444444444444.cwasm", unused)
	h2 := newTestHost(t, Options{CacheDir: cache})
	if m := h2.load(t, "t/trim2", wat(t, "", packed(2048, len(okResponse)), okResponse, "")); m.Loaded != "compiled" {
		t.Fatalf("second host's load: %s", m.Loaded)
	}
	if _, err := os.Stat(again); err != nil {
		t.Errorf("a host trimmed again within a day of the last trim: %v", err)
	}
}

// TestCacheNotesUse: a load from the cache marks its entry as used (the sidecar's time), so a
// trim keeps it; a use within the hour is not written again.
func TestCacheNotesUse(t *testing.T) {
	cache := t.TempDir()
	wasm := wat(t, "", packed(1024, len(okResponse)), okResponse, "")
	h := newTestHost(t, Options{CacheDir: cache})
	m := h.load(t, "t/use", wasm)
	if m.Loaded != "compiled" {
		t.Fatalf("first load: %s", m.Loaded)
	}
	sum := h.CachePath(m.Digest) + ".sum"
	old := time.Now().Add(-40 * 24 * time.Hour)
	if err := os.Chtimes(sum, old, old); err != nil {
		t.Fatal(err)
	}
	if m := newTestHost(t, Options{CacheDir: cache}).load(t, "t/use", wasm); m.Loaded != "cache" {
		t.Fatalf("second load: %s, want it from the cache", m.Loaded)
	}
	info, err := os.Stat(sum)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(info.ModTime()) > time.Minute {
		t.Fatalf("the entry's sidecar is dated %s after a load from the cache, want now", info.ModTime())
	}
	recent := time.Now().Add(-10 * time.Minute)
	if err := os.Chtimes(sum, recent, recent); err != nil {
		t.Fatal(err)
	}
	if m := newTestHost(t, Options{CacheDir: cache}).load(t, "t/use", wasm); m.Loaded != "cache" {
		t.Fatalf("third load: %s", m.Loaded)
	}
	if info, err := os.Stat(sum); err != nil || !info.ModTime().Equal(recent) {
		t.Fatalf("a use ten minutes after the last was written again: %v %v", info.ModTime(), err)
	}
}
