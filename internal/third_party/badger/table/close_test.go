package table

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/y"
	"github.com/dgraph-io/ristretto/v2/z"
)

// TestTableCloseDoesNotSync checks Fuscia's Table.Close: closing a table unmaps it and closes
// its file without an msync (each one an fsync of the file, a device cache flush on ext4), as
// nothing writes a table through its mapping; and the closed table's file opens again with
// every key.
func TestTableCloseDoesNotSync(t *testing.T) {
	opts := Options{
		TableSize:          1 << 20,
		BlockSize:          4 << 10,
		BloomFalsePositive: 0.01,
		ChkMode:            options.OnTableRead,
		Compression:        options.None,
	}
	const n = 500
	key := func(i int) []byte { return y.KeyWithTs([]byte(fmt.Sprintf("key-%08d", i)), 1) }
	b := NewTableBuilder(opts)
	defer b.Close()
	for i := 0; i < n; i++ {
		b.Add(key(i), y.ValueStruct{Value: bytes.Repeat([]byte("v"), 50)}, 0)
	}
	fname := filepath.Join(t.TempDir(), NewFilename(1, ""))
	tbl, err := CreateTable(fname, b)
	if err != nil {
		t.Fatalf("CreateTable: %v", err)
	}

	before := z.MsyncCalls()
	if err := tbl.Close(-1); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := z.MsyncCalls() - before; got != 0 {
		t.Fatalf("closing a table called msync %d times; a table is never written through its mapping", got)
	}
	if tbl.Data != nil {
		t.Fatalf("the closed table still holds its mapping")
	}
	if err := tbl.Fd.Close(); err == nil {
		t.Fatalf("the closed table's file was still open")
	}

	mf, err := z.OpenMmapFile(fname, os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	again, err := OpenTable(mf, opts) // verifies every block's checksum
	if err != nil {
		t.Fatalf("OpenTable after Close: %v", err)
	}
	defer func() { _ = again.Close(-1) }()
	it := again.NewIterator(0)
	defer it.Close()
	count := 0
	for it.Rewind(); it.Valid(); it.Next() {
		if !bytes.Equal(it.Key(), key(count)) {
			t.Fatalf("key %d: %q", count, it.Key())
		}
		count++
	}
	if count != n {
		t.Fatalf("read %d keys back, want %d", count, n)
	}
}
