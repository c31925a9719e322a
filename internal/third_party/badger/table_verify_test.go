package badger

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// dirContents maps each file of dir to its bytes.
func dirContents(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = data
	}
	return files
}

// TestVerifyTablesOnOpen (Fuscia): with VerifyTablesOnOpen, Open refuses a store whose table has
// 3 flipped bytes anywhere, the footer included, with a *TableOpenError naming the table — never
// a panic, never a store opened without the table — and changes no file of the store, neither
// the kept memtable log nor a table file the manifest does not list; the undamaged store opens
// and reads back, and only then is the unlisted file removed.
func TestVerifyTablesOnOpen(t *testing.T) {
	dir := t.TempDir()
	opt := DefaultOptions(dir).WithLogger(nil)
	opt.BlockSize = 1 << 10 // several blocks in a small table
	opt.VerifyTablesOnOpen = true
	put := func(db *DB, from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			if err := db.Update(func(txn *Txn) error {
				return txn.Set([]byte(fmt.Sprintf("k%04d", i)), []byte(fmt.Sprintf("value %d", i)))
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	db, err := Open(opt) // without KeepMemTableOnClose: Close writes a table
	if err != nil {
		t.Fatal(err)
	}
	put(db, 0, 400)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	opt.KeepMemTableOnClose = 64 << 10
	db, err = Open(opt)
	if err != nil {
		t.Fatal(err)
	}
	put(db, 400, 410) // kept in its log at Close
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	mems, tables := storeFiles(t, dir)
	if len(mems) != 1 || len(tables) != 1 {
		t.Fatalf("logs %v, tables %v; want one of each", mems, tables)
	}
	sst := filepath.Join(dir, tables[0])
	orig, err := os.ReadFile(sst)
	if err != nil {
		t.Fatal(err)
	}
	// A table file the manifest does not list (a crash's leftover).
	if err := os.WriteFile(filepath.Join(dir, "000099.sst"), orig, 0o644); err != nil {
		t.Fatal(err)
	}
	offsets := []int{len(orig) - 1, len(orig) - 3, len(orig) - 6, len(orig) - 10}
	for off := 0; off < len(orig); off += len(orig)/30 | 1 {
		offsets = append(offsets, off)
	}
	for _, off := range offsets {
		damaged := bytes.Clone(orig)
		for i := off; i < off+3 && i < len(damaged); i++ {
			damaged[i] ^= 0xff
		}
		if err := os.WriteFile(sst, damaged, 0o644); err != nil {
			t.Fatal(err)
		}
		before := dirContents(t, dir)
		db, err := Open(opt)
		if err == nil {
			_ = db.Close()
			t.Fatalf("3 bytes flipped at offset %d of %d: the store opened", off, len(orig))
		}
		var te *TableOpenError
		if !errors.As(err, &te) || te.Path != sst {
			t.Fatalf("3 bytes flipped at offset %d: error %v; want a *TableOpenError naming %s", off, err, sst)
		}
		after := dirContents(t, dir)
		if len(after) != len(before) {
			t.Fatalf("offset %d: the refused Open changed the files: %d, were %d", off, len(after), len(before))
		}
		for name, data := range before {
			if !bytes.Equal(after[name], data) {
				t.Fatalf("offset %d: the refused Open changed %s", off, name)
			}
		}
	}
	if err := os.WriteFile(sst, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err = Open(opt)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.View(func(txn *Txn) error {
		for _, i := range []int{0, 399, 409} {
			if _, err := txn.Get([]byte(fmt.Sprintf("k%04d", i))); err != nil {
				return fmt.Errorf("k%04d: %w", i, err)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "000099.sst")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the unlisted table file is still there after an Open: %v", err)
	}
}
