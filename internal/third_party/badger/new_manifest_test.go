//go:build !windows && !plan9 && !js && !wasip1 && !aix

package badger

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Fuscia's change to a new store's manifest: it is not synced when created, only before the
// store's first table file; an empty or zeroed MANIFEST, as a crash before that sync can leave
// it, in a directory without tables opens as a new store's, and one beside a table is still
// refused.

// flushingOptions are small enough that a test's writes fill a memtable and flush it.
func flushingOptions(dir string) Options {
	return DefaultOptions(dir).WithLogger(nil).WithMemTableSize(1 << 20).WithNumMemtables(1).
		WithValueThreshold(1 << 10).WithBaseTableSize(1 << 20)
}

func hasTable(t *testing.T, dir string) bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sst") {
			return true
		}
	}
	return false
}

func TestNewManifestIsSyncedBeforeTheFirstTable(t *testing.T) {
	dir := t.TempDir()
	opt := flushingOptions(dir)
	before := manifestHeaderSyncs.Load()
	db, err := Open(opt)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := manifestHeaderSyncs.Load() - before; got != 0 {
		t.Fatalf("a new store's Open synced its manifest %d times, want 0", got)
	}
	if !db.manifest.unsynced.Load() {
		t.Fatal("a new store's manifest is marked synced")
	}
	// Fill the memtable until it is flushed into a table.
	val := make([]byte, 100)
	for i := 0; !hasTable(t, dir); i++ {
		if i > 100000 {
			t.Fatal("no table after 100 MiB of writes")
		}
		if err := db.Update(func(txn *Txn) error { return txn.Set([]byte(fmt.Sprintf("k%08d", i)), val) }); err != nil {
			t.Fatal(err)
		}
	}
	if got := manifestHeaderSyncs.Load() - before; got != 1 {
		t.Errorf("the manifest was synced %d times before the first table, want 1", got)
	}
	if db.manifest.unsynced.Load() {
		t.Error("the manifest is still marked unsynced once a table exists")
	}
}

func TestEmptyManifestWithoutTablesIsANewStore(t *testing.T) {
	for name, leftover := range map[string][]byte{"empty": nil, "zeros": make([]byte, 8), "short": {0, 0, 0}} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			opt := DefaultOptions(dir).WithLogger(nil)
			opt.KeepMemTableOnClose = 1 << 20 // as the journal's stores: the memtable stays a log
			db, err := Open(opt)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Update(func(txn *Txn) error { return txn.Set([]byte("k"), []byte("v")) }); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if hasTable(t, dir) {
				t.Fatal("the store's Close wrote a table; the case needs a store without one")
			}
			if err := os.WriteFile(filepath.Join(dir, ManifestFilename), leftover, 0o600); err != nil {
				t.Fatal(err)
			}
			db, err = Open(opt)
			if err != nil {
				t.Fatalf("Open over a %s manifest and no table: %v", name, err)
			}
			defer db.Close()
			err = db.View(func(txn *Txn) error {
				item, err := txn.Get([]byte("k"))
				if err != nil {
					return err
				}
				return item.Value(func(v []byte) error {
					if string(v) != "v" {
						return fmt.Errorf("k = %q", v)
					}
					return nil
				})
			})
			if err != nil {
				t.Errorf("the kept memtable's key after reopening: %v", err)
			}
		})
	}
}

func TestEmptyManifestBesideATableIsRefused(t *testing.T) {
	dir := t.TempDir()
	opt := flushingOptions(dir)
	db, err := Open(opt)
	if err != nil {
		t.Fatal(err)
	}
	val := make([]byte, 100)
	for i := 0; !hasTable(t, dir); i++ {
		if err := db.Update(func(txn *Txn) error { return txn.Set([]byte(fmt.Sprintf("k%08d", i)), val) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestFilename), make([]byte, 8), 0o600); err != nil {
		t.Fatal(err)
	}
	if db, err := Open(opt); err == nil {
		db.Close()
		t.Fatal("a zeroed manifest beside a table opened as a new store: its tables would be lost")
	} else if !strings.Contains(err.Error(), "manifest has bad magic") {
		t.Errorf("err = %v, want the manifest's bad magic", err)
	}
}

// Bytes a crash cannot leave in a new manifest (anything but zeros) are damage, reported as
// before, even in a directory without tables.
func TestGarbageManifestWithoutTablesIsRefused(t *testing.T) {
	dir := t.TempDir()
	opt := DefaultOptions(dir).WithLogger(nil)
	opt.KeepMemTableOnClose = 1 << 20
	db, err := Open(opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, garbage := range []string{"garbage", "garbage!", "\x00\x00\x00\x01"} {
		if err := os.WriteFile(filepath.Join(dir, ManifestFilename), []byte(garbage), 0o600); err != nil {
			t.Fatal(err)
		}
		if db, err := Open(opt); err == nil {
			db.Close()
			t.Errorf("a manifest of %q opened as a new store", garbage)
		}
	}
}
