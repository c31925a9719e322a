package serve

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schedule"
)

// lastFiredKey holds, in the schedule trigger's KV scope, the occurrence it last fired (RFC
// 3339): the bookkeeping that keeps a restart from firing an occurrence twice or losing one.
const lastFiredKey = "fuscia.schedule.last_fired"

// runSchedule fires t's occurrences until ctx ends. At start, the latest occurrence that fell
// due while serve was down (within MissedWindow, and after the last one fired) fires once.
func (s *Server) runSchedule(ctx context.Context, l *loaded, t *lang.Trigger, sch *schedule.Schedule) {
	w := l.prog.Workflow
	scope := journal.TriggerScope(w.Name, t.Name)
	last := s.lastFired(scope)
	now := s.cfg.Now()
	if last.IsZero() {
		// A schedule served for the first time starts now: what fell due before it existed
		// is not "missed". Recording the start lets a restart catch up what falls due from now.
		last = now
		if err := s.store.KVSet(scope, lastFiredKey, []byte(now.UTC().Format(time.RFC3339Nano))); err != nil {
			s.logger.Warn("schedule state not saved", "workflow", w.Name, "trigger", t.Name, "error", err)
		}
	} else if at, ok := sch.Missed(last, now, s.cfg.MissedWindow); ok {
		s.fireSchedule(l, t, scope, at, &last)
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

func (s *Server) lastFired(scope string) time.Time {
	b, ok, err := s.store.KVGet(scope, lastFiredKey)
	if err != nil || !ok {
		return time.Time{}
	}
	at, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return time.Time{}
	}
	return at
}

// fireSchedule starts the run of occurrence at, once: the occurrence is recorded as fired
// (durably) before the run starts, so a restart never fires it again.
func (s *Server) fireSchedule(l *loaded, t *lang.Trigger, scope string, at time.Time, last *time.Time) {
	if !at.After(*last) {
		return
	}
	w := l.prog.Workflow
	if err := s.store.KVSet(scope, lastFiredKey, []byte(at.UTC().Format(time.RFC3339Nano))); err != nil {
		s.logger.Error("schedule not fired: its state could not be saved", "workflow", w.Name, "trigger", t.Name, "at", at, "error", err)
		return
	}
	*last = at
	payload, _ := json.Marshal(map[string]string{
		"scheduled_at": at.UTC().Format(time.RFC3339),
		"fired_at":     s.cfg.Now().UTC().Format(time.RFC3339Nano),
		"timezone":     t.Timezone,
	})
	st, err := s.start(l, journal.Trigger{Type: lang.TriggerSchedule, Name: t.Name, Payload: payload})
	switch {
	case errors.Is(err, ErrSkipped):
		s.logger.Warn("schedule skipped", "workflow", w.Name, "trigger", t.Name, "at", at, "reason", st.Skip)
	case err != nil:
		s.logger.Error("schedule could not start a run", "workflow", w.Name, "trigger", t.Name, "at", at, "error", err)
	}
}
