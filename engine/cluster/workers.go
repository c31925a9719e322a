package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/nats-io/nats.go/jetstream"
)

// Workers lists the live workers (those whose heartbeat is in the workers bucket), by id.
func (c *Coordinator) Workers(ctx context.Context) ([]WorkerInfo, error) {
	lister, err := c.workers.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the workers: %w", err)
	}
	var out []WorkerInfo
	for k := range lister.Keys() {
		e, err := c.workers.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // gone since the listing
		}
		if err != nil {
			return nil, fmt.Errorf("read worker %s: %w", k, err)
		}
		var w WorkerInfo
		if json.Unmarshal(e.Value(), &w) == nil {
			out = append(out, w)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// WorkersByPool counts the live workers of each pool (a worker of two pools counts in both;
// a pool it stopped taking, plugin_missing, does not count; nor does a worker of another
// cluster key, left from before the coordinator's key changed). Every pool the coordinator knows
// is present, with 0 when it has no worker.
func (c *Coordinator) WorkersByPool(ctx context.Context) map[string]int64 {
	out := map[string]int64{}
	c.setup.mu.Lock()
	for p := range c.setup.pools {
		out[p] = 0
	}
	c.setup.mu.Unlock()
	ws, err := c.Workers(ctx)
	if err != nil {
		return out
	}
	for _, w := range ws {
		if w.KeyID != "" && w.KeyID != c.conn.cfg.Key.ID() {
			continue // sealed with another key: it cannot run this cluster's attempts
		}
		for _, p := range w.Pools {
			if _, off := w.Disabled[p]; !off {
				out[p]++
			}
		}
	}
	return out
}
