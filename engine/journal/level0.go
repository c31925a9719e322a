package journal

import (
	"os"
	"path/filepath"

	"github.com/dgraph-io/badger/v4"
)

// Badger compacts level 0 only from its compactor goroutines, which wait up to a second
// (a random delay) before their first compaction. A one-shot `fuscia apply` closes the store
// well before that, and its close writes the run's memtable to one more level-0 table (past
// NumLevelZeroTablesStall too: a closing Badger does not stall). So a home used only by
// one-shot applies gained a level-0 table per apply and never lost one: after a few hundred
// applies every open verified and opened them all, every read looked in each, and every close
// msynced each (docs/performance.md, issue 20 item 3). levelZeroFull lets Open ask Badger to
// compact level 0 at close (CompactL0OnClose) once the table that close writes brings level 0
// to the count at which the compactors would have started: a store used by long-lived processes
// rarely gets there, and one used by one-shot applies compacts every few applies.

// levelZeroFull reports whether the manifest in dir lists at least bo.NumLevelZeroTables-1
// tables at level 0.
func levelZeroFull(dir string, bo badger.Options) bool {
	return levelZeroTables(dir, bo) >= bo.NumLevelZeroTables-1
}

// levelZeroTables is the number of level-0 tables the manifest in dir lists: 0 without a
// manifest (a new store) or when it cannot be read (Open reports that).
func levelZeroTables(dir string, bo badger.Options) int {
	f, err := os.Open(filepath.Join(dir, badger.ManifestFilename))
	if err != nil {
		return 0
	}
	defer f.Close()
	m, err := replayManifest(f, bo)
	if err != nil {
		return 0
	}
	n := 0
	for _, tm := range m.Tables {
		if tm.Level == 0 {
			n++
		}
	}
	return n
}
