package journal

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"
)

// TestZeroAheadBounds checks where the writer's zeros go: none before zeroFrom bytes of
// records, then from the end of what is written (or the last record) to zeroAhead past the last
// record, on a block boundary, never past the preallocated end, and only once fewer than
// zeroLow are left.
func TestZeroAheadBounds(t *testing.T) {
	const size = 1 << 20
	seg, err := createSegment(t.TempDir(), 1, size)
	if err != nil {
		t.Fatal(err)
	}
	defer seg.f.Close()
	if seg.zeroed != segmentHeaderSize {
		t.Fatalf("a new segment is written to %d, want its header's %d", seg.zeroed, segmentHeaderSize)
	}
	first := int64(zeroFrom+100+zeroAhead) &^ 4095
	steps := []struct{ off, want int64 }{
		{off: 1000, want: segmentHeaderSize},                                        // fewer than zeroFrom bytes of records: none
		{off: zeroFrom + 100, want: first},                                          // zeroAhead past the record
		{off: first - zeroLow - 1, want: first},                                     // zeroLow or more is left
		{off: first - zeroLow + 1, want: (first - zeroLow + 1 + zeroAhead) &^ 4095}, // less
		{off: 900<<10 + 5, want: size},                                              // not past the preallocated end
		{off: size + 10, want: size},                                                // a record that grew the file
	}
	for _, st := range steps {
		// What the zeros may cover must not hold a record: mark the bytes before off.
		if _, err := seg.f.WriteAt(bytes.Repeat([]byte{0xAA}, int(st.off-seg.off)), seg.off); err != nil {
			t.Fatal(err)
		}
		seg.off = st.off
		seg.zeroAhead()
		if seg.zeroed != st.want {
			t.Fatalf("after a record ending at %d: written to %d, want %d", st.off, seg.zeroed, st.want)
		}
	}
	data, err := os.ReadFile(seg.path)
	if err != nil {
		t.Fatal(err)
	}
	if i := bytes.IndexByte(data[segmentHeaderSize:size+10], 0); i != -1 {
		t.Fatalf("the zeros overwrote a record at %d", segmentHeaderSize+i)
	}
}

// TestWALSyncsWrittenBlocks checks what zeroAhead is for: after durable appends, every block of
// the current segment up to past its last record is written in the file system's extent map,
// not a preallocated, unwritten extent whose first write would make the record's fdatasync
// commit file-system metadata. It skips where the file system cannot tell (no FIEMAP).
func TestWALSyncsWrittenBlocks(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	// Enough runs to go past the part written when the segment was made.
	nodes := make([]string, 20)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("task.step_%02d", i)
	}
	for i := range 300 {
		if err := s.Append(ctx, fmt.Sprintf("run-%03d", i), true, started("wf", "", nodes...)); err != nil {
			t.Fatal(err)
		}
	}
	segs, err := listSegments(s.walDir)
	if err != nil || len(segs) == 0 {
		t.Fatalf("segments: %v, %v", segs, err)
	}
	f, err := os.Open(segmentPath(s.walDir, segs[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	how, end, err := readSegment(f, segs[0], func([]byte) error { return nil })
	if err != nil || how != endOfRecords {
		t.Fatalf("reading the segment: ended %d at %d, %v; want the end of its records", how, end, err)
	}
	if end <= zeroFrom {
		t.Fatalf("the records end at %d, before zeroing starts at %d: the test must write more", end, zeroFrom)
	}
	unwritten, err := unwrittenBefore(f, end+4096)
	if err != nil {
		t.Skipf("cannot read the extent map here: %v", err)
	}
	if unwritten != "" {
		t.Fatalf("records end at %d, but the segment has unwritten extents before that: %s", end, unwritten)
	}
}

// unwrittenBefore describes the unwritten extents of f that start before end ("" for none),
// from the FIEMAP ioctl after syncing f's delayed allocations.
func unwrittenBefore(f *os.File, end int64) (string, error) {
	const (
		fsIocFiemap      = 0xC020660B
		fiemapFlagSync   = 0x1
		extentUnwritten  = 0x800
		maxExtents       = 64
		fiemapHeaderSize = 32
		fiemapExtentSize = 56
	)
	buf := make([]byte, fiemapHeaderSize+maxExtents*fiemapExtentSize)
	binary.NativeEndian.PutUint64(buf[0:], 0)                   // fm_start
	binary.NativeEndian.PutUint64(buf[8:], uint64(end))         // fm_length
	binary.NativeEndian.PutUint32(buf[16:], fiemapFlagSync)     // fm_flags
	binary.NativeEndian.PutUint32(buf[24:], uint32(maxExtents)) // fm_extent_count
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(&buf[0])))
	if errno != 0 {
		return "", fmt.Errorf("FIEMAP of %s: %w", filepath.Base(f.Name()), errno)
	}
	mapped := int(binary.NativeEndian.Uint32(buf[20:]))
	if mapped == 0 {
		return "", fmt.Errorf("FIEMAP of %s: no extents", filepath.Base(f.Name()))
	}
	var out string
	for i := range min(mapped, maxExtents) {
		e := buf[fiemapHeaderSize+i*fiemapExtentSize:]
		logical, length := binary.NativeEndian.Uint64(e[0:]), binary.NativeEndian.Uint64(e[16:])
		flags := binary.NativeEndian.Uint32(e[40:])
		if flags&extentUnwritten != 0 && int64(logical) < end {
			out += fmt.Sprintf("[%d, %d) ", logical, logical+length)
		}
	}
	return out, nil
}
