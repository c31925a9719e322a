//go:build !unix

package table

import (
	"fmt"
	"os"
)

// writeTableFile creates file fname with the bytes of bufs (size in all) and syncs it
// (Fuscia: see CreateTable; write_unix.go writes them with writev).
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
	written := 0
	for _, b := range bufs {
		n, err := f.Write(b)
		written += n
		if err != nil {
			return fmt.Errorf("while writing table %s: %w", fname, err)
		}
	}
	if written != size {
		return fmt.Errorf("while writing table %s: wrote %d bytes, want %d", fname, written, size)
	}
	return f.Sync()
}
