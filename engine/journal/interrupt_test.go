package journal

import (
	"context"
	"slices"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// TestInterruptRunning: the runs a process left running become interrupted (summary, status
// index, journal entry); waiting and finished runs keep their status, an index key that
// disagrees with its summary is not trusted, and resuming moves a run back to running.
func TestInterruptRunning(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := openStore(t, dir)
	running, waiting, done, child := testID(1), testID(2), testID(3), testID(4)
	for _, id := range []string{running, waiting, done} {
		if err := s.Append(ctx, id, true, started("wf", "", "task.a")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Append(ctx, child, true, started("sub", running, "task.b")); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, waiting, true, Entry{Type: RunStatus, Status: StatusWaiting}); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, done, true, Entry{Type: RunFinished, Status: StatusSucceeded}); err != nil {
		t.Fatal(err)
	}
	// A running index key left behind for the finished run (a write that failed half-way).
	if err := s.db.Update(func(txn *badger.Txn) error {
		return txn.Set(append(statusIndexPrefix(StatusRunning), done...), nil)
	}); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)

	s = openStore(t, dir)
	defer closeStore(t, s)
	ids, err := s.InterruptRunning()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{running, child}; !slices.Equal(ids, want) {
		t.Errorf("InterruptRunning = %v, want %v (oldest first)", ids, want)
	}
	for id, want := range map[string]string{running: StatusInterrupted, child: StatusInterrupted, waiting: StatusWaiting, done: StatusSucceeded} {
		sum, err := s.Summary(id)
		if err != nil || sum.Status != want {
			t.Errorf("summary of %s: %s, %v; want %s", id, sum.Status, err, want)
		}
	}
	listIDs := func(f Filter) []string {
		t.Helper()
		sums, err := s.List(f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, sum := range sums {
			out = append(out, sum.ID)
		}
		return out
	}
	if got, want := listIDs(Filter{Status: StatusInterrupted}), []string{child, running}; !slices.Equal(got, want) {
		t.Errorf("List(interrupted) = %v, want %v", got, want)
	}
	// The stale key of done is skipped: its summary says succeeded.
	if got := listIDs(Filter{Status: StatusRunning}); len(got) != 0 {
		t.Errorf("List(running) = %v, want none", got)
	}
	unfinished, err := s.Unfinished()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sum := range unfinished {
		got = append(got, sum.ID)
	}
	if want := []string{child, waiting, running}; !slices.Equal(got, want) {
		t.Errorf("Unfinished = %v, want %v", got, want)
	}
	x, err := s.Execution(running)
	if err != nil || x.Status != StatusInterrupted {
		t.Fatalf("Execution: %+v, %v; want interrupted", x, err)
	}
	entries := collectEntries(t, s, running, 0)
	if last := entries[len(entries)-1]; last.Type != RunStatus || last.Status != StatusInterrupted || last.Reason != interruptedReason {
		t.Errorf("last entry %+v; want run_status interrupted with its reason", last)
	}

	// Nothing left running: a second call moves nothing.
	if ids, err := s.InterruptRunning(); err != nil || len(ids) != 0 {
		t.Errorf("second InterruptRunning = %v, %v; want nothing", ids, err)
	}
	// Resuming journals running again.
	if err := s.Append(ctx, running, true, Entry{Type: RunStatus, Status: StatusRunning, Reason: "resumed"}); err != nil {
		t.Fatal(err)
	}
	if got, want := listIDs(Filter{Status: StatusInterrupted}), []string{child}; !slices.Equal(got, want) {
		t.Errorf("List(interrupted) after resume = %v, want %v", got, want)
	}
	if got, want := listIDs(Filter{Status: StatusRunning}), []string{running}; !slices.Equal(got, want) {
		t.Errorf("List(running) after resume = %v, want %v", got, want)
	}
}
