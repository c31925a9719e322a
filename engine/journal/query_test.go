package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// seedRuns journals runs 1..8:
//
//	id  workflow  parent  status
//	1   a                 succeeded, finished at t0+1h
//	2   a                 failed,    finished at t0+2h
//	3   b         1       succeeded, finished at t0+3h
//	4   b         1       running
//	5   a                 waiting (running → waiting)
//	6   b                 cancelled, finished at t0+6h
//	7   a         2       running
//	8   a                 completed_with_errors, finished at t0+8h
func seedRuns(t *testing.T, s *Store) time.Time {
	t.Helper()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	runs := []struct {
		n        int
		wf       string
		parent   int
		statuses []string
	}{
		{1, "a", 0, []string{StatusSucceeded}},
		{2, "a", 0, []string{StatusFailed}},
		{3, "b", 1, []string{StatusSucceeded}},
		{4, "b", 1, nil},
		{5, "a", 0, []string{StatusWaiting}},
		{6, "b", 0, []string{StatusWaiting, StatusRunning, StatusCancelled}},
		{7, "a", 2, nil},
		{8, "a", 0, []string{StatusCompletedWithErrors}},
	}
	ctx := context.Background()
	for _, r := range runs {
		parent := ""
		if r.parent > 0 {
			parent = testID(r.parent)
		}
		st := started(r.wf, parent)
		st.Time = t0.Add(time.Duration(r.n) * time.Minute)
		entries := []Entry{st}
		for _, status := range r.statuses {
			e := Entry{Type: RunStatus, Status: status}
			if Finished(status) {
				e = Entry{Type: RunFinished, Status: status, Time: t0.Add(time.Duration(r.n) * time.Hour)}
			}
			entries = append(entries, e)
		}
		// Status changes in separate appends too, to move index keys across batches.
		if err := s.Append(ctx, testID(r.n), r.n%2 == 0, entries[0]); err != nil {
			t.Fatal(err)
		}
		for _, e := range entries[1:] {
			if err := s.Append(ctx, testID(r.n), false, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.barrier(); err != nil {
		t.Fatal(err)
	}
	return t0
}

func ids(sums []Summary) []int {
	out := []int{}
	for _, s := range sums {
		for n := range 100 {
			if testID(n) == s.ID {
				out = append(out, n)
			}
		}
	}
	return out
}

func TestList(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer closeStore(t, s)
	t0 := seedRuns(t, s)
	tests := []struct {
		name string
		f    Filter
		want []int
	}{
		{"all", Filter{}, []int{8, 7, 6, 5, 4, 3, 2, 1}},
		{"limit", Filter{Limit: 3}, []int{8, 7, 6}},
		{"workflow", Filter{Workflow: "a"}, []int{8, 7, 5, 2, 1}},
		{"workflow limit", Filter{Workflow: "a", Limit: 2}, []int{8, 7}},
		{"status running", Filter{Status: StatusRunning}, []int{7, 4}},
		{"status waiting", Filter{Status: StatusWaiting}, []int{5}},
		{"status succeeded", Filter{Status: StatusSucceeded}, []int{3, 1}},
		{"status cancelled", Filter{Status: StatusCancelled}, []int{6}},
		{"workflow and status", Filter{Workflow: "b", Status: StatusSucceeded}, []int{3}},
		{"parent", Filter{Parent: testID(1)}, []int{4, 3}},
		{"parent and status", Filter{Parent: testID(1), Status: StatusRunning}, []int{4}},
		{"completed before", Filter{CompletedBefore: t0.Add(6 * time.Hour)}, []int{3, 2, 1}},
		{"completed before, inclusive end", Filter{CompletedBefore: t0.Add(6*time.Hour + 1)}, []int{6, 3, 2, 1}},
		{"completed before limit", Filter{CompletedBefore: t0.Add(100 * time.Hour), Limit: 2}, []int{8, 6}},
		{"completed before and workflow", Filter{Workflow: "a", CompletedBefore: t0.Add(100 * time.Hour)}, []int{8, 2, 1}},
		{"nothing", Filter{Workflow: "zzz"}, []int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.List(tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), tt.want) {
				t.Errorf("List(%+v) = %v, want %v", tt.f, ids(got), tt.want)
			}
		})
	}
	got, err := s.Unfinished()
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{7, 5, 4}; !slices.Equal(ids(got), want) {
		t.Errorf("Unfinished = %v, want %v", ids(got), want)
	}
	sum, err := s.Summary(testID(6))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != StatusCancelled || !sum.FinishedAt.Equal(t0.Add(6*time.Hour)) ||
		!sum.StartedAt.Equal(t0.Add(6*time.Minute)) || sum.Trigger.Name != "cli" {
		t.Errorf("summary = %+v", sum)
	}
	if _, err := s.Summary(testID(99)); !errors.Is(err, ErrNotFound) {
		t.Errorf("Summary of an unknown id = %v", err)
	}
	for _, call := range []func() error{
		func() error { return s.Entries(testID(99), 0, func(Entry) error { return nil }) },
		func() error { return s.Logs(testID(99), 0, func(LogLine) error { return nil }) },
		func() error { _, err := s.Execution(testID(99)); return err },
	} {
		if err := call(); !errors.Is(err, ErrNotFound) {
			t.Errorf("read of an unknown id = %v", err)
		}
	}
}

// dumpKeys lists every key of the store in dir.
func dumpKeys(t *testing.T, dir string) [][]byte {
	t.Helper()
	db, err := badger.Open(badgerOptions(dir, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var keys [][]byte
	err = db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			keys = append(keys, it.Item().KeyCopy(nil))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func TestDelete(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	seedRuns(t, s)
	for _, n := range []int{3, 6} {
		if err := s.Log(testID(n), LogLine{Node: "task.a", Message: "hi"}); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(context.Background(), testID(n), false, Entry{Type: AttemptStarted, Node: "task.a", Attempt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete(testID(3), testID(6), testID(99)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Summary(testID(3)); !errors.Is(err, ErrNotFound) {
		t.Errorf("Summary after Delete = %v", err)
	}
	got, err := s.List(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{8, 7, 5, 4, 2, 1}; !slices.Equal(ids(got), want) {
		t.Errorf("List after Delete = %v, want %v", ids(got), want)
	}
	closeStore(t, s)

	keys := dumpKeys(t, dir)
	kept := map[int]int{}
	for _, k := range keys {
		for _, gone := range []int{3, 6} {
			if bytes.Contains(k, []byte(testID(gone))) {
				t.Errorf("key %q of deleted run %d remains", k, gone)
			}
		}
		for n := 1; n <= 8; n++ {
			if bytes.Contains(k, []byte(testID(n))) {
				kept[n]++
			}
		}
	}
	// Run 1: r/, j/ ×2, x/w, x/s, x/f, x/o (its id's time is not its start's: testID), and run
	// 4's x/p/<1>\x00<4>; run 4: r/, j/, x/w, x/s, x/p, x/o.
	if kept[1] != 8 || kept[4] != 6 {
		t.Errorf("keys kept per run: %v", kept)
	}
}

// TestResolveIDAmbiguousNamesNone: an ambiguous prefix says how many runs match, never which:
// a prefix lookup must not be a way to learn other runs' ids.
func TestResolveIDAmbiguousNamesNone(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer closeStore(t, s)
	ctx := context.Background()
	ids := []string{"01HZBBBBBA0000000000000001", "01HZBBBBBB0000000000000002", "01HZBBBBBC0000000000000003"}
	for _, id := range ids {
		if err := s.Append(ctx, id, false, started("wf", "")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.barrier(); err != nil {
		t.Fatal(err)
	}
	_, err := s.ResolveID("01HZBBBBB")
	if !errors.Is(err, ErrAmbiguous) {
		t.Fatalf("ResolveID = %v, want ErrAmbiguous", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "3 executions") || !strings.Contains(msg, "longer prefix") {
		t.Errorf("the error does not say how many match and what to do: %s", msg)
	}
	for _, id := range ids {
		// Not even a part longer than the prefix given.
		if strings.Contains(msg, id[:10]) {
			t.Errorf("the error names run %s: %s", id, msg)
		}
	}
	// Past the bound the count stops.
	for i := range maxAmbiguousCount + 1 {
		if err := s.Append(ctx, fmt.Sprintf("01HZCC%020d", i), false, started("wf", "")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.barrier(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ResolveID("01HZCC"); !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), fmt.Sprintf("more than %d executions", maxAmbiguousCount)) {
		t.Errorf("ResolveID over the bound = %v", err)
	}
}

func TestResolveID(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer closeStore(t, s)
	ctx := context.Background()
	for _, id := range []string{"01HZAAAAAA0000000000000001", "01HZAAAAAB0000000000000002", "01HZAAAAAB0000000000000003"} {
		if err := s.Append(ctx, id, false, started("wf", "")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.barrier(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ref     string
		want    string
		wantErr error
	}{
		{"01HZAAAAAB0000000000000002", "01HZAAAAAB0000000000000002", nil},
		{"01HZAAAAAA", "01HZAAAAAA0000000000000001", nil},
		{"01hzaaaaaa", "01HZAAAAAA0000000000000001", nil},
		{"01HZAAAAAB00000000000000", "", ErrAmbiguous},
		{"01HZAA", "", ErrAmbiguous},
		{"01HZA", "", ErrNotFound}, // too short
		{"01HZAAAAAC", "", ErrNotFound},
		{"", "", ErrNotFound},
		{"01HZ/A", "", ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			got, err := s.ResolveID(tt.ref)
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Errorf("ResolveID(%q) = %q, %v; want %q, %v", tt.ref, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
