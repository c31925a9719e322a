package journal

import (
	"context"
	"strings"
	"testing"

	badger "github.com/dgraph-io/badger/v4"
)

// TestBadgerWritesPerSimpleRun counts the versions one run leaves in Badger (sets and
// tombstones, by key family), so that a change writing more per run fails here rather than
// going unnoticed in serve's throughput (docs/performance.md, item 4, session 6). The run is
// two Appends, start and finish, applied in separate jobs as at low load.
func TestBadgerWritesPerSimpleRun(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	id := testID(1)
	s := openStore(t, dir)
	if err := s.Append(ctx, id, true, started("wf", "", "task.a")); err != nil {
		t.Fatalf("Append start: %v", err)
	}
	if err := s.Append(ctx, id, true, Entry{Type: RunFinished, Status: StatusSucceeded}); err != nil {
		t.Fatalf("Append finish: %v", err)
	}
	closeStore(t, s)

	db, err := badger.Open(badgerOptions(dir, nil))
	if err != nil {
		t.Fatalf("badger.Open: %v", err)
	}
	defer db.Close()
	got := map[string]int{}
	err = db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{AllVersions: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := string(it.Item().Key())
			if !strings.HasPrefix(k, "j/") && !strings.HasPrefix(k, "r/") && !strings.HasPrefix(k, "x/") {
				continue
			}
			fam := k[:2]
			if fam == "x/" {
				fam = k[:4]
			}
			if it.Item().IsDeletedOrExpired() {
				fam += " del"
			}
			got[fam]++
		}
		return nil
	})
	if err != nil {
		t.Fatalf("iterate: %v", err)
	}
	// Start: j/1, r/, x/w/, x/s/running. Finish: j/2, r/, x/w/ (rewritten to repair a failed
	// earlier write), x/s/succeeded, x/f/, and the tombstone of x/s/running. testID's time is
	// not the run's start, so x/o/ is written at both too (a real run's ULID has no x/o/ key).
	want := map[string]int{"j/": 2, "r/": 2, "x/w/": 2, "x/o/": 2, "x/s/": 2, "x/s/ del": 1, "x/f/": 1}
	for fam, n := range got {
		if n > want[fam] {
			t.Errorf("%s: %d versions per run, want at most %d (all: %v)", fam, n, want[fam], got)
		}
	}
	for fam, n := range want {
		if got[fam] == 0 {
			t.Errorf("%s: no versions, want %d: the census no longer sees the run's writes (all: %v)", fam, n, got)
		}
	}
}
