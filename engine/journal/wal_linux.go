//go:build linux

package journal

import (
	"os"
	"syscall"
)

// fdatasync flushes f's data (and the metadata needed to read it back) to the device: for a
// preallocated file overwritten in place, one cache flush and no journal commit.
func fdatasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = syscall.Fdatasync(int(fd))
			if serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}

// preallocate reserves size bytes for f (fallocate), so that writing it does not allocate
// blocks; where the file system cannot, it only sets the size.
func preallocate(f *os.File, size int64) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Fallocate(int(fd), 0, 0, size)
			if ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if ferr != nil {
		return f.Truncate(size)
	}
	return nil
}
