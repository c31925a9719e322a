// Package engine runs plans: it schedules a workflow's nodes as their inputs become ready,
// dispatches tasks, applies retries and control flow, and journals every state change so that an
// interrupted run resumes without redoing finished work.
//
// # Model
//
// A run executes a Program: a checked workflow and the saved-plan bytes it came from (journaled
// once per digest, so a resumed run executes the same snapshot, never the files on disk).
//
// Each run has one scheduler goroutine, its loop, which owns every piece of run state. Work that
// blocks (task attempts, sub-workflows, timers) happens on other goroutines that report back to
// the loop through one channel; nothing else touches run state. A task attempt journals its own
// result before it reports it, so a dependent never starts before its upstream's output is in
// the journal (write-ahead), and attempts of concurrent nodes and runs share the journal's group
// commits. In a strict run that entry is synced first when the task has an effect; a pure
// node's result is not waited for, and a barrier syncs it before the next effect starts
// (durability.go).
//
// A graph instance is a scope: the top level of a run, or one iteration of a loop. A node of a
// scope starts when every upstream node has finished; the grouped-edge rule of docs/reference/language.md then
// decides whether it runs or is skipped. `max_parallel` (or -parallelism) bounds the task
// attempts running at once across the whole run; attempts over the bound wait in one FIFO ready
// queue, and retries wait on timers without holding a slot.
//
// # Files
//
// engine.go (Engine, Program, Start), run.go (the loop), scope.go (readiness and skip
// propagation), durability.go (which nodes wait for a sync, the barrier before an effect),
// exec_task.go, exec_foreach.go, exec_switch.go, exec_join.go, exec_loop.go,
// exec_wait.go, exec_call.go (one per node kind), answered_by.go (who answered a wait),
// resume.go (journal replay), values.go (cty, JSON and redaction markers), secrets.go (reading
// secrets, the scrubbed way into the journal, the sensitive-output rule), components.go and
// plugins.go (component and plugin tasks), output_schema.go (their outputs held to their
// output_schema).
package engine
