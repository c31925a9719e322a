package journal

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// TestRecycledSegmentReadsOnlyItsOwnRecords checks what keeps a recycled segment's old records
// out of a replay: segment 7, full of records, is recycled as segment 8, into which one record
// is written. Read back, segment 8 holds that record and nothing else — whether the record's
// zeros after it were written (the log ends there) or not (a write cut by a crash: the old
// record that follows does not check under number 8, and the log ends torn). An empty recycled
// segment reads as empty.
func TestRecycledSegmentReadsOnlyItsOwnRecords(t *testing.T) {
	dir := t.TempDir()
	rec := func(num uint64, v string) []byte {
		return appendOpsRecord(nil, []*request{{ops: []op{{key: []byte("k"), value: []byte(v)}}}}, num)
	}
	read := func(seg *segment) (segmentEnd, []string) {
		t.Helper()
		end, _, got := readValues(t, seg)
		return end, got
	}
	for _, tc := range []struct {
		name      string
		write     func(seg *segment)
		wantEnd   segmentEnd
		wantReads string
	}{
		{"empty", func(*segment) {}, endOfRecords, ""},
		{"record and its zeros", func(seg *segment) {
			// As writeBatch writes it: the record, then a record header of zeros.
			b := append(rec(seg.num, "new1"), make([]byte, recordHeaderSize)...)
			if _, err := seg.f.WriteAt(b, seg.off); err != nil {
				t.Fatal(err)
			}
		}, endOfRecords, "new1"},
		{"record without its zeros", func(seg *segment) {
			// The same length as the old first record, so that an old record starts right
			// after it: only the checksum's seed tells it from one of this segment.
			if _, err := seg.f.WriteAt(rec(seg.num, "new1"), seg.off); err != nil {
				t.Fatal(err)
			}
		}, endTorn, "new1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			walDir := filepath.Join(dir, tc.name)
			if err := os.Mkdir(walDir, 0o700); err != nil {
				t.Fatal(err)
			}
			old, err := createSegment(walDir, 7, 64<<10)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []string{"old1", "old2", "old3"} {
				r := rec(7, v)
				if _, err := old.f.WriteAt(r, old.off); err != nil {
					t.Fatal(err)
				}
				old.off += int64(len(r))
			}
			if end, got := read(old); end != endOfRecords || strings.Join(got, ",") != "old1,old2,old3" {
				t.Fatalf("segment 7 before recycling: end %d, records %q", end, got)
			}
			r := recycled{f: old.f, path: recyclePath(walDir, 7), size: old.size, written: old.off}
			if err := os.Rename(old.path, r.path); err != nil {
				t.Fatal(err)
			}
			if nums, err := listSegments(walDir); err != nil || len(nums) != 0 {
				t.Fatalf("segments with 7 kept for reuse: %v, %v; want none", nums, err)
			}
			seg, err := recycleSegment(walDir, r, 8)
			if err != nil {
				t.Fatal(err)
			}
			defer seg.f.Close()
			if nums, err := listSegments(walDir); err != nil || len(nums) != 1 || nums[0] != 8 {
				t.Fatalf("segments after reuse: %v, %v; want [8]", nums, err)
			}
			tc.write(seg)
			if end, got := read(seg); end != tc.wantEnd || strings.Join(got, ",") != tc.wantReads {
				t.Errorf("recycled segment 8: end %d, records %q; want end %d, records %q", end, got, tc.wantEnd, tc.wantReads)
			}
		})
	}
}

