package testfile

import (
	"slices"
	"testing"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/outcome"
)

// TestRunStatusesMatchJournal keeps the copy of the run statuses equal to the journal's final
// statuses: a status added there must be allowed in expect_status.
func TestRunStatusesMatchJournal(t *testing.T) {
	journalFinal := []string{journal.StatusSucceeded, journal.StatusFailed, journal.StatusCompletedWithErrors,
		journal.StatusCancelled, journal.StatusTimedOut}
	for _, s := range journalFinal {
		if !slices.Contains(runStatuses, s) {
			t.Errorf("the journal's final status %q is missing from runStatuses", s)
		}
	}
	for _, s := range append(runStatuses, journal.UnfinishedStatuses()...) {
		if journal.Finished(s) != slices.Contains(runStatuses, s) {
			t.Errorf("status %q: journal.Finished = %v, but runStatuses disagrees", s, journal.Finished(s))
		}
	}
	if len(runStatuses) != len(journalFinal) {
		t.Errorf("runStatuses = %q, want the journal's %q", runStatuses, journalFinal)
	}
}

// TestErrorKinds: a mock may fail with the kinds a task returns, and none that only the engine
// produces.
func TestErrorKinds(t *testing.T) {
	for _, k := range []outcome.Kind{outcome.Retryable, outcome.Fatal, outcome.Validation} {
		if !slices.Contains(errorKinds, k) {
			t.Errorf("%s is a kind a task returns; mocks must allow it", k)
		}
		if err := outcome.Fail(k, "x").Check(); err != nil {
			t.Errorf("outcome rejects %s: %v", k, err)
		}
	}
	for _, k := range []outcome.Kind{outcome.Cancelled, outcome.Rejected, outcome.AttemptInterrupted, outcome.WorkerLost, outcome.PluginMissing} {
		if slices.Contains(errorKinds, k) {
			t.Errorf("%s describes the engine, not a task; a mock cannot cause it", k)
		}
	}
	got := ErrorKinds()
	got[0] = "changed"
	if errorKinds[0] == "changed" {
		t.Error("ErrorKinds returns the package's own slice")
	}
}
