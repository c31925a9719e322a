package table

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/y"
	"golang.org/x/sys/unix"
)

// minorFaults is the calling thread's count of minor page faults so far. The caller locks its
// goroutine to the thread; other threads' faults (the runtime's, the race detector's) are not
// counted.
func minorFaults(t *testing.T) int64 {
	t.Helper()
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return ru.Minflt
}

// TestCreateTableWritesThroughTheFile checks Fuscia's CreateTable: the table reaches its file
// by write(2), not by copying it into a mapping page by page (a page fault each), and the file
// holds it: the table opens from it, every key reads back, and the file's bytes are the
// builder's.
func TestCreateTableWritesThroughTheFile(t *testing.T) {
	opts := Options{
		TableSize:          4 << 20,
		BlockSize:          4 << 10,
		BloomFalsePositive: 0.01,
		ChkMode:            options.NoVerification,
		Compression:        options.None,
	}
	const n = 8000
	key := func(i int) []byte { return y.KeyWithTs([]byte(fmt.Sprintf("key-%08d", i)), 1) }
	value := bytes.Repeat([]byte("v"), 100)
	build := func() *Builder {
		b := NewTableBuilder(opts)
		for i := 0; i < n; i++ {
			b.Add(key(i), y.ValueStruct{Value: value}, 0)
		}
		return b
	}

	fname := filepath.Join(t.TempDir(), NewFilename(1, ""))
	b := build()
	defer b.Close()
	// Only CreateTable's own faults: on this thread, with no collection starting meanwhile.
	runtime.LockOSThread()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	before := minorFaults(t)
	tbl, err := CreateTable(fname, b)
	faults := minorFaults(t) - before
	runtime.UnlockOSThread()
	if err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	defer func() { _ = tbl.DecrRef() }()

	st, err := os.Stat(fname)
	if err != nil {
		t.Fatal(err)
	}
	pages := st.Size() / int64(os.Getpagesize())
	t.Logf("table of %d bytes (%d pages): %d minor faults in CreateTable", st.Size(), pages, faults)
	if pages < 128 {
		t.Fatalf("the table is %d pages; the test needs a bigger one to mean anything", pages)
	}
	// Opening reads the index at the end of the file (a few pages, more under the race
	// detector: 60 to 127 faults measured for this table, the heap's first touches included);
	// writing through a mapping faults every page of the table on top of those. pages/2 was
	// crossed once under -race in a CI run (127 for 242 pages); pages still tells them apart.
	if faults > pages {
		t.Fatalf("CreateTable took %d minor page faults for a table of %d pages: is it writing through a mapping again?", faults, pages)
	}

	// The file holds what the builder built.
	want := build()
	defer want.Close()
	bd := want.Done()
	wantBytes := make([]byte, bd.Size)
	bd.Copy(wantBytes)
	got, err := os.ReadFile(fname)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, wantBytes) {
		t.Fatalf("the table file (%d bytes) differs from the builder's table (%d bytes)", len(got), len(wantBytes))
	}

	it := tbl.NewIterator(0)
	defer it.Close()
	i := 0
	for it.Rewind(); it.Valid(); it.Next() {
		if !bytes.Equal(it.Key(), key(i)) || !bytes.Equal(it.Value().Value, value) {
			t.Fatalf("entry %d: key %q", i, it.Key())
		}
		i++
	}
	if i != n {
		t.Fatalf("read %d entries back, want %d", i, n)
	}
	again := build()
	defer again.Close()
	if _, err := CreateTable(fname, again); err == nil {
		t.Fatalf("CreateTable over an existing file: no error")
	}
}

// TestIndexBuilderStartsSmall checks Fuscia's indexBuilderSize: finishing a table of ~1 MB (an
// index of a few KiB) allocates far less than upstream's 3 MiB index buffer, and an index
// bigger than the first buffer (a table of many small keys, its bloom filter and block offsets
// past 64 KiB) still builds and reads back.
func TestIndexBuilderStartsSmall(t *testing.T) {
	opts := Options{TableSize: 64 << 20, BlockSize: 4 << 10, BloomFalsePositive: 0.01, Compression: options.None}
	value := bytes.Repeat([]byte("v"), 100)
	build := func(n, valueLen int) *Builder {
		b := NewTableBuilder(opts)
		for i := 0; i < n; i++ {
			b.Add(y.KeyWithTs([]byte(fmt.Sprintf("key-%09d", i)), 1), y.ValueStruct{Value: value[:valueLen]}, 0)
		}
		return b
	}

	small := build(8000, 100)
	defer small.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	bd := small.Done()
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("finishing a table with an index of %d bytes allocated %d bytes", len(bd.index), grew)
	}

	// 100,000 keys with 1-byte values: a bloom filter of ~120 KB, an index well over 64 KiB.
	big := build(100_000, 1)
	fname := filepath.Join(t.TempDir(), NewFilename(2, ""))
	tbl, err := CreateTable(fname, big)
	big.Close()
	if err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	defer func() { _ = tbl.DecrRef() }()
	if idx := tbl.IndexSize(); idx <= indexBuilderSize {
		t.Fatalf("the big table's index is %d bytes; the test needs one over %d", idx, indexBuilderSize)
	}
	if got := tbl.KeyCount(); got != 100_000 {
		t.Fatalf("the big table has %d keys, want 100000", got)
	}
}
