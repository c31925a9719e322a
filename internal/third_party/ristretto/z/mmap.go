/*
 * SPDX-FileCopyrightText: © Hypermode Inc. <hello@hypermode.com>
 * SPDX-License-Identifier: Apache-2.0
 */

package z

import (
	"os"
	"sync/atomic"
)

// Mmap uses the mmap system call to memory-map a file. If writable is true,
// memory protection of the pages is set so that they may be written to as well.
func Mmap(fd *os.File, writable bool, size int64) ([]byte, error) {
	return mmap(fd, writable, size)
}

// Munmap unmaps a previously mapped slice.
func Munmap(b []byte) error {
	return munmap(b)
}

// Madvise uses the madvise system call to give advise about the use of memory
// when using a slice that is memory-mapped to a file. Set the readahead flag to
// false if page references are expected in random order.
func Madvise(b []byte, readahead bool) error {
	return madvise(b, readahead)
}

// Msync would call sync on the mmapped data.
func Msync(b []byte) error {
	msyncs.Add(1) // Fuscia
	return msync(b)
}

// msyncs counts the calls of Msync (Fuscia: Badger's TestTableCloseDoesNotSync checks that
// closing a table does not msync it).
var msyncs atomic.Int64

// MsyncCalls is how many times Msync has been called in this process (Fuscia: for tests).
func MsyncCalls() int64 { return msyncs.Load() }
