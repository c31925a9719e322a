//go:build linux

package discover

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const helloDigest = "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"

// cachedDigest is the entry d keeps for path, if any.
func cachedDigest(d *Digests, path string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.byPath[path]
	return e.digest, ok
}

// A digest is kept for an unchanged file, and only while it is unchanged: the cached value is
// what a second call answers (poisoned here, to tell it from a read), and a file rewritten
// or replaced is read again.
func TestDigestsKeepsAnUnchangedFilesDigest(t *testing.T) {
	dir := t.TempDir()
	p := touch(t, dir, "fuscia-plugin-x", "hello")
	d := NewDigests()
	d.racyAge = 0 // the file was just written; see TestDigestsSkipsARecentlyChangedFile
	if got, err := d.Digest(p); err != nil || got != helloDigest {
		t.Fatalf("Digest = %q, %v; want %s", got, err, helloDigest)
	}
	if got, ok := cachedDigest(d, p); !ok || got != helloDigest {
		t.Fatalf("cache holds %q (%v) after the first read; want %s", got, ok, helloDigest)
	}
	d.byPath[p] = digestEntry{id: d.byPath[p].id, digest: "sha256:cached"}
	if got, _ := d.Digest(p); got != "sha256:cached" {
		t.Fatalf("second Digest of the unchanged file = %q; want the cached value", got)
	}

	// Rewritten (another size, so that the test does not depend on the clock's tick).
	if err := os.WriteFile(p, []byte("hello, world"), 0o755); err != nil {
		t.Fatal(err)
	}
	want, _ := Digest(p)
	if got, _ := d.Digest(p); got != want {
		t.Fatalf("Digest after a rewrite = %q; want %q", got, want)
	}

	// Replaced by another file (another inode) of the same size and modification time (its
	// change time is the rename's).
	d.byPath[p] = digestEntry{id: d.byPath[p].id, digest: "sha256:cached"}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	other := touch(t, dir, "other", "HELLO, WORLD")
	if err := os.Chtimes(other, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, p); err != nil {
		t.Fatal(err)
	}
	want, _ = Digest(p)
	if got, _ := d.Digest(p); got != want || got == "sha256:cached" {
		t.Fatalf("Digest after a replacement = %q; want %q", got, want)
	}
}

// A file changed within racyAge of its read is not kept: a change in the same clock tick
// could leave its times as they were.
func TestDigestsSkipsARecentlyChangedFile(t *testing.T) {
	p := touch(t, t.TempDir(), "fuscia-plugin-x", "hello")
	d := NewDigests()
	if got, err := d.Digest(p); err != nil || got != helloDigest {
		t.Fatalf("Digest = %q, %v; want %s", got, err, helloDigest)
	}
	if got, ok := cachedDigest(d, p); ok {
		t.Fatalf("a file written just now was cached (%q)", got)
	}
}

// A nil *Digests reads every time, and a missing file is an error naming it.
func TestDigestsNilAndMissing(t *testing.T) {
	p := touch(t, t.TempDir(), "fuscia-plugin-x", "hello")
	var nilCache *Digests
	if got, err := nilCache.Digest(p); err != nil || got != helloDigest {
		t.Fatalf("nil Digests: Digest = %q, %v", got, err)
	}
	missing := filepath.Join(filepath.Dir(p), "fuscia-plugin-missing")
	if _, err := NewDigests().Digest(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("Digest of a missing file: %v; want an error naming %s", err, missing)
	}
}
