package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuscia/fuscia/engine/cluster/clusterkey"
	"github.com/fuscia/fuscia/engine/cluster/jsstore"
)

// clusterInfo is what the coordinator writes under "info" in the cluster bucket: what a
// worker must match to join.
type clusterInfo struct {
	Version string `json:"version"`
	ABI     int    `json:"abi"`
	KeyID   string `json:"key_id"`
}

// infoKey is clusterInfo's key in the cluster bucket.
const infoKey = "info"

// setup creates (or updates) what the coordinator owns: the results stream and its durable
// consumer, the buckets, and the work stream of each pool (ensurePool). Settings are those of
// docs/cluster.md.
type setup struct {
	c        *Conn
	replicas int

	mu    sync.Mutex
	pools map[string]jetstream.Stream
}

func newSetup(c *Conn) *setup {
	return &setup{c: c, replicas: c.replicas(), pools: map[string]jetstream.Stream{}}
}

// results creates the results stream and the coordinator's consumer of it.
func (s *setup) results(ctx context.Context) (jetstream.Stream, jetstream.Consumer, error) {
	n := s.c.names
	st, err := s.c.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: n.resultsStream(), Subjects: []string{n.resultSubjects()},
		Retention: jetstream.LimitsPolicy, Storage: jetstream.FileStorage, Replicas: s.replicas,
		MaxAge: resultsMaxAge, MaxMsgsPerSubject: 1, Duplicates: dedupWindow,
		AllowDirect: true,
		Description: "fuscia: the results of task attempts, one per attempt call, read by the coordinator",
	})
	if err != nil {
		return nil, nil, fmt.Errorf("create the results stream %s: %w", n.resultsStream(), err)
	}
	cons, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: coordinatorConsumer, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: s.c.cfg.AckWait, MaxAckPending: maxAckPending, DeliverPolicy: jetstream.DeliverAllPolicy,
		Replicas: s.replicas,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("create the consumer %s of %s: %w", coordinatorConsumer, n.resultsStream(), err)
	}
	return st, cons, nil
}

// pool creates a pool's work stream and its workers' consumer once per process.
func (s *setup) pool(ctx context.Context, pool string) (jetstream.Stream, error) {
	s.mu.Lock()
	st, ok := s.pools[pool]
	s.mu.Unlock()
	if ok {
		return st, nil
	}
	n := s.c.names
	st, err := s.c.js.CreateOrUpdateStream(ctx, workStreamConfig(n, pool, s.replicas))
	if err != nil {
		return nil, fmt.Errorf("create the work stream %s of pool %q: %w", n.workStream(pool), pool, err)
	}
	if _, err := st.CreateOrUpdateConsumer(ctx, workConsumerConfig(s.c.cfg, s.replicas)); err != nil {
		return nil, fmt.Errorf("create the consumer %s of %s: %w", consumerName, n.workStream(pool), err)
	}
	s.mu.Lock()
	s.pools[pool] = st
	s.mu.Unlock()
	return st, nil
}

// knownPools are the pools whose streams this setup made, sorted.
func (s *setup) knownPools() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.pools))
}

// remake forgets the pool's stream and creates it (and its consumer) again.
func (s *setup) remake(ctx context.Context, pool string) (jetstream.Stream, error) {
	s.mu.Lock()
	delete(s.pools, pool)
	s.mu.Unlock()
	return s.pool(ctx, pool)
}

func workStreamConfig(n names, pool string, replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name: n.workStream(pool), Subjects: []string{n.workSubjects(pool)},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, Replicas: replicas,
		Duplicates: dedupWindow, AllowDirect: true,
		// One message per attempt subject until it is acknowledged: a copy published while
		// the attempt is queued or running (by anyone who can publish there) is refused, so
		// it cannot run beside the original; one published after finds its result stored.
		MaxMsgsPerSubject: 1, Discard: jetstream.DiscardNew, DiscardNewPerSubject: true,
		Description: fmt.Sprintf("fuscia: the task attempts of pool %q waiting for a worker", pool),
	}
}

func workConsumerConfig(cfg Config, replicas int) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable: consumerName, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: cfg.AckWait, MaxDeliver: cfg.MaxDeliver + 1, MaxAckPending: maxAckPending,
		DeliverPolicy: jetstream.DeliverAllPolicy, Replicas: replicas,
	}
}

