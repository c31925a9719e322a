package journal

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Badger maps every table, memtable log and value-log file of the store (MAP_SHARED) and writes
// new tables and memtables through those mappings: each page it writes or reads stays in the
// process's resident set until the file is unmapped, so a long-lived process's RSS grew with
// the store (651 MiB of 808 after 5 minutes of webhooks, docs/performance.md). The trimmer
// bounds that: shortly after writes (and once more after compactions have had time to run) it
// asks the kernel to page out the resident pages of those mappings (madvise MADV_PAGEOUT, see
// trim_linux.go). The data is untouched: dirty pages stay in the page cache until written back,
// the next access faults the page in again (from the page cache when it is still there).

// defaultTrimEvery is how long after a write the trimmer pages out the store's mappings; a
// trailing pass follows trimTrailingAfter later for the tables compactions built meanwhile
// (trimTrailing counts the intervals up to it). Under sustained webhooks Badger writes and
// reads 20-35 MiB of tables through their mappings between two passes a second apart; a pass
// every 250 ms cut serve's peak RSS by 13-20 MiB at no measurable CPU (docs/performance.md,
// issue 20 item 4, session 4).
const (
	defaultTrimEvery  = 250 * time.Millisecond
	trimTrailingAfter = 4 * time.Second
	trimTrailing      = int(trimTrailingAfter/defaultTrimEvery) + 1
)

// trimmer pages out the store's file mappings trimEvery after writes, until Close. kick wakes it
// (the syncer sends after each write to Badger); an idle store does not wake it.
func (s *Store) trimmer(every time.Duration) {
	defer close(s.trimDone)
	t := time.NewTimer(every)
	t.Stop()
	var (
		tc       <-chan time.Time
		trailing int // ticks left before the trailing pass; 0: none pending
	)
	for {
		select {
		case <-s.stopTrim:
			t.Stop()
			return
		case <-s.trimKick:
			if tc == nil {
				t.Reset(every)
				tc = t.C
				s.trimArmed.Store(true)
			}
			trailing = trimTrailing
			continue
		case <-tc:
			tc = nil
		}
		if s.trimWrote.Swap(false) {
			trailing = trimTrailing // written during the interval
		}
		s.trimMappings()
		if trailing > 1 && !s.trimWrote.Swap(false) {
			// Nothing written since: one more pass later, for compactions still running.
			t.Reset(time.Duration(trailing-1) * every)
			tc = t.C
			trailing = 1
			continue
		}
		if trailing <= 1 {
			// Going idle: from now on a write kicks. A write whose kickTrimmer still saw the
			// timer armed has set trimWrote before looking, so it is read here (both atomics
			// are sequentially consistent).
			s.trimArmed.Store(false)
			if !s.trimWrote.Swap(false) {
				trailing = 0
				continue
			}
			s.trimArmed.Store(true)
		}
		// Written meanwhile: trim again after the next interval.
		t.Reset(every)
		tc = t.C
		trailing = trimTrailing
	}
}

// kickTrimmer tells the trimmer that Badger was written. While the trimmer's timer runs it only
// marks the write, which the trimmer reads when the timer fires: a kick each time woke the
// trimmer's goroutine after every journal apply, only to note it (docs/performance.md, item 2,
// session 10).
func (s *Store) kickTrimmer() {
	s.trimWrote.Store(true)
	if s.trimArmed.Load() {
		return
	}
	select {
	case s.trimKick <- struct{}{}:
	default:
	}
}

// trimMappings pages out the store's file mappings; the count of passes and the bytes asked
// for are kept for tests and benchmarks.
func (s *Store) trimMappings() {
	maps, err := readSelfMaps()
	if err != nil {
		return
	}
	var n int64
	for _, m := range storeMappings(maps, s.mapDir) {
		if pageOut(m.start, m.end-m.start) == nil {
			n += int64(m.end - m.start)
		}
	}
	s.trims.Add(1)
	s.trimmedBytes.Add(n)
}

// mapping is one line of /proc/self/maps that trimMappings may page out.
type mapping struct {
	start, end uintptr
	path       string
}

// storeMappings returns the shared file mappings of maps (the text of /proc/self/maps) whose
// file is one of Badger's data files directly in dir: tables (.sst), memtable logs (.mem) and
// value-log files (.vlog), deleted or not. dir must be absolute and free of symlinks, as the
// kernel prints paths.
func storeMappings(maps []byte, dir string) []mapping {
	if dir == "" {
		return nil
	}
	var out []mapping
	for len(maps) > 0 {
		var line []byte
		line, maps, _ = bytes.Cut(maps, []byte{'\n'})
		// address perms offset dev inode path; the path (the rest) may hold spaces.
		rest := string(line)
		var f [5]string
		ok := true
		for i := range f {
			rest = strings.TrimLeft(rest, " ")
			var found bool
			f[i], rest, found = strings.Cut(rest, " ")
			if !found {
				ok = false
				break
			}
		}
		if !ok || len(f[1]) < 4 || f[1][3] != 's' {
			continue // not a shared mapping, or no path
		}
		path := strings.TrimSuffix(strings.TrimLeft(rest, " "), " (deleted)")
		if filepath.Dir(path) != dir {
			continue
		}
		switch filepath.Ext(path) {
		case ".sst", ".mem", ".vlog":
		default:
			continue
		}
		lo, hi, found := strings.Cut(f[0], "-")
		if !found {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		out = append(out, mapping{start: uintptr(start), end: uintptr(end), path: path})
	}
	return out
}

// mapDirOf returns dir as the kernel prints the paths of files in it: absolute, symlinks
// resolved; "" (nothing trimmed) when it cannot.
func mapDirOf(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return ""
	}
	return real
}
