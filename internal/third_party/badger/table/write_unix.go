//go:build unix

package table

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// writeTableFile creates file fname with the bytes of bufs (size in all) and syncs it, with as
// few system calls as the kernel's limit on a writev allows (Fuscia: see CreateTable).
func writeTableFile(fname string, bufs [][]byte, size int) (err error) {
	f, err := createTableFile(fname)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("while closing table %s: %w", fname, cerr)
		}
		if err != nil {
			_ = os.Remove(fname)
		}
	}()
	fd := int(f.Fd())
	written := 0
	for len(bufs) > 0 {
		batch := bufs[:min(len(bufs), 1024)] // IOV_MAX on Linux
		n, err := unix.Writev(fd, batch)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("while writing table %s: %w", fname, err)
		}
		written += n
		// Drop what was written; a short write leaves the rest of a buffer for the next call.
		for n > 0 && len(bufs) > 0 {
			if n < len(bufs[0]) {
				bufs[0] = bufs[0][n:]
				n = 0
				break
			}
			n -= len(bufs[0])
			bufs = bufs[1:]
		}
		for len(bufs) > 0 && len(bufs[0]) == 0 {
			bufs = bufs[1:]
		}
	}
	if written != size {
		return fmt.Errorf("while writing table %s: wrote %d bytes, want %d", fname, written, size)
	}
	if err := unix.Fdatasync(fd); err != nil {
		return fmt.Errorf("while syncing table %s: %w", fname, err)
	}
	return nil
}
