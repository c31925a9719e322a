package journal

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/fuscia/fuscia/internal/outcome"
)

// Timeline is a run's instances in time, for a Gantt chart: when each started and ended, its
// attempts (a retry is a new one) and its waits, rebuilt from the times of its journal's
// entries. GET /v1/executions/{id}/timeline answers it.
type Timeline struct {
	ExecutionID string     `json:"execution_id"`
	Status      string     `json:"status"`
	StartedAt   time.Time  `json:"started_at"`
	FinishedAt  *time.Time `json:"finished_at"`
	// Nodes are the instances in the order of their first entry: a node's own instance (Index
	// null), a for_each task's items and a loop's iterations ([i]), a loop body's node in an
	// iteration ([i]).
	Nodes []*TimelineNode `json:"nodes"`
	// Truncated: the run has more than maxTimelineInstances instances; the ones after are left
	// out.
	Truncated bool `json:"truncated,omitempty"`
}

// TimelineNode is one instance of a node.
type TimelineNode struct {
	Node       string          `json:"node"`
	Index      []int           `json:"index"`
	Key        json.RawMessage `json:"key"`
	Status     string          `json:"status"`
	StartedAt  *time.Time      `json:"started_at"`
	FinishedAt *time.Time      `json:"finished_at"`
	Attempts   []AttemptSpan   `json:"attempts"`
	Waits      []WaitSpan      `json:"waits"`
}

// AttemptSpan is one attempt of a task instance. Status is running, succeeded, failed,
// retrying (it failed and the next attempt follows), interrupted (a shutdown or a crash cut it
// short; the next attempt runs it again), cancelled or skipped.
type AttemptSpan struct {
	Attempt    int            `json:"attempt"`
	StartedAt  time.Time      `json:"started_at"`
	FinishedAt *time.Time     `json:"finished_at"`
	Status     string         `json:"status"`
	Error      *outcome.Error `json:"error"`
}

// WaitSpan is a time a wait instance was parked: from node_waiting to its answer or its end.
type WaitSpan struct {
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
}

// Attempt statuses of a timeline besides the run and node statuses.
const (
	StatusRetrying     = "retrying"
	attemptInterrupted = "interrupted"
)

// maxTimelineInstances bounds the instances of a timeline: a for_each of a million items
// would make an answer no chart can draw.
const maxTimelineInstances = 10_000

