package serve

import (
	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/local"
)

// What a Server needs of the engine and of the store's owner it runs with is written here, as
// code, rather than left to whoever assembles the process (engine/host applies both).

// EngineConfig returns cfg with what the Server needs of its engine:
//
//   - ResumeObserver: a resumed run reports to the apply streams following it;
//   - ParkWaits: a run whose only unfinished work is waits leaves memory, and the server's
//     wait index resumes it when a deadline or a signal comes. Without it, every waiting run
//     would hold its goroutine and its state in memory until its waits end.
//   - OnRunEnd calls the server's runEnded (after cfg's own OnRunEnd, if any): a finished run
//     wakes the webhooks waiting for it (?wait=true), a parked one goes to the wait index. An
//     engine without it would leave them waiting forever.
//   - Metrics is the server's recorder (Config.Metrics) unless cfg has one: task attempts are
//     counted where the triggers and queues are.
func (s *Server) EngineConfig(cfg engine.Config) engine.Config {
	cfg.ParkWaits = true
	if own := cfg.OnRunEnd; own != nil {
		cfg.OnRunEnd = func(r *engine.Run) {
			own(r)
			s.RunEnded(r)
		}
	} else {
		cfg.OnRunEnd = s.RunEnded
	}
	if cfg.Metrics == nil {
		cfg.Metrics = s.cfg.Metrics
	}
	// A run resumed here (at a wait's deadline, by a signal, or only to be cancelled) reports
	// to the CLI streams that followed it from its start (applyPlan).
	cfg.ResumeObserver = func(id string) func(engine.Event) {
		return func(ev engine.Event) { s.tellFollowers(id, ev) }
	}
	return cfg
}

// NewEngine builds the server's engine from cfg with EngineConfig's changes and attaches it
// with its store (cfg.Store): the one way to give a Server an engine that keeps its
// invariants.
func (s *Server) NewEngine(cfg engine.Config) *engine.Engine {
	eng := engine.New(s.EngineConfig(cfg))
	s.Attach(eng, cfg.Store)
	return eng
}

// OwnerConfig returns cfg with what the Server needs of the store's owner (local.Own): serve's
// endpoints on the owner's API (RegisterAPI: start a run, resume, workflows, health, apply;
// `fuscia apply` and `fuscia resume` use them while serve owns the store), and a signal journaled for a parked run,
// through the socket, reaching the server, which resumes the run (Signaled).
func (s *Server) OwnerConfig(cfg local.OwnerConfig) local.OwnerConfig {
	cfg.Extend, cfg.Signaled = s.RegisterAPI, s.Signaled
	return cfg
}
