package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/local"
)

// maxPlanBytes bounds the body of POST /v1/apply: a plan holds the workflow's sources and
// variable values.
const maxPlanBytes = 64 << 20

// ApplyRequest is the body of POST /v1/apply: what `fuscia apply` sends when serve owns the
// store, instead of running the plan itself.
type ApplyRequest struct {
	Plan        []byte          `json:"plan"` // plan.Encode's bytes (base64 in JSON)
	Payload     json.RawMessage `json:"payload,omitempty"`
	Parallelism int             `json:"parallelism,omitempty"`
}

// applyPlan runs a plan the CLI planned and streams the run's events, NDJSON as `apply -json`
// prints them, until it ends. A run that parks at a wait and is resumed here goes on reporting
// to the stream (Server.follow); its last line is execution_finished. A client that
// goes away before the end (Ctrl-C) cancels the run, as a local apply would. Only the unix
// socket takes it, whatever the token on the TCP listener: a plan is code to run on serve's
// machine, which only its user may send.
func (s *Server) applyPlan(w http.ResponseWriter, r *http.Request) {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); !ok || a.Network() != "unix" {
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "plans are only run for the CLI, on the unix socket", "code": "forbidden"})
		return
	}
	var req ApplyRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxPlanBytes)).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "the body is not {\"plan\", \"payload\", \"parallelism\"}: " + err.Error(), "code": "invalid"})
		return
	}
	prog, err := engine.ProgramFromPlan(req.Plan)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error(), "code": "invalid"})
		return
	}
	events := &eventQueue{ready: make(chan struct{}, 1)}
	// The stream follows the run's resumed runs from just after Start: a run parks only with a
	// second or more to its next deadline, or at a wait for a signal, which comes later.
	run, err := s.eng.Start(context.Background(), prog, engine.StartOptions{
		Trigger:     journal.Trigger{Payload: req.Payload},
		Parallelism: req.Parallelism,
		Observer:    events.push,
	})
	var secretErr *engine.SecretError
	switch {
	case errors.Is(err, engine.ErrDraining):
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error(), "code": "stopping"})
		return
	case errors.As(err, &secretErr):
		// Input the run needs and serve's environment lacks: the CLI shows it at the block.
		writeJSON(w, http.StatusBadRequest, local.SecretErrorBody(secretErr))
		return
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error(), "code": "internal"})
		return
	}
	s.logger.Debug("run started", "execution_id", run.ID(), "workflow", prog.Workflow.Name, "trigger", "apply")
	defer s.follow(run.ID(), events)()
	ended, stop := s.awaitEnd(run.ID())
	defer stop()
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	var seen resumedEvents
	send := func(evs []engine.Event) bool {
		for _, ev := range evs {
			if !seen.news(&ev) {
				continue
			}
			if enc.Encode(ev) != nil {
				return false
			}
			if ev.Type == engine.EventExecutionFinished {
				return false
			}
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	for {
		select {
		case <-events.ready:
			if !send(events.take()) {
				return
			}
		case <-ended:
			if !send(events.take()) {
				return
			}
			// It finished without its execution_finished reaching the stream (resumed by
			// another path, say); the journal has the execution.
			if ex, err := s.store.Execution(run.ID()); err == nil {
				send([]engine.Event{{Type: engine.EventExecutionFinished, Timestamp: finishedAt(ex), ExecutionID: ex.ID,
					Workflow: ex.Workflow, Status: ex.Status, Error: ex.Error, Execution: ex}})
			}
			return
		case <-r.Context().Done():
			if err := s.eng.Cancel(context.Background(), run.ID()); err != nil && !errors.Is(err, engine.ErrFinished) {
				s.logger.Warn("the run of a CLI that went away could not be cancelled", "execution_id", run.ID(), "error", err)
			}
			return
		case <-s.ctx.Done():
			// Shutting down: the run is interrupted and resumes at the next start; the CLI
			// sees the stream end without execution_finished.
			return
		}
	}
}

// resumedEvents tells a resumed run's events that are news to a stream that followed the run
// from its start from those that are not: a resumed run reports the nodes it restored as
// finished, and its waits as started and waiting again, as `fuscia resume` shows them.
// A resumed run also measures a node's duration from its resume; the stream measures it from
// the node's first node_started it sent, as a run that never parked does.
type resumedEvents struct {
	finished map[string]bool      // node and index of every node_finished sent
	waiting  map[string]bool      // waits reported waiting and not finished
	started  map[string]time.Time // when each node_started sent first said the node started
}

func (r *resumedEvents) news(ev *engine.Event) bool {
	if r.finished == nil {
		r.finished, r.waiting, r.started = map[string]bool{}, map[string]bool{}, map[string]time.Time{}
	}
	key := ev.Node + fmt.Sprint(ev.Index)
	switch ev.Type {
	case engine.EventNodeFinished:
		if r.finished[key] {
			return false
		}
		r.finished[key] = true
		delete(r.waiting, key)
		if at, ok := r.started[key]; ok && ev.Duration != nil {
			if d := engine.Duration(ev.Timestamp.Sub(at)); d > *ev.Duration {
				ev.Duration = &d
			}
		}
	case engine.EventNodeStarted:
		if r.waiting[key] {
			return false
		}
		if _, ok := r.started[key]; !ok {
			r.started[key] = ev.Timestamp
		}
	case engine.EventNodeWaiting:
		if r.waiting[key] {
			return false
		}
		r.waiting[key] = true
	}
	return true
}

func finishedAt(ex *journal.Execution) (t time.Time) {
	if ex.FinishedAt != nil {
		return *ex.FinishedAt
	}
	return time.Now()
}

// eventQueue holds a run's events for the stream: the engine's observer must not block on a
// slow client, and no event may be dropped.
type eventQueue struct {
	mu    sync.Mutex
	evs   []engine.Event
	ready chan struct{} // holds a token while evs is not empty
}

func (q *eventQueue) push(ev engine.Event) {
	q.mu.Lock()
	q.evs = append(q.evs, ev)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *eventQueue) take() []engine.Event {
	q.mu.Lock()
	defer q.mu.Unlock()
	evs := q.evs
	q.evs = nil
	return evs
}
