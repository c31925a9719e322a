package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/outcome"
)

func TestProgressPlain(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, false)
	d := engine.Duration(1500 * time.Millisecond)
	p.event(engine.Event{Type: engine.EventExecutionStarted, ExecutionID: "01X", Workflow: "w"})
	p.event(engine.Event{Type: engine.EventNodeStarted, Node: "task.items", Kind: "task", Total: 20})
	for i := 1; i <= 20; i++ {
		p.event(engine.Event{Type: engine.EventNodeProgress, Node: "task.items", Done: i, Total: 20})
	}
	p.event(engine.Event{Type: engine.EventNodeFinished, Node: "task.items", Status: "succeeded", Duration: &d})
	p.event(engine.Event{Type: engine.EventNodeFinished, Node: "task.b", Status: "skipped", Reason: "branch high not selected"})
	p.event(engine.Event{Type: engine.EventNodeFinished, Node: "task.c", Status: "failed", Attempt: 3, Duration: &d,
		Error: &outcome.Error{Kind: outcome.Fatal, Message: "HTTP 404"}})
	ex := &journal.Execution{Outputs: json.RawMessage(`{"n":3,"s":{"sensitive":true}}`)}
	p.event(engine.Event{Type: engine.EventExecutionFinished, ExecutionID: "01X", Status: "failed", Execution: ex,
		Error: &outcome.Error{Kind: outcome.Fatal, Message: "task.c failed: HTTP 404"}})
	got := out.String()
	for _, want := range []string{
		`Execution 01X started: workflow "w".`,
		"task.items: started (20 items)",
		"task.items: 2/20", "task.items: 10/20",
		"task.items: succeeded in 1.5s",
		"task.b: skipped (branch high not selected)",
		"task.c: failed in 1.5s after 3 attempts: fatal: HTTP 404",
		"Outputs:\n  n = 3\n  s = (sensitive)",
		"Execution 01X failed in ",
		": task.c failed: HTTP 404.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "20/20") || strings.Contains(got, "\x1b") {
		t.Errorf("plain output has a final bar line or terminal escapes:\n%s", got)
	}
}

func TestProgressJSON(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, true)
	p.event(engine.Event{Type: engine.EventNodeStarted, ExecutionID: "01X", Node: "task.a", Attempt: 1})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("lines: %q", lines)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &v); err != nil || v["type"] != "version" || v["ui"] != "1.0" || v["fuscia"] == nil {
		t.Fatalf("version line: %s", lines[0])
	}
	if err := json.Unmarshal([]byte(lines[1]), &v); err != nil || v["type"] != "node_started" || v["@timestamp"] == nil || v["node"] != "task.a" {
		t.Fatalf("event line: %s", lines[1])
	}
}

// TestProgressVersionDatedByFirstEvent: made at a run's first event (apply, resume), the version
// line is dated no later than that event: the stream's timestamps never go back.
func TestProgressVersionDatedByFirstEvent(t *testing.T) {
	var out bytes.Buffer
	first := engine.Event{Type: engine.EventExecutionStarted, ExecutionID: "01X", Timestamp: time.Now().Add(-time.Second)}
	p := newProgressFor(&out, true, first)
	p.event(first)
	var version, started struct {
		Timestamp time.Time `json:"@timestamp"`
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &version) != nil || json.Unmarshal([]byte(lines[1]), &started) != nil {
		t.Fatalf("lines: %q", lines)
	}
	if version.Timestamp.After(started.Timestamp) {
		t.Errorf("the version line (%s) is dated after the first event (%s)", version.Timestamp, started.Timestamp)
	}
}
