//go:build linux

package badger

import "golang.org/x/sys/unix"

// populate maps every page of data (a table about to be verified whole) in one call rather
// than one page fault at a time. Linux 5.14+; on older kernels it is a no-op (EINVAL).
func populate(data []byte) {
	if len(data) > 0 {
		_ = unix.Madvise(data, unix.MADV_POPULATE_READ)
	}
}
