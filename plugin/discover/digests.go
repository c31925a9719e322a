package discover

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"sync"
	"time"
)

// racyAge is how long a file must have been left unchanged, when its digest is read, for the
// digest to be kept. A file's times move in clock ticks (a few milliseconds), so a write in
// the tick of the read could leave them as they were; one that old cannot (git's "racy"
// entries are the same case).
const racyAge = 2 * time.Second

// Digests remembers the digests of the plugin binaries it has read, for one process: an apply
// checks a binary against the lock file when it resolves the workflow and again when the run
// binds the plugin, and each read of a 20 MB binary took ~10 ms (docs/performance.md, issue
// 20, session 13). An entry is used only while the file is the one that was read: same path,
// device, inode, size, modification and change times (the kernel sets the change time to the
// clock's time on every write, rename or chmod). A nil *Digests reads every time; outside Linux
// nothing is cached.
//
// It replaces none of the checks, and it must not: a content can change without its times in
// rare cases (more writes to a page of a shared writable mapping that is already dirty, a file
// system that reports its own times, a clock set back). What makes a stale entry harmless is
// that a plugin's start has go-plugin hash the binary it is about to run against the digest
// (SecureConfig), so a changed binary is refused there.
type Digests struct {
	racyAge time.Duration
	mu      sync.Mutex
	byPath  map[string]digestEntry
}

type digestEntry struct {
	id     fileID
	digest string
}

// NewDigests returns an empty cache.
func NewDigests() *Digests { return &Digests{racyAge: racyAge, byPath: map[string]digestEntry{}} }

// Digest is the package's Digest, from the cache when the file has not changed since it was
// read.
func (d *Digests) Digest(path string) (string, error) {
	if d == nil {
		return Digest(path)
	}
	f, err := openPlugin(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	before, ok := identify(f)
	if ok {
		d.mu.Lock()
		e, hit := d.byPath[path]
		d.mu.Unlock()
		if hit && e.id == before {
			return e.digest, nil
		}
	}
	began := time.Now()
	digest, err := digestOf(f)
	if err != nil {
		return "", fmt.Errorf("digest plugin %s: %w", path, err)
	}
	if after, same := identify(f); ok && same && after == before && began.Sub(before.changed()) >= d.racyAge {
		d.mu.Lock()
		d.byPath[path] = digestEntry{id: before, digest: digest}
		d.mu.Unlock()
	}
	return digest, nil
}

// digestOf reads f to its end: "sha256:<hex>".
func digestOf(f io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
