// Package jsstore keeps the host key-value state and the artifacts of components and plugins
// in NATS JetStream, for cluster mode: a task sees the same state and artifacts on whichever
// worker runs its attempt. [KV] is a task.KVStore on a JetStream key-value bucket; [Artifacts]
// is an artifact.Store on a JetStream object store. The coordinator creates both buckets
// ([KVConfig], [ArtifactsConfig]); coordinator and workers open them ([OpenKV],
// [OpenArtifacts]).
//
// # Secrets
//
// Every value and every artifact's bytes are sealed with the cluster key (AES-256-GCM,
// package clusterkey) before they reach NATS, so NATS's storage never holds them in clear
// text. The authenticated data of a sealed value is its place (the bucket key, the object's
// name), so a value moved elsewhere does not open. A process holding another key gets an error
// that says so and names both keys' IDs. What is not sealed: KV scopes and keys (they are NATS
// subjects, only base64url-encoded), execution ids, artifact ids (sha256 of the content) and
// sizes.
//
// # KV layout
//
// A value lives under the bucket key <scope>.<key>, each part base64url-encoded without
// padding (an empty part is "=", which base64url never produces), so any scope and key fit
// JetStream's key alphabet and a scope's keys share a prefix: [KV.DeleteScope] lists them with
// a filter. Deletions purge the key: no earlier value stays in the bucket's history.
//
// Reads may be served by any replica of the bucket (JetStream's direct get), which can lag a
// write acknowledged a moment before.
//
// # Artifacts layout
//
// An artifact is the object <execution>/<hex sha256> holding its sealed bytes; its Ref
// (content type, size) is sealed in the object's metadata, so listing reads no content.
// Artifact ids and Refs are those of artifact.Dir. Unlike artifact.Dir, blobs are not shared
// between executions: two executions that write the same bytes store them twice. Sharing would
// need reference counting across processes (workers write, the coordinator deletes) that
// JetStream cannot make atomic, and an execution's artifacts are rarely another's. So a
// deletion frees everything it removes (Freed.Shared is always 0).
//
// DeleteExecution keeps each object as a JetStream object-store delete marker, which keeps
// the sealed Ref: that is the tombstone (its time is the deletion's). ForgetExecutions removes
// the objects and then their markers. Listing an execution's artifacts reads the metadata of
// every object in the bucket (object-store names are not prefix-searchable); it is used by
// deletions and `artifacts` commands, not by runs. Chunks left by a process that died in the
// middle of a Put belong to no object and are not reclaimed.
//
// # Concurrency
//
// A KV and an Artifacts may be used from any number of goroutines and processes at once.
package jsstore
