package journal

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

const (
	// valueLogFileSize is Badger's ValueLogFileSize, which is also the largest value it takes.
	valueLogFileSize = 64 << 20
	// maxKeySize is the largest key Badger takes.
	maxKeySize = 65000
)

// Compactors is the number of Badger's compactors (NumCompactors, the least it takes besides
// none). Each runs one compaction at a time and keeps a CPU busy while it does: `fuscia serve`
// gives the Go scheduler as many Ps more than CPUs (cmd/fuscia/serve.go).
const Compactors = 2

// checkOp refuses what Badger would refuse whatever the state (too large a key, a value over
// maxValue, the store's value-log file size): such an op must not reach the WAL, whose replay
// must not fail.
func checkOp(o op, maxValue int64) error {
	if len(o.key) == 0 || len(o.key) > maxKeySize {
		return fmt.Errorf("key of %d bytes (at most %d)", len(o.key), maxKeySize)
	}
	if int64(len(o.value)) > maxValue {
		return fmt.Errorf("value of %d bytes under key %.40q (at most %d)", len(o.value), o.key, maxValue)
	}
	return nil
}

// checkOps is checkOp for every op of a request.
func checkOps(ops []op, maxValue int64) error {
	for _, o := range ops {
		if err := checkOp(o, maxValue); err != nil {
			return err
		}
	}
	return nil
}

// badgerOptions are the options the store opens Badger with: a small memory footprint for a
// process that journals many small entries (docs/state.md explains each choice).
func badgerOptions(dir string, logger *slog.Logger) badger.Options {
	o := badger.DefaultOptions(dir)
	// The writer goroutine calls DB.Sync itself, once per group commit.
	o.SyncWrites = false
	// One writer, no read-modify-write transactions: conflict detection is wasted work.
	o.DetectConflicts = false
	o.Logger = slogLogger{logger}
	o.MetricsEnabled = false

	// Memtables and tables: sized so that every table Badger builds fits the first buffer of its
	// builder's allocator. A builder starts with 2 × BaseTableSize and doubles the allocator when
	// a table outgrows it; Badger keeps up to 8 finished builders' allocators for reuse, with all
	// their buffers, and frees one only after 2 s without a table built (never under load). With
	// 4 MiB memtables (L0 tables of ~3.4 MB) and tables doubling per level, those allocators grew
	// to 6 MiB each and held 44 of serve's 57 MiB of live heap under sustained webhooks; with
	// 1.5 MiB memtables (L0 tables of ~1.3 MB) and 1 MiB tables at every level they keep 2 MiB
	// each, and the live heap is 21-30 MiB (docs/performance.md, issue 20 item 4, session 4).
	// A memtable costs an arena of 1.3 × its size and a log mmapped at twice it; one is written
	// while at most one other is flushed.
	o.MemTableSize = 1536 << 10
	o.NumMemtables = 2
	o.BaseTableSize = 1 << 20
	o.TableSizeMultiplier = 1
	o.BaseLevelSize = 10 << 20
	// Level 0: compact late, stall later. The journal appends at the end of several key ranges
	// (runs, journal entries, indexes), so each L0 compaction rewrites the L1 table at the edge
	// of every range however little L0 holds: waiting for more data to compact at once wrote 11%
	// fewer bytes and used 8% less CPU per webhook run. Twelve tables of 1.5 MiB memtables are
	// about the data six of 4 MiB were. Smaller tables still (512 KiB, with 2 MiB memtables) cost
	// 12-27% more CPU per run (docs/performance.md, issue 20).
	o.KeepMemTableOnClose = keepMemTableOnClose(o.MemTableSize)
	o.NumLevelZeroTables = 12
	// Badger compacts level 0 only from its compactor goroutines, which wait up to a second (a
	// random delay) before their first compaction. A one-shot `fuscia apply` closes the store well
	// before that, and a close that writes its memtable to a table adds one more to level 0 (past
	// NumLevelZeroTablesStall too: a closing Badger does not stall). So a home used only by
	// one-shot applies gained level-0 tables and never lost one: after a few hundred applies every
	// open opened them all, every read looked in each (docs/performance.md, issue 20 item 3). The
	// copy's CompactL0OnCloseFrom makes Open ask for a compaction of level 0 at close once the table
	// that close may write brings level 0 to the count at which the compactors would have started:
	// a store used by long-lived processes rarely gets there, one used by one-shot applies does
	// every few applies.
	o.CompactL0OnCloseFrom = o.NumLevelZeroTables - 1
	o.NumLevelZeroTablesStall = 24
	o.NumCompactors = Compactors
	// No compression: Badger sizes a compressed table by its compressed size and holds it
	// uncompressed while building it, so compressible JSON made compactions hold 5-10× more
	// memory. Without compression or encryption the block and index caches are unused (tables
	// are read in place from their mmap), so they are off.
	o.Compression = options.None
	o.BlockCacheSize = 0
	o.IndexCacheSize = 0
	// Value log: entries and summaries (small) stay in the LSM tree; large outputs and plans go
	// to the value log.
	o.ValueThreshold = 4 << 10
	o.ValueLogFileSize = valueLogFileSize
	// Checksums (docs/state.md, "Damaged files"): Badger's copy verifies every block of every
	// table the manifest lists as Open opens it, before it touches any log, and fails with an
	// error naming a damaged table where upstream panics on some damage or leaves the table out
	// (VerifyTablesOnOpen; openError makes it a *CorruptError). Badger verifies every value it
	// reads from the value log. Not on each block read: Badger's reads and compactions take a
	// block that fails its check for the end of its table (no error reaches the caller), which
	// would turn damage into silently missing entries. Nor at every table a compaction writes
	// (OnTableRead would do that): those were just built from checked data.
	o.VerifyTablesOnOpen = true
	o.ChecksumVerificationMode = options.NoVerification
	o.VerifyValueChecksum = true
	return o
}

// keepMemTableOnClose is the most a memtable's log may hold for Badger's close to keep it for the
// next open (the copy's KeepMemTableOnClose) rather than write it to a level-0 table: a one-shot
// apply wrote, synced and listed a table of a few KiB at every close, and every twelfth close
// compacted them. The next open replays the kept log, so it stays small: a sixth of a memtable,
// 256 KiB with the default sizes, the entries of ~70 applies of three nodes (docs/state.md,
// "Badger options"; docs/performance.md, issue 20 item 3, session 8).
func keepMemTableOnClose(memTableSize int64) int64 { return memTableSize / 6 }

// slogLogger passes Badger's warnings and errors to a slog.Logger and drops the rest.
type slogLogger struct{ l *slog.Logger }

func (s slogLogger) log(level slog.Level, format string, args []any) {
	if s.l == nil || !s.l.Enabled(context.Background(), level) {
		return
	}
	msg := strings.TrimSpace(fmt.Sprintf(format, args...))
	s.l.Log(context.Background(), level, msg, "component", "badger")
}

func (s slogLogger) Errorf(format string, args ...any)   { s.log(slog.LevelError, format, args) }
func (s slogLogger) Warningf(format string, args ...any) { s.log(slog.LevelWarn, format, args) }
func (slogLogger) Infof(string, ...any)                  {}
func (slogLogger) Debugf(string, ...any)                 {}
