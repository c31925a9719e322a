package sdk

import (
	"context"
	"fmt"
	"strconv"

	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// KV is the host's key-value store as one call sees it (see Call.KV). Values are bytes, stored
// as given. Its methods take the handler's ctx, so that they stop with it.
type KV struct {
	host hostRef
}

// Get returns the value of key and whether it is set.
func (k KV) Get(ctx context.Context, key string) ([]byte, bool, error) {
	client, err := k.host.get()
	if err != nil {
		return nil, false, fmt.Errorf("kv get %s: %w", strconv.Quote(key), err)
	}
	resp, err := client.KVGet(ctx, &pluginv1.KVGetRequest{CallId: k.host.callID, Key: key})
	if err != nil {
		return nil, false, fmt.Errorf("kv get %s: %w", strconv.Quote(key), err)
	}
	if !resp.Found {
		return nil, false, nil
	}
	if resp.Value == nil {
		return []byte{}, true, nil
	}
	return resp.Value, true, nil
}

// Set stores value under key.
func (k KV) Set(ctx context.Context, key string, value []byte) error {
	client, err := k.host.get()
	if err == nil {
		_, err = client.KVSet(ctx, &pluginv1.KVSetRequest{CallId: k.host.callID, Key: key, Value: value})
	}
	if err != nil {
		return fmt.Errorf("kv set %s: %w", strconv.Quote(key), err)
	}
	return nil
}

// Delete removes key; deleting a key that is not set does nothing.
func (k KV) Delete(ctx context.Context, key string) error {
	client, err := k.host.get()
	if err == nil {
		_, err = client.KVDelete(ctx, &pluginv1.KVDeleteRequest{CallId: k.host.callID, Key: key})
	}
	if err != nil {
		return fmt.Errorf("kv delete %s: %w", strconv.Quote(key), err)
	}
	return nil
}
