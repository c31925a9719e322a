package engine

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/syncbuf"
)

// logLines decodes the JSON log lines written to buf.
func logLines(t *testing.T, buf *syncbuf.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// TestRunLogLines: what a run logs names its execution and workflow (Run.logAt); a succeeded
// run's end is a debug line, a failed run's an info line.
func TestRunLogLines(t *testing.T) {
	var buf syncbuf.Buffer
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
	for _, l := range logLines(t, &buf) {
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
