package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/ristretto/v2/z"
	"github.com/oklog/ulid/v2"
)

// fillFinishedRuns makes a store in dir holding n finished runs, with the keys and values
// Append would write (summary, index keys, a run_started and a run_finished entry), written
// sorted straight into Badger's tables by its StreamWriter: a store of 100,000 runs in a few
// seconds, where Append, with its WAL, group commits and memtables, takes most of a minute.
// Run i is of workflow wf(i%10), started 100 ms after run i-1, under a ULID minted at its
// start; one in five failed or was cancelled.
func fillFinishedRuns(b *testing.B, dir string, base time.Time, n int) []string {
	b.Helper()
	statuses := []string{StatusSucceeded, StatusSucceeded, StatusSucceeded, StatusFailed, StatusCancelled}
	kvs := []*pb.KV{{Key: []byte(formatKey), Value: []byte(formatVersion)}}
	set := func(k, v []byte) { kvs = append(kvs, &pb.KV{Key: k, Value: v}) }
	encode := func(v any) []byte {
		data, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	ids := make([]string, n)
	for i := range n {
		at := base.Add(time.Duration(i) * 100 * time.Millisecond)
		id := ulid.MustNew(ulid.Timestamp(at), ulid.DefaultEntropy()).String()
		ids[i] = id
		end := at.Add(50 * time.Millisecond)
		sum := Summary{ID: id, Workflow: fmt.Sprintf("wf%d", i%10), Status: statuses[i%len(statuses)],
			Trigger: TriggerRef{Type: "webhook", Name: "in"}, StartedAt: at, FinishedAt: &end}
		set(seqKey(runJournalPrefix(id), 1), encode(Entry{Seq: 1, Type: RunStarted, Time: at,
			Run: &RunInfo{Workflow: sum.Workflow, Trigger: Trigger{Type: "webhook", Name: "in"}, Nodes: []string{"task.fetch"}}}))
		set(seqKey(runJournalPrefix(id), 2), encode(Entry{Seq: 2, Type: RunFinished, Time: end, Status: sum.Status}))
		set(runKey(id), encode(sum))
		for _, k := range indexKeys(&sum) {
			set(k, []byte{})
		}
	}
	slices.SortFunc(kvs, func(a, b *pb.KV) int { return bytes.Compare(a.Key, b.Key) })
	db, err := badger.Open(badgerOptions(dir, nil))
	if err != nil {
		b.Fatal(err)
	}
	sw := db.NewStreamWriter()
	if err := sw.Prepare(); err != nil {
		b.Fatal(err)
	}
	buf := z.NewBuffer(64<<20, "fill")
	defer func() { _ = buf.Release() }()
	for _, kv := range kvs {
		kv.Version = 1
		badger.KVToBuffer(kv, buf)
	}
	if err := sw.Write(buf); err != nil {
		b.Fatal(err)
	}
	if err := sw.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	return ids
}

// BenchmarkListPage100k reads pages of runs, as GET /v1/executions asks for them (a page of 50
// and one more to know whether a next page exists), from a store of 100,000 finished runs of 10
// workflows over about 3 hours: the first page, a workflow's, a status's, both, a start-time
// range in the middle, a page deep down a cursor, and a page of 500 (the largest).
// docs/performance.md ("Issue 18: web UI") has the results.
//
//	go test ./engine/journal -run '^$' -bench ListPage100k -benchtime 200x
func BenchmarkListPage100k(b *testing.B) {
	const runs = 100_000
	dir := b.TempDir()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	start := time.Now()
	ids := fillFinishedRuns(b, dir, base, runs)
	s := openStore(b, dir)
	defer closeStore(b, s)
	b.Logf("filled %d runs and opened the store in %s", runs, time.Since(start).Round(time.Millisecond))
	mid := base.Add(runs / 2 * 100 * time.Millisecond)
	for _, c := range []struct {
		name string
		f    Filter
	}{
		{"first", Filter{}},
		{"workflow", Filter{Workflow: "wf3"}},
		{"status", Filter{Status: StatusFailed}},
		{"workflow+status", Filter{Workflow: "wf3", Status: StatusFailed}},
		{"time-range", Filter{StartedAfter: mid, StartedBefore: mid.Add(time.Hour)}},
		{"time-range+workflow", Filter{Workflow: "wf7", StartedAfter: mid, StartedBefore: mid.Add(10 * time.Minute)}},
		{"deep-cursor", Filter{BeforeID: ids[10_000]}},
		{"page-500", Filter{Limit: 501}},
	} {
		if c.f.Limit == 0 {
			c.f.Limit = 51
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				got, err := s.List(c.f)
				if err != nil || len(got) != c.f.Limit {
					b.Fatalf("List(%+v): %d runs, %v", c.f, len(got), err)
				}
			}
		})
	}
}
