//go:build !windows && !plan9 && !js && !wasip1 && !aix

package badger

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestNewStoreSyncsTheDirectoryOnce checks Fuscia's change to a new store's Open: the manifest
// it creates is named durably by one directory sync (upstream made two, one for the manifest and
// one for the key registry), also when a key registry is already there.
func TestNewStoreSyncsTheDirectoryOnce(t *testing.T) {
	dir := t.TempDir()
	opt := DefaultOptions(dir).WithLogger(nil)
	open := func(what string) {
		t.Helper()
		before := dirSyncCalls.Load()
		db, err := Open(opt)
		if err != nil {
			t.Fatalf("%s: Open: %v", what, err)
		}
		got := dirSyncCalls.Load() - before
		if err := db.Update(func(txn *Txn) error { return txn.Set([]byte(what), []byte("v")) }); err != nil {
			t.Fatalf("%s: Update: %v", what, err)
		}
		if err := db.Close(); err != nil {
			t.Fatalf("%s: Close: %v", what, err)
		}
		if got != 1 {
			t.Fatalf("%s: Open synced the directory %d times, want 1", what, got)
		}
	}
	open("new store")
	if _, err := os.Stat(filepath.Join(dir, KeyRegistryFileName)); !os.IsNotExist(err) {
		t.Fatalf("a store without an encryption key has a key registry file (%v)", err)
	}
	// A store an earlier build made has a registry: write one as it did, and remove the
	// manifest, so that Open creates a manifest beside an existing registry.
	if err := WriteKeyRegistry(newKeyRegistry(KeyRegistryOptions{Dir: dir}), KeyRegistryOptions{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, ManifestFilename)); err != nil {
		t.Fatal(err)
	}
	// The tables the first store wrote are unlisted now: Open removes them (and syncs the
	// directory for that, too), so keep only the key registry and the logs.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if filepath.Ext(e.Name()) == ".sst" {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	open("a manifest missing")
}

// TestNewDiscardFileNotWritten checks Fuscia's change to InitDiscardStats: a new store's
// DISCARD file, which reads as zeros when created, is not written, so that DB.Close's msync of
// it has nothing to write.
func TestNewDiscardFileNotWritten(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, discardFname))
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() != 1<<20 {
		t.Fatalf("DISCARD is %d bytes, want 1 MiB", info.Size())
	}
	if blocks := info.Sys().(*syscall.Stat_t).Blocks; blocks != 0 {
		t.Errorf("DISCARD has %d blocks written, want none (a sparse file)", blocks)
	}
	db, err = Open(DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestKeyRegistryOnlyWithEncryption checks Fuscia's change to OpenKeyRegistry: a store without
// an encryption key writes no KEYREGISTRY file and reopens; an encrypted store writes one, and
// refuses to open without its key.
func TestKeyRegistryOnlyWithEncryption(t *testing.T) {
	dir := t.TempDir()
	for range 2 {
		db, err := Open(DefaultOptions(dir).WithLogger(nil))
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(func(txn *Txn) error { return txn.Set([]byte("k"), []byte("v")) }); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, KeyRegistryFileName)); !os.IsNotExist(err) {
			t.Fatalf("key registry of a store without encryption: %v", err)
		}
	}

	dir = t.TempDir()
	key := []byte("0123456789abcdef")
	eopt := DefaultOptions(dir).WithLogger(nil).WithEncryptionKey(key).WithIndexCacheSize(1 << 20)
	db, err := Open(eopt)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(txn *Txn) error { return txn.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, KeyRegistryFileName)); err != nil {
		t.Fatalf("key registry of an encrypted store: %v", err)
	}
	if db, err := Open(DefaultOptions(dir).WithLogger(nil)); err == nil {
		_ = db.Close()
		t.Fatal("an encrypted store opened without its key")
	}
	db, err = Open(eopt)
	if err != nil {
		t.Fatalf("reopen with the key: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
