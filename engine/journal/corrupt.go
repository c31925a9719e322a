package journal

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dgraph-io/badger/v4"
)

// ErrCorrupt is wrapped by the errors of Open and of reads that found a file of the store
// damaged (a *CorruptError says which).
var ErrCorrupt = errors.New("a state store file is corrupt")

// CorruptError names a damaged file of the store. Its text says what is safe to do: nothing in
// the store was changed because of the damage, and the file can be restored from a backup.
type CorruptError struct {
	// Dir is the store's directory.
	Dir string
	// File is the damaged file's path, or "" when the damage could not be placed in one file.
	File string
	// Detail says what is wrong ("checksum mismatch in a block", "the entry at offset 4096
	// fails its checksum").
	Detail string
}

func (e *CorruptError) Error() string {
	what := "the state store file " + e.File
	restore := "restore that file from a backup of the store"
	if e.File == "" {
		what = "a file of the state store in " + e.Dir
		restore = "restore the store from a backup"
	}
	return fmt.Sprintf("%s is corrupt (%s); nothing was changed. Stop the fuscia processes using %s, keep a copy of it as it is, "+
		"and %s; moving the store aside would start an empty one without any run, unfinished ones included, so do that only as a last resort",
		what, e.Detail, e.Dir, restore)
}

// Unwrap makes a CorruptError match ErrCorrupt.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// checkStoreFiles runs before Badger opens dir (with the directory lock held): it checks the
// entries of the newest value-log file when it was closed cleanly. Badger would silently cut it
// at its first damaged entry, taking every value after it with it. Badger's copy checks the rest
// itself as it opens them, before it changes any file (badger_options.go): every block of every
// table (VerifyTablesOnOpen) and every entry of a kept memtable log (KeepMemTableOnClose); openError
// names the damaged file.
func checkStoreFiles(dir string) error {
	return checkValueLogTail(dir)
}

// tableDetail says what Badger found wrong with a table.
func tableDetail(err error) string {
	if strings.Contains(err.Error(), "checksum mismatch") {
		return "checksum mismatch"
	}
	return err.Error()
}

