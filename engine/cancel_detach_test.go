package engine

import "testing"

// TestCancelAgainstDetach: a Cancel and the loop's decision to park are ordered. A Cancel that
// comes first keeps the loop (its stop is on its way); a loop that detached first makes the
// Cancel report that it could not reach the run, so Engine.Cancel cancels it in the store
// instead. Before, a Cancel between the loop's check and its exit was dropped, and the run
// stayed waiting (TestServeTokenScopes saw it under load).
func TestCancelAgainstDetach(t *testing.T) {
	parked := &Run{inbox: make(chan func(), 1), done: make(chan struct{})}
	if !parked.markDetached() {
		t.Fatal("a run without a cancel did not detach")
	}
	if parked.requestCancel() {
		t.Error("a cancel after the loop detached reported that it reached the run")
	}

	cancelled := &Run{inbox: make(chan func(), 1), done: make(chan struct{})}
	if !cancelled.requestCancel() {
		t.Fatal("a cancel of a running loop did not reach it")
	}
	if len(cancelled.inbox) != 1 {
		t.Fatal("the cancel posted no stop")
	}
	if cancelled.markDetached() {
		t.Error("the loop detached with a cancel's stop still in its inbox")
	}
	cancelled.stopping = "cancelled" // the loop processed the stop
	if !cancelled.markDetached() {
		t.Error("a stopped run could not detach")
	}
}
