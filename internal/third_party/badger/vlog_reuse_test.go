package badger

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dgraph-io/ristretto/v2/z"
)

// reuseOptions are small-store options for the value-log reuse tests: values of 1 KiB and more go
// to the value log, whose files are mapped at 2 MiB, as are the memtable logs.
func reuseOptions(dir string) Options {
	opt := DefaultOptions(dir).WithLogger(nil)
	opt.ValueThreshold = 1 << 10
	opt.ValueLogFileSize = 1 << 20
	opt.MemTableSize = 1 << 20
	return opt
}

// vlogFiles lists the value-log files of dir by name, with their sizes.
func vlogFiles(t *testing.T, dir string) (names []string, sizes map[string]int64) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	sizes = make(map[string]int64)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".vlog") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, e.Name())
		sizes[e.Name()] = info.Size()
	}
	slices.Sort(names)
	return names, sizes
}

func openReuse(t *testing.T, opt Options) *DB {
	t.Helper()
	db, err := Open(opt)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return db
}

func closeReuse(t *testing.T, db *DB) {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func setReuse(t *testing.T, db *DB, key string, value []byte) {
	t.Helper()
	if err := db.Update(func(txn *Txn) error { return txn.Set([]byte(key), value) }); err != nil {
		t.Fatalf("set %s: %v", key, err)
	}
}

func wantValue(t *testing.T, db *DB, key string, want []byte) {
	t.Helper()
	err := db.View(func(txn *Txn) error {
		item, err := txn.Get([]byte(key))
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			if !bytes.Equal(v, want) {
				return fmt.Errorf("value of %d bytes, want %d", len(v), len(want))
			}
			return nil
		})
	})
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
}

// bigValue is a value that goes to the value log.
func bigValue(tag byte) []byte { return bytes.Repeat([]byte{tag}, 4<<10) }

// TestReopenReusesEmptyValueLog checks Fuscia's change to valueLog.open: an open whose newest
// value-log file holds only its header writes on in that file instead of creating the next one,
// so that a store whose values stay in the LSM tree keeps one value-log file of the same id
// across opens (upstream created a file at every open and deleted the previous one at the next).
// A file that holds values is not reused, and every value reads back across the opens.
func TestReopenReusesEmptyValueLog(t *testing.T) {
	dir := t.TempDir()
	opt := reuseOptions(dir)

	db := openReuse(t, opt)
	setReuse(t, db, "small0", []byte("v0"))
	closeReuse(t, db)
	first, _ := vlogFiles(t, dir)
	if len(first) != 1 {
		t.Fatalf("value-log files after the first session: %v, want one", first)
	}

	for i := 1; i <= 3; i++ {
		db = openReuse(t, opt)
		setReuse(t, db, fmt.Sprintf("small%d", i), []byte("v"))
		closeReuse(t, db)
		names, sizes := vlogFiles(t, dir)
		if !slices.Equal(names, first) {
			t.Fatalf("value-log files after session %d: %v, want %v (the empty file reused)", i, names, first)
		}
		if sizes[first[0]] != vlogHeaderSize {
			t.Fatalf("%s is %d bytes after session %d, want its header's %d", first[0], sizes[first[0]], i, vlogHeaderSize)
		}
	}

	// A value written into the reused file is there after a reopen; that file holds it, so the
	// next open creates a new file, and the open after reuses that one.
	db = openReuse(t, opt)
	setReuse(t, db, "big1", bigValue('a'))
	closeReuse(t, db)
	names, sizes := vlogFiles(t, dir)
	if !slices.Equal(names, first) || sizes[first[0]] <= vlogHeaderSize {
		t.Fatalf("after writing a value: %v %v, want %v holding it", names, sizes, first)
	}
	db = openReuse(t, opt)
	wantValue(t, db, "big1", bigValue('a'))
	closeReuse(t, db)
	second, _ := vlogFiles(t, dir)
	if len(second) != 2 || second[0] != first[0] {
		t.Fatalf("after reopening a file holding a value: %v, want %v and a new one", second, first)
	}
	for i := 0; i < 2; i++ {
		db = openReuse(t, opt)
		wantValue(t, db, "big1", bigValue('a'))
		setReuse(t, db, fmt.Sprintf("late%d", i), []byte("v"))
		closeReuse(t, db)
		if names, _ := vlogFiles(t, dir); !slices.Equal(names, second) {
			t.Fatalf("value-log files: %v, want %v", names, second)
		}
	}
	db = openReuse(t, opt)
	defer closeReuse(t, db)
	wantValue(t, db, "big1", bigValue('a'))
	for i := 0; i <= 3; i++ {
		want := []byte("v")
		if i == 0 {
			want = []byte("v0")
		}
		wantValue(t, db, fmt.Sprintf("small%d", i), want)
	}
}

