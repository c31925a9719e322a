package journal

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The journal's write-ahead log (docs/state.md, "Write-ahead log"): segment files in
// <dir>/wal, preallocated and written in place, each a header then records
// [len u32][crc32c u32][payload]. A durable group commit costs one write and one fdatasync of
// the current segment; Badger is written without syncing and made durable by checkpoints.
//
// A checkpoint recycles a retired segment rather than removing it: renamed out of the
// segments' names (recycleExt), it becomes a later spare with a new header (recycleSegment).
// Removing a 32 MiB segment freed its blocks in the file system's journal, and an fdatasync of
// the current segment waited for that commit: on the test VM (ext4 mounted with discard) every
// checkpoint held the group commit 21-99 ms, the tail of serve's latency (docs/performance.md,
// issue 20 item 4, session 19). A recycled segment still holds its old records after the new
// ones; two things keep them out of a replay. Each record's checksum is seeded with its
// segment's number (format 2), so an old record never checks in a segment of another number;
// and each write leaves a record header of zeros after its last record (writeBatch), so a log
// cut cleanly there reads as ending, not as torn.
const (
	walDirName = "wal"
	segmentExt = ".log"
	// recycleExt names a retired segment kept for reuse: not a segment for listSegments.
	recycleExt = ".recycle"
	// maxRecycled is how many retired segments a store keeps for reuse; more are removed. One
	// is enough: the spare a rotation asks for is made before the retired segment's checkpoint
	// ends, of the segment the previous checkpoint kept.
	maxRecycled = 1

	// segmentHeaderSize is the size of a segment's header: segmentMagic, then the segment's
	// number (u64, little-endian).
	segmentHeaderSize = 16
	// recordHeaderSize is the size of a record's header: the payload's length and its CRC-32C
	// (u32 each, little-endian).
	recordHeaderSize = 8

	// The first byte of a record's payload is its kind.
	recordOps  byte = 1 // then the ops of one batch
	recordSeal byte = 2 // the last record of a segment: the log goes on in the next one

	// sealSize is the size of a seal record, always kept free at the end of a segment.
	sealSize = recordHeaderSize + 1

	// An op in a recordOps payload: its kind, then uvarint key length and key, then (for a
	// set) uvarint value length and value.
	opKindSet    byte = 0
	opKindDelete byte = 1

	defaultSegmentSize     = 32 << 20
	defaultCheckpointEvery = 10 * time.Second
	// defaultFirstSpareDelay is how long after Open the first spare segment is made (unless a
	// rotation asks for it sooner). A one-shot `fuscia apply` closes its store well within it,
	// and so creates, preallocates and syncs one segment instead of two; a longer-lived store
	// has its spare long before its first rotation (checkpointEvery, or a full segment).
	defaultFirstSpareDelay = time.Second

	// zeroAhead is how far past its last record the writer keeps a segment's blocks written,
	// with zeros, once zeroFrom bytes of it hold records; zeroLow is how few written bytes left
	// past the last record make it write more (more than a group commit's records here).
	// fallocate leaves a segment's blocks unwritten in the file system's extent map (ext4,
	// XFS), so the first record written into each block changes that map, and the group
	// commit's fdatasync must write it too (on a journaling file system, commit the journal): on
	// this project's 2-core VM an fdatasync of a few KiB took ~35% longer into fresh blocks than
	// into written ones (docs/state.md, "Files and format"). Zeros written ahead, synced with the
	// records before them, pay that once per ~zeroAhead bytes of records. A process that writes
	// less than zeroFrom (a one-shot `fuscia apply`) writes no zeros: for it they would cost
	// more than they save.
	zeroAhead = 256 << 10
	zeroLow   = 32 << 10
	zeroFrom  = 64 << 10
)

var (
	// segmentMagic starts every segment this version writes (format 2: checksums seeded with
	// the segment's number); segmentMagicV1 started those of earlier versions, whose records'
	// checksums are of the payload alone. Both are read.
	segmentMagic   = [8]byte{'F', 'S', 'C', 'W', 'A', 'L', 0, 2}
	segmentMagicV1 = [8]byte{'F', 'S', 'C', 'W', 'A', 'L', 0, 1}
	castagnoli     = crc32.MakeTable(crc32.Castagnoli)
	// zeroBlocks is what the writer writes ahead of its records (never written to).
	zeroBlocks [zeroAhead]byte
)

