package journal

import (
	"context"
	"testing"
	"time"
)

// TestLeadOnIdleStore: on an idle store a durable Append writes and syncs its own record (the
// writer's queue to the syncer is not used), one sync each; a request pending when it comes
// is written and synced with it (the leader takes the pending list); relaxed entries between
// durable ones keep their order; and everything is there, in order, after a reopen.
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
	// The first record of the segment wakes the writer to time its checkpoint: wait until it
	// has (it then goes idle), or it may hold the write role when the next Append comes and
	// that one is queued, rightly.
	deadline := time.Now().Add(30 * time.Second)
	for {
		s.roles.write.Lock()
		timed := s.roles.timed == s.cur
		s.roles.write.Unlock()
		if timed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the writer did not time the first segment's checkpoint within 30 s")
		}
		time.Sleep(time.Millisecond)
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

	// A request left pending without waking the writer (as one enqueued just before, whose
	// wake-up the writer has not acted on yet): the leader takes it, writes it before its own
	// record and syncs both at once.
	const digest = "sha256:lead"
	s.mu.Lock()
	s.reqNo++
	pend := &request{no: s.reqNo}
	pend.add(op{key: planKey(digest), value: []byte("plan")})
	s.pending = append(s.pending, pend)
	s.pendingBytes += pend.size
	s.mu.Unlock()
	q0, syncs0 = queued(), s.Syncs()
	// Nobody wakes the writer for these two unless the Append leads: bound the wait.
	actx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err = s.Append(actx, id, true, benchEntry())
	cancel()
	s.wakeWriter()
	if err != nil {
		t.Fatal(err)
	}
	if q := queued(); q != q0 {
		t.Errorf("the durable append was queued for the syncer; want it to lead")
	}
	if got := s.Syncs() - syncs0; got != 1 {
		t.Errorf("%d syncs for a pending request and a durable append, want 1", got)
	}
	if data, err := s.Plan(digest); err != nil || string(data) != "plan" {
		t.Errorf("the pending request is not readable once the leader returned: %q, %v", data, err)
	}

	for i := range n {
		if err := s.Append(ctx, id, false, Entry{Type: AttemptStarted, Node: "task.a", Attempt: i + 1}); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(ctx, id, true, benchEntry()); err != nil {
			t.Fatal(err)
		}
	}
	closeStore(t, s)

	s = openStore(t, dir)
	defer closeStore(t, s)
	got := collectEntries(t, s, id, 0)
	if len(got) != 2+3*n {
		t.Fatalf("%d entries after reopening, want %d", len(got), 2+3*n)
	}
	for i, e := range got {
		if e.Seq != uint64(i+1) {
			t.Fatalf("entry %d has seq %d", i, e.Seq)
		}
	}
	if data, err := s.Plan(digest); err != nil || string(data) != "plan" {
		t.Errorf("the pending request after reopening: %q, %v", data, err)
	}
}
