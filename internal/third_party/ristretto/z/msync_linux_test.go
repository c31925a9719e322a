package z

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// mappingRSS returns the Rss, in KiB, of the mapping of this process that starts at addr, from
// /proc/self/smaps.
func mappingRSS(t *testing.T, addr uintptr) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	start := fmt.Sprintf("%x-", addr)
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if isMappingHeader(line) {
			in = strings.HasPrefix(line, start)
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			kb, err := strconv.Atoi(strings.Fields(line)[1])
			if err != nil {
				t.Fatal(err)
			}
			return kb
		}
	}
	t.Fatalf("no mapping at %#x in /proc/self/smaps", addr)
	return 0
}

// isMappingHeader reports whether line of smaps starts a mapping ("start-end perms ..."), not
// one of its fields ("Rss:   4 kB").
func isMappingHeader(line string) bool {
	first, _, _ := strings.Cut(line, " ")
	lo, hi, ok := strings.Cut(first, "-")
	if !ok {
		return false
	}
	_, err1 := strconv.ParseUint(lo, 16, 64)
	_, err2 := strconv.ParseUint(hi, 16, 64)
	return err1 == nil && err2 == nil
}

// A table written through its mapping and synced leaves the process's resident set (its pages
// stay in the file and the page cache), and what was written is what the file holds.
func TestMsyncDropsSyncedPages(t *testing.T) {
	const size = 4 << 20
	path := filepath.Join(t.TempDir(), "000001.sst")
	mf, err := OpenMmapFile(path, os.O_CREATE|os.O_RDWR|os.O_EXCL, size)
	if err != NewFile {
		t.Fatalf("OpenMmapFile: %v, want NewFile", err)
	}
	defer func() {
		if err := mf.Close(-1); err != nil {
			t.Error(err)
		}
	}()
	want := bytes.Repeat([]byte("fuscia table "), size/13+1)[:size]
	copy(mf.Data, want)
	addr := uintptr(unsafe.Pointer(&mf.Data[0]))
	if kb := mappingRSS(t, addr); kb < size/1024/2 {
		t.Fatalf("%d KiB resident after writing %d KiB through the mapping: the test cannot tell", kb, size/1024)
	}
	if err := Msync(mf.Data); err != nil {
		t.Fatal(err)
	}
	if kb := mappingRSS(t, addr); kb > 4 {
		t.Errorf("%d KiB of the table resident after Msync, want none", kb)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the file does not hold what was written through the mapping")
	}
	if !bytes.Equal(mf.Data[:64], want[:64]) || !bytes.Equal(mf.Data[size-64:], want[size-64:]) {
		t.Fatal("the mapping does not read back what was written")
	}
}
