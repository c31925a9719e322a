//go:build !linux

package journal

import "os"

// fdatasync flushes f to the device (fsync where fdatasync is not available).
func fdatasync(f *os.File) error { return f.Sync() }

// preallocate sets f's size (a sparse file where fallocate is not available).
func preallocate(f *os.File, size int64) error { return f.Truncate(size) }
