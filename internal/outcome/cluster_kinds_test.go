package outcome_test

import (
	"strings"
	"testing"

	"github.com/fuscia/fuscia/internal/outcome"
)

// TestClusterKinds: the kinds of attempts that run on other machines. plugin_missing is
// retried (another worker of the pool may have the plugin); worker_lost is final (the attempt
// was delivered -max-deliver times); attempt_interrupted is not a failure the retry block
// decides on (the engine runs the next attempt itself), so Decide never retries it.
func TestClusterKinds(t *testing.T) {
	wire := map[outcome.Kind]string{
		outcome.AttemptInterrupted: "attempt_interrupted",
		outcome.WorkerLost:         "worker_lost",
		outcome.PluginMissing:      "plugin_missing",
	}
	for k, s := range wire {
		if string(k) != s {
			t.Errorf("kind %q, want %q on the wire", k, s)
		}
	}
	retried := map[outcome.Kind]bool{outcome.PluginMissing: true, outcome.WorkerLost: false, outcome.AttemptInterrupted: false}
	p := outcome.Policy{Attempts: 3, Backoff: "fixed", InitialDelay: 10}
	for k, want := range retried {
		if got := k.Retried(); got != want {
			t.Errorf("%s.Retried() = %v, want %v", k, got, want)
		}
		d := outcome.Decide(outcome.Fail(k, "on worker w1"), p, 1, 0)
		wantVerdict := outcome.Failed
		if want {
			wantVerdict = outcome.Retry
		}
		if d.Verdict != wantVerdict || d.Err == nil || d.Err.Kind != k || d.Err.Message != "on worker w1" {
			t.Errorf("Decide(%s, attempt 1 of 3) = %+v, want verdict %v with the error", k, d, wantVerdict)
		}
		// The last attempt allowed ends the node, whatever the kind.
		if d := outcome.Decide(outcome.Fail(k, "x"), p, 3, 0); d.Verdict != outcome.Failed {
			t.Errorf("Decide(%s, attempt 3 of 3) = %+v, want failed", k, d)
		}
	}
}

// TestTasksCannotReturnClusterKinds: a component or plugin cannot answer with the kinds
// that the dispatcher alone decides (an attempt_interrupted result would make the engine run
// the task again without a bound).
func TestTasksCannotReturnClusterKinds(t *testing.T) {
	for _, k := range []string{"attempt_interrupted", "worker_lost", "plugin_missing"} {
		_, err := outcome.Parse([]byte(`{"type": "error", "kind": "` + k + `", "message": "m"}`))
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("Parse of a task's %s result: %v, want an error naming the kind", k, err)
		}
	}
}
