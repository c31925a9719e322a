package engine

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"

	"github.com/fuscia/fuscia/engine/journal"
)

// lockedBuffer is a bytes.Buffer for a logger that several goroutines write to.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(l.b.Bytes()), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// TestRunLogLines: what a run logs names its execution and workflow (Run.logAt); a succeeded
// run's end is a debug line, a failed run's an info line.
func TestRunLogLines(t *testing.T) {
	var buf lockedBuffer
	te := newTestEnvWith(t, journal.Options{}, func(cfg *Config) {
		cfg.Logger = slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	ok := te.apply(`
workflow "fine" {}
task "a" {
  uses   = builtin.transform
  inputs = { n = 1 }
}
`, StartOptions{})
	wantRun(t, ok, journal.StatusSucceeded)
	failed := te.apply(`
workflow "broken" {}
task "a" {
  uses   = builtin.fail
  inputs = { message = "no" }
}
`, StartOptions{})
	wantRun(t, failed, journal.StatusFailed)
	var ends []map[string]any
	for _, l := range buf.lines(t) {
		if l["msg"] == "run finished" {
			ends = append(ends, l)
		}
	}
	if len(ends) != 1 {
		t.Fatalf("%d \"run finished\" lines at level info: %v; want the failed run's only", len(ends), ends)
	}
	if e := ends[0]; e["execution_id"] != failed.ID || e["workflow"] != "broken" || e["status"] != journal.StatusFailed || e["level"] != "INFO" {
		t.Errorf("the failed run's last line %v; want its execution_id %s, workflow broken, status failed, level INFO", e, failed.ID)
	}
}