// buckets creates the key-value and object buckets.
func (s *setup) buckets(ctx context.Context) (workers, cluster jetstream.KeyValue, err error) {
	n := s.c.names
	workers, err = s.c.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: n.workersBucket(), TTL: workerTTL, History: 1, Storage: jetstream.FileStorage, Replicas: s.replicas,
		Description: "fuscia: live workers, renewed by their heartbeats",
	})
	if err != nil {
		return nil, nil, fmt.Errorf("create the bucket %s: %w", n.workersBucket(), err)
	}
	cluster, err = s.c.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: n.clusterBucket(), History: 1, Storage: jetstream.FileStorage, Replicas: s.replicas,
		Description: "fuscia: what a worker must match to join (version, ABI, cluster key id)",
	})
	if err != nil {
		return nil, nil, fmt.Errorf("create the bucket %s: %w", n.clusterBucket(), err)
	}
	if _, err := s.c.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket: n.componentsBucket(), Storage: jetstream.FileStorage, Replicas: s.replicas,
		Description: "fuscia: component packages by sha256 digest",
	}); err != nil {
		return nil, nil, fmt.Errorf("create the object store %s: %w", n.componentsBucket(), err)
	}
	if _, err := s.c.js.CreateOrUpdateKeyValue(ctx, jsstore.KVConfig(n.kvBucket(), s.replicas)); err != nil {
		return nil, nil, fmt.Errorf("create the bucket %s: %w", n.kvBucket(), err)
	}
	if _, err := s.c.js.CreateOrUpdateObjectStore(ctx, jsstore.ArtifactsConfig(n.artifactsBucket(), s.replicas)); err != nil {
		return nil, nil, fmt.Errorf("create the object store %s: %w", n.artifactsBucket(), err)
	}
	return workers, cluster, nil
}

// Stores opens the cluster's host KV and artifacts, which the coordinator created.
func (c *Conn) Stores(ctx context.Context) (*jsstore.KV, *jsstore.Artifacts, error) {
	kv, err := jsstore.OpenKV(ctx, c.js, c.names.kvBucket(), c.cfg.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("open the bucket %s: %w", c.names.kvBucket(), err)
	}
	arts, err := jsstore.OpenArtifacts(ctx, c.js, c.names.artifactsBucket(), c.cfg.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("open the object store %s: %w", c.names.artifactsBucket(), err)
	}
	return kv, arts, nil
}

// infoAAD binds the info record's seal to its place.
var infoAAD = []byte("cluster info")

// errInfoUnsealed: the info record does not open with the key, nor claims another key: it was
// written by someone without any key.
var errInfoUnsealed = errors.New("the cluster's info record is not sealed with a cluster key")

// publishInfo writes what workers must match, sealed with the cluster key: anyone who can
// publish on the bucket's subject can write the record, and only the key holder can write one
// that opens.
func (s *setup) publishInfo(ctx context.Context, kv jetstream.KeyValue, info clusterInfo) error {
	b, _ := json.Marshal(info)
	if _, err := kv.Put(ctx, infoKey, s.c.cfg.Key.Seal(b, infoAAD)); err != nil {
		return fmt.Errorf("write the cluster's info: %w", err)
	}
	return nil
}

// readInfo reads the coordinator's clusterInfo; ok is false when there is none yet. err wraps
// clusterkey.ErrOtherKey when the record is sealed with another key (its key id is then in
// info.KeyID), and is errInfoUnsealed or says what is wrong when it does not open otherwise.
func readInfo(ctx context.Context, kv jetstream.KeyValue, key *clusterkey.Key) (clusterInfo, bool, error) {
	e, err := kv.Get(ctx, infoKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return clusterInfo{}, false, nil
	}
	if err != nil {
		return clusterInfo{}, false, err
	}
	info, err := openInfo(e.Value(), key)
	return info, true, err
}

// openInfo opens a sealed info record (readInfo).
func openInfo(sealed []byte, key *clusterkey.Key) (clusterInfo, error) {
	plain, err := key.Open(sealed, infoAAD)
	if errors.Is(err, clusterkey.ErrOtherKey) {
		return clusterInfo{KeyID: clusterkey.SealedID(sealed)}, err
	}
	if err != nil {
		if clusterkey.SealedID(sealed) == "" {
			return clusterInfo{}, errInfoUnsealed
		}
		return clusterInfo{}, err
	}
	var info clusterInfo
	if err := json.Unmarshal(plain, &info); err != nil {
		return clusterInfo{}, fmt.Errorf("the cluster's info is not JSON: %w", err)
	}
	return info, nil
}
