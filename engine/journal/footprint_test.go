package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestFootprint measures the process's peak RSS under a heavy write load. It is slow, so it
// only runs with JOURNAL_FOOTPRINT set to a duration (e.g. JOURNAL_FOOTPRINT=30s) on Linux.
// Each of JOURNAL_FOOTPRINT_WORKERS (default 64) goroutines runs runs of 200 entries (one in
// 50 with a 16 KiB output, so in the value log) and 200 log lines, half of the goroutines
// durably; JOURNAL_FOOTPRINT_HEAP=file writes a heap profile when the heap peaks:
//
//	JOURNAL_FOOTPRINT=30s go test -run TestFootprint -v ./engine/journal/
func TestFootprint(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("JOURNAL_FOOTPRINT"))
	if err != nil {
		t.Skip("set JOURNAL_FOOTPRINT to a duration to measure the memory footprint")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc/self/status")
	}
	dir := t.TempDir()
	s, err := Open(dir, Options{GCInterval: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()

	small := benchEntry()
	large := benchEntry()
	large.Output, _ = json.Marshal(map[string]string{"body": strings.Repeat("x", 16<<10)}) // value log
	workers := 64
	if n, err := strconv.Atoi(os.Getenv("JOURNAL_FOOTPRINT_WORKERS")); err == nil && n > 0 {
		workers = n
	}
	var entries, runsDone atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := 0; ctx.Err() == nil; r++ {
				id := testID(w*1_000_000 + r)
				durable := w%2 == 0
				if err := s.Append(ctx, id, durable, started("footprint", "", "task.fetch")); err != nil {
					return
				}
				for i := range 200 {
					e := small
					if i%50 == 0 {
						e = large
					}
					if err := s.Append(ctx, id, durable, e); err != nil {
						return
					}
					if err := s.Log(id, LogLine{Node: "task.fetch", Level: "info", Message: "fetched page " + strconv.Itoa(i)}); err != nil {
						return
					}
				}
				if err := s.Append(ctx, id, durable, Entry{Type: RunFinished, Status: StatusSucceeded}); err != nil {
					return
				}
				s.Forget(id)
				entries.Add(202)
				runsDone.Add(1)
			}
		})
	}
	var peakHeap uint64
	peakAnon := 0
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-tick.C:
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peakHeap {
				peakHeap = ms.HeapInuse
				writeHeapProfile(t)
			}
			n, _ := strconv.Atoi(strings.TrimSuffix(procStatus(t, "RssAnon"), " kB"))
			peakAnon = max(peakAnon, n)
		}
	}
	wg.Wait()
	dirSize := func() (n int64) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if info, err := e.Info(); err == nil {
				n += info.Size()
			}
		}
		return n
	}
	t.Logf("store size %d MiB", dirSize()>>20)
	t.Logf("%d runs, %d entries in %v (%.0f entries/s, durable half), %d syncs",
		runsDone.Load(), entries.Load(), d, float64(entries.Load())/d.Seconds(), s.syncs.Load())
	t.Logf("peak RSS %s, RSS now %s (anonymous %s, file-backed %s), peak anonymous %d kB, peak Go heap in use %d MiB",
		procStatus(t, "VmHWM"), procStatus(t, "VmRSS"), procStatus(t, "RssAnon"),
		procStatus(t, "RssFile"), peakAnon, peakHeap>>20)
	t.Logf("resident by mapped file type (kB): %v", residentByFileType(t))
}

// residentByFileType sums the resident size of the process's mappings by file extension
// (Badger mmaps its tables, value log and memtable logs).
func residentByFileType(t *testing.T) map[string]int {
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Log(err)
		return nil
	}
	out := map[string]int{}
	kind := ""
	for line := range bytes.Lines(data) {
		fields := strings.Fields(string(line))
		if len(fields) == 0 {
			continue
		}
		if !strings.HasSuffix(fields[0], ":") { // a mapping header: address perms offset dev inode [path]
			kind = "anonymous"
			if len(fields) >= 6 {
				kind = fields[5]
				if i := strings.LastIndexByte(kind, '.'); i >= 0 && !strings.HasPrefix(kind, "[") {
					kind = kind[i:]
				}
			}
			continue
		}
		if fields[0] == "Rss:" && len(fields) >= 2 {
			n, _ := strconv.Atoi(fields[1])
			out[kind] += n
		}
	}
	for k, v := range out {
		if v < 1024 {
			delete(out, k)
		}
	}
	return out
}

// writeHeapProfile writes a heap profile to $JOURNAL_FOOTPRINT_HEAP, if set.
func writeHeapProfile(t *testing.T) {
	path := os.Getenv("JOURNAL_FOOTPRINT_HEAP")
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		t.Error(err)
	}
}

func procStatus(t *testing.T, field string) string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range bytes.Lines(data) {
		if rest, ok := bytes.CutPrefix(line, []byte(field+":")); ok {
			return strings.TrimSpace(string(rest))
		}
	}
	return "?"
}
