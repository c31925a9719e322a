//go:build !js
// +build !js

/*
 * SPDX-FileCopyrightText: © Hypermode Inc. <hello@hypermode.com>
 * SPDX-License-Identifier: Apache-2.0
 */

package z

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mmap uses the mmap system call to memory-map a file. If writable is true,
// memory protection of the pages is set so that they may be written to as well.
func mmap(fd *os.File, writable bool, size int64) ([]byte, error) {
	mtype := unix.PROT_READ
	if writable {
		mtype |= unix.PROT_WRITE
	}
	return unix.Mmap(int(fd.Fd()), 0, int(size), mtype, unix.MAP_SHARED)
}

// munmap unmaps a previously mapped slice.
//
// unix.Munmap maintains an internal list of mmapped addresses, and only calls munmap
// if the address is present in that list. If we use mremap, this list is not updated.
// To bypass this, we call munmap ourselves.
func munmap(data []byte) error {
	if len(data) == 0 || len(data) != cap(data) {
		return unix.EINVAL
	}
	_, _, errno := unix.Syscall(
		unix.SYS_MUNMAP,
		uintptr(unsafe.Pointer(&data[0])),
		uintptr(len(data)),
		0,
	)
	if errno != 0 {
		return errno
	}
	return nil
}

// madvise uses the madvise system call to give advise about the use of memory
// when using a slice that is memory-mapped to a file. Set the readahead flag to
// false if page references are expected in random order.
func madvise(b []byte, readahead bool) error {
	flags := unix.MADV_NORMAL
	if !readahead {
		flags = unix.MADV_RANDOM
	}
	return unix.Madvise(b, flags)
}

// msync writes any modified data of b to persistent storage. Fuscia's change (README.md): it
// first drops b's pages from the process's page tables (MADV_DONTNEED; the mapping is shared,
// so a dirty page's data passes to the page cache, still to be written), then syncs the file
// range. Badger calls this for each table it has just written through its mapping (and at
// DB.Sync); with the pages still mapped, writing each one back had to write-protect its page
// table entry and flush the TLB of every CPU running the process, page by page, which was 8%
// of a loaded serve's CPU on a 2-core VM, and the new table stayed in the resident set.
func msync(b []byte) error {
	_ = unix.Madvise(b, unix.MADV_DONTNEED) // if this fails, the sync below still writes the pages
	return unix.Msync(b, unix.MS_SYNC)
}
