package journal

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestStoreMappings(t *testing.T) {
	maps := strings.Join([]string{
		"00400000-00c00000 r-xp 00000000 08:01 1234 /usr/bin/fuscia",
		"7f0000000000-7f0000100000 rw-s 00000000 08:01 11 /home/u/.fuscia/state/000001.sst",
		"7f0000100000-7f0000900000 rw-s 00000000 08:01 12 /home/u/.fuscia/state/00003.mem",
		"7f0000900000-7f0001900000 rw-s 00000000 08:01 13 /home/u/.fuscia/state/000002.vlog (deleted)",
		"7f0001900000-7f0001a00000 r--p 00000000 08:01 14 /home/u/.fuscia/state/000004.sst",     // private: not Badger's
		"7f0001a00000-7f0001b00000 rw-s 00000000 08:01 15 /home/u/.fuscia/state/DISCARD",        // not data
		"7f0001b00000-7f0001c00000 rw-s 00000000 08:01 16 /home/u/.fuscia/state/wal/000001.log", // not Badger's
		"7f0001c00000-7f0001d00000 rw-s 00000000 08:01 17 /home/u/.fuscia/state2/000001.sst",    // another store
		"7f0001d00000-7f0001e00000 rw-s 00000000 08:01 18 /home/u/my state/000009.sst",          // a space in the path
		"7f0001e00000-7f0001f00000 rw-p 00000000 00:00 0 ",                                      // anonymous
		"7f0001f00000-7f0002000000 rw-p 00000000 00:00 0",                                       // anonymous, no trailing space
		"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]",
		"",
	}, "\n")
	got := storeMappings([]byte(maps), "/home/u/.fuscia/state")
	want := []mapping{
		{0x7f0000000000, 0x7f0000100000, "/home/u/.fuscia/state/000001.sst"},
		{0x7f0000100000, 0x7f0000900000, "/home/u/.fuscia/state/00003.mem"},
		{0x7f0000900000, 0x7f0001900000, "/home/u/.fuscia/state/000002.vlog"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("storeMappings:\n got %+v\nwant %+v", got, want)
	}
	if got := storeMappings([]byte(maps), "/home/u/my state"); len(got) != 1 || got[0].path != "/home/u/my state/000009.sst" {
		t.Errorf("storeMappings with a space in the directory: %+v", got)
	}
	if got := storeMappings([]byte(maps), ""); got != nil {
		t.Errorf("storeMappings without a directory: %+v", got)
	}
}

// residentStoreBytes sums the resident bytes (Rss in /proc/self/smaps) of s's file mappings.
func residentStoreBytes(t *testing.T, s *Store) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	in := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "Rss:"); ok {
			if in {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
				if err != nil {
					t.Fatalf("smaps line %q: %v", line, err)
				}
				total += kb << 10
			}
			continue
		}
		// A mapping's header line starts with its address range ("start-end perms …").
		if f := strings.Fields(line); len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			in = len(storeMappings([]byte(line), s.mapDir)) == 1
		}
	}
	return total
}

// TestTrimPagesOutMappings: the pages of Badger's files that writing and reading the store
// made resident leave the process's RSS when trimmed, and what they hold reads back the same.
func TestTrimPagesOutMappings(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("MADV_PAGEOUT is Linux's")
	}
	dir := t.TempDir()
	wc := defaultWALConfig()
	wc.trimEvery = 0 // the test trims itself
	s, err := open(dir, Options{Sizes: SmallSizes()}, wc)
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore(t, s)
	if s.mapDir == "" {
		t.Fatalf("no mapping directory for %s", dir)
	}

	ctx := context.Background()
	out, _ := json.Marshal(map[string]string{"body": strings.Repeat("x", 2<<10)})
	const runs = 200
	for r := range runs {
		id := testID(r)
		if err := s.Append(ctx, id, false, started("trim", "", "task.a")); err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			e := Entry{Type: NodeFinished, Node: "task.a", Index: []int{i}, Status: StatusSucceeded, Output: out}
			if err := s.Append(ctx, id, i == 9, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	readAll := func() {
		t.Helper()
		for r := range runs {
			es := collectEntries(t, s, testID(r), 0)
			if len(es) != 11 || !bytes.Equal(es[10].Output, out) {
				t.Fatalf("run %d: %d entries after trimming, last output %.40q", r, len(es), es[len(es)-1].Output)
			}
		}
	}
	readAll() // fault the tables in

	before := residentStoreBytes(t, s)
	if before < 256<<10 {
		t.Fatalf("only %d bytes of the store's files resident after writing ~5 MiB: nothing to trim", before)
	}
	// Compactions of the small tables may still fault pages in: trim until the resident bytes
	// are well under what they were.
	deadline := time.Now().Add(30 * time.Second)
	var after int64
	for {
		s.trimMappings()
		after = residentStoreBytes(t, s)
		if after <= before/4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("store files resident: %d bytes before trimming, still %d after", before, after)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("resident %d -> %d bytes after %d trims", before, after, s.trims.Load())
	if s.trimmedBytes.Load() == 0 {
		t.Errorf("trimmed %d passes, 0 bytes", s.trims.Load())
	}
	readAll()
}

// TestTrimmerRunsAfterWrites: the trimmer goroutine pages out the mappings after writes on its
// own, and stops with Close (TestCloseStopsGoroutines).
func TestTrimmerRunsAfterWrites(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("MADV_PAGEOUT is Linux's")
	}
	wc := defaultWALConfig()
	wc.trimEvery = 10 * time.Millisecond
	s, err := open(filepath.Join(t.TempDir(), "state"), Options{Sizes: SmallSizes()}, wc)
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore(t, s)
	if n := s.trims.Load(); n != 0 {
		t.Fatalf("%d trims before any write", n)
	}
	if err := s.Append(context.Background(), testID(1), true, started("trim", "")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for s.trims.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no trim within 30 s of a write")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestKickTrimmerOnlyWhenIdle: a write to Badger while the trimmer's timer runs only marks the
// write (read when the timer fires) instead of waking the trimmer's goroutine; an idle trimmer
// is kicked.
func TestKickTrimmerOnlyWhenIdle(t *testing.T) {
	s := newStore(nil, "", nil, defaultWALConfig()) // no goroutine: trimKick is only looked at
	s.kickTrimmer()
	if len(s.trimKick) != 1 || !s.trimWrote.Load() {
		t.Fatal("a write did not kick the idle trimmer")
	}
	<-s.trimKick
	s.trimWrote.Store(false)
	s.trimArmed.Store(true)
	s.kickTrimmer()
	if len(s.trimKick) != 0 {
		t.Fatal("a write kicked the trimmer while its timer runs")
	}
	if !s.trimWrote.Load() {
		t.Fatal("a write while the trimmer's timer runs was not marked")
	}
}
