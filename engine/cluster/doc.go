// Package cluster runs Fuscia on more than one machine through NATS JetStream
// (docs/cluster.md): a coordinator (`fuscia serve -nats`) sends the attempts of component,
// plugin and builtin.http tasks to workers (`fuscia worker`) through a work-queue stream per
// pool, and the workers answer on a results stream that the coordinator consumes durably.
//
// The coordinator's side is Coordinator, a task.Dispatcher (and task.Reattacher) that the
// scheduler calls like any runtime; the worker's side is Worker, which runs each attempt with
// the process's own runtimes (a task.Dispatcher the host gives it). Neither knows the
// scheduler. Setup creates the streams and buckets; a worker only binds to them.
//
// An attempt is named by its identity (execution, node instance, attempt, call): the work
// message's deduplication id, its result's subject, and how a coordinator that restarted
// finds a result stored while it was down (Reattacher). Everything that may carry a secret
// (inputs, config, results, logs) travels and rests sealed with the cluster key
// (clusterkey).
package cluster
