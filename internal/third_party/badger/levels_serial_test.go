package badger

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4/options"
)

// TestCompactionRunsOneSplitAtATime checks Fuscia's change to compactBuildTables and subcompact:
// a compaction with several splits builds their tables one split at a time, and writes each
// table file before it builds the next. Compactions are run
// here by the test itself (no background compactors), so the level-0 compaction into a level of
// many tables is certain to happen, and to have splits.
func TestCompactionRunsOneSplitAtATime(t *testing.T) {
	opt := DefaultOptions(t.TempDir()).
		WithLogger(nil).
		WithNumCompactors(0).
		WithMemTableSize(64 << 10).
		WithBaseTableSize(8 << 10).
		WithCompression(options.None).
		WithBaseLevelSize(1 << 20).
		WithValueThreshold(1 << 10).
		WithNumLevelZeroTables(100).
		WithNumLevelZeroTablesStall(1000)
	db, err := Open(opt)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()

	rng := rand.New(rand.NewSource(1))
	value := make([]byte, 200)
	// writeAndCompact writes keys spread over the whole key space, waits until every full
	// memtable is a level-0 table, and compacts level 0 into the base level.
	writeAndCompact := func(round int) {
		for i := 0; i < 40; i++ {
			err := db.Update(func(txn *Txn) error {
				for j := 0; j < 40; j++ {
					key := fmt.Sprintf("key-%08d", rng.Intn(1_000_000))
					if err := txn.Set([]byte(key), value); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatalf("round %d: write: %v", round, err)
			}
		}
		// Flushing the immutable memtables is Badger's own goroutine's work, not a compaction's.
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
			db.lock.RLock()
			pending := len(db.imm)
			db.lock.RUnlock()
			if pending == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d memtables still not flushed after a minute", round, pending)
			}
		}
		if err := db.lc.doCompact(0, compactionPriority{level: 0, score: 100, adjusted: 100}); err != nil {
			t.Fatalf("round %d: compact level 0: %v", round, err)
		}
	}
	for round := 1; round <= 3; round++ {
		writeAndCompact(round)
		counts := map[int]int{}
		for _, ti := range db.Tables() {
			counts[ti.Level]++
		}
		t.Logf("round %d: tables per level %v, most splits of a compaction %d", round, counts, db.lc.maxSplits.Load())
	}

	if got := db.lc.maxSplits.Load(); got < 2 {
		t.Fatalf("the compactions had at most %d split(s); the test needs one with 2 or more to mean anything", got)
	}
	if got := db.lc.maxSplitsRunning.Load(); got != 1 {
		t.Fatalf("%d splits of one compaction built tables at once, want 1", got)
	}
	if got := db.lc.maxTablesWriting.Load(); got != 1 {
		t.Fatalf("%d tables were written at once, want 1", got)
	}
}
