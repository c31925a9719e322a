package journal

import (
	"testing"

	badger "github.com/dgraph-io/badger/v4"
)

// TestApplyJobIsOneCommit: the applier writes a job's batches to Badger in one transaction
// (one commit, so one version per key), in the batches' order: a key set in one batch and set
// again or deleted in a later one ends as the later batch left it. Committing per batch cost
// Badger's hand-offs once per batch (docs/performance.md, item 4, session 7).
func TestApplyJobIsOneCommit(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer closeStore(t, s)
	set := func(k, v string) op { return op{key: []byte(k), value: []byte(v)} }
	del := func(k string) op { return op{key: []byte(k), del: true} }
	req := func(ops ...op) *request { return &request{ops: ops} }
	s.apply([]*batch{
		{reqs: []*request{req(set("zz/a", "1"), set("zz/b", "1")), req(set("zz/c", "1"))}},
		{reqs: []*request{req(set("zz/a", "2"), del("zz/b"))}},
		{reqs: []*request{req(set("zz/d", "3"))}},
	})
	if f := s.fatal.Load(); f != nil {
		t.Fatalf("apply failed: %v", *f)
	}

	type version struct {
		value   string
		deleted bool
		ts      uint64
	}
	got := map[string][]version{}
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{AllVersions: true, Prefix: []byte("zz/")})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			v := version{deleted: item.IsDeletedOrExpired(), ts: item.Version()}
			if !v.deleted {
				b, err := item.ValueCopy(nil)
				if err != nil {
					return err
				}
				v.value = string(b)
			}
			got[string(item.Key())] = append(got[string(item.Key())], v)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	want := map[string]version{"zz/a": {value: "2"}, "zz/b": {deleted: true}, "zz/c": {value: "1"}, "zz/d": {value: "3"}}
	var ts uint64
	for k, w := range want {
		vs := got[k]
		if len(vs) != 1 {
			t.Fatalf("%s has %d versions %+v, want 1 (one commit for the job)", k, len(vs), vs)
		}
		if vs[0].value != w.value || vs[0].deleted != w.deleted {
			t.Errorf("%s = %+v, want %+v (the last batch's write)", k, vs[0], w)
		}
		if ts == 0 {
			ts = vs[0].ts
		} else if vs[0].ts != ts {
			t.Errorf("%s was committed at version %d, another key at %d: the job took more than one commit", k, vs[0].ts, ts)
		}
	}
	if len(got) != len(want) {
		t.Errorf("keys under zz/: %v, want those of %v", got, want)
	}
}
