//go:build unix

package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/dgraph-io/badger/v4"
)

// tornFileError is the text of ristretto's z.NewFile, which Badger returns from Open when a
// memtable log or value log file it finds has length zero. Badger creates such a file and only
// then sizes it, so a process killed between the two leaves a directory Badger cannot open again
// (badger v4.9.6, memtable.go openMemTables and value.go open). The file holds nothing yet.
const tornFileError = "Create a new file"

// openBadger opens Badger in dir. When Badger refuses a directory because of a zero-length log
// file left by a kill, it removes those files, which held no entry, and opens it once more.
func openBadger(dir string, opts badger.Options) (*badger.DB, error) {
	db, err := badger.Open(opts)
	if err == nil || !strings.Contains(err.Error(), tornFileError) {
		return db, err
	}
	removed, rerr := removeTornLogs(dir)
	if rerr != nil {
		return nil, fmt.Errorf("%w (removing its empty log files: %w)", err, rerr)
	}
	if len(removed) == 0 {
		return nil, err
	}
	if opts.Logger != nil {
		opts.Logger.Warningf("removed empty log files left by a crash: %s", strings.Join(removed, ", "))
	}
	return badger.Open(opts)
}

// removeTornLogs deletes the zero-length *.mem and *.vlog files of dir. It takes Badger's
// directory lock (a flock on the directory) while it does, so that it never touches the files of
// a process that has just opened the store and is creating one.
func removeTornLogs(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	// Closing d releases the lock.
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !(strings.HasSuffix(name, ".mem") || strings.HasSuffix(name, ".vlog")) {
			continue
		}
		info, err := e.Info()
		if err != nil || info.Size() != 0 {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			return removed, err
		}
		removed = append(removed, name)
	}
	return removed, nil
}
