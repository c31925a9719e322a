package journal

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

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

	// Memtables: each costs an arena of MemTableSize plus ~30% and a WAL mmap of twice its size.
	o.MemTableSize = 8 << 20
	o.NumMemtables = 2
	// Level 0 and tables: flush small tables often, compact early, stall late.
	o.NumLevelZeroTables = 2
	o.NumLevelZeroTablesStall = 8
	o.BaseTableSize = 2 << 20
	o.BaseLevelSize = 10 << 20
	o.NumCompactors = 2
	// Caches: bounded, instead of 256 MiB of block cache and table indexes kept in memory.
	o.BlockCacheSize = 8 << 20
	o.IndexCacheSize = 4 << 20
	// Value log: entries and summaries (small) stay in the LSM tree; large outputs and plans go
	// to the value log, whose files are memory-mapped, so keep them small.
	o.ValueThreshold = 4 << 10
	o.ValueLogFileSize = 64 << 20
	o.Compression = options.None
	envInt := func(name string, v *int64) {
		if x := os.Getenv(name); x != "" {
			n, _ := strconv.ParseInt(x, 10, 64)
			*v = n
		}
	}
	envInt("JO_MEM", &o.MemTableSize)
	envInt("JO_TABLE", &o.BaseTableSize)
	envInt("JO_VT", &o.ValueThreshold)
	envInt("JO_VLOG", &o.ValueLogFileSize)
	var nm, mult int64 = int64(o.NumMemtables), int64(o.TableSizeMultiplier)
	envInt("JO_NMEM", &nm)
	envInt("JO_MULT", &mult)
	o.NumMemtables, o.TableSizeMultiplier = int(nm), int(mult)
	if os.Getenv("JO_SNAPPY") != "" {
		o.Compression = options.Snappy
	}
	return o
}

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
