package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
)

// waitState is a parked wait.
type waitState struct {
	deadline time.Time // zero: none (an approval or callback without timeout)
	p        *parked
	message  string
	timer    Timer // fires at deadline; nil until armed
	// journaling is set while the node_waiting entry is on its way to the journal; an end
	// that comes meanwhile (a cancellation) waits in ended for it, so that its node_finished
	// entry follows the node_waiting one and the record does not read back as waiting.
	journaling bool
	ended      func()
}

// stopTimer disarms the wait's deadline timer; the loop no longer waits for it.
func (r *Run) stopTimer(ws *waitState) {
	if ws.timer != nil && ws.timer.Stop() {
		r.inflight--
		r.armedWaits--
	}
	ws.timer = nil
}

// startWait parks a wait node until its time, or until a signal answers it.
func (r *Run) startWait(ns *nodeState) {
	ns.status = journal.StatusWaiting
	spec := ns.n.Wait
	ws := &waitState{}
	ns.wait = ws
	now := r.e.now()
	switch spec.Kind {
	case lang.WaitDuration:
		ws.deadline = now.Add(spec.Duration)
	case lang.WaitUntil:
		ws.deadline = spec.Until
	default:
		if spec.WaitTimeout > 0 {
			ws.deadline = now.Add(spec.WaitTimeout)
		}
		if spec.Message != nil {
			if v, err := ns.s.eval(spec.Message, cty.NilVal); err == nil {
				if uv, _ := v.Unmark(); uv.Type() == cty.String && !uv.IsNull() {
					ws.message = uv.AsString()
				}
			}
		}
	}
	if rp := r.replayed(ns, nil); rp != nil {
		if rp.resolved {
			// A signal answered the wait before the crash: its answer stands.
			if rp.rejected {
				r.finishNode(ns, journal.StatusFailed, nullValue, outcome.Errorf(outcome.Rejected, "%s was rejected", ns.addr), "")
				return
			}
			out := cty.EmptyObjectVal
			if len(rp.data) > 0 {
				if v, err := fromJSON(rp.data); err == nil {
					out = v
				}
			}
			r.finishNode(ns, journal.StatusSucceeded, out, nil, "")
			return
		}
		if !rp.deadline.IsZero() {
			ws.deadline = rp.deadline // waits keep their original deadlines across resume
		}
	}
	if r.waiting == nil {
		r.waiting = map[*nodeState]struct{}{}
	}
	r.waiting[ns] = struct{}{}
	ws.p = ns.s.park(func(cause *outcome.Error) { r.endWait(ns, journal.StatusCancelled, nullValue, cancelledBy(cause)) })
	entry := journal.Entry{Type: journal.NodeWaiting, Node: ns.addr, Deadline: ws.deadline, WaitKind: spec.Kind, Reason: ws.message}
	ev := Event{Type: EventNodeWaiting, Node: ns.addr, Kind: "wait", Message: ws.message, Reason: spec.Kind}
	if !ws.deadline.IsZero() {
		d := ws.deadline
		ev.Deadline = &d
	}
	ws.journaling = true
	r.commit(func() {
		ws.journaling = false
		// Counted for the run's status only now: the status `waiting` is journaled from the
		// loop, and must follow the node_waiting entry this durable write carries.
		r.parkedWaits++
		if ws.ended != nil {
			ws.ended()
			return
		}
		if ns.status != journal.StatusWaiting {
			return
		}
		// Announced once journaled: whoever answers the wait on this event (fuscia test's
		// mocks, a client of the event stream) is journaled after it.
		r.emit(ev)
		if ws.deadline.IsZero() {
			return
		}
		r.inflight++
		r.armedWaits++
		ws.timer = r.e.clock.AfterFunc(r.e.until(ws.deadline), func() {
			r.post(func() {
				r.inflight--
				r.armedWaits--
				ws.timer = nil
				if ns.status != journal.StatusWaiting {
					return
				}
				if spec.Kind == lang.WaitDuration || spec.Kind == lang.WaitUntil {
					r.endWait(ns, journal.StatusSucceeded, cty.EmptyObjectVal, nil)
					return
				}
				r.endWait(ns, journal.StatusFailed, nullValue, outcome.Errorf(outcome.Timeout, "no answer within %s", spec.WaitTimeout))
			})
		})
	}, entry)
}

// endWait finishes a wait, however it ends (its time, a signal, a cancellation): its timer
// is stopped so that the run does not wait for it.
func (r *Run) endWait(ns *nodeState, status string, out cty.Value, err *outcome.Error) {
	if ns.status != journal.StatusWaiting {
		return
	}
	if ns.wait.journaling {
		if ns.wait.ended == nil {
			ns.wait.ended = func() { r.endWait(ns, status, out, err) }
		}
		return
	}
	if ns.wait.p != nil {
		ns.s.unpark(ns.wait.p)
	}
	r.stopTimer(ns.wait)
	r.parkedWaits--
	delete(r.waiting, ns)
	ns.status = journal.StatusRunning
	r.finishNode(ns, status, out, err, "")
}

// ErrNotWaiting is returned by Signal for a node that is not an approval or callback waiting
// for an answer.
var ErrNotWaiting = errors.New("the node is not waiting for a signal")

// ErrInvalidSignal is returned by Signal for a node the workflow has no wait of, or data that is not JSON.
var ErrInvalidSignal = errors.New("invalid signal")

