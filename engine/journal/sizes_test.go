package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// countFiles counts the files of dir by extension (".mem", ".vlog", ".sst", ".log").
func countFiles(t *testing.T, dir string) map[string]int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, e := range entries {
		n[filepath.Ext(e.Name())]++
	}
	return n
}

// TestSmallSizes: with SmallSizes the same runs fill several value-log files, tables and WAL
// segments that the default sizes keep in one of each; the store written so opens with the
// default sizes and holds every entry; a value over the small value-log file size is refused
// before it reaches the WAL.
func TestSmallSizes(t *testing.T) {
	ctx := context.Background()
	output := json.RawMessage(`{"pad":"` + strings.Repeat("x", 8<<10) + `"}`) // over the value threshold
	const runs = 100
	write := func(t *testing.T, dir string, sizes Sizes) (vlogs, tables, walSegments int) {
		s, err := Open(dir, Options{Sizes: sizes})
		if err != nil {
			t.Fatal(err)
		}
		segs := map[string]bool{}
		for r := range runs {
			id := testID(r)
			if err := s.Append(ctx, id, true, started("wf", "", "task.a")); err != nil {
				t.Fatal(err)
			}
			small := make([]Entry, 40) // LSM-only entries: they fill memtables
			for i := range small {
				small[i] = Entry{Type: AttemptStarted, Node: fmt.Sprintf("task.s%d", i), Attempt: 1, TaskID: strings.Repeat("t", 100)}
			}
			if err := s.Append(ctx, id, false, small...); err != nil {
				t.Fatal(err)
			}
			for i := range 4 {
				e := Entry{Type: NodeFinished, Node: fmt.Sprintf("task.%d", i), Status: StatusSucceeded, Output: output}
				if err := s.Append(ctx, id, true, e); err != nil {
					t.Fatal(err)
				}
			}
			names, _ := os.ReadDir(filepath.Join(dir, walDirName))
			for _, n := range names {
				segs[n.Name()] = true
			}
		}
		closeStore(t, s)
		n := countFiles(t, dir)
		return n[".vlog"], n[".sst"], len(segs)
	}

	small := t.TempDir()
	vlogs, tables, segs := write(t, small, SmallSizes())
	// 100 runs of ~33 KiB of values and ~8 KiB of small entries: ~4 MiB in 1 MiB value-log
	// files and 256 KiB segments, and ~800 KiB of entries in 64 KiB memtables and 32 KiB tables.
	if vlogs < 3 || tables < 2 || segs < 5 {
		t.Errorf("small sizes: %d value-log files, %d tables, %d WAL segments; want at least 3, 2 and 5", vlogs, tables, segs)
	}
	def := t.TempDir()
	if vlogs, _, segs := write(t, def, Sizes{}); vlogs != 1 || segs > 2 {
		t.Errorf("default sizes: %d value-log files, %d WAL segments; want 1 and at most 2", vlogs, segs)
	}

	// Written small, read with the defaults.
	s := openStore(t, small)
	for r := range runs {
		got := collectEntries(t, s, testID(r), 0)
		if len(got) != 45 || string(got[44].Output) != string(output) {
			t.Fatalf("run %d: %d entries after reopening with the default sizes, want 45 with the output", r, len(got))
		}
	}
	closeStore(t, s)

	s, err := Open(small, Options{Sizes: SmallSizes()})
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore(t, s)
	huge := json.RawMessage(`"` + strings.Repeat("y", 1<<20) + `"`)
	err = s.Append(ctx, testID(0), true, Entry{Type: NodeFinished, Node: "task.huge", Status: StatusSucceeded, Output: huge})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("at most %d", 1<<20)) {
		t.Errorf("Append of a value over the value-log file size = %v, want a refusal naming %d", err, 1<<20)
	}
}

// TestSizesCheck: sizes Badger would refuse are refused by Open, naming the field.
func TestSizesCheck(t *testing.T) {
	for _, tc := range []struct {
		sizes Sizes
		field string
	}{
		{Sizes{MemTable: 1 << 10}, "MemTable"},
		{Sizes{ValueLogFile: 1 << 10}, "ValueLogFile"},
		{Sizes{ValueLogFile: 4 << 30}, "ValueLogFile"},
		{Sizes{BaseTable: -1}, "BaseTable"},
		{Sizes{BaseLevel: -1}, "BaseLevel"},
		{Sizes{WALSegment: 1 << 10}, "WALSegment"},
	} {
		_, err := Open(t.TempDir(), Options{Sizes: tc.sizes})
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("Open with %+v = %v, want an error naming %s", tc.sizes, err, tc.field)
		}
	}
	if err := SmallSizes().check(); err != nil {
		t.Errorf("SmallSizes: %v", err)
	}
}
