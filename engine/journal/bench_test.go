package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// benchEntry is a typical node result: a few hundred bytes of JSON.
func benchEntry() Entry {
	return Entry{
		Type:   NodeFinished,
		Node:   "task.fetch",
		Index:  []int{3},
		Key:    json.RawMessage(`3`),
		Status: StatusSucceeded,
		Output: json.RawMessage(`{"status":200,"headers":{"content-type":"application/json"},"body":{"id":12345,"name":"example","tags":["a","b","c"]}}`),
	}
}

func reportRate(b *testing.B, s *Store, start time.Time, syncs0 uint64) {
	elapsed := time.Since(start)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "entries/s")
	b.ReportMetric(float64(s.syncs.Load()-syncs0)/float64(b.N), "syncs/entry")
}

// BenchmarkAppendDurable appends durable entries one at a time to one run: each op is one
// entry and waits for its fsync (no other writer to share it with).
func BenchmarkAppendDurable(b *testing.B) {
	s := openStore(b, b.TempDir())
	defer closeStore(b, s)
	ctx := context.Background()
	id := testID(1)
	if err := s.Append(ctx, id, true, started("bench", "")); err != nil {
		b.Fatal(err)
	}
	syncs0, syncTime0 := s.syncs.Load(), s.SyncTime()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		if err := s.Append(ctx, id, true, benchEntry()); err != nil {
			b.Fatal(err)
		}
	}
	// What an append costs beyond the fdatasync itself (the hand-offs, the encoding), which
	// the disk's noise on a shared machine does not move.
	beyond := time.Since(start) - (s.SyncTime() - syncTime0)
	b.ReportMetric(float64(beyond.Microseconds())/float64(b.N), "µs/op-beyond-sync")
	reportRate(b, s, start, syncs0)
}

// BenchmarkAppendConcurrent appends durable entries from many goroutines, each to its own run:
// concurrent appends share group commits.
func BenchmarkAppendConcurrent(b *testing.B) {
	for _, par := range []int{1, 16} {
		b.Run(fmt.Sprintf("x%d", par), func(b *testing.B) {
			s := openStore(b, b.TempDir())
			defer closeStore(b, s)
			ctx := context.Background()
			var runs atomic.Int64
			syncs0 := s.syncs.Load()
			b.SetParallelism(par) // goroutines per GOMAXPROCS
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				id := testID(int(runs.Add(1)))
				if err := s.Append(ctx, id, false, started("bench", "")); err != nil {
					b.Error(err)
					return
				}
				for pb.Next() {
					if err := s.Append(ctx, id, true, benchEntry()); err != nil {
						b.Error(err)
						return
					}
				}
			})
			reportRate(b, s, start, syncs0)
		})
	}
}

// BenchmarkAppendRelaxed appends relaxed entries from many goroutines.
func BenchmarkAppendRelaxed(b *testing.B) {
	s := openStore(b, b.TempDir())
	defer closeStore(b, s)
	ctx := context.Background()
	var runs atomic.Int64
	syncs0 := s.syncs.Load()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		id := testID(int(runs.Add(1)))
		if err := s.Append(ctx, id, false, started("bench", "")); err != nil {
			b.Error(err)
			return
		}
		for pb.Next() {
			if err := s.Append(ctx, id, false, benchEntry()); err != nil {
				b.Error(err)
				return
			}
		}
	})
	if err := s.barrier(); err != nil {
		b.Fatal(err)
	}
	reportRate(b, s, start, syncs0)
}

// BenchmarkCheckStoreFiles checks the logs of a store holding 500 runs of 20 entries, one in
// eight with an 8 KiB output (about 0.5 MiB of value log): what Open adds before Badger opens
// the store (docs/state.md, "Damaged files"; Badger's copy verifies the tables as it opens
// them). Its MB/s is per MB of value log and memtable log.
func BenchmarkCheckStoreFiles(b *testing.B) {
	dir := b.TempDir()
	s := openStore(b, dir)
	ctx := context.Background()
	big := Entry{Type: NodeFinished, Node: "task.big", Status: StatusSucceeded,
		Output: json.RawMessage(`{"text":"` + strings.Repeat("x", 8<<10) + `"}`)}
	for r := range 500 {
		entries := []Entry{started("bench", "")}
		for range 19 {
			entries = append(entries, benchEntry())
		}
		if r%8 == 0 {
			entries = append(entries, big)
		}
		if err := s.Append(ctx, testID(r+1), false, entries...); err != nil {
			b.Fatal(err)
		}
	}
	closeStore(b, s)
	files, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, f := range files {
		if info, err := f.Info(); err == nil && (strings.HasSuffix(f.Name(), ".mem") || strings.HasSuffix(f.Name(), ".vlog")) {
			size += info.Size()
		}
	}
	b.SetBytes(size)
	b.ResetTimer()
	for b.Loop() {
		if err := checkStoreFiles(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLog journals a plugin's typical log line (the shell plugin's debug line of a call),
// one at a time, as a chain of plugin nodes does on the path from an answer to the next call.
func BenchmarkLog(b *testing.B) {
	s := openStore(b, b.TempDir())
	defer closeStore(b, s)
	id := testID(1)
	if err := s.Append(context.Background(), id, false, started("bench", "")); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		line := LogLine{Node: "task.t17", Attempt: 1, Level: "debug", Message: "exec /bin/true: exit code 0 after 1ms"}
		if err := s.Log(id, line); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.barrier(); err != nil {
		b.Fatal(err)
	}
}
