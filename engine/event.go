package engine

import (
	"encoding/json"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/outcome"
)

// EventType names a progress event. The names are docs/reference/cli.md's NDJSON `"type"`s.
type EventType string

// Events a run reports while it runs, in the order they can happen.
const (
	EventExecutionStarted  EventType = "execution_started"
	EventNodeStarted       EventType = "node_started"
	EventNodeProgress      EventType = "node_progress" // a for_each task or loop finished one more item
	EventNodeLog           EventType = "node_log"
	EventNodeWaiting       EventType = "node_waiting"
	EventNodeRetrying      EventType = "node_retrying"
	EventNodeFinished      EventType = "node_finished"
	EventExecutionFinished EventType = "execution_finished"
)

// Event is one line of `apply -json` and what the terminal progress is drawn from. Events of
// instances (for_each items, loop iterations and the nodes inside them) carry Index; a renderer
// that wants one line per node shows the events without Index and a bar from node_progress.
type Event struct {
	Type        EventType `json:"type"`
	Timestamp   time.Time `json:"@timestamp"`
	ExecutionID string    `json:"execution_id"`
	Workflow    string    `json:"workflow,omitempty"`

	Node  string          `json:"node,omitempty"`
	Kind  string          `json:"kind,omitempty"` // task, switch, join, loop, wait, call
	Index []int           `json:"index,omitempty"`
	Key   json.RawMessage `json:"key,omitempty"`

	Attempt  int            `json:"attempt,omitempty"`
	Status   string         `json:"status,omitempty"`
	Duration *Duration      `json:"duration,omitempty"`
	Error    *outcome.Error `json:"error,omitempty"`
	Reason   string         `json:"reason,omitempty"`
	RetryAt  *time.Time     `json:"retry_at,omitempty"`
	Deadline *time.Time     `json:"deadline,omitempty"`

	// Done and Total count the items or iterations of a for_each task or loop (node_started
	// gives Total, node_progress both).
	Done  int `json:"done,omitempty"`
	Total int `json:"total,omitempty"`

	Level   string `json:"level,omitempty"` // node_log
	Message string `json:"message,omitempty"`

	// Execution is the `show -json` object, on execution_finished.
	Execution *journal.Execution `json:"execution,omitempty"`
}

// Duration is a time span that prints as seconds in JSON (`"duration": 0.123`) and as a Go
// duration in text.
type Duration time.Duration

// MarshalJSON writes seconds with millisecond precision.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(float64(time.Duration(d).Round(time.Microsecond)) / float64(time.Second))
}

// UnmarshalJSON reads the seconds MarshalJSON writes: a client of serve's event stream decodes
// the events it renders.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return err
	}
	*d = Duration(time.Duration(secs * float64(time.Second)))
	return nil
}

func (d Duration) String() string {
	if time.Duration(d) < time.Millisecond {
		return time.Duration(d).Round(time.Microsecond).String()
	}
	return time.Duration(d).Round(time.Millisecond).String()
}