// walConfig sizes the write-ahead log; tests shrink it and set the hooks.
type walConfig struct {
	// segmentSize is the size a segment is preallocated to; a full segment is checkpointed.
	segmentSize int64
	// checkpointEvery is the longest a segment stays current once it holds a record.
	checkpointEvery time.Duration
	// firstSpareDelay is how long after Open the checkpointer waits before it makes the first
	// spare segment, unless a rotation needs it sooner; 0: at once.
	firstSpareDelay time.Duration
	// trimEvery is how long after a write to Badger the trimmer pages out the store's file
	// mappings (trim.go); 0: never.
	trimEvery time.Duration

	// skipApply (tests) acknowledges writes once they are in the WAL without writing them to
	// Badger, as if Badger had lost everything since the last checkpoint.
	skipApply bool
	// keepSegments (tests) makes checkpoints remove no segment.
	keepSegments bool
	// applyHook (tests), when set, is called by the applier before each write to Badger.
	applyHook func()
	// commitHook (tests), when set, is called by the syncer in commit once the applier has the
	// job (when its queue had room) and before the waited writes are answered; failed: a batch
	// of the job failed. A test holds it to give the applier and Sync their worst timing.
	commitHook func(failed bool)
	// badgerCloseHook (tests), when set, is called by Close just before Badger's Close.
	badgerCloseHook func()
	// holdRelaxed (Options.HoldRelaxed) keeps relaxed requests in the writer's memory until a
	// request someone waits for comes, and writes them then, before it.
	holdRelaxed bool
}

func defaultWALConfig() walConfig {
	return walConfig{
		segmentSize:     defaultSegmentSize,
		checkpointEvery: defaultCheckpointEvery,
		firstSpareDelay: defaultFirstSpareDelay,
		trimEvery:       defaultTrimEvery,
	}
}

// segment is one WAL file. The writer owns off; the syncer owns broken; the checkpointer closes
// and removes the file once the segment is retired.
type segment struct {
	num  uint64
	path string
	f    *os.File
	size int64 // preallocated size
	// off is where the writer puts the next record.
	off int64
	// zeroed is the writer's too: the blocks before it are written (zeros past off), so that
	// syncing a record there changes no file-system metadata (zeroAhead).
	zeroed int64
	// broken is set by the syncer when an fdatasync of the segment failed: nothing written to
	// it afterwards is acknowledged, and it must be checkpointed before anything later is.
	broken error
}

// segmentPath is the file of segment num in the WAL directory dir.
func segmentPath(dir string, num uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%06d%s", num, segmentExt))
}

// createSegment creates segment num in dir, preallocated to size bytes, writes its header and
// syncs it and the directory, so that a record synced in it later is found after a crash.
func createSegment(dir string, num uint64, size int64) (*segment, error) {
	path := segmentPath(dir, num)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create WAL segment: %w", err)
	}
	fail := func(err error) (*segment, error) {
		_ = f.Close()
		_ = os.Remove(path)
		return nil, fmt.Errorf("create WAL segment %s: %w", path, err)
	}
	if err := preallocate(f, size); err != nil {
		return fail(err)
	}
	if err := writeHeader(f, dir, num, (*os.File).Sync); err != nil {
		return fail(err)
	}
	return &segment{num: num, path: path, f: f, size: size, off: segmentHeaderSize, zeroed: segmentHeaderSize}, nil
}

// writeHeader writes segment num's header into f and makes it durable under its name in dir:
// the file with sync (fsync for a file just preallocated, fdatasync for one overwritten in
// place), then the directory.
func writeHeader(f *os.File, dir string, num uint64, sync func(*os.File) error) error {
	if _, err := f.WriteAt(segmentHeader(num), 0); err != nil {
		return err
	}
	if err := sync(f); err != nil {
		return err
	}
	return syncDir(dir)
}

// segmentHeader is the first bytes of segment num: its header, then a record header of zeros,
// which ends its (empty) log whatever a recycled file holds after it.
func segmentHeader(num uint64) []byte {
	b := make([]byte, segmentHeaderSize+recordHeaderSize)
	copy(b[:8], segmentMagic[:])
	binary.LittleEndian.PutUint64(b[8:], num)
	return b
}

