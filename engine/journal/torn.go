//go:build unix

package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/dgraph-io/badger/v4"
)

// Badger (v4.9.6, memtable.go and value.go) creates a memtable log (*.mem) or a value log
// (*.vlog) empty, then sizes it (2× MemTableSize or 2× ValueLogFileSize, sparse) and writes a
// 20-byte header; its entries follow the header. A process killed between the create and the
// sizing leaves a zero-length file, which the next badger.Open refuses with ristretto's
// z.NewFile error — after sizing it and writing its header itself, so that the file it refused
// is no longer empty once Open has returned.
const (
	// tornFileError is the text of ristretto's z.NewFile, the error Open returns for such a file.
	tornFileError = "Create a new file"
	// logHeaderSize is the size of the header Badger writes at the start of both kinds of log.
	logHeaderSize = 20
)

// errDirBusy is returned by lockDir when another process holds the directory lock: the files
// are that process's, and badger.Open reports the lock.
var errDirBusy = errors.New("the directory is locked")

// openBadger opens Badger in dir with open (badger.Open). First, with Badger's directory lock
// held, it removes the log files a kill can leave behind (repairLogs) and checks the files
// Badger would mishandle if damaged (checkStoreFiles). Should open still refuse a file as torn
// (it was emptied after the repair), the repair runs again with sized set — Badger has sized
// that file and written its header by then — and open is tried once more.
func openBadger(dir string, opts badger.Options, open func(badger.Options) (*badger.DB, error)) (*badger.DB, error) {
	for attempt := 0; ; attempt++ {
		err := underDirLock(dir, func() error {
			removed, err := repairLogs(dir, attempt > 0)
			if len(removed) > 0 && opts.Logger != nil {
				opts.Logger.Warningf("removed log files left empty by a crash (they held no entry): %s", strings.Join(removed, ", "))
			}
			if err != nil {
				return fmt.Errorf("remove the empty log files left by a crash: %w", err)
			}
			if attempt > 0 {
				return nil
			}
			return checkStoreFiles(dir)
		})
		if err != nil && !errors.Is(err, errDirBusy) {
			return nil, err
		}
		db, err := open(opts)
		if err == nil || attempt > 0 || !strings.Contains(err.Error(), tornFileError) {
			return db, err
		}
	}
}

// underDirLock runs fn with Badger's directory lock (a flock on the directory) held, so that fn
// never touches the files of a process that has the store open: when another process holds the
// lock, it returns errDirBusy without running fn. A directory that does not exist yet (a new
// store) needs nothing.
func underDirLock(dir string, fn func() error) error {
	d, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer d.Close() // releases the lock
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return errDirBusy
		}
		return fmt.Errorf("lock %s: %w", dir, err)
	}
	return fn()
}

// repairLogs removes the *.mem and *.vlog files of dir that hold no entry and that Badger
// cannot open: the zero-length ones. With sized, it also removes those that hold nothing but a
// header and zeros, which is what Badger makes of a zero-length file it refused; a log file
// with any byte set after its header is never removed. The caller holds the directory lock
// (underDirLock). It returns the names of the files removed, sorted.
func repairLogs(dir string, sized bool) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !(strings.HasSuffix(name, ".mem") || strings.HasSuffix(name, ".vlog")) {
			continue
		}
		path := filepath.Join(dir, name)
		empty, err := holdsNoEntry(path, sized)
		if err != nil {
			return removed, err
		}
		if !empty {
			continue
		}
		if err := os.Remove(path); err != nil {
			return removed, err
		}
		removed = append(removed, name)
	}
	if len(removed) > 0 {
		if err := syncDir(dir); err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// holdsNoEntry reports whether the log file at path is empty, or, with sized, holds no byte
// other than zero after its header (a file shorter than its header holds no entry either).
func holdsNoEntry(path string, sized bool) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return false, err
	}
	if info.Size() == 0 || !sized {
		return info.Size() == 0, nil
	}
	if info.Size() <= logHeaderSize {
		return true, nil
	}
	if _, err := f.Seek(logHeaderSize, io.SeekStart); err != nil {
		return false, err
	}
	// A sized log is sparse: reading its holes costs no disk access. A real log has an entry
	// right after its header, so the loop ends at its first read.
	buf, zeros := make([]byte, 1<<20), make([]byte, 1<<20)
	for {
		n, err := f.Read(buf)
		if !bytes.Equal(buf[:n], zeros[:n]) {
			return false, nil
		}
		if errors.Is(err, io.EOF) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
}
