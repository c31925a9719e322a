package guest

// KV is the host's key-value store. A task's KV is scoped to its execution: every task of the
// run sees it, and it outlives the attempt. A trigger's KV is scoped to the workflow's trigger and
// kept across invocations, for state such as "last row seen".
var KV KVStore

// KVStore is the type of KV. Values are byte strings, stored as given (a Go string may hold any
// bytes); the host does not interpret them.
type KVStore struct{}

// Get returns the value of key and whether it is set.
func (KVStore) Get(key string) (string, bool) {
	b, ok := hostKVGet(key)
	return string(b), ok
}

// Set stores value under key.
func (KVStore) Set(key, value string) { hostKVSet(key, value) }

// Delete removes key; deleting a key that is not set does nothing.
func (KVStore) Delete(key string) { hostKVDelete(key) }
