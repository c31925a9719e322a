package badger

import "testing"

// TestCloseSyncsTheDirectoryOnce checks Fuscia's change to DB.close: with the value log in the
// store's own directory (Fuscia's layout), closing fsyncs that directory once, not once as Dir
// and again as ValueDir.
func TestCloseSyncsTheDirectoryOnce(t *testing.T) {
	dir := t.TempDir()
	opt := DefaultOptions(dir).WithLogger(nil)
	db, err := Open(opt)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := db.Update(func(txn *Txn) error { return txn.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatalf("Update: %v", err)
	}
	before := db.dirSyncs.Load()
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := db.dirSyncs.Load() - before; got != 1 {
		t.Fatalf("Close synced the directory %d times, want 1", got)
	}

	db, err = Open(opt)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer func() { _ = db.Close() }()
	if err := db.View(func(txn *Txn) error {
		item, err := txn.Get([]byte("k"))
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			if string(v) != "v" {
				t.Errorf("value %q", v)
			}
			return nil
		})
	}); err != nil {
		t.Fatalf("Get: %v", err)
	}
}
