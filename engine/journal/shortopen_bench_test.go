package journal

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkShortOpens is the store's part of a one-shot apply: open a store used before, journal
// a run of three nodes durably, close it; b.N times in one directory, as applies into one home
// (docs/performance.md, issue 20 item 3). Run it with a fixed -benchtime (e.g. 200x): the cost
// of an open depends on what the opens before it left.
func BenchmarkShortOpens(b *testing.B) {
	dir := b.TempDir()
	ctx := context.Background()
	run := 0
	cpu := cpuTime(b)
	for b.Loop() {
		run++
		s, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		entries := []Entry{started("bench", "", "task.a", "task.b", "task.c")}
		for range 3 {
			entries = append(entries, benchEntry())
		}
		if err := s.Append(ctx, testID(run), true, entries...); err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
}

// BenchmarkOpenTables is the open and close of a store whose tree is in 8 level-0 tables of
// ~200 KB (as in a home reused by a few hundred one-shot applies), with no memtable log to
// replay: what Badger and the store do at open for each table (map it, decode its index, verify
// its blocks). Run it with a fixed -benchtime (e.g. 200x).
func BenchmarkOpenTables(b *testing.B) {
	dir := b.TempDir()
	ctx := context.Background()
	run := 0
	for range 8 {
		s := openStore(b, dir)
		for range 60 {
			run++
			entries := []Entry{started("bench", "", "task.a")}
			for range 10 {
				entries = append(entries, benchEntry())
			}
			if err := s.Append(ctx, testID(run), false, entries...); err != nil {
				b.Fatal(err)
			}
		}
		closeStore(b, s)
		flushKeptMemTable(b, dir) // one more level-0 table
	}
	cpu := cpuTime(b)
	for b.Loop() {
		s, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(len(tableFiles(b, dir))), "tables")
}

// tableFiles lists the tables (*.sst) of dir.
func tableFiles(b *testing.B, dir string) []string {
	b.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil {
		b.Fatal(err)
	}
	return files
}