// TestReusedValueLogCloseDoesNotSync checks the close side of the reuse: a reused file nothing
// was written to is closed without an msync (its header was synced by the close that left it),
// one written to is synced as upstream syncs the writable file.
func TestReusedValueLogCloseDoesNotSync(t *testing.T) {
	dir := t.TempDir()
	opt := reuseOptions(dir)
	db := openReuse(t, opt)
	setReuse(t, db, "first", bigValue('a'))
	closeReuse(t, db)
	closeReuse(t, openReuse(t, opt)) // the file holding a value, and a new, empty one

	closeSyncs := func(big bool) int64 {
		t.Helper()
		db := openReuse(t, opt)
		if db.vlog.reusedFid == 0 {
			t.Fatal("the open did not reuse the empty value-log file")
		}
		setReuse(t, db, "small", []byte("v"))
		if big {
			setReuse(t, db, "big", bigValue('b'))
		}
		before := z.MsyncCalls()
		closeReuse(t, db)
		return z.MsyncCalls() - before
	}
	unwritten := closeSyncs(false)
	written := closeSyncs(true)
	if written != unwritten+1 {
		t.Fatalf("msyncs at close: %d with nothing in the reused file, %d with a value in it; want n and n+1",
			unwritten, written)
	}
	db = openReuse(t, opt)
	defer closeReuse(t, db)
	wantValue(t, db, "first", bigValue('a'))
	wantValue(t, db, "big", bigValue('b'))
}

// copyStoreAsCrashed copies the files of src (a store a DB has open) into a new directory as a
// crash would leave them: each file at its current size, the value-log file mapped at its full
// size included (written sparse: its bytes up to the last non-zero one, then its size).
func copyStoreAsCrashed(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == lockFile {
			continue
		}
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(in)
		in.Close()
		if err != nil {
			t.Fatal(err)
		}
		end := len(data)
		for end > 0 && data[end-1] == 0 {
			end--
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := out.Write(data[:end]); err != nil {
			t.Fatal(err)
		}
		if err := out.Truncate(int64(len(data))); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestReusedValueLogAfterCrash checks opens of stores left by a process that did not close: the
// reused file is then at its full mapped size, so the open cuts it and creates a new file as
// upstream does (a file a crash left is never reused), and every value reads back, the one
// written into the reused file included.
func TestReusedValueLogAfterCrash(t *testing.T) {
	for _, written := range []bool{false, true} {
		t.Run(fmt.Sprintf("written=%v", written), func(t *testing.T) {
			dir := t.TempDir()
			opt := reuseOptions(dir)
			db := openReuse(t, opt)
			setReuse(t, db, "before", bigValue('x'))
			closeReuse(t, db)
			closeReuse(t, openReuse(t, opt)) // a new, empty file
			names, _ := vlogFiles(t, dir)

			db = openReuse(t, opt)
			if db.vlog.reusedFid == 0 {
				t.Fatal("the open did not reuse the empty value-log file")
			}
			setReuse(t, db, "small", []byte("v"))
			if written {
				setReuse(t, db, "crash", bigValue('c'))
			}
			if err := db.Sync(); err != nil {
				t.Fatal(err)
			}
			crashed := copyStoreAsCrashed(t, dir)
			closeReuse(t, db)

			copt := reuseOptions(crashed)
			db = openReuse(t, copt)
			if db.vlog.reusedFid != 0 {
				t.Fatal("an open after a crash reused the file the crashed process was writing")
			}
			wantValue(t, db, "before", bigValue('x'))
			wantValue(t, db, "small", []byte("v"))
			if written {
				wantValue(t, db, "crash", bigValue('c'))
			}
			setReuse(t, db, "after", bigValue('y'))
			closeReuse(t, db)
			got, sizes := vlogFiles(t, crashed)
			if len(got) != len(names)+1 || !slices.Equal(got[:len(names)], names) {
				t.Fatalf("value-log files after the crash: %v, want %v and a new one", got, names)
			}
			last := names[len(names)-1]
			if !written && sizes[last] != vlogHeaderSize {
				t.Fatalf("%s is %d bytes, want it cut to its header", last, sizes[last])
			}

			db = openReuse(t, copt)
			defer closeReuse(t, db)
			for key, v := range map[string][]byte{"before": bigValue('x'), "small": []byte("v"), "after": bigValue('y')} {
				wantValue(t, db, key, v)
			}
			if written {
				wantValue(t, db, "crash", bigValue('c'))
			}
		})
	}
}

// TestEncryptedStoreDoesNotReuseValueLog checks that an encrypted store keeps upstream's
// behaviour: each open writes to a new value-log file, with the newest data key and a new IV.
func TestEncryptedStoreDoesNotReuseValueLog(t *testing.T) {
	dir := t.TempDir()
	opt := reuseOptions(dir)
	opt.EncryptionKey = bytes.Repeat([]byte{7}, 32)
	opt.IndexCacheSize = 1 << 20
	var maxFids []uint32
	for i := 0; i < 3; i++ {
		db := openReuse(t, opt)
		if db.vlog.reusedFid != 0 {
			t.Fatal("an encrypted store reused a value-log file")
		}
		maxFids = append(maxFids, db.vlog.maxFid)
		setReuse(t, db, fmt.Sprintf("k%d", i), []byte("v"))
		closeReuse(t, db)
	}
	if maxFids[0] == maxFids[1] || maxFids[1] == maxFids[2] {
		t.Fatalf("writable value-log ids %v, want a new one at each open", maxFids)
	}
}
