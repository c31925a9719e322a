package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/journal"
)

// eventCursor is how far an event stream got: the last journal entry and log line delivered.
type eventCursor struct {
	Entry uint64 `json:"entry_seq"`
	Log   uint64 `json:"log_seq"`
}

// eventLine is a line of GET /v1/executions/{id}/events: an event and the cursor after it, so
// that a client whose owner went away goes on from there.
type eventLine struct {
	Event  engine.Event `json:"event"`
	Cursor eventCursor  `json:"cursor"`
}

// events delivers the events of run id after cur (engine.Replayer), and with follow goes on
// until the run has finished and everything was delivered, or ctx ends.
func (o *ops) events(ctx context.Context, id string, cur eventCursor, follow bool, rp *engine.Replayer, fn func(eventLine) error) (eventCursor, error) {
	err := o.poll(ctx, follow, func() (finished bool, err error) {
		cur, finished, err = o.eventsCatchUp(id, cur, rp, fn)
		return finished, err
	})
	return cur, err
}

// eventsCatchUp is catchUp for events: journal entries and log lines merged by time.
func (o *ops) eventsCatchUp(id string, cur eventCursor, rp *engine.Replayer, fn func(eventLine) error) (eventCursor, bool, error) {
	// The status is read first: whatever was journaled before the run finished is then read by
	// the pass that saw the final status.
	sum, err := o.st.Summary(id)
	if err != nil {
		return cur, false, err
	}
	for {
		entries, err := o.readEntries(id, cur.Entry)
		if err != nil {
			return cur, false, err
		}
		logs, err := o.readLogs(id, cur.Log)
		if err != nil {
			return cur, false, err
		}
		i, j := 0, 0
		for i < len(entries) || j < len(logs) {
			var evs []engine.Event
			if j == len(logs) || (i < len(entries) && !entries[i].Time.After(logs[j].Time)) {
				evs = rp.Entry(entries[i])
				cur.Entry = entries[i].Seq
				i++
			} else {
				evs = []engine.Event{rp.Log(logs[j])}
				cur.Log = logs[j].Seq
				j++
			}
			for _, ev := range evs {
				if err := fn(eventLine{Event: ev, Cursor: cur}); err != nil {
					return cur, false, err
				}
			}
		}
		if len(entries) < logBatch && len(logs) < logBatch {
			return cur, journal.Finished(sum.Status), nil
		}
	}
}

// replayerAt returns a replayer of run id that has seen its journal up to entry seq upTo
// without reporting it: a stream that goes on from a cursor (in another process, or after
// its owner exited) then reports the durations of the nodes started before, and no second
// node_started for them.
func (o *ops) replayerAt(id string, upTo uint64) (*engine.Replayer, error) {
	rp := engine.NewReplayer(id)
	for after := uint64(0); after < upTo; {
		entries, err := o.readEntries(id, after)
		if err != nil {
			return nil, err
		}
		if len(entries) == 0 {
			break
		}
		for _, e := range entries {
			if e.Seq > upTo {
				return rp, nil
			}
			rp.Entry(e)
			after = e.Seq
		}
	}
	return rp, nil
}

// readEntries reads up to logBatch journal entries of run id after seq after.
func (o *ops) readEntries(id string, after uint64) ([]journal.Entry, error) {
	return readBatch(o.st.Entries, id, after)
}

// eventsHandler serves GET /v1/executions/{id}/events: NDJSON eventLines. Query: follow=1,
// entry_after and log_after (a cursor).
func (s *server) eventsHandler(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var cur eventCursor
	var ok bool
	if cur.Entry, ok = seqParam(w, q, "entry_after"); !ok {
		return
	}
	if cur.Log, ok = seqParam(w, q, "log_after"); !ok {
		return
	}
	s.streamRun(w, r, func(id string, follow bool, emit func(any) error) error {
		rp, err := s.ops.replayerAt(id, cur.Entry)
		if err != nil {
			return err
		}
		end, err := s.ops.events(r.Context(), id, cur, follow, rp, func(l eventLine) error { return emit(l) })
		if err != nil {
			return err
		}
		// A finished run's stream ends as apply -json's does: with execution_finished, which
		// holds the execution object (the journal has no entry that stands for it alone).
		x, err := s.ops.Execution(r.Context(), id)
		if err != nil || !journal.Finished(x.Status) {
			return nil
		}
		return emit(eventLine{Event: engine.FinishedEvent(x), Cursor: end})
	})
}

// Events calls fn with the events of run ref, as the process running it reports them (see
// engine.Replayer); with follow it goes on until the run has finished, whichever process runs it
// meanwhile.
func (c *client) Events(ctx context.Context, ref string, follow bool, fn func(engine.Event) error) error {
	cur, err := c.events(ctx, ref, eventCursor{}, follow, fn)
	if follow && errors.Is(err, errOwnerGone) {
		return followEventsDetached(ctx, c.home, ref, cur, fn, c.logger)
	}
	return err
}

func (c *client) events(ctx context.Context, ref string, cur eventCursor, follow bool, fn func(engine.Event) error) (eventCursor, error) {
	q := url.Values{}
	if follow {
		q.Set("follow", "1")
	}
	q.Set("entry_after", strconv.FormatUint(cur.Entry, 10))
	q.Set("log_after", strconv.FormatUint(cur.Log, 10))
	err := c.stream(ctx, http.MethodGet, executionPath(ref, "events", q), nil, func(line []byte) error {
		var l eventLine
		if err := json.Unmarshal(line, &l); err != nil {
			return fmt.Errorf("decode an event of execution %s: %w", ref, err)
		}
		cur = l.Cursor
		return fn(l.Event)
	})
	return cur, err
}

// Events is client.Events on a store this process opened: a follow releases the store, as Logs
// does.
func (d *direct) Events(ctx context.Context, ref string, follow bool, fn func(engine.Event) error) error {
	if err := d.acquire(ctx); err != nil {
		return err
	}
	if d.remote != nil {
		return d.remote.Events(ctx, ref, follow, fn)
	}
	id, err := d.ops.resolve(ref)
	if err != nil {
		return err
	}
	rp := engine.NewReplayer(id)
	deliver := func(l eventLine) error { return fn(l.Event) }
	cur, finished, err := d.ops.eventsCatchUp(id, eventCursor{}, rp, deliver)
	if err != nil || !follow || finished {
		return err
	}
	if err := d.release(); err != nil {
		return err
	}
	return followEventsDetached(ctx, d.home, id, cur, fn, d.logger)
}

// followEventsDetached is followDetached for events.
func followEventsDetached(ctx context.Context, home, ref string, cur eventCursor, fn func(engine.Event) error, logger *slog.Logger) error {
	return followWithoutStore(ctx, home, ref, logger,
		func(c *client) (err error) {
			cur, err = c.events(ctx, ref, cur, true, fn)
			return err
		},
		func(o *ops, id string) (finished bool, err error) {
			// Each look may open the store anew: its replayer first sees what was reported.
			rp, err := o.replayerAt(id, cur.Entry)
			if err != nil {
				return false, err
			}
			cur, finished, err = o.eventsCatchUp(id, cur, rp, func(l eventLine) error { return fn(l.Event) })
			return finished, err
		})
}
