package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/lang"
)

// dedupPrefix prefixes the keys of the events a poll trigger started runs for, in its KV scope.
const dedupPrefix = "fuscia.dedup."

// minPollTimeout bounds one poll call from below: a short interval still leaves a component or
// plugin time to answer.
const minPollTimeout = 10 * time.Second

// runPoll calls t's component or plugin trigger at once and then every interval until ctx ends.
// A call never overlaps the next: a slow poll delays it.
func (s *Server) runPoll(ctx context.Context, l *loaded, t *lang.Trigger) {
	tick := time.NewTicker(t.Interval)
	defer tick.Stop()
	for {
		s.pollOnce(ctx, l, t)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (s *Server) pollOnce(ctx context.Context, l *loaded, t *lang.Trigger) {
	w := l.prog.Workflow
	timeout := max(t.Interval, minPollTimeout)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	log := s.logger.With("workflow", w.Name, "trigger", t.Type+"."+t.Name)
	res := s.eng.InvokeTrigger(cctx, l.prog, t, task.TriggerEvent{Type: "poll"}, triggerLog(log))
	if ctx.Err() != nil {
		return
	}
	switch res.Type {
	case "pending":
		return
	case "completed":
	default:
		s.cfg.Metrics.TriggerFired(s.ctx, w.Name, t.Name, t.Type, "error")
		log.Warn("the poll trigger failed", "kind", res.Kind, "error", res.Message)
		return
	}
	scope := journal.TriggerScope(w.Name, t.Name)
	var dedupKey, id string
	if t.DedupKey != nil {
		key, err := engine.DedupKey(w, t.DedupKey, res.Payload)
		if err != nil {
			s.cfg.Metrics.TriggerFired(s.ctx, w.Name, t.Name, t.Type, "error")
			log.Warn("no run started: the event's dedup_key cannot be evaluated", "error", err)
			return
		}
		sum := sha256.Sum256([]byte(key))
		dedupKey = dedupPrefix + hex.EncodeToString(sum[:])
		f, seen, err := s.readFiring(scope, dedupKey)
		if err != nil {
			log.Error("no run started: the dedup state cannot be read", "error", err)
			return
		}
		switch {
		case seen && s.neverStarted(f):
			// Recorded by a serve that stopped before the run's first journal entry.
			log.Warn("starting the run of an event seen before a crash but never started", "dedup_key", key, "execution_id", f.ExecutionID)
			id = f.ExecutionID
		case seen:
			s.cfg.Metrics.TriggerFired(s.ctx, w.Name, t.Name, t.Type, "deduplicated")
			log.Debug("event already seen", "dedup_key", key)
			return
		default:
			// Recorded, with the run's id, before the run starts: the same event never starts
			// two runs, and a crash in between is noticed at the next poll.
			id = engine.NewExecutionID()
			if err := s.writeFiring(scope, dedupKey, firing{ExecutionID: id, Pending: true}); err != nil {
				log.Error("no run started: the dedup state cannot be saved", "error", err)
				return
			}
		}
	}
	st, err := s.start(l, journal.Trigger{Type: lang.TriggerPoll, Name: t.Name, Payload: res.Payload}, id)
	switch {
	case err == nil && dedupKey != "":
		if err := s.writeFiring(scope, dedupKey, firing{ExecutionID: id}); err != nil {
			log.Warn("the started event's dedup state cannot be confirmed", "error", err)
		}
	case errors.Is(err, ErrSkipped):
		log.Warn("poll event skipped", "reason", st.Skip)
		if dedupKey != "" {
			// Skipped on purpose: the event stays seen, with no run to look for.
			if err := s.writeFiring(scope, dedupKey, firing{Skipped: true}); err != nil {
				log.Warn("the skipped event's dedup state cannot be saved", "error", err)
			}
		}
	case err != nil:
		log.Error("the poll trigger could not start a run", "error", err)
		if dedupKey != "" {
			// The event started nothing: let the next poll try it again.
			_ = s.store.KVDelete(scope, dedupKey)
		}
	}
}
