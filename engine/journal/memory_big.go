package journal

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/dgraph-io/badger/v4"
)

// A store in memory keeps a value over memMaxValue outside Badger, which in memory has no value
// log to put it in: Badger holds a marker under the key (bigValueMeta in the entry's user meta,
// the value's id as its value) and bigValues holds the value. Reads go through Store.value,
// which follows the marker. So `fuscia test` takes the outputs `apply` takes (up to the store's
// maxValue), not only those under 1 MiB.
//
// A value replaced or deleted is freed once no read that could still see it is under way: a
// read's Badger transaction sees the store as it was when the read started, so a value freed
// by a commit stays until every read that started before that commit has ended.

// bigValueMeta marks a Badger entry whose value is a bigValues id. A store on disk never sets
// user meta.
const bigValueMeta byte = 0xb1

// memStoreMaxValue is the largest value a store in memory takes: the file store's default.
const memStoreMaxValue = valueLogFileSize

type bigValues struct {
	// Writer-owned (memWriter's goroutine): the id of each key whose value is here, the last
	// id given, and the ids the batch being written replaced or deleted.
	byKey map[string]uint64
	last  uint64
	dead  []uint64

	mu   sync.Mutex
	vals map[uint64][]byte
	// epoch moves on at each commit that frees values; reads counts the reads under way by the
	// epoch they started in; graves holds the values freed at each epoch, oldest first, until
	// no read started in or before that epoch is under way.
	epoch  uint64
	reads  map[uint64]int
	graves []grave
}

type grave struct {
	epoch uint64
	ids   []uint64
}

func newBigValues() *bigValues {
	return &bigValues{byKey: map[string]uint64{}, vals: map[uint64][]byte{}, reads: map[uint64]int{}}
}

// set applies o to txn, keeping its value here when it is over memMaxValue. Writer only.
func (b *bigValues) set(txn *badger.Txn, o op) error {
	old, had := b.byKey[string(o.key)]
	var err error
	switch {
	case o.del:
		err = txn.Delete(o.key)
	case len(o.value) <= memMaxValue:
		err = txn.Set(o.key, o.value)
	default:
		b.last++
		id := b.last
		b.mu.Lock()
		b.vals[id] = bytes.Clone(o.value) // the request's buffer is its owner's again once answered
		b.mu.Unlock()
		var marker [8]byte
		binary.BigEndian.PutUint64(marker[:], id)
		if err = txn.SetEntry(badger.NewEntry(o.key, marker[:]).WithMeta(bigValueMeta)); err != nil {
			b.mu.Lock()
			delete(b.vals, id)
			b.mu.Unlock()
			return err
		}
		if had {
			b.dead = append(b.dead, old)
		}
		b.byKey[string(o.key)] = id
		return nil
	}
	if err == nil && had {
		b.dead = append(b.dead, old)
		delete(b.byKey, string(o.key))
	}
	return err
}

// committed frees the values the batch just committed replaced or deleted, once the reads that
// may still see them have ended. Writer only.
func (b *bigValues) committed() {
	if len(b.dead) == 0 {
		return
	}
	b.mu.Lock()
	b.graves = append(b.graves, grave{epoch: b.epoch, ids: b.dead})
	b.epoch++
	b.sweep()
	b.mu.Unlock()
	b.dead = nil
}

// startRead registers a read about to open its Badger transaction and returns what endRead
// takes.
func (b *bigValues) startRead() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reads[b.epoch]++
	return b.epoch
}

func (b *bigValues) endRead(epoch uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.reads[epoch]--; b.reads[epoch] == 0 {
		delete(b.reads, epoch)
	}
	b.sweep()
}

// sweep frees the graves no read under way can reach: those of epochs before the oldest read's.
// Under mu.
func (b *bigValues) sweep() {
	oldest := b.epoch + 1
	for e := range b.reads {
		oldest = min(oldest, e)
	}
	n := 0
	for n < len(b.graves) && b.graves[n].epoch < oldest {
		for _, id := range b.graves[n].ids {
			delete(b.vals, id)
		}
		n++
	}
	b.graves = b.graves[n:]
}

// get returns the value a marker names.
func (b *bigValues) get(marker []byte) ([]byte, bool) {
	if len(marker) != 8 {
		return nil, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.vals[binary.BigEndian.Uint64(marker)]
	return v, ok
}

// value calls fn with the value of item, following a store in memory's marker to a value kept
// outside Badger, or fails as itemValue does. fn must not keep or change the slice.
func (s *Store) value(item *badger.Item, fn func([]byte) error) error {
	if s.big == nil || item.UserMeta() != bigValueMeta {
		return itemValue(item, fn)
	}
	return item.Value(func(marker []byte) error {
		v, ok := s.big.get(marker)
		if !ok {
			return fmt.Errorf("the value of key %.60q is missing from the store in memory", item.Key())
		}
		return fn(v)
	})
}

// valueCopy is value with a copy of the value.
func (s *Store) valueCopy(item *badger.Item) ([]byte, error) {
	var out []byte
	err := s.value(item, func(v []byte) error {
		out = append([]byte{}, v...)
		return nil
	})
	return out, err
}
