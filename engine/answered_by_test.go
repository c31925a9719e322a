package engine

import (
	"context"
	"testing"

	"github.com/fuscia/fuscia/engine/journal"
)

// TestSignalRecordsWhoAnswered: who answered a wait (AnsweredBy of the signal's context) is
// journaled with the answer and shown on the wait's node, whether the run was in memory (the
// loop journals it) or parked (the answer is journaled for the next resume).
func TestSignalRecordsWhoAnswered(t *testing.T) {
	t.Run("active run", func(t *testing.T) {
		te := newTestEnv(t)
		r := te.start(approvalFlow, StartOptions{})
		te.waitParked(r)
		if err := r.Signal(WithAnsweredBy(context.Background(), "ci-bot"), "wait.approve", nil, false); err != nil {
			t.Fatal(err)
		}
		ex := te.wait(r)
		wantRun(t, ex, journal.StatusSucceeded)
		if got := node(t, ex, "wait.approve").AnsweredBy; got != "ci-bot" {
			t.Fatalf("answered_by %q, want ci-bot", got)
		}
	})
	t.Run("parked run", func(t *testing.T) {
		te, ended := serveEnv(t)
		r := te.start(approvalFlow, StartOptions{})
		endedRun(t, ended)
		queued, err := te.engine.Signal(WithAnsweredBy(context.Background(), "release-manager"), r.ID(), "approve", nil, true)
		if err != nil || !queued {
			t.Fatalf("signal: queued %v, %v", queued, err)
		}
		ex, err := te.store.Execution(r.ID())
		if err != nil {
			t.Fatal(err)
		}
		if got := node(t, ex, "wait.approve").AnsweredBy; got != "release-manager" {
			t.Fatalf("answered_by before the resume %q, want release-manager", got)
		}
		ex = te.resume(r.ID())
		wantRun(t, ex, journal.StatusFailed)
		if n := node(t, ex, "wait.approve"); n.AnsweredBy != "release-manager" || n.Error == nil || n.Error.Kind != "rejected" {
			t.Fatalf("after the resume: %+v, want rejected, answered by release-manager", n)
		}
	})
	t.Run("nobody said", func(t *testing.T) {
		te := newTestEnv(t)
		r := te.start(approvalFlow, StartOptions{})
		te.waitParked(r)
		if err := r.Signal(context.Background(), "approve", nil, false); err != nil {
			t.Fatal(err)
		}
		if got := node(t, te.wait(r), "wait.approve").AnsweredBy; got != "" {
			t.Fatalf("answered_by %q without WithAnsweredBy, want none", got)
		}
	})
}
