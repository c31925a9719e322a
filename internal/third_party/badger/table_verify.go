// Fuscia: this file is Fuscia's (Options.VerifyTablesOnOpen, KeepMemTableOnClose).

package badger

import (
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/ristretto/v2/z"
)

// TableOpenError is Open's error when Options.VerifyTablesOnOpen is set and a table the
// manifest lists is damaged: a block or the index fails its checksum, or decoding it failed.
type TableOpenError struct {
	// Path is the table's file.
	Path string
	// Err is table.OpenTable's error; nil when decoding the table panicked.
	Err error
	// Panic is what the table code panicked with (an offset out of range), or nil.
	Panic any
}

func (e *TableOpenError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("Opening table: %q: the table cannot be decoded: %v", e.Path, e.Panic)
	}
	return fmt.Sprintf("Opening table: %q: %v", e.Path, e.Err)
}

func (e *TableOpenError) Unwrap() error { return e.Err }

// openTableChecked is table.OpenTable on the table mapped in mf, with a panic of the table code
// (which some damage causes: a length in the footer pointing outside the file) turned into a
// *TableOpenError, and any error of OpenTable into one too.
func openTableChecked(mf *z.MmapFile, topt table.Options) (t *table.Table, err error) {
	path := mf.Fd.Name()
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, &TableOpenError{Path: path, Panic: r}
			// OpenTable closes the file (and unmaps it) on some of its errors, not on a panic.
			if mf.Fd.Fd() != ^uintptr(0) {
				_ = mf.Close(-1)
			}
		}
	}()
	populate(mf.Data)
	t, err = table.OpenTable(mf, topt)
	if err != nil {
		// OpenTable closes the file (and unmaps it) on some of its errors, not on others.
		if mf.Fd.Fd() != ^uintptr(0) {
			_ = mf.Close(-1)
		}
		return nil, &TableOpenError{Path: path, Err: err}
	}
	return t, nil
}

// KeptLogError is Open's error when the memtable log a Close kept (KeepMemTableOnClose: cut to
// its last entry) has entries that end before its end: an entry is damaged, and the usual
// replay would have ended the log there and dropped every entry after it.
type KeptLogError struct {
	// Path is the log's file.
	Path string
	// End is where its valid entries end, Size its size.
	End, Size int64
}

func (e *KeptLogError) Error() string {
	return fmt.Sprintf("checksum mismatch: the entries of kept memtable log %s end at %d of its %d bytes", e.Path, e.End, e.Size)
}

func isKeptLogError(err error) bool {
	var ke *KeptLogError
	return errors.As(err, &ke)
}