// Timeline rebuilds run id's timeline (ErrNotFound when there is no such run).
func (s *Store) Timeline(id string) (*Timeline, error) {
	var tl *Timeline
	err := s.view(func(txn *badger.Txn) error {
		sum, err := s.getSummary(txn, id)
		if err != nil {
			return err
		}
		tl = &Timeline{ExecutionID: sum.ID, Status: sum.Status, StartedAt: sum.StartedAt, FinishedAt: sum.FinishedAt, Nodes: []*TimelineNode{}}
		byInst := map[string]*instSpans{}
		var order []*instSpans
		err = s.eachValue(txn, runJournalPrefix(id), 0, func(v []byte) error {
			var e Entry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("execution %s: decode entry: %w", id, err)
			}
			if e.Node == "" {
				return nil
			}
			k := instKey(e.Node, e.Index)
			in := byInst[k]
			if in == nil {
				if len(order) == maxTimelineInstances {
					tl.Truncated = true
					return nil
				}
				in = newInstSpans(e.Node, e.Index)
				byInst[k] = in
				order = append(order, in)
			}
			in.apply(&e)
			return nil
		})
		if err != nil {
			return err
		}
		for _, in := range order {
			in.end(sum.Status)
			tl.Nodes = append(tl.Nodes, &in.TimelineNode)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tl, nil
}

// instKey identifies an instance in a map: its node and index.
func instKey(node string, index []int) string {
	var b strings.Builder
	b.WriteString(node)
	for _, i := range index {
		b.WriteByte('[')
		b.WriteString(strconv.Itoa(i))
		b.WriteByte(']')
	}
	return b.String()
}

// instSpans is one instance as its entries build it up: its timeline, and what the node view
// (nodedetail.go) shows besides.
type instSpans struct {
	TimelineNode
	input, output json.RawMessage
	err           *outcome.Error
	reason        string
	childID       string
	answeredBy    string
	deadline      *time.Time
	total         int // NodeStarted's Total: the items or iterations of an aggregate or loop
}

func newInstSpans(node string, index []int) *instSpans {
	return &instSpans{TimelineNode: TimelineNode{Node: node, Index: slices.Clone(index), Status: StatusPending,
		Attempts: []AttemptSpan{}, Waits: []WaitSpan{}}}
}

// open is the attempt under way, nil when none is.
func (in *instSpans) open() *AttemptSpan {
	if n := len(in.Attempts); n > 0 && in.Attempts[n-1].FinishedAt == nil && in.Attempts[n-1].Status == StatusRunning {
		return &in.Attempts[n-1]
	}
	return nil
}

// closeAttempt ends the attempt under way, if any.
func (in *instSpans) closeAttempt(at time.Time, status string, err *outcome.Error) {
	if a := in.open(); a != nil {
		a.Status, a.Error = status, err
		if status != attemptInterrupted || !at.IsZero() {
			a.FinishedAt = timePtr(at)
		}
	}
}

// closeWait ends the wait under way, if any.
func (in *instSpans) closeWait(at time.Time) {
	if n := len(in.Waits); n > 0 && in.Waits[n-1].FinishedAt == nil {
		in.Waits[n-1].FinishedAt = timePtr(at)
	}
}

func (in *instSpans) started(at time.Time) {
	if in.StartedAt == nil {
		in.StartedAt = timePtr(at)
	}
}

// apply applies one of the instance's entries.
func (in *instSpans) apply(e *Entry) {
	if len(e.Key) > 0 {
		in.Key = e.Key
	}
	switch e.Type {
	case NodeStarted:
		in.Status = StatusRunning
		in.started(e.Time)
		if e.ChildID != "" {
			in.childID = e.ChildID
		}
		if e.Total > 0 {
			in.total = e.Total
		}
	case AttemptStarted:
		// An attempt still open was cut short by a crash: nothing journaled its end.
		in.closeAttempt(time.Time{}, attemptInterrupted, nil)
		in.Status = StatusRunning
		in.started(e.Time)
		in.Attempts = append(in.Attempts, AttemptSpan{Attempt: e.Attempt, StartedAt: e.Time, Status: StatusRunning})
		in.input = e.Input
	case AttemptFailed:
		in.closeAttempt(e.Time, StatusRetrying, e.Error)
		in.Status, in.err = StatusRetrying, e.Error
	case AttemptInterrupted:
		in.closeAttempt(e.Time, attemptInterrupted, e.Error)
		in.Status = StatusPending // nobody runs it until the run goes on
	case AttemptContinued:
		in.Status = StatusRunning
	case NodeWaiting:
		in.Status = StatusWaiting
		in.started(e.Time)
		if n := len(in.Waits); n == 0 || in.Waits[n-1].FinishedAt != nil {
			in.Waits = append(in.Waits, WaitSpan{StartedAt: e.Time})
		}
		in.deadline = nil
		if !e.Deadline.IsZero() {
			in.deadline = timePtr(e.Deadline)
		}
	case WaitResolved:
		in.closeWait(e.Time)
		if e.AnsweredBy != "" {
			in.answeredBy = e.AnsweredBy
		}
	case NodeFinished:
		if e.Status != "" {
			in.Status = e.Status
		}
		in.started(e.Time)
		in.FinishedAt = timePtr(e.Time)
		in.closeWait(e.Time)
		in.closeAttempt(e.Time, attemptStatus(e.Status), e.Error)
		in.output, in.err, in.reason, in.deadline = e.Output, e.Error, e.Reason, nil
	}
}

// attemptStatus is the status of the attempt that ended its instance with status.
func attemptStatus(status string) string {
	switch status {
	case StatusCompletedWithErrors, "":
		return StatusSucceeded
	}
	return status
}

// end closes what the run's status says cannot go on: an attempt still open in a run that is
// not running (it finished, or its process ended before it did) was cut short.
func (in *instSpans) end(runStatus string) {
	if runStatus != StatusRunning && runStatus != StatusWaiting {
		in.closeAttempt(time.Time{}, attemptInterrupted, nil)
	}
}
