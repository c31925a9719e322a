package serve

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/local"
	"github.com/fuscia/fuscia/internal/syncbuf"
)

func TestRetentionInterval(t *testing.T) {
	cases := []struct{ retain, want time.Duration }{
		{time.Second, time.Second},
		{5 * time.Second, time.Second},
		{10 * time.Second, time.Second},
		{30 * time.Second, 3 * time.Second},
		{time.Hour, 6 * time.Minute},
		{100 * time.Minute, 10 * time.Minute},
		{720 * time.Hour, 10 * time.Minute},
	}
	for _, tc := range cases {
		if got := retentionInterval(tc.retain); got != tc.want {
			t.Errorf("retentionInterval(%s) = %s, want %s", tc.retain, got, tc.want)
		}
	}
}

// TestRetentionPasses: a pass runs at start with the cutoff Now - Retain, then again every
// interval; each logs what it pruned (or why it failed); Stop ends them; no Retain, no pass.
func TestRetentionPasses(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	calls := make(chan time.Time, 16)
	var fail sync.Once
	logs := &syncbuf.Buffer{}
	s := New(Config{
		Retain: 2 * time.Second, Now: func() time.Time { return now },
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Prune: func(ctx context.Context, before time.Time) (local.Pruned, error) {
			calls <- before
			var err error
			fail.Do(func() { err = errors.New("disk on fire") }) // the first pass fails
			return local.Pruned{ExecutionIDs: []string{"01RUNA", "01RUNB"}, Artifacts: artifact.Freed{Artifacts: 3, Bytes: 4096}}, err
		},
	})
	s.startRetention()
	for i := range 2 {
		select {
		case before := <-calls:
			if want := now.Add(-2 * time.Second); !before.Equal(want) {
				t.Errorf("pass %d: cutoff %s, want %s", i, before, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no pass %d within 30s", i)
		}
	}
	s.cancel()
	s.bg.Wait()
	out := logs.String()
	for _, want := range []string{
		`msg="retention pass failed; the next pass tries again"`, "disk on fire",
		`msg="retention pass pruned executions"`, "executions=2", "artifacts=3", "bytes_freed=4096",
		"execution_ids=\"[01RUNA 01RUNB]\"", "completed_before=2030-01-02T03:04:03Z",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the log has no %q:\n%s", want, out)
		}
	}

	off := New(Config{Prune: func(context.Context, time.Time) (local.Pruned, error) {
		t.Error("a pass without Retain")
		return local.Pruned{}, nil
	}})
	off.startRetention()
	off.cancel()
	off.bg.Wait()
}
