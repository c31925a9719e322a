//go:build linux

package journal

import (
	"os"
	"syscall"
)

// madvPageout is MADV_PAGEOUT (Linux 5.4): reclaim the range's pages now.
const madvPageout = 21

// pageOut asks the kernel to page out [start, start+n). MADV_PAGEOUT rather than
// MADV_DONTNEED because of what it does to a range that is no longer what /proc/self/maps said:
// Badger may unmap a table between the read of the maps and this call, and the range be mapped
// again for anything else (the Go heap, a C allocation). DONTNEED would zero anonymous memory
// there; PAGEOUT never changes a page's content: a file page is unmapped and, when dirty, stays
// in the page cache until written back; an anonymous page is swapped out or, without swap,
// left alone. A range that is partly unmapped fails with ENOMEM after the mapped part is done.
func pageOut(start, n uintptr) error {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, start, n, madvPageout)
	if errno != 0 {
		return errno
	}
	return nil
}

// readSelfMaps returns the text of /proc/self/maps.
func readSelfMaps() ([]byte, error) { return os.ReadFile("/proc/self/maps") }
