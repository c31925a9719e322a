// Package addrs holds the addresses of a workflow's nodes and of their instances, as typed
// values with one text form each and one parser each (the model is Terraform's internal/addrs).
//
// # Model
//
// A [Node] address names a node of a workflow: `task.fetch`, or `loop.notify/task.send` for a
// node in the body of loop `notify`. An [Instance] address names one run of a node: the node's
// address and an index path, outermost first — `task.send_all[3]` (an item of a for_each task),
// `loop.notify[1]` (an iteration), `loop.notify/task.send[1]` (a body node in iteration 1).
//
// # Stability
//
// The text forms are stored: the journal keeps a node's address in every entry, and a task id
// is `EXECUTION_ID:` followed by an instance's address (docs/engine.md). Journals written by an
// earlier fuscia must read the same, so String does not change; engine/journal/testdata/format-v1
// holds such journals and the tests read them back.
//
// # Dependencies
//
// The package imports only the standard library, so that the journal, which sits below the
// language in the layers (docs/architecture.md), reads addresses with the same code as the
// language writes them. Package lang re-exports Node as lang.Addr.
package addrs
