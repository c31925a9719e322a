package journal

import (
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// Sizes are the sizes of the store's files. A zero field keeps its default, which is what every
// real store uses (docs/state.md, "Badger options"). Smaller files fill sooner, so Badger rotates
// memtables and value-log files, flushes and compacts tables, and the WAL rotates segments every
// few hundred runs instead of every few hundred thousand: the crash matrix relies on that to
// kill a process at those moments (docs/state.md, "Crash matrix"). Badger does not record
// these sizes in the directory: a store written with one set opens with another.
type Sizes struct {
	// MemTable is Badger's memtable size (default 1.5 MiB, at least 32 KiB so that a value just
	// under the value threshold fits a Badger batch). A memtable log (*.mem) is created each time
	// one fills, and the full one is flushed to a table.
	MemTable int64
	// ValueLogFile is the size at which Badger moves to a new value-log file (*.vlog; default
	// 64 MiB, at least 1 MiB and under 2 GiB). It is also the largest value the store takes.
	ValueLogFile int64
	// BaseTable and BaseLevel are Badger's table size and the size of its first level below
	// level 0 (defaults 1 MiB and 10 MiB): smaller ones compact more often.
	BaseTable, BaseLevel int64
	// WALSegment is the size a WAL segment is preallocated to (default 32 MiB, at least
	// 64 KiB); a full segment is sealed, the next one created and the full one checkpointed.
	WALSegment int64
}

// SmallSizes are sizes at which a store journaling runs of ~10 KiB each rotates its memtables
// and WAL segments every few dozen runs and its value-log files every hundred or so, and
// flushes and compacts as often: for tests that must see those moments, never for real stores.
func SmallSizes() Sizes {
	return Sizes{MemTable: 64 << 10, ValueLogFile: 1 << 20, BaseTable: 32 << 10, BaseLevel: 256 << 10, WALSegment: 256 << 10}
}

// Limits Badger (or the WAL's layout) puts on Sizes.
const (
	minMemTable     = 32 << 10
	minValueLogFile = 1 << 20
	maxValueLogFile = 2<<30 - 1
	minWALSegment   = 64 << 10
)

// check refuses sizes Badger would refuse, or that would make the store unusable, naming the
// field.
func (z Sizes) check() error {
	bad := func(field string, v int64, want string) error {
		return fmt.Errorf("store size %s = %d: want %s (0 keeps the default)", field, v, want)
	}
	switch {
	case z.MemTable != 0 && z.MemTable < minMemTable:
		return bad("MemTable", z.MemTable, fmt.Sprintf("at least %d", minMemTable))
	case z.ValueLogFile != 0 && (z.ValueLogFile < minValueLogFile || z.ValueLogFile > maxValueLogFile):
		return bad("ValueLogFile", z.ValueLogFile, fmt.Sprintf("from %d to %d", minValueLogFile, maxValueLogFile))
	case z.BaseTable < 0:
		return bad("BaseTable", z.BaseTable, "more than 0")
	case z.BaseLevel < 0:
		return bad("BaseLevel", z.BaseLevel, "more than 0")
	case z.WALSegment != 0 && z.WALSegment < minWALSegment:
		return bad("WALSegment", z.WALSegment, fmt.Sprintf("at least %d", minWALSegment))
	}
	return nil
}

// applyBadger sets the non-zero sizes in Badger's options.
func (z Sizes) applyBadger(o *badger.Options) {
	if z.MemTable != 0 {
		o.MemTableSize = z.MemTable
		o.KeepMemTableOnClose = keepMemTableOnClose(z.MemTable)
	}
	if z.ValueLogFile != 0 {
		o.ValueLogFileSize = z.ValueLogFile
	}
	if z.BaseTable != 0 {
		o.BaseTableSize = z.BaseTable
	}
	if z.BaseLevel != 0 {
		o.BaseLevelSize = z.BaseLevel
	}
}

// applyWAL sets the segment size in the WAL's configuration.
func (z Sizes) applyWAL(wc *walConfig) {
	if z.WALSegment != 0 {
		wc.segmentSize = z.WALSegment
	}
}

// maxValue is the largest value the store takes: Badger refuses a value larger than a
// value-log file.
func (z Sizes) maxValue() int64 {
	if z.ValueLogFile != 0 {
		return z.ValueLogFile
	}
	return valueLogFileSize
}
