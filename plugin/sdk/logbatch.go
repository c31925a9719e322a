package sdk

import (
	"fmt"
	"os"
	"sync"
	"time"

	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// Limits of a logBatch. A line waits at most batchWindow (or half the time the call's deadline
// leaves it, if less) for the call's answer; past that, or past batchBytes, what the batch kept
// goes through Host.Log, and every later line with it: a long call's lines reach the node's
// logs while it runs.
const (
	batchWindow = 50 * time.Millisecond
	batchBytes  = 64 << 10
)

// logBatch keeps the log lines of a call whose host takes them in its answer
// (ExecuteRequest.logs_in_response), so that a short call's lines cost no Host round trip
// each: a round trip is most of a quick call's cost.
type logBatch struct {
	window   time.Duration
	deadline time.Time                           // the call's; zero when none
	send     func(level Level, msg string) error // Host.Log

	// mu is held while kept lines are sent, so that a line logged meanwhile cannot overtake
	// them.
	mu    sync.Mutex
	lines []*pluginv1.LogLine
	size  int
	// sent: the kept lines went through Host.Log or into the answer; later lines go to send.
	sent  bool
	timer *time.Timer // started by the first line kept; flushes the batch when it fires
}

// newLogBatch returns a batch that keeps lines for at most window (batchWindow but in tests)
// and at most half the time deadline (zero: none) leaves when the line is logged.
func newLogBatch(window time.Duration, deadline time.Time, send func(Level, string) error) *logBatch {
	return &logBatch{window: window, deadline: deadline, send: send}
}

// log keeps a line for the answer, or sends it once the batch is flushed or when the
// deadline leaves no time to keep it.
func (b *logBatch) log(level Level, msg string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sent {
		return b.send(level, msg)
	}
	if b.timer == nil {
		window := b.window
		if !b.deadline.IsZero() {
			window = min(window, time.Until(b.deadline)/2)
		}
		if window <= 0 {
			b.sent = true
			return b.send(level, msg)
		}
		b.timer = time.AfterFunc(window, b.flush)
	}
	b.lines = append(b.lines, &pluginv1.LogLine{Level: string(level), Message: msg})
	if b.size += len(msg); b.size > batchBytes {
		b.flushLocked()
	}
	return nil
}

func (b *logBatch) flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
}

func (b *logBatch) flushLocked() {
	if b.sent {
		return
	}
	b.sent = true
	for _, l := range b.lines {
		if err := b.send(Level(l.Level), l.Message); err != nil {
			fmt.Fprintf(os.Stderr, "[%s] %s (not in the node's logs: %v)\n", l.Level, l.Message, err)
		}
	}
	b.lines = nil
}

// take ends the batch as the call answers and returns the lines it still keeps, for the
// answer. A line logged later (by a goroutine the handler left running) goes to Host.Log,
// which refuses it once the call is over, as it always did.
func (b *logBatch) take() []*pluginv1.LogLine {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.timer != nil {
		// A flush that fired already waits for mu, then finds the batch sent: nothing twice.
		b.timer.Stop()
	}
	lines := b.lines
	b.lines, b.sent = nil, true
	return lines
}
