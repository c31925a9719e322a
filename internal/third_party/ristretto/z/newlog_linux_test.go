package z

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// residentAfterFirstWrite creates name in a new directory at 64 MiB through OpenMmapFile,
// writes its first byte through the mapping, and returns how many of the mapping's pages are
// then resident.
func residentAfterFirstWrite(t *testing.T, name string) int {
	t.Helper()
	const size = 64 << 20
	mf, err := OpenMmapFile(filepath.Join(t.TempDir(), name), os.O_CREATE|os.O_RDWR|os.O_EXCL, size)
	if err != NewFile {
		t.Fatalf("OpenMmapFile: %v, want NewFile", err)
	}
	defer func() {
		if err := mf.Close(-1); err != nil {
			t.Error(err)
		}
	}()
	mf.Data[0] = 1
	vec := make([]byte, (len(mf.Data)+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&mf.Data[0])), uintptr(len(mf.Data)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// A new log file's first write faults in its page alone, where the kernel's read-around
// would fill the page cache with the holes around it.
func TestNewLogFileNotReadAround(t *testing.T) {
	if n := residentAfterFirstWrite(t, "000001.sst"); n <= 1 {
		t.Skipf("no read-around on this file system (%d page resident after a first write): nothing to compare", n)
	}
	for _, name := range []string{"000001.vlog", "00001.mem"} {
		if n := residentAfterFirstWrite(t, name); n != 1 {
			t.Errorf("%s: %d pages resident after the first write, want 1", name, n)
		}
	}
}
