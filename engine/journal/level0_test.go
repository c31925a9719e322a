package journal

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// TestLevelZeroBoundedByShortOpens: a store opened, written and closed again and again within
// moments (as one-shot applies do) keeps level 0 below the count at which Badger's compactors
// would compact it. Each close that writes more than a kept memtable may hold writes its
// memtable to one more level-0 table, and Badger's compactors wait up to a second before their
// first compaction, so without the compaction at close level 0 grew by a table per open.
func TestLevelZeroBoundedByShortOpens(t *testing.T) {
	dir := t.TempDir()
	bo := badgerOptions(dir, nil)
	sizes := SmallSizes()
	keep := keepMemTableOnClose(sizes.MemTable)
	plan := bytes.Repeat([]byte("p"), 3<<10) // under the value threshold: in the memtable
	maxL0 := 0
	for i := range 3 * bo.NumLevelZeroTables {
		s, err := Open(dir, Options{Sizes: sizes})
		if err != nil {
			t.Fatal(err)
		}
		for j := range int(keep)/len(plan) + 1 {
			if err := s.PutPlan(fmt.Sprintf("sha256:%062d%02d", i, j), plan); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		n := levelZeroTables(t, dir, bo)
		maxL0 = max(maxL0, n)
		if n >= bo.NumLevelZeroTables {
			t.Fatalf("after open and close %d: %d level-0 tables, want fewer than %d (compacted at close)", i+1, n, bo.NumLevelZeroTables)
		}
	}
	if maxL0 == 0 {
		t.Fatal("no close wrote a level-0 table: the test does not exercise the compaction")
	}
	// Every plan is still there.
	s, err := Open(dir, Options{Sizes: sizes})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 3 * bo.NumLevelZeroTables {
		if _, err := s.Plan(fmt.Sprintf("sha256:%062d%02d", i, 0)); err != nil {
			t.Fatalf("plan %d after the compactions: %v", i, err)
		}
	}
}

// TestShortOpensKeepTheMemtable: a store opened for a few small writes and closed (a one-shot
// apply) writes no level-0 table at close: Badger keeps the memtable in its synced log
// (KeepMemTableOnClose), the next open goes on writing to it, and everything reads back.
func TestShortOpensKeepTheMemtable(t *testing.T) {
	dir := t.TempDir()
	bo := badgerOptions(dir, nil)
	const opens = 5
	for i := range opens {
		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutPlan(fmt.Sprintf("sha256:%064d", i), []byte(fmt.Sprintf("plan %d", i))); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if n := levelZeroTables(t, dir, bo); n != 0 {
			t.Fatalf("after open and close %d: %d level-0 tables; want none (the memtable kept)", i+1, n)
		}
		if mems := countFiles(t, dir)[".mem"]; mems != 1 {
			t.Fatalf("after open and close %d: %d memtable logs; want the kept one", i+1, mems)
		}
	}
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range opens {
		plan, err := s.Plan(fmt.Sprintf("sha256:%064d", i))
		if err != nil || string(plan) != fmt.Sprintf("plan %d", i) {
			t.Fatalf("plan %d: %q, %v", i, plan, err)
		}
	}
}

// levelZeroTables is the number of level-0 tables the manifest in dir lists.
func levelZeroTables(t *testing.T, dir string, bo badger.Options) int {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, badger.ManifestFilename))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, _, err := badger.ReplayManifestFile(f, bo.ExternalMagicVersion, bo)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tm := range m.Tables {
		if tm.Level == 0 {
			n++
		}
	}
	return n
}