// Signal answers an approval or callback wait of a run this engine is running. node is the
// wait's address (`wait.approve`) or bare name; who answers is AnsweredBy(ctx), journaled with
// the answer.
func (r *Run) Signal(ctx context.Context, node string, data json.RawMessage, reject bool) error {
	errc := make(chan error, 1)
	who := AnsweredBy(ctx)
	r.post(func() { errc <- r.signal(node, data, reject, who) })
	select {
	case err := <-errc:
		return err
	case <-r.done:
		return fmt.Errorf("execution %s: %w", r.id, errRunGone)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitName is the name of the wait node a signal names: its address (wait.approve) or its bare
// name (approve). Another node's address is refused rather than read as the wait of that name.
func waitName(node string) (string, error) {
	a, ok := lang.ParseAddr(node)
	if !ok {
		return node, nil
	}
	if a.Kind != lang.KindWait {
		return "", fmt.Errorf("%w: %s is a %s node's address; a signal answers a wait (wait.NAME)", ErrInvalidSignal, node, a.Kind)
	}
	return a.Name, nil
}

// errRunGone: the run's loop ended (finished or parked) before it took the signal.
var errRunGone = errors.New("the run left this process")

func (r *Run) signal(node string, data json.RawMessage, reject bool, who string) error {
	name, err := waitName(node)
	if err != nil {
		return err
	}
	ns := r.top.byName[name]
	if ns == nil || ns.n.Wait == nil {
		return fmt.Errorf("%w: %s has no wait node %q", ErrInvalidSignal, r.wf.Name, node)
	}
	if ns.status != journal.StatusWaiting || ns.wait.ended != nil || (ns.n.Wait.Kind != lang.WaitApproval && ns.n.Wait.Kind != lang.WaitCallback) {
		return fmt.Errorf("%s: %w", ns.addr, ErrNotWaiting)
	}
	out := cty.EmptyObjectVal
	if len(data) > 0 {
		v, err := fromJSON(data)
		if err != nil {
			return fmt.Errorf("the signal data is not JSON: %v", err)
		}
		out = v
	}
	r.note(journal.Entry{Type: journal.WaitResolved, Node: ns.addr, Output: data, Rejected: reject, AnsweredBy: who})
	if reject {
		r.endWait(ns, journal.StatusFailed, nullValue, outcome.Errorf(outcome.Rejected, "%s was rejected", ns.addr))
		return nil
	}
	r.endWait(ns, journal.StatusSucceeded, out, nil)
	return nil
}

// Signal answers an approval or callback wait of run id. A run this engine is running gets the
// answer at once (queued is false). For a run no process runs (parked at its waits, or
// interrupted) the answer is journaled and queued is true: it applies when the run is resumed.
// node is the wait's address (`wait.approve`) or bare name. Errors wrap journal.ErrNotFound
// for an unknown run, ErrFinished for one that ended and ErrNotWaiting for a node that is not
// an approval or callback waiting for an answer.
func (e *Engine) Signal(ctx context.Context, id, node string, data json.RawMessage, reject bool) (queued bool, err error) {
	if len(data) > 0 && !json.Valid(data) {
		return false, fmt.Errorf("%w: the signal data is not JSON", ErrInvalidSignal)
	}
	for {
		if r := e.Active(id); r != nil {
			if err := r.Signal(ctx, node, data, reject); !errors.Is(err, errRunGone) {
				return false, err
			}
			// It parked (or ended) meanwhile: answer it in its journal.
			<-r.Done()
		}
		e.signalMu.Lock()
		if e.Active(id) == nil {
			defer e.signalMu.Unlock()
			return true, e.signalJournal(ctx, id, node, data, reject)
		}
		// Resumed meanwhile (its journal was read before this answer): it takes the answer
		// directly, unless it too leaves first, when its journal says what became of the wait
		// (another answer resolved it, or it parked again).
		e.signalMu.Unlock()
	}
}

// signalJournal journals the answer to a wait of run id, which no process runs, after
// checking the journal says that wait is waiting for one. Called with signalMu held.
func (e *Engine) signalJournal(ctx context.Context, id, node string, data json.RawMessage, reject bool) error {
	sum, err := e.cfg.Store.Summary(id)
	if err != nil {
		return err
	}
	if journal.Finished(sum.Status) {
		return fmt.Errorf("%w: %s is %s", ErrFinished, id, sum.Status)
	}
	name, err := waitName(node)
	if err != nil {
		return err
	}
	addr := lang.Addr{Kind: lang.KindWait, Name: name}.String()
	var kind string
	waiting, known := false, false
	err = e.cfg.Store.Entries(id, 0, func(en journal.Entry) error {
		if en.Type == journal.RunStarted && en.Run != nil {
			for _, n := range en.Run.Nodes {
				known = known || n == addr
			}
		}
		if en.Node != addr || len(en.Index) > 0 {
			return nil
		}
		switch en.Type {
		case journal.NodeWaiting:
			waiting, kind = true, en.WaitKind
		case journal.WaitResolved, journal.NodeFinished:
			waiting = false
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read the journal of %s: %w", id, err)
	}
	if !known {
		return fmt.Errorf("%w: %s has no wait node %q", ErrInvalidSignal, sum.Workflow, node)
	}
	if !waiting || (kind != lang.WaitApproval && kind != lang.WaitCallback) {
		return fmt.Errorf("%s: %w", addr, ErrNotWaiting)
	}
	entry := journal.Entry{Type: journal.WaitResolved, Node: addr, Output: data, Rejected: reject, AnsweredBy: AnsweredBy(ctx)}
	if err := e.append(ctx, id, true, entry); err != nil {
		return fmt.Errorf("journal the signal: %w", err)
	}
	return nil
}
