package hostabi

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The cache's limit (docs/wasm.md, "A component task, end to end"). Every new version of a
// component, of Fuscia or of wasmtime writes new entries (compiled code of megabytes each) and
// leaves the old ones unread; without a limit the cache grows for as long as the home is used.
// As Go's build cache does, an entry that no process has used for cacheUnusedFor is removed:
// a use sets its sidecar's modification time (at most every cacheUseMark, so that loads do not
// write), and a process that writes an entry trims the cache, at most every cacheTrimEvery
// across processes (cacheTrimFile holds the last trim's time).
const (
	cacheUnusedFor = 30 * 24 * time.Hour
	cacheUseMark   = time.Hour
	cacheTrimEvery = 24 * time.Hour
	cacheTrimFile  = "trim.txt"
)

// noteCacheUse marks the entry whose code is at path as used now, unless its sidecar says it
// was within cacheUseMark. Best effort: an entry whose use goes unnoted is only trimmed sooner.
func noteCacheUse(path string, now time.Time) {
	sum := path + ".sum"
	if info, err := os.Stat(sum); err == nil && now.Sub(info.ModTime()) >= cacheUseMark {
		_ = os.Chtimes(sum, now, now)
	}
}

// trimCache removes from dir the entries unused for cacheUnusedFor, unless dir was trimmed
// within cacheTrimEvery. An entry is the files whose names start with the same cache file
// name (PATH, PATH.sum, PATH.refused); it goes when every one of them is that old. Other files
// are left alone. Best effort: the cache works whatever is left in it. A process still mapping
// code that is removed keeps its mapping (the file lives on until it is unmapped).
func trimCache(dir string, now time.Time) {
	stamp := filepath.Join(dir, cacheTrimFile)
	if data, err := os.ReadFile(stamp); err == nil {
		if sec, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil {
			if last := time.Unix(sec, 0); now.Sub(last) < cacheTrimEvery && !last.After(now) {
				return
			}
		}
	}
	if err := os.WriteFile(stamp, []byte(strconv.FormatInt(now.Unix(), 10)+"\n"), 0o600); err != nil {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	lastUse := map[string]time.Time{} // by the entry's code file name
	for _, e := range entries {
		base, ok := cacheEntryOf(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if info, err := e.Info(); err == nil && info.ModTime().After(lastUse[base]) {
			lastUse[base] = info.ModTime()
		}
	}
	for base, used := range lastUse {
		if now.Sub(used) < cacheUnusedFor {
			continue
		}
		// The sidecar first: a reader then finds no entry rather than one without its code.
		// A file the entry does not have is not there to remove.
		for _, name := range []string{base + ".sum", base + ".refused", base} {
			_ = os.Remove(filepath.Join(dir, name))
		}
	}
}

// cacheEntryOf returns the code file name of the entry name belongs to: 32 hexadecimal digits
// and ".cwasm" (cachePath), then nothing, ".sum" or ".refused".
func cacheEntryOf(name string) (string, bool) {
	const codeLen = 32 + len(".cwasm")
	if len(name) < codeLen || !strings.HasSuffix(name[:codeLen], ".cwasm") {
		return "", false
	}
	for _, c := range name[:32] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", false
		}
	}
	switch name[codeLen:] {
	case "", ".sum", ".refused":
		return name[:codeLen], true
	}
	return "", false
}
