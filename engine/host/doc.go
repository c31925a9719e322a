// Package host assembles a running Fuscia process around the engine: `fuscia apply` and
// `fuscia resume` run one workflow in it, `fuscia serve` keeps it up. cmd/fuscia parses flags
// and the environment into [Options], calls [New], [Host.Open] and [Host.Close], and renders;
// everything between is here, in one place, with typed options instead of hooks.
//
// # What a host owns
//
//   - telemetry: the process's log and tracer (engine/telemetry), and for serve its metrics
//     provider and recorder (engine/internal/metrics);
//   - the task runtimes behind the engine's task.Dispatcher, one per kind of `uses`: the
//     builtins runner (engine/internal/runtime/builtins), the Wasm host (engine/internal/runtime/wasm) and the
//     plugin manager (engine/internal/runtime/plugins; a manager handed in by apply's plan-time checks
//     is taken over, so the run reuses the plugin processes they started);
//   - the ownership of the state store (engine/local.Owner: the journal, the artifacts, the
//     API socket the other commands talk to) and the engine built on it;
//   - for serve ([Options.Serve]), the serve.Server, wired to all of the above.
//
// # Lifecycle
//
// [New] touches nothing on disk: for serve it builds the server, whose Handler answers 503
// "starting" until the store is open, so that serve binds its listeners first. [Host.Open]
// sets up telemetry and the runtimes, then takes the store, waiting while another process
// holds it (runs of one home are serialized), and builds the engine. [Host.Close] waits for the
// runs, releases the store, stops the runtimes and flushes telemetry; it is called once after
// New, whatever happened since.
//
// # Serve's invariants
//
// A serve.Server needs its engine to park runs at their waits and to report every run's end
// to it, and needs the store's owner to route serve's API and signals to it. Those
// requirements are the server's own code (serve.Server.EngineConfig, NewEngine, OwnerConfig);
// the host applies them whenever it serves, so no assembly of serve can leave one out. The
// server's calls back into the host (loading a workflow, pruning) are the host's methods,
// made only once Open has built what they use.
//
// Making a plan and loading a saved one are engine/planner's (Make, LoadSaved); serve's
// loading of a workflow file is planner.Make for a run, then [Host.Preload].
package host
