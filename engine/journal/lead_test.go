package journal

import (
	"context"
	"testing"
	"time"
)

// TestLeadOnIdleStore: on an idle store a durable Append writes and syncs its own record (the
// writer's queue to the syncer is not used), one sync each; a relaxed entry appended just
// before a durable one is covered by the same sync, whether the leader took it from the
// pending list or from the syncer's group; and everything is there, in order, after a reopen.
func TestLeadOnIdleStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := open(dir, Options{}, walConfig{segmentSize: defaultSegmentSize, checkpointEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	id := testID(1)
	if err := s.Append(ctx, id, true, started("wf", "")); err != nil {
		t.Fatal(err)
	}
	queued := func() uint64 {
		s.roles.write.Lock()
		defer s.roles.write.Unlock()
		return s.roles.queued
	}
	const n = 20
	q0, syncs0 := queued(), s.Syncs()
	for range n {
		if err := s.Append(ctx, id, true, benchEntry()); err != nil {
			t.Fatal(err)
		}
	}
	if q := queued(); q != q0 {
		t.Errorf("%d of %d durable appends on an idle store were queued for the syncer; want none", q-q0, n)
	}
	if got := s.Syncs() - syncs0; got != n {
		t.Errorf("%d syncs for %d durable appends, want %d", got, n, n)
	}

	syncs0 = s.Syncs()
	for i := range n {
		if err := s.Append(ctx, id, false, Entry{Type: AttemptStarted, Node: "task.a", Attempt: i + 1}); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(ctx, id, true, benchEntry()); err != nil {
			t.Fatal(err)
		}
		before := s.Syncs()
		if err := s.Sync(ctx, id); err != nil {
			t.Fatal(err)
		}
		if s.Syncs() != before {
			t.Fatalf("pair %d: the relaxed entry before a durable one was not synced with it", i)
		}
	}
	if got := s.Syncs() - syncs0; got > n {
		t.Errorf("%d syncs for %d relaxed-then-durable pairs, want at most %d", got, n, n)
	}
	closeStore(t, s)

	s = openStore(t, dir)
	defer closeStore(t, s)
	got := collectEntries(t, s, id, 0)
	if len(got) != 1+3*n {
		t.Fatalf("%d entries after reopening, want %d", len(got), 1+3*n)
	}
	for i, e := range got {
		if e.Seq != uint64(i+1) {
			t.Fatalf("entry %d has seq %d", i, e.Seq)
		}
	}
}