// TestRecycleSegmentRefusesATakenName checks that a retired file is never renamed over an
// existing segment: the reuse fails, the retired file is closed and removed, and the segment
// that had the name is left as it was.
func TestRecycleSegmentRefusesATakenName(t *testing.T) {
	dir := t.TempDir()
	taken, err := createSegment(dir, 9, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	_ = taken.f.Close()
	old, err := createSegment(dir, 8, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	r := recycled{f: old.f, path: recyclePath(dir, 8), size: old.size, written: old.off}
	if err := os.Rename(old.path, r.path); err != nil {
		t.Fatal(err)
	}
	if seg, err := recycleSegment(dir, r, 9); err == nil {
		_ = seg.f.Close()
		t.Fatal("segment 8 was reused as 9, a name already taken")
	}
	if _, err := os.Stat(r.path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the retired file is still there after a failed reuse: %v", err)
	}
	if err := old.f.Close(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("the retired file was left open after a failed reuse (Close: %v)", err)
	}
	if end, _, got := readValues(t, taken); end != endOfRecords || len(got) != 0 {
		t.Errorf("segment 9 after the failed reuse: end %d, records %q; want it empty, as made", end, got)
	}
}

// TestReadSegmentFormat1 checks that a segment an earlier version wrote (magic format 1,
// checksums of the payload alone) is still replayed.
func TestReadSegmentFormat1(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "000003.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := append([]byte{}, segmentMagicV1[:]...)
	b = binary.LittleEndian.AppendUint64(b, 3)
	for _, v := range []string{"a", "b"} {
		payload := []byte{recordOps, opKindSet, 1, 'k', 1, v[0]}
		b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
		b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(payload, castagnoli))
		b = append(b, payload...)
	}
	if _, err := f.Write(append(b, make([]byte, 64)...)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	var got []string
	end, _, err := readSegment(f, 3, func(p []byte) error {
		ops, err := decodeOps(p, nil)
		if err != nil {
			return err
		}
		got = append(got, string(ops[0].value))
		return nil
	})
	if err != nil || end != endOfRecords || strings.Join(got, "") != "ab" {
		t.Fatalf("format 1 segment: end %d, records %q, err %v; want the end of records after \"ab\"", end, got, err)
	}
}

// TestCheckpointsRecycleSegments checks the store's side: checkpoints keep retired segments for
// reuse (at most maxRecycled, under names that are not segments'), later spares are made of
// them rather than created, Close removes them, and every entry is read back after a reopen.
func TestCheckpointsRecycleSegments(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	walDir := filepath.Join(dir, walDirName)
	s, id := openRotatingStore(t, dir)
	const n = 1500 // ~225 KiB of records in 32 KiB segments: a rotation every ~200 entries
	spares := s.segmentsMade.Load() + s.segmentsReused.Load()
	for i := range n {
		if err := s.Append(ctx, id, true, benchEntry()); err != nil {
			t.Fatal(err)
		}
		// A rotation asks for the next spare at once, and its retired segment is recycled by a
		// checkpoint that follows it through the syncer and the applier. A rotation that comes
		// before the previous one's checkpoint has ended finds nothing recycled and creates a
		// segment, which is right but depends on the machine's speed: wait for each checkpoint
		// here, so that the counts below do not.
		if now := s.segmentsMade.Load() + s.segmentsReused.Load(); now != spares {
			spares = now
			if s.segmentsMade.Load()+s.segmentsReused.Load() > 2 {
				waitRecycled(t, walDir)
			}
		}
		if i%50 == 0 {
			kept, err := filepath.Glob(filepath.Join(walDir, "*"+recycleExt))
			if err != nil {
				t.Fatal(err)
			}
			if len(kept) > maxRecycled {
				t.Fatalf("%d segments kept for reuse, want at most %d: %v", len(kept), maxRecycled, kept)
			}
		}
	}
	closeStore(t, s)
	made, reused := s.segmentsMade.Load(), s.segmentsReused.Load()
	if reused == 0 || made > maxRecycled+2 {
		t.Errorf("%d segments created and %d reused; want reuse after the first few", made, reused)
	}
	left, err := os.ReadDir(walDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("wal/ after Close holds %d files (%s…), want none", len(left), left[0].Name())
	}
	checkEntriesAfterReopen(t, dir, id, n+1)
}

// TestOpenRemovesLeftoverRecycledSegments checks that a segment kept for reuse by a process
// that did not close is removed by the next Open, and not replayed.
func TestOpenRemovesLeftoverRecycledSegments(t *testing.T) {
	dir := t.TempDir()
	walDir := filepath.Join(dir, walDirName)
	s := openStore(t, dir)
	closeStore(t, s)
	old, err := createSegment(walDir, 40, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	r := appendOpsRecord(nil, []*request{{ops: []op{{key: []byte("kv/stale"), value: []byte("1")}}}}, 40)
	if _, err := old.f.WriteAt(r, old.off); err != nil {
		t.Fatal(err)
	}
	_ = old.f.Close()
	if err := os.Rename(old.path, recyclePath(walDir, 40)); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir)
	defer closeStore(t, s)
	if kept, _ := filepath.Glob(filepath.Join(walDir, "*"+recycleExt)); len(kept) != 0 {
		t.Errorf("after Open, wal/ still holds %v", kept)
	}
	err = s.view(func(txn *badger.Txn) error {
		_, err := txn.Get([]byte("kv/stale"))
		return err
	})
	if !errors.Is(err, badger.ErrKeyNotFound) {
		t.Errorf("kv/stale after Open: %v; want it missing (the record of a segment kept for reuse is not replayed)", err)
	}
}

// waitRecycled waits until a retired segment is kept for reuse in walDir.
func waitRecycled(t *testing.T, walDir string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		kept, err := filepath.Glob(filepath.Join(walDir, "*"+recycleExt))
		if err != nil {
			t.Fatal(err)
		}
		if len(kept) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no retired segment was kept for reuse 30 s after a rotation")
		}
		time.Sleep(time.Millisecond)
	}
}