// badgerTablePath finds the table Badger names in an error of badger.Open.
// Compiled at its first use (an Open that failed), not at every process's start.
var badgerTablePath = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:Opening table: |for table: )"?([^",\s]+\.sst)`)
})

// openError turns an error of badger.Open that reports damage into a *CorruptError: a kept
// memtable log or a table Badger's copy found damaged as it opened it (a *badger.KeptLogError, a
// *badger.TableOpenError), or damage Badger found in another file.
func openError(dir string, err error) error {
	if errors.Is(err, ErrCorrupt) {
		return err
	}
	var ke *badger.KeptLogError
	if errors.As(err, &ke) {
		// A kept log is cut to its last entry, as a value-log file closed cleanly is: its usual
		// replay would end it at the damaged entry and drop the rest. Read again (an error path)
		// to say which entry is damaged and how.
		var ce *CorruptError
		if errors.As(scanValueLog(dir, ke.Path), &ce) {
			return ce
		}
		return &CorruptError{Dir: dir, File: ke.Path, Detail: fmt.Sprintf("its entries end at offset %d of its %d bytes", ke.End, ke.Size)}
	}
	var te *badger.TableOpenError
	if errors.As(err, &te) {
		if te.Err == nil { // the table code panicked decoding it
			return &CorruptError{Dir: dir, File: te.Path, Detail: "its index or a block cannot be decoded"}
		}
		return &CorruptError{Dir: dir, File: te.Path, Detail: tableDetail(te.Err)}
	}
	msg := err.Error()
	if m := badgerTablePath().FindStringSubmatch(msg); m != nil {
		return &CorruptError{Dir: dir, File: m[1], Detail: tableDetail(err)}
	}
	switch {
	case strings.Contains(msg, "manifest has bad magic"):
		return &CorruptError{Dir: dir, File: filepath.Join(dir, badger.ManifestFilename), Detail: "it does not start as a Badger manifest"}
	case strings.Contains(msg, "manifest has checksum mismatch"):
		return &CorruptError{Dir: dir, File: filepath.Join(dir, badger.ManifestFilename), Detail: "checksum mismatch"}
	case strings.Contains(msg, "checksum mismatch"):
		return &CorruptError{Dir: dir, Detail: "checksum mismatch"}
	}
	return err
}

// Value-log entries (Badger v4.9.6, memtable.go encodeEntry): after the file's 20-byte header,
// each entry is a header (meta and user-meta bytes, then the key length, value length and
// expiry as uvarints), the key, the value, and the CRC-32C of all of these, big-endian.
// maxEntryKey is the longest key Badger reads in a value log: a longer one ends the log.
const maxEntryKey = 1 << 16

// valueLogs returns the value-log files of dir, sorted by id.
func valueLogs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type vlog struct {
		id   uint64
		path string
	}
	var logs []vlog
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".vlog")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if n, err := strconv.ParseUint(id, 10, 32); err == nil {
			logs = append(logs, vlog{n, filepath.Join(dir, e.Name())})
		}
	}
	slices.SortFunc(logs, func(a, b vlog) int { return int(a.id) - int(b.id) })
	paths := make([]string, len(logs))
	for i, l := range logs {
		paths[i] = l.path
	}
	return paths, nil
}

// checkValueLogTail checks the entries of the newest value-log file of dir when it was closed
// cleanly. Badger ends the log at the first entry that does not check out, which is right for
// the end of a file written up to a crash (a torn entry followed by the zeros the file was
// sized with) but loses every later value when an entry in the middle is damaged. A file
// closed cleanly is cut to its last entry, which ends with a CRC; a file left by a crash ends
// with zeros (the chance that a CRC is zero is 2^-32).
func checkValueLogTail(dir string) error {
	logs, err := valueLogs(dir)
	if err != nil || len(logs) == 0 {
		return err
	}
	return checkClosedLog(dir, logs[len(logs)-1])
}

// checkClosedLog checks every entry of the log file at path (a value-log file or a memtable
// log: the same entries) when the file was closed cleanly, cut to its last entry's CRC.
func checkClosedLog(dir, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if info.Size() <= logHeaderSize {
		return nil
	}
	var tail [crc32.Size]byte
	if _, err := f.ReadAt(tail[:], info.Size()-crc32.Size); err != nil {
		return err
	}
	if tail == [crc32.Size]byte{} {
		return nil // left by a crash: Badger ends the log where the entries end
	}
	return scanValueLog(dir, path)
}

// damagedValueLog looks for a value-log file of dir with an entry that does not check out
// (error paths only: it reads every value-log file), and returns nil when there is none.
func damagedValueLog(dir string) *CorruptError {
	logs, err := valueLogs(dir)
	if err != nil {
		return nil
	}
	for _, path := range logs {
		var ce *CorruptError
		if errors.As(scanValueLog(dir, path), &ce) {
			return ce
		}
	}
	return nil
}

// scanValueLog checks every entry of the value-log file at path, up to its end or to zeros
// where an entry should start (the end of a file that was not closed).
func scanValueLog(dir, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	size := info.Size()
	if size <= logHeaderSize {
		return nil
	}
	if _, err := f.Seek(logHeaderSize, io.SeekStart); err != nil {
		return err
	}
	r := &crcReader{r: bufio.NewReaderSize(f, 1<<16), h: crc32.New(castagnoli)}
	bad := func(off int64, what string) error {
		return &CorruptError{Dir: dir, File: path, Detail: fmt.Sprintf("the entry at offset %d %s", off, what)}
	}
	for off := int64(logHeaderSize); off < size; {
		r.h.Reset()
		r.n = 0
		meta, err1 := r.ReadByte()
		userMeta, err2 := r.ReadByte()
		klen, err3 := binary.ReadUvarint(r)
		vlen, err4 := binary.ReadUvarint(r)
		expires, err5 := binary.ReadUvarint(r)
		if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
			return bad(off, "is cut short")
		}
		if meta == 0 && userMeta == 0 && klen == 0 && vlen == 0 && expires == 0 {
			return nil // zeros: the end of the entries of a file that was not closed
		}
		end := off + int64(r.n) + int64(klen) + int64(vlen) + crc32.Size
		if klen > maxEntryKey || end > size {
			return bad(off, "runs past the end of the file")
		}
		if _, err := io.CopyN(r.h, r.r, int64(klen+vlen)); err != nil {
			return bad(off, "is cut short")
		}
		var sum [crc32.Size]byte
		if _, err := io.ReadFull(r.r, sum[:]); err != nil {
			return bad(off, "is cut short")
		}
		if binary.BigEndian.Uint32(sum[:]) != r.h.Sum32() {
			return bad(off, "fails its checksum")
		}
		off = end
	}
	return nil
}

// crcReader hashes and counts the bytes of an entry's header as they are read.
type crcReader struct {
	r *bufio.Reader
	h hash.Hash32
	n int
}

func (c *crcReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.h.Write([]byte{b})
		c.n++
	}
	return b, err
}

// valueLostError is what a read returns when Badger answered an empty value for a key whose
// value is in the value log: Badger logs the error it met (a checksum mismatch, a file cut
// short or missing) and answers an empty value (v4.9.6, iterator.go yieldItemValue). Store.view
// turns it into a *CorruptError.
type valueLostError struct{ key string }

func (e *valueLostError) Error() string {
	return fmt.Sprintf("the value of key %.60q cannot be read from the value log", e.key)
}

// itemValue calls fn with the value of item, or fails with a *valueLostError when Badger could
// not read it: a value kept in the value log is never empty (ValueSize, read from the value
// pointer, is then positive), an empty value in the tree has ValueSize 0.
func itemValue(item *badger.Item, fn func([]byte) error) error {
	return item.Value(func(v []byte) error {
		if len(v) == 0 && item.ValueSize() > 0 {
			return &valueLostError{key: string(item.Key())}
		}
		return fn(v)
	})
}

// itemValueCopy is item.ValueCopy(nil) with itemValue's check.
func itemValueCopy(item *badger.Item) ([]byte, error) {
	var out []byte
	err := itemValue(item, func(v []byte) error {
		out = append([]byte{}, v...)
		return nil
	})
	return out, err
}

// readError turns a valueLostError into a *CorruptError naming the damaged value-log file
// when one is found, the store's directory otherwise.
func (s *Store) readError(err error) error {
	var lost *valueLostError
	if !errors.As(err, &lost) || s.mem {
		return err // a store in memory has no value-log file to blame
	}
	if ce := damagedValueLog(s.dir); ce != nil {
		ce.Detail = fmt.Sprintf("%s, found reading key %.60q", ce.Detail, lost.key)
		return ce
	}
	return &CorruptError{Dir: s.dir, Detail: lost.Error() + ": a value-log file (*.vlog) is damaged, cut short or missing"}
}
