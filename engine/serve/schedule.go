package serve

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schedule"
)

// lastFiredKey holds, in the schedule trigger's KV scope, the firing of the occurrence it last
// fired: the bookkeeping that keeps a restart from firing an occurrence twice or losing one.
const lastFiredKey = "fuscia.schedule.last_fired"

// runSchedule fires t's occurrences until ctx ends. At start, an occurrence recorded as fired
// whose run never started (a crash in between) starts, and the latest occurrence that fell due
// while serve was down (within MissedWindow, and after the last one fired) fires once.
func (s *Server) runSchedule(ctx context.Context, l *loaded, t *lang.Trigger, sch *schedule.Schedule) {
	w := l.prog.Workflow
	scope := journal.TriggerScope(w.Name, t.Name)
	f, last := s.lastFired(scope)
	now := s.cfg.Now()
	if last.IsZero() {
		// A schedule served for the first time starts now: what fell due before it existed
		// is not "missed". Recording the start lets a restart catch up what falls due from now.
		last = now
		if err := s.writeFiring(scope, lastFiredKey, firing{At: now.UTC().Format(time.RFC3339Nano)}); err != nil {
			s.logger.Warn("schedule state not saved", "workflow", w.Name, "trigger", t.Name, "error", err)
		}
	} else {
		if s.neverStarted(f) {
			if now.Sub(last) <= s.cfg.MissedWindow {
				s.logger.Warn("starting the run of an occurrence fired before a crash but never started", "workflow", w.Name, "trigger", t.Name, "at", last, "execution_id", f.ExecutionID)
				s.startOccurrence(l, t, scope, last, f.ExecutionID)
			} else {
				s.logger.Warn("an occurrence fired before a crash never started its run, and is older than the missed-run window: not started", "workflow", w.Name, "trigger", t.Name, "at", last, "window", s.cfg.MissedWindow)
			}
		}
		if at, ok := sch.Missed(last, now, s.cfg.MissedWindow); ok {
			s.fireSchedule(l, t, scope, at, &last)
		}
	}
	from := now
	if last.After(from) {
		from = last
	}
	next := sch.Next(from)
	for !next.IsZero() {
		timer := time.NewTimer(next.Sub(s.cfg.Now()))
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		// A timer may fire a little early by the schedule's clock (an offset test clock, a
		// suspended machine): wait for the occurrence itself.
		if d := next.Sub(s.cfg.Now()); d > 0 {
			continue
		}
		s.fireSchedule(l, t, scope, next, &last)
		next = sch.Next(next)
	}
}

// lastFired returns the last firing recorded in scope and its occurrence (zero when none).
func (s *Server) lastFired(scope string) (firing, time.Time) {
	f, ok, err := s.readFiring(scope, lastFiredKey)
	if err != nil || !ok {
		return firing{}, time.Time{}
	}
	at, err := time.Parse(time.RFC3339Nano, f.At)
	if err != nil {
		return firing{}, time.Time{}
	}
	return f, at
}

// fireSchedule starts the run of occurrence at, once: the occurrence and the id of its run are
// recorded (durably) before the run starts, so a restart never fires it again, and starts the
// run if it had not started.
func (s *Server) fireSchedule(l *loaded, t *lang.Trigger, scope string, at time.Time, last *time.Time) {
	if !at.After(*last) {
		return
	}
	w := l.prog.Workflow
	id := engine.NewExecutionID()
	if err := s.writeFiring(scope, lastFiredKey, firing{At: at.UTC().Format(time.RFC3339Nano), ExecutionID: id, Pending: true}); err != nil {
		s.logger.Error("schedule not fired: its state could not be saved", "workflow", w.Name, "trigger", t.Name, "at", at, "error", err)
		return
	}
	*last = at
	s.startOccurrence(l, t, scope, at, id)
}

// startOccurrence starts the run, with execution id id, of the occurrence at, recorded as fired.
func (s *Server) startOccurrence(l *loaded, t *lang.Trigger, scope string, at time.Time, id string) {
	w := l.prog.Workflow
	payload, _ := json.Marshal(map[string]string{
		"scheduled_at": at.UTC().Format(time.RFC3339),
		"fired_at":     s.cfg.Now().UTC().Format(time.RFC3339Nano),
		"timezone":     t.Timezone,
	})
	st, err := s.start(l, journal.Trigger{Type: lang.TriggerSchedule, Name: t.Name, Payload: payload}, id)
	done := firing{At: at.UTC().Format(time.RFC3339Nano), ExecutionID: id}
	switch {
	case err == nil:
		if err := s.writeFiring(scope, lastFiredKey, done); err != nil {
			s.logger.Warn("schedule state not confirmed", "workflow", w.Name, "trigger", t.Name, "error", err)
		}
	case errors.Is(err, ErrSkipped):
		s.logger.Warn("schedule skipped", "workflow", w.Name, "trigger", t.Name, "at", at, "reason", st.Skip)
		// Skipped on purpose: nothing to start after a restart.
		if err := s.writeFiring(scope, lastFiredKey, firing{At: done.At, Skipped: true}); err != nil {
			s.logger.Warn("schedule state not saved", "workflow", w.Name, "trigger", t.Name, "error", err)
		}
	case err != nil:
		s.logger.Error("schedule could not start a run", "workflow", w.Name, "trigger", t.Name, "at", at, "error", err)
	}
}
