package journal

import (
	"context"
	"sync"
	"testing"
)

// TestConcurrentAppend appends from many goroutines to many runs, mixing durable and relaxed
// appends and log lines, then checks after a reopen that every run has all its entries, in
// order, with seqs 1..n.
func TestConcurrentAppend(t *testing.T) {
	const (
		runs       = 40
		perRun     = 3 // goroutines per run: appends to one run are serialized by the caller
		appends    = 30
		perAppend  = 3
		logsPerRun = 20
	)
	dir := t.TempDir()
	s := openStore(t, dir)
	ctx := context.Background()
	for r := range runs {
		if err := s.Append(ctx, testID(r), r%2 == 0, started("wf", "")); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, runs*perRun)
	for r := range runs {
		// One goroutine per run appends its entries in order; others write its log lines and
		// append to other runs at the same time.
		wg.Go(func() {
			for a := range appends {
				batch := make([]Entry, perAppend)
				for i := range batch {
					batch[i] = Entry{Type: AttemptStarted, Node: "task.a", Attempt: a*perAppend + i + 1}
				}
				if err := s.Append(ctx, testID(r), a%3 == 0, batch...); err != nil {
					errs <- err
					return
				}
			}
		})
		wg.Go(func() {
			for i := range logsPerRun {
				if err := s.Log(testID(r), LogLine{Node: "task.a", Level: "info", Attempt: i + 1}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	closeStore(t, s)

	s = openStore(t, dir)
	defer closeStore(t, s)
	for r := range runs {
		got := collectEntries(t, s, testID(r), 0)
		if len(got) != 1+appends*perAppend {
			t.Fatalf("run %d: %d entries, want %d", r, len(got), 1+appends*perAppend)
		}
		for i, e := range got {
			if e.Seq != uint64(i+1) {
				t.Fatalf("run %d: entry %d has seq %d", r, i, e.Seq)
			}
			if i > 0 && e.Attempt != i {
				t.Fatalf("run %d: entry %d is attempt %d: out of order", r, i, e.Attempt)
			}
		}
		n := 0
		err := s.Logs(testID(r), 0, func(l LogLine) error {
			n++
			if l.Seq != uint64(n) || l.Attempt != n {
				t.Fatalf("run %d: log line %d = %+v", r, n, l)
			}
			return nil
		})
		if err != nil || n != logsPerRun {
			t.Fatalf("run %d: %d log lines, err %v", r, n, err)
		}
	}
}

// TestGroupCommit checks that concurrent durable appends share fsyncs.
func TestGroupCommit(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer closeStore(t, s)
	ctx := context.Background()
	const runs, appends = 64, 20
	for r := range runs {
		if err := s.Append(ctx, testID(r), false, started("wf", "")); err != nil {
			t.Fatal(err)
		}
	}
	before := s.syncs.Load()
	var wg sync.WaitGroup
	for r := range runs {
		wg.Go(func() {
			for range appends {
				if err := s.Append(ctx, testID(r), true, Entry{Type: NodeStarted, Node: "join.x"}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	syncs := s.syncs.Load() - before
	t.Logf("%d durable appends, %d syncs", runs*appends, syncs)
	if syncs >= runs*appends {
		t.Errorf("%d syncs for %d concurrent durable appends: no group commit", syncs, runs*appends)
	}
}

// TestLargeBatch writes a batch larger than one Badger transaction takes.
func TestLargeBatch(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	ctx := context.Background()
	id := testID(1)
	if err := s.Append(ctx, id, false, started("wf", "")); err != nil {
		t.Fatal(err)
	}
	big := make([]Entry, 30000) // ~3 MB of entries, above maxBatchSize (15% of the memtable)
	for i := range big {
		big[i] = Entry{Type: AttemptContinued, Node: "task.loop", Reason: "padding padding padding padding"}
	}
	if err := s.Append(ctx, id, true, big...); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)
	s = openStore(t, dir)
	defer closeStore(t, s)
	if got := collectEntries(t, s, id, 0); len(got) != len(big)+1 {
		t.Errorf("%d entries, want %d", len(got), len(big)+1)
	}
}
