package journal

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// Component key-value state lives under kv/<scope>/<key> (docs/state.md). A task's scope is
// its execution (ExecutionScope), deleted with it; a trigger's scope is its workflow and
// trigger (TriggerScope), kept across invocations.

const kvPrefix = "kv/"

// ExecutionScope is the KV scope of the component tasks of one execution.
func ExecutionScope(id string) string { return "x:" + id }

// TriggerScope is the KV scope of one workflow's trigger.
func TriggerScope(workflow, trigger string) string { return "t:" + workflow + ":" + trigger }

func kvKey(scope, key string) ([]byte, error) {
	if scope == "" || strings.ContainsAny(scope, "/\x00") {
		return nil, fmt.Errorf("invalid kv scope %q", scope)
	}
	return []byte(kvPrefix + scope + "/" + key), nil
}

// KVGet returns the value of key in scope.
func (s *Store) KVGet(scope, key string) ([]byte, bool, error) {
	k, err := kvKey(scope, key)
	if err != nil {
		return nil, false, err
	}
	var v []byte
	found := false
	err = s.view(func(txn *badger.Txn) error {
		item, err := txn.Get(k)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		v, err = s.valueCopy(item)
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("kv get %q: %w", key, err)
	}
	return v, found, nil
}

// KVSet stores value under key in scope, durably: the write is synced before KVSet returns,
// so a component that read its own write and acted on it never loses it to a crash.
func (s *Store) KVSet(scope, key string, value []byte) error {
	k, err := kvKey(scope, key)
	if err != nil {
		return err
	}
	return s.kvWrite(op{key: k, value: append([]byte{}, value...)}, "kv set", key)
}

// KVDelete removes key from scope.
func (s *Store) KVDelete(scope, key string) error {
	k, err := kvKey(scope, key)
	if err != nil {
		return err
	}
	return s.kvWrite(op{key: k, del: true}, "kv delete", key)
}

func (s *Store) kvWrite(o op, what, key string) error {
	req := &request{ops: []op{o}, durable: true, done: make(chan error, 1)}
	if err := checkOps(req.ops, s.maxValue); err != nil {
		return fmt.Errorf("%s %q: %w", what, key, err)
	}
	if err := s.submit(req); err != nil {
		return fmt.Errorf("%s %q: %w", what, key, err)
	}
	if err := <-req.done; err != nil {
		return fmt.Errorf("%s %q: %w", what, key, err)
	}
	return nil
}
