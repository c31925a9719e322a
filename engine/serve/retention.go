package serve

import (
	"time"
)

// Retention: with Config.Retain set, serve prunes the runs that finished more than Retain ago
// — records, journals, log lines, key-value state and artifacts, through Config.Prune, which
// is what `fuscia executions prune` runs — once at Start and then every retentionInterval.
// Times are read from Config.Now, so FUSCIA_NOW moves them as it moves schedules.

// Bounds of the time between two retention passes.
const (
	minRetentionInterval = time.Second
	maxRetentionInterval = 10 * time.Minute
)

// maxLoggedIDs bounds the execution ids a retention pass's log line lists.
const maxLoggedIDs = 20

// retentionInterval is the time between two retention passes for a retention of retain: a
// tenth of it, so that no run outlives its retention by more than a tenth, bounded to
// [minRetentionInterval, maxRetentionInterval].
func retentionInterval(retain time.Duration) time.Duration {
	return min(max(retain/10, minRetentionInterval), maxRetentionInterval)
}

// startRetention starts the retention passes when Config.Retain asks for them; they stop with
// the server (Stop waits for a pass under way, which stops between steps).
func (s *Server) startRetention() {
	if s.cfg.Retain <= 0 || s.cfg.Prune == nil {
		return
	}
	every := retentionInterval(s.cfg.Retain)
	s.logger.Info("retention: pruning the runs that finished more than the retention ago",
		"retain", s.cfg.Retain.String(), "every", every.String())
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			s.retentionPass()
			select {
			case <-s.ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
}

// retentionPass prunes the runs that finished before Now - Retain, and logs what it pruned.
func (s *Server) retentionPass() {
	before := s.cfg.Now().Add(-s.cfg.Retain).UTC()
	p, err := s.cfg.Prune(s.ctx, before)
	ids := p.ExecutionIDs
	logged := ids
	if len(logged) > maxLoggedIDs {
		logged = logged[:maxLoggedIDs]
	}
	attrs := []any{"completed_before", before.Format(time.RFC3339), "executions", len(ids),
		"artifacts", p.Artifacts.Artifacts, "bytes_freed", p.Artifacts.Bytes, "execution_ids", logged}
	switch {
	case err != nil && s.ctx.Err() != nil:
		s.logger.Info("retention pass stopped by the shutdown", attrs...)
	case err != nil:
		s.logger.Error("retention pass failed; the next pass tries again", append(attrs, "error", err)...)
	case len(ids) == 0:
		s.logger.Debug("retention pass: nothing to prune", attrs...)
	default:
		s.logger.Info("retention pass pruned executions", attrs...)
	}
}