// recycled is a retired segment kept for reuse, open, under a name listSegments skips.
type recycled struct {
	f    *os.File
	path string
	size int64
	// written is how much of the file is known to be written (its blocks allocated and
	// initialized): the old segment's records and the zeros written ahead of them.
	written int64
}

// recyclePath is where retired segment num waits for reuse.
func recyclePath(dir string, num uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%06d%s", num, recycleExt))
}

// recycleSegment makes r segment num: it renames the file to num's name, writes num's header
// (with the zeros that end its log) over the old one, and syncs the file and the directory, as
// createSegment does. A crash before the header is durable leaves a file whose header names
// another number: replay reads nothing of it, and it is the newest segment, into which nothing
// was written yet. A file it fails to reuse is closed and removed.
func recycleSegment(dir string, r recycled, num uint64) (*segment, error) {
	path := segmentPath(dir, num)
	fail := func(at string, err error) (*segment, error) {
		_ = r.f.Close()
		_ = os.Remove(at)
		return nil, fmt.Errorf("reuse WAL segment %s as %s: %w", r.path, path, err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		return fail(r.path, fmt.Errorf("the name is taken (%v)", err))
	}
	if err := os.Rename(r.path, path); err != nil {
		return fail(r.path, err)
	}
	if err := writeHeader(r.f, dir, num, fdatasync); err != nil {
		return fail(path, err)
	}
	// Its blocks up to written are allocated and initialized: zeros written ahead there would
	// save no metadata, only cost a write (zeroAhead).
	zeroed := max(segmentHeaderSize, min(r.written, r.size)&^(4096-1))
	return &segment{num: num, path: path, f: r.f, size: r.size, off: segmentHeaderSize, zeroed: zeroed}, nil
}

// zeroAhead writes zeros after seg's last record, up to zeroAhead bytes past it (at most to
// the preallocated end, on a block boundary), once fewer than zeroLow are left, so that
// the group commits that follow sync records into written blocks. The next fdatasync of seg
// makes them durable with the record before them. A failure is left to the next record's
// write to report: the zeros only save time.
func (seg *segment) zeroAhead() {
	if seg.off < zeroFrom || seg.off+zeroLow <= seg.zeroed || seg.zeroed >= seg.size {
		return
	}
	end := min(seg.off+zeroAhead, seg.size) &^ (4096 - 1)
	start := max(seg.zeroed, seg.off)
	if end <= start {
		return
	}
	if _, err := seg.f.WriteAt(zeroBlocks[:end-start], start); err != nil {
		return
	}
	seg.zeroed = end
}

// listSegments returns the numbers of the segment files in dir, in increasing order.
func listSegments(dir string) ([]uint64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list WAL segments: %w", err)
	}
	var nums []uint64
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), segmentExt)
		if !ok || e.IsDir() {
			continue
		}
		n, err := strconv.ParseUint(name, 10, 64)
		if err != nil {
			continue
		}
		nums = append(nums, n)
	}
	slices.Sort(nums)
	return nums, nil
}

// appendOpsRecord appends to buf the record of the ops of reqs for segment num (sealRecord
// seals it again for another segment).
func appendOpsRecord(buf []byte, reqs []*request, num uint64) []byte {
	start := len(buf)
	buf = append(buf, make([]byte, recordHeaderSize)...)
	buf = append(buf, recordOps)
	for _, r := range reqs {
		for _, o := range r.ops {
			if o.del {
				buf = append(buf, opKindDelete)
				buf = binary.AppendUvarint(buf, uint64(len(o.key)))
				buf = append(buf, o.key...)
				continue
			}
			buf = append(buf, opKindSet)
			buf = binary.AppendUvarint(buf, uint64(len(o.key)))
			buf = append(buf, o.key...)
			buf = binary.AppendUvarint(buf, uint64(len(o.value)))
			buf = append(buf, o.value...)
		}
	}
	sealRecord(buf[start:], num)
	return buf
}

// appendSealRecord appends the seal record of segment num to buf.
func appendSealRecord(buf []byte, num uint64) []byte {
	start := len(buf)
	buf = append(buf, make([]byte, recordHeaderSize)...)
	buf = append(buf, recordSeal)
	sealRecord(buf[start:], num)
	return buf
}

