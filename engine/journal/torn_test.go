//go:build unix

package journal

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// tornStore writes a run with a value large enough for the value log, closes the store and
// returns its directory and the run's id.
func tornStore(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	id := testID(1)
	s := openStore(t, dir)
	if err := s.Append(context.Background(), id, true, started("wf", "", "task.a")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPlan("sha256:big", bytes.Repeat([]byte("p"), 10<<10)); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)
	return dir, id
}

// checkTornStore opens dir once and checks that what tornStore wrote is there.
func checkTornStore(t *testing.T, dir, id string) {
	t.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("the first Open failed: %v", err)
	}
	defer closeStore(t, s)
	if sum, err := s.Summary(id); err != nil || sum.Workflow != "wf" {
		t.Errorf("summary %+v, %v; want the run written before", sum, err)
	}
	if plan, err := s.Plan("sha256:big"); err != nil || len(plan) != 10<<10 {
		t.Errorf("plan of %d bytes, %v; want the 10 KiB written before", len(plan), err)
	}
}

// TestTornLogFiles reproduces what a SIGKILL between Badger creating a memtable or value log file
// and sizing it leaves behind: a zero-length file, which Badger alone refuses to open (and sizes
// while refusing it). The store must open the first time.
func TestTornLogFiles(t *testing.T) {
	for _, torn := range [][]string{
		{"00005.mem"},                  // the next memtable
		{"000009.vlog"},                // the next value log
		{"000000.vlog"},                // a value log below the others: Badger would keep it sized
		{"00099.mem", "000099.vlog"},   // both at once
		{"00002.mem", "00003.mem"},     // two memtables (00001.mem holds tornStore's entries)
		{"000002.vlog", "000003.vlog"}, // two value logs
	} {
		t.Run(strings.Join(torn, "+"), func(t *testing.T) {
			dir, id := tornStore(t)
			for _, name := range torn {
				if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			checkTornStore(t, dir, id)
			// Badger keeps a value log below the current one that it sized while refusing it:
			// a sparse file of 2 × ValueLogFileSize, for good.
			files, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				if info, err := f.Info(); err == nil && info.Size() >= 2*valueLogFileSize {
					t.Errorf("%s is left sized, %d bytes", f.Name(), info.Size())
				}
			}
		})
	}
}

// TestTornLogFileAfterRepair covers a file emptied between the repair and badger.Open (another
// process that took the lock meanwhile and died): Open refuses it, having sized it and written
// its header, and the second repair removes it.
func TestTornLogFileAfterRepair(t *testing.T) {
	for _, name := range []string{"00007.mem", "000000.vlog"} {
		t.Run(name, func(t *testing.T) {
			dir, id := tornStore(t)
			calls := 0
			open := func(o badger.Options) (*badger.DB, error) {
				calls++
				if calls == 1 {
					if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				return badger.Open(o)
			}
			db, err := openBadger(dir, badgerOptions(dir, nil), open)
			if err != nil {
				t.Fatalf("openBadger: %v", err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if calls != 2 {
				t.Errorf("badger.Open called %d times, want 2 (refused once)", calls)
			}
			if info, err := os.Stat(filepath.Join(dir, name)); err == nil && info.Size() > logHeaderSize {
				t.Errorf("%s is still there, %d bytes", name, info.Size())
			}
			checkTornStore(t, dir, id)
		})
	}
}

// TestRepairLogsKeepsEntries: only files that provably hold no entry are removed, and nothing is
// removed while a process holds the store.
func TestRepairLogsKeepsEntries(t *testing.T) {
	dir, id := tornStore(t)
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	header := bytes.Repeat([]byte{7}, logHeaderSize)
	sizedEmpty := append(append([]byte{}, header...), make([]byte, 1<<20)...)
	lateByte := append([]byte{}, sizedEmpty...)
	lateByte[len(lateByte)-1] = 1
	write("00050.mem", nil)
	write("000050.vlog", sizedEmpty)
	write("000051.vlog", lateByte)
	write("000052.vlog", header[:5])
	write("00050.sst", nil) // not a log file: never touched

	removed, err := repairLogs(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"00050.mem"}; !slices.Equal(removed, want) {
		t.Errorf("repairLogs(sized=false) removed %v, want %v", removed, want)
	}
	removed, err = repairLogs(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"000050.vlog", "000052.vlog"}; !slices.Equal(removed, want) {
		t.Errorf("repairLogs(sized=true) removed %v, want %v", removed, want)
	}
	for _, name := range []string{"000001.vlog", "000051.vlog", "00050.sst"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}
	if err := os.Remove(filepath.Join(dir, "000051.vlog")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "00050.sst")); err != nil {
		t.Fatal(err)
	}

	// While a store is open, its directory is locked: nothing is removed under it.
	s := openStore(t, dir)
	keep := filepath.Join(dir, "00098.mem")
	write("00098.mem", nil)
	err = underDirLock(dir, func() error {
		t.Error("underDirLock ran its function while the store was open")
		_, err := repairLogs(dir, true)
		return err
	})
	if !errors.Is(err, errDirBusy) {
		t.Errorf("underDirLock on an open store = %v; want errDirBusy", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the open store's file was touched: %v", err)
	}
	closeStore(t, s)
	if err := os.Remove(keep); err != nil {
		t.Fatal(err)
	}
	checkTornStore(t, dir, id)
}
