// Package dag is the directed graph that Fuscia compiles workflows into.
//
// # Model
//
// A [Graph] holds nodes identified by string IDs, which are node addresses
// such as "task.fetch" or "loop.notify/task.send", and directed edges
// between them. An edge From -> To means From is upstream of To: From must
// finish before To may start. An edge may carry labels (branch keys and
// similar) that explain why it exists; adding the same pair twice merges the
// labels into one edge instead of creating a parallel edge, so the graph is
// always simple apart from optional self-loops.
//
// The graph is append-only: workflows are compiled once and then analysed,
// so there is no removal, which keeps every index stable and every answer
// reproducible.
//
// # Determinism
//
// Every result is ordered by insertion: [Graph.Nodes] in the order nodes
// were first added, neighbour lists in the order edges were first added,
// cycles and stages derived from those orders, and [Graph.WriteDOT] and
// [Graph.WriteMermaid] produce byte-identical output for graphs built by
// the same sequence of calls. Plans, error messages and golden files can
// therefore be compared textually.
//
// # Cost
//
// The graph is sized for workflows of up to tens of thousands of nodes.
// Nodes are interned to dense int indices once, adjacency is kept in
// slices, and every analysis ([Graph.Cycles], [Graph.Stages]) runs in
// O(nodes + edges) time without recursion, so deep chains cannot exhaust
// the goroutine stack.
//
// # Concurrency
//
// A Graph is not safe for concurrent mutation. Once built, any number of
// goroutines may call its read-only methods (everything except
// [Graph.AddNode] and [Graph.AddEdge]) at the same time: none of them
// caches results inside the Graph.
package dag
