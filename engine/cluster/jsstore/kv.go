package jsstore

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/fuscia/fuscia/engine/cluster/clusterkey"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultTimeout bounds a KV call when KV.Timeout is zero: task.KVStore's methods take no
// context, and a NATS outage must not hang a task forever.
const DefaultTimeout = 30 * time.Second

// KV is the host key-value state (task.KVStore) on a JetStream key-value bucket, values sealed
// with the cluster key. See the package doc for the layout.
type KV struct {
	bucket jetstream.KeyValue
	key    *clusterkey.Key
	// Timeout bounds each KVGet, KVSet and KVDelete; zero means DefaultTimeout. Set it before
	// the KV is used.
	Timeout time.Duration
}

// NewKV returns the KV on an open bucket (made with KVConfig).
func NewKV(bucket jetstream.KeyValue, key *clusterkey.Key) *KV {
	return &KV{bucket: bucket, key: key}
}

// OpenKV opens the existing bucket name; the coordinator creates it (KVConfig).
func OpenKV(ctx context.Context, js jetstream.JetStream, name string, key *clusterkey.Key) (*KV, error) {
	b, err := js.KeyValue(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("open the host KV bucket %s: %w", name, err)
	}
	return NewKV(b, key), nil
}

// encodePart encodes a scope or key as one token of a bucket key.
func encodePart(s string) string {
	if s == "" {
		return "="
	}
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

// bucketKey returns the bucket key of key in scope.
func bucketKey(scope, key string) (string, error) {
	if scope == "" {
		return "", errors.New(`invalid kv scope ""`)
	}
	return encodePart(scope) + "." + encodePart(key), nil
}

func (k *KV) context() (context.Context, context.CancelFunc) {
	d := k.Timeout
	if d <= 0 {
		d = DefaultTimeout
	}
	return context.WithTimeout(context.Background(), d)
}

// KVGet returns the value of key in scope.
func (k *KV) KVGet(scope, key string) ([]byte, bool, error) {
	bk, err := bucketKey(scope, key)
	if err != nil {
		return nil, false, err
	}
	ctx, cancel := k.context()
	defer cancel()
	e, err := k.bucket.Get(ctx, bk)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("kv get %q: %w", key, err)
	}
	v, err := k.key.Open(e.Value(), []byte(bk))
	if err != nil {
		return nil, false, fmt.Errorf("kv get %q in bucket %s: %w%s", key, k.bucket.Bucket(), err, otherKeyHint(err))
	}
	return v, true, nil
}

// KVSet stores value under key in scope. It returns once JetStream acknowledged the write (on
// a quorum of the bucket's replicas).
func (k *KV) KVSet(scope, key string, value []byte) error {
	bk, err := bucketKey(scope, key)
	if err != nil {
		return err
	}
	ctx, cancel := k.context()
	defer cancel()
	sealed := k.key.Seal(value, []byte(bk))
	if _, err := k.bucket.Put(ctx, bk, sealed); err != nil {
		if errors.Is(err, nats.ErrMaxPayload) {
			return fmt.Errorf("kv set %q: the value (%d bytes sealed, with the key) is larger than the NATS servers' max_payload; raise max_payload on the NATS servers (2MB covers fuscia's 1 MiB limit) or store less: %w", key, len(sealed), err)
		}
		return fmt.Errorf("kv set %q: %w", key, err)
	}
	return nil
}

// KVDelete removes key from scope; removing a key that is not there is no error.
func (k *KV) KVDelete(scope, key string) error {
	bk, err := bucketKey(scope, key)
	if err != nil {
		return err
	}
	ctx, cancel := k.context()
	defer cancel()
	if err := k.bucket.Purge(ctx, bk); err != nil {
		return fmt.Errorf("kv delete %q: %w", key, err)
	}
	return nil
}

// DeleteScope removes every key of scope (pruning an execution removes its scope). Keys
// written while it runs may stay.
func (k *KV) DeleteScope(ctx context.Context, scope string) error {
	if scope == "" {
		return errors.New(`invalid kv scope ""`)
	}
	keys, err := k.scopeKeys(ctx, scope)
	if err != nil {
		return fmt.Errorf("delete kv scope %s: list its keys: %w", scope, err)
	}
	for _, bk := range keys {
		if err := k.bucket.Purge(ctx, bk); err != nil {
			return fmt.Errorf("delete kv scope %s: %w", scope, err)
		}
	}
	return nil
}

// scopeKeys returns the bucket keys of scope that hold a value.
func (k *KV) scopeKeys(ctx context.Context, scope string) ([]string, error) {
	// The lister's goroutine ends when the listing is done or ctx is: cancel on every return.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lister, err := k.bucket.ListKeysFiltered(ctx, encodePart(scope)+".>")
	if err != nil {
		return nil, err
	}
	defer lister.Stop()
	var keys []string
	for bk := range lister.Keys() {
		keys = append(keys, bk)
	}
	// The channel closes at the end of the listing and also when ctx ends: tell them apart.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return keys, nil
}

// otherKeyHint says what to do when a payload was sealed with another cluster key.
func otherKeyHint(err error) string {
	if errors.Is(err, clusterkey.ErrOtherKey) {
		return "; the coordinator and every worker need the same cluster key file"
	}
	return ""
}