// sealRecord fills in the header of rec (a header followed by the payload) for segment num.
func sealRecord(rec []byte, num uint64) {
	payload := rec[recordHeaderSize:]
	binary.LittleEndian.PutUint32(rec[0:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(rec[4:8], recordSum(num, payload))
}

// recordSum is the checksum of a record of segment num (format 2): CRC-32C of the segment's
// number (u64, little-endian) then the payload. A record a recycled file kept from its
// previous segment does not check under the new number.
func recordSum(num uint64, payload []byte) uint32 {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], num)
	return crc32.Update(crc32.Checksum(n[:], castagnoli), castagnoli, payload)
}

// decodeOps decodes the ops of a recordOps payload (without its kind byte). Keys and values
// alias payload.
func decodeOps(payload []byte, ops []op) ([]op, error) {
	for len(payload) > 0 {
		kind := payload[0]
		payload = payload[1:]
		key, rest, err := cutBytes(payload)
		if err != nil {
			return ops, fmt.Errorf("key: %w", err)
		}
		payload = rest
		switch kind {
		case opKindDelete:
			ops = append(ops, op{key: key, del: true})
		case opKindSet:
			value, rest, err := cutBytes(payload)
			if err != nil {
				return ops, fmt.Errorf("value: %w", err)
			}
			payload = rest
			ops = append(ops, op{key: key, value: value})
		default:
			return ops, fmt.Errorf("unknown op kind %d", kind)
		}
	}
	return ops, nil
}

// cutBytes splits a uvarint-prefixed byte string off b.
func cutBytes(b []byte) (field, rest []byte, err error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w) {
		return nil, nil, errors.New("truncated")
	}
	end := w + int(n)
	return b[w:end:end], b[end:], nil
}

// segmentEnd says how reading a segment ended.
type segmentEnd int

const (
	endOfRecords segmentEnd = iota // no more records (the preallocated zeros, or the file's end)
	endSealed                      // a seal record: the log goes on in the next segment
	endTorn                        // a short or corrupt record: the log ends here
)

// readSegment calls fn with the ops payload (kind byte removed) of each record of the segment
// file f, numbered num, in order, until the seal, the end of the records or a torn record. The
// payload is fn's to keep. It returns how the segment ended, the offset where it did, and fn's
// error or a read error.
func readSegment(f *os.File, num uint64, fn func(payload []byte) error) (segmentEnd, int64, error) {
	info, err := f.Stat()
	if err != nil {
		return endTorn, 0, err
	}
	size := info.Size()
	r := bufio.NewReaderSize(f, 1<<20)
	var hdr [segmentHeaderSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return endTorn, 0, nil
	}
	magic := [8]byte(hdr[:8])
	if magic != segmentMagic && magic != segmentMagicV1 || binary.LittleEndian.Uint64(hdr[8:]) != num {
		return endTorn, 0, nil
	}
	sumOf := func(payload []byte) uint32 { return recordSum(num, payload) }
	if magic == segmentMagicV1 {
		sumOf = func(payload []byte) uint32 { return crc32.Checksum(payload, castagnoli) }
	}
	off := int64(segmentHeaderSize)
	var rh [recordHeaderSize]byte
	for {
		if off+recordHeaderSize > size {
			return endOfRecords, off, nil
		}
		if _, err := io.ReadFull(r, rh[:]); err != nil {
			return endTorn, off, readErr(err)
		}
		n := int64(binary.LittleEndian.Uint32(rh[0:4]))
		sum := binary.LittleEndian.Uint32(rh[4:8])
		if n == 0 && sum == 0 {
			return endOfRecords, off, nil
		}
		if n == 0 || off+recordHeaderSize+n > size {
			return endTorn, off, nil
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			return endTorn, off, readErr(err)
		}
		if sumOf(payload) != sum {
			return endTorn, off, nil
		}
		switch payload[0] {
		case recordSeal:
			return endSealed, off, nil
		case recordOps:
			if err := fn(payload[1:]); err != nil {
				return endTorn, off, err
			}
		default:
			return endTorn, off, nil
		}
		off += recordHeaderSize + n
	}
}

// readErr turns the end of the file into a torn record and keeps other read errors.
func readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	return err
}

// syncDir fsyncs a directory, so that files created or removed in it stay so after a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// syncFile fdatasyncs the file at path; a file removed meanwhile is not an error.
func syncFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	err = fdatasync(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}
