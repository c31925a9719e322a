//go:build unix

package journal

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestTornLogFiles reproduces what a SIGKILL between Badger creating a memtable or value log file
// and sizing it leaves behind: zero-length files that Badger alone refuses to open.
func TestTornLogFiles(t *testing.T) {
	dir := t.TempDir()
	id := testID(1)
	s := openStore(t, dir)
	if err := s.Append(context.Background(), id, true, started("wf", "", "task.a")); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)
	torn := []string{"00099.mem", "000099.vlog"}
	for _, name := range torn {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	s = openStore(t, dir)
	if sum, err := s.Summary(id); err != nil || sum.Workflow != "wf" {
		t.Errorf("after the repair: summary %+v, %v; want the run written before", sum, err)
	}
	for _, name := range torn {
		if info, err := os.Stat(filepath.Join(dir, name)); err == nil && info.Size() == 0 {
			t.Errorf("%s is still there and empty", name)
		}
	}

	// While a store is open, its directory is locked: nothing is removed under it.
	keep := filepath.Join(dir, "00098.mem")
	if err := os.WriteFile(keep, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if removed, err := removeTornLogs(dir); err == nil || len(removed) != 0 {
		t.Errorf("removeTornLogs on an open store = %v, %v; want a lock error", removed, err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the open store's file was touched: %v", err)
	}
	closeStore(t, s)
}
