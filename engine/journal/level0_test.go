package journal

import (
	"fmt"
	"testing"
)

// TestLevelZeroBoundedByShortOpens: a store opened, written and closed again and again within
// moments (as one-shot applies do) keeps level 0 below the count at which Badger's compactors
// would compact it. Each close writes its memtable to one more level-0 table, and Badger's
// compactors wait up to a second before their first compaction, so without the compaction at
// close level 0 grew by a table per open.
func TestLevelZeroBoundedByShortOpens(t *testing.T) {
	dir := t.TempDir()
	bo := badgerOptions(dir, nil)
	maxL0 := 0
	for i := range 3 * bo.NumLevelZeroTables {
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
		n := levelZeroTables(dir, bo)
		maxL0 = max(maxL0, n)
		if n >= bo.NumLevelZeroTables {
			t.Fatalf("after open and close %d: %d level-0 tables, want fewer than %d (compacted at close)", i+1, n, bo.NumLevelZeroTables)
		}
	}
	if maxL0 == 0 {
		t.Fatal("no close wrote a level-0 table: the test does not exercise the compaction")
	}
	// Every plan is still there.
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 3 * bo.NumLevelZeroTables {
		if _, err := s.Plan(fmt.Sprintf("sha256:%064d", i)); err != nil {
			t.Fatalf("plan %d after the compactions: %v", i, err)
		}
	}
}
