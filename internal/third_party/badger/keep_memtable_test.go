package badger

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// storeFiles lists the memtable logs and tables in dir.
func storeFiles(t *testing.T, dir string) (mems, tables []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch filepath.Ext(e.Name()) {
		case memFileExt:
			mems = append(mems, e.Name())
		case ".sst":
			tables = append(tables, e.Name())
		}
	}
	return mems, tables
}

// TestKeepMemTableOnClose checks Fuscia's KeepMemTableOnClose: a close with a small memtable
// writes no table and leaves the memtable's log; the next open replays it and writes on after
// its last entry, so that every key of every session reads back; a memtable over the bound is
// flushed to a table at close as upstream does.
func TestKeepMemTableOnClose(t *testing.T) {
	dir := t.TempDir()
	opt := DefaultOptions(dir).WithLogger(nil)
	opt.ValueThreshold = 1 << 10
	opt.KeepMemTableOnClose = 64 << 10
	key := func(session, i int) []byte { return []byte(fmt.Sprintf("s%02d-k%04d", session, i)) }
	value := func(session, i int) []byte { return []byte(fmt.Sprintf("value %d of session %d", i, session)) }
	write := func(db *DB, session, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			if err := db.Update(func(txn *Txn) error { return txn.Set(key(session, i), value(session, i)) }); err != nil {
				t.Fatalf("session %d, set %d: %v", session, i, err)
			}
		}
	}
	check := func(db *DB, session, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			err := db.View(func(txn *Txn) error {
				item, err := txn.Get(key(session, i))
				if err != nil {
					return err
				}
				return item.Value(func(v []byte) error {
					if string(v) != string(value(session, i)) {
						return fmt.Errorf("value %q", v)
					}
					return nil
				})
			})
			if err != nil {
				t.Fatalf("session %d, key %d: %v", session, i, err)
			}
		}
	}

	// Three small sessions: each close keeps the memtable, and each open goes on with it.
	const small = 100 // ~5 KiB of log per session
	var firstMem string
	for session := 0; session < 3; session++ {
		db, err := Open(opt)
		if err != nil {
			t.Fatalf("open %d: %v", session, err)
		}
		for s := 0; s < session; s++ {
			check(db, s, small)
		}
		write(db, session, small)
		if err := db.Close(); err != nil {
			t.Fatalf("close %d: %v", session, err)
		}
		mems, tables := storeFiles(t, dir)
		if len(tables) != 0 || len(mems) != 1 {
			t.Fatalf("after session %d: tables %v, memtable logs %v; want no table and the kept log", session, tables, mems)
		}
		if session == 0 {
			firstMem = mems[0]
		} else if mems[0] != firstMem {
			t.Fatalf("after session %d the log is %s, not %s: the open did not go on with the kept memtable", session, mems[0], firstMem)
		}
	}

	// A session that takes the memtable over the bound: the close flushes it to a table.
	db, err := Open(opt)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	write(db, 3, 2000) // ~100 KiB
	if err := db.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	mems, tables := storeFiles(t, dir)
	if len(tables) == 0 || len(mems) != 0 {
		t.Fatalf("after a large session: tables %v, memtable logs %v; want the memtable flushed", tables, mems)
	}

	db, err = Open(opt)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer func() { _ = db.Close() }()
	for s := 0; s < 3; s++ {
		check(db, s, small)
	}
	check(db, 3, 2000)
	if !strings.HasSuffix(firstMem, memFileExt) {
		t.Fatalf("log name %q", firstMem)
	}
}

// TestKeptMemTableDamaged: a kept memtable log (cut to its last entry at Close) with a damaged
// entry in the middle makes Open fail, where the usual replay would end the log at the damage
// and drop every later entry without a word (Fuscia).
func TestKeptMemTableDamaged(t *testing.T) {
	dir := t.TempDir()
	opt := DefaultOptions(dir).WithLogger(nil)
	opt.ValueThreshold = 1 << 10
	opt.KeepMemTableOnClose = 64 << 10
	db, err := Open(opt)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		if err := db.Update(func(txn *Txn) error {
			return txn.Set([]byte(fmt.Sprintf("k%03d", i)), []byte(fmt.Sprintf("value %d", i)))
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	mems, _ := storeFiles(t, dir)
	if len(mems) != 1 {
		t.Fatalf("memtable logs %v; want the kept one", mems)
	}
	path := filepath.Join(dir, mems[0])
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err = Open(opt)
	if err == nil {
		_ = db.Close()
		t.Fatal("Open replayed a damaged kept memtable log without an error")
	}
	var ke *KeptLogError
	if !errors.As(err, &ke) || ke.Path != path || ke.End >= ke.Size || ke.Size != int64(len(data)) {
		t.Fatalf("Open's error %v; want a *KeptLogError naming %s, its entries ending before its %d bytes", err, path, len(data))
	}
	// Refused before the log was sized again for writing.
	after, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(after, data) {
		t.Fatalf("the refused log changed (%d bytes, was %d): %v", len(after), len(data), err)
	}
}
