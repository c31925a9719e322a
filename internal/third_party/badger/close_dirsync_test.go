package badger

import (
	"os"
	"path/filepath"
	"testing"
)

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

// TestOpenSyncsTheDirectoryAfterACrash checks Fuscia's change to Open: the directory sync
// upstream made after opening the tables is made only when the directory may hold what an
// earlier process left unsynced — its pid file is there (a process that did not close the DB to
// the end) — and after removing a table file the manifest does not list; a new store, or one
// whose last close went to the end, is not synced again.
func TestOpenSyncsTheDirectoryAfterACrash(t *testing.T) {
	dir := t.TempDir()
	opt := DefaultOptions(dir).WithLogger(nil)
	openSyncs := func(what string, want int32) {
		t.Helper()
		db, err := Open(opt)
		if err != nil {
			t.Fatalf("%s: Open: %v", what, err)
		}
		got := db.dirSyncs.Load()
		if err := db.Update(func(txn *Txn) error { return txn.Set([]byte(what), []byte("v")) }); err != nil {
			t.Fatalf("%s: Update: %v", what, err)
		}
		if err := db.Close(); err != nil {
			t.Fatalf("%s: Close: %v", what, err)
		}
		if got != want {
			t.Fatalf("%s: Open synced the directory %d times, want %d", what, got, want)
		}
		if _, err := os.Stat(filepath.Join(dir, lockFile)); !os.IsNotExist(err) {
			t.Fatalf("%s: the pid file is still there after Close (%v)", what, err)
		}
	}
	openSyncs("new store", 0)
	openSyncs("after a close", 0)

	// A process that did not close leaves its pid file.
	if err := os.WriteFile(filepath.Join(dir, lockFile), []byte("12345\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	openSyncs("after a crash", 1)
	openSyncs("after the close after the crash", 0)

	// A table file the manifest does not list (a crash between writing a table and listing it).
	unlisted := filepath.Join(dir, "000099.sst")
	if err := os.WriteFile(unlisted, []byte("not listed"), 0o666); err != nil {
		t.Fatal(err)
	}
	openSyncs("with an unlisted table", 1)
	if _, err := os.Stat(unlisted); !os.IsNotExist(err) {
		t.Fatalf("the unlisted table is still there (%v)", err)
	}

	db, err := Open(opt)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	for _, key := range []string{"new store", "after a close", "after a crash", "after the close after the crash", "with an unlisted table"} {
		if err := db.View(func(txn *Txn) error { _, err := txn.Get([]byte(key)); return err }); err != nil {
			t.Fatalf("get %q: %v", key, err)
		}
	}
}
