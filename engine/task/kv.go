package task

// KVStore keeps the host key-value state of components and plugins (the kv_get, kv_set and
// kv_delete of their host interfaces), by scope: an execution's for its tasks, a workflow
// trigger's for the trigger (journal.ExecutionScope, journal.TriggerScope). The journal's
// store is one (one machine); a cluster's JetStream bucket is another, so that a task sees the
// same state on whichever worker runs its attempt.
type KVStore interface {
	KVGet(scope, key string) ([]byte, bool, error)
	KVSet(scope, key string, value []byte) error
	KVDelete(scope, key string) error
}
