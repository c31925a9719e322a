//go:build linux

package badger

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// presentPages counts the pages of data that the process's page table maps (bit 63 of each
// page's entry in /proc/self/pagemap): a page not mapped there costs a page fault when read.
func presentPages(t *testing.T, data []byte) int {
	t.Helper()
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skipf("no pagemap: %v", err)
	}
	defer f.Close()
	page := os.Getpagesize()
	pages := len(data) / page
	entries := make([]byte, 8*pages)
	first := uintptr(unsafe.Pointer(&data[0])) / uintptr(page)
	if _, err := f.ReadAt(entries, int64(first)*8); err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range pages {
		if binary.LittleEndian.Uint64(entries[8*i:])&(1<<63) != 0 {
			n++
		}
	}
	return n
}

// TestPopulateMapsTheTable (Fuscia): populate, run on a table before Open verifies all of it
// (VerifyTablesOnOpen), maps every page of the table into the page table in one call, where
// the verification's reads otherwise trapped into the kernel once per few pages (~48 page
// faults fewer per one-shot apply into a home of 8 tables, docs/performance.md, issue 20 item 3,
// session 9).
func TestPopulateMapsTheTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "000001.sst")
	if err := os.WriteFile(path, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := unix.Mmap(int(f.Fd()), 0, 1<<20, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(data)
	pages := len(data) / os.Getpagesize()
	if n := presentPages(t, data); n == pages {
		t.Fatalf("all %d pages mapped before anything read them: the test cannot tell", n)
	}
	populate(data)
	if n := presentPages(t, data); n != pages {
		t.Fatalf("%d of %d pages mapped after populate; want all", n, pages)
	}
}
