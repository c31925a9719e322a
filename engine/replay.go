package engine

import (
	"time"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/lang"
)

// Replayer turns a run's journal entries and log lines, in order, into the events the run
// reported live (`logs -follow -json` of a run another process runs). The journal is already
// scrubbed of secrets. Events of for_each items and loop iterations are left out, as live (a
// failed loop body node's node_finished excepted); they are counted in node_progress, as live.
type Replayer struct {
	id      string
	started map[string]time.Time // top-level nodes reported started, and when
	waiting map[string]bool      // top-level waits reported waiting
	// items are the top-level for_each tasks and loops started with a count, and the items or
	// iterations of each journaled final so far (an item journaled again after a resume
	// counts once).
	items map[string]*itemCount
}

// itemCount is a top-level aggregate's count: its items final so far, one bit each.
type itemCount struct {
	total, done int
	final       []uint64
}

// finish marks item i final and reports whether it was not already; an index outside the
// count is not counted.
func (c *itemCount) finish(i int) bool {
	if i < 0 || i >= c.total || c.final[i/64]&(1<<(i%64)) != 0 {
		return false
	}
	c.final[i/64] |= 1 << (i % 64)
	c.done++
	return true
}

// NewReplayer replays run id.
func NewReplayer(id string) *Replayer {
	return &Replayer{id: id, started: map[string]time.Time{}, waiting: map[string]bool{}, items: map[string]*itemCount{}}
}

// Entry returns the events entry e stands for (none, one, or a start and an end).
func (p *Replayer) Entry(e journal.Entry) []Event {
	base := Event{Timestamp: e.Time, ExecutionID: p.id, Node: e.Node, Kind: kindOf(e.Node)}
	top := len(e.Index) == 0
	switch e.Type {
	case journal.RunStarted:
		ev := Event{Type: EventExecutionStarted, Timestamp: e.Time, ExecutionID: p.id}
		if e.Run != nil {
			ev.Workflow = e.Run.Workflow
		}
		return []Event{ev}
	case journal.NodeStarted:
		if top && e.Total > 0 && p.items[e.Node] == nil {
			p.items[e.Node] = &itemCount{total: e.Total, final: make([]uint64, (e.Total+63)/64)}
		}
		if !top || p.isStarted(e.Node) {
			return nil
		}
		p.started[e.Node] = e.Time
		base.Type, base.Total = EventNodeStarted, e.Total
		return []Event{base}
	case journal.AttemptStarted:
		if !top {
			return nil
		}
		if _, ok := p.started[e.Node]; !ok {
			p.started[e.Node] = e.Time
		}
		base.Type, base.Attempt = EventNodeStarted, e.Attempt
		return []Event{base}
	case journal.AttemptFailed:
		if e.RetryAt.IsZero() {
			return nil
		}
		at := e.RetryAt
		base.Type, base.Index, base.Attempt, base.Error, base.RetryAt = EventNodeRetrying, e.Index, e.Attempt, e.Error, &at
		return []Event{base}
	case journal.NodeWaiting:
		if !top || p.waiting[e.Node] {
			// A resumed run journals its waits again; live, that is no new event either.
			return nil
		}
		p.waiting[e.Node] = true
		evs := p.startOf(base)
		base.Type, base.Reason, base.Message = EventNodeWaiting, e.WaitKind, e.Reason
		if !e.Deadline.IsZero() {
			d := e.Deadline
			base.Deadline = &d
		}
		return append(evs, base)
	case journal.NodeFinished:
		if c := p.items[e.Node]; c != nil && len(e.Index) == 1 {
			// An item of a top-level for_each task, or an iteration of a loop: live, one more
			// in node_progress, and no node_finished of its own (a loop's body nodes have
			// theirs).
			if !c.finish(e.Index[0]) {
				return nil
			}
			base.Type, base.Done, base.Total = EventNodeProgress, c.done, c.total
			return []Event{base}
		}
		if !top && e.Status != journal.StatusFailed {
			return nil
		}
		var evs []Event
		if top {
			// A node skipped or cancelled before it started reported no start live.
			if e.Status != journal.StatusSkipped && e.Status != journal.StatusCancelled {
				evs = p.startOf(base)
			}
			delete(p.waiting, e.Node)
		}
		base.Type, base.Index, base.Key = EventNodeFinished, e.Index, e.Key
		base.Status, base.Error, base.Reason, base.Attempt = e.Status, e.Error, e.Reason, e.Attempt
		if at, ok := p.started[e.Node]; ok && top {
			d := Duration(e.Time.Sub(at))
			base.Duration = &d
		}
		return append(evs, base)
	}
	return nil
}

// FinishedEvent is the execution_finished event of run x, which has finished, as the run reported
// it live (run.go): the event a rebuilt stream ends with. Its time is the run's end.
func FinishedEvent(x *journal.Execution) Event {
	ts := time.Now()
	if x.FinishedAt != nil {
		ts = *x.FinishedAt
	}
	return Event{Type: EventExecutionFinished, Timestamp: ts, ExecutionID: x.ID,
		Workflow: x.Workflow, Status: x.Status, Error: x.Error, Execution: x}
}

// Log returns the node_log event of line l.
func (p *Replayer) Log(l journal.LogLine) Event {
	return Event{Type: EventNodeLog, Timestamp: l.Time, ExecutionID: p.id, Node: l.Node, Kind: kindOf(l.Node),
		Index: l.Index, Attempt: l.Attempt, Level: l.Level, Message: l.Message}
}

func (p *Replayer) isStarted(node string) bool {
	_, ok := p.started[node]
	return ok
}

// startOf returns the node_started a node that journals no start of its own (a switch, a
// join, a wait) reported live, once.
func (p *Replayer) startOf(ev Event) []Event {
	if p.isStarted(ev.Node) {
		return nil
	}
	p.started[ev.Node] = ev.Timestamp
	ev.Type = EventNodeStarted
	return []Event{ev}
}

// kindOf is the kind of the node at address addr (its innermost part for a loop's body).
func kindOf(addr string) string {
	if a, ok := lang.ParseAddr(addr); ok {
		return string(a.Kind)
	}
	return ""
}
