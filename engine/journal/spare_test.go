package journal

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/dgraph-io/ristretto/v2/z"
)

// TestShortStoreMakesOneSegment checks what a store closed soon after Open (a one-shot `fuscia
// apply`) does to its WAL: it creates, preallocates and syncs one segment — the first spare
// waits for firstSpareDelay — and its Close, once Badger's Close has made everything durable,
// removes that segment without an fsync of wal/.
func TestShortStoreMakesOneSegment(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	walDir := filepath.Join(dir, walDirName)
	wc := defaultWALConfig()
	wc.firstSpareDelay = time.Hour // longer than the test: the delay never runs out here
	s, err := open(dir, Options{}, wc)
	if err != nil {
		t.Fatal(err)
	}
	id := testID(1)
	if err := s.Append(ctx, id, true, started("wf", "")); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := s.Append(ctx, id, i == 2, benchEntry()); err != nil {
			t.Fatal(err)
		}
	}
	// A spare asked for at Open would be created by the checkpointer meanwhile (it has nothing
	// else to do): give it that time before looking.
	for range 20 {
		nums, err := listSegments(walDir)
		if err != nil {
			t.Fatal(err)
		}
		if len(nums) != 1 {
			t.Fatalf("segments while the store is open: %v, want only the first", nums)
		}
		time.Sleep(10 * time.Millisecond)
	}
	closeStore(t, s)
	if got := s.segmentsMade.Load(); got != 1 {
		t.Errorf("%d segments created, want 1", got)
	}
	if got := s.walDirSyncs.Load(); got != 0 {
		t.Errorf("wal/ synced %d times by checkpoints and Close, want 0", got)
	}
	if nums, err := listSegments(walDir); err != nil || len(nums) != 0 {
		t.Fatalf("segments after Close: %v, %v", nums, err)
	}
	checkEntriesAfterReopen(t, dir, id, 4)
}

// openRotatingStore opens a store in dir whose 32 KiB segments rotate every ~200 entries and
// that neither checkpoints on a timer nor makes its first spare before a rotation asks, and
// starts a run in it.
func openRotatingStore(t *testing.T, dir string) (*Store, string) {
	t.Helper()
	wc := walConfig{segmentSize: 32 << 10, checkpointEvery: time.Hour, firstSpareDelay: time.Hour}
	s, err := open(dir, Options{}, wc)
	if err != nil {
		t.Fatal(err)
	}
	id := testID(1)
	if err := s.Append(context.Background(), id, true, started("wf", "")); err != nil {
		t.Fatal(err)
	}
	return s, id
}

// TestFirstSpareWhenARotationNeedsIt checks that a rotation before firstSpareDelay does not
// wait for the delay: the writer asks for the spare at once and goes on in it.
func TestFirstSpareWhenARotationNeedsIt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, id := openRotatingStore(t, dir)
	const n = 600 // ~90 KiB of records in 32 KiB segments: several rotations
	for range n {
		if err := s.Append(ctx, id, true, benchEntry()); err != nil {
			t.Fatal(err)
		}
	}
	closeStore(t, s)
	if made, reused := s.segmentsMade.Load(), s.segmentsReused.Load(); made+reused < 4 {
		t.Errorf("%d segments created and %d reused, want at least 4 in all", made, reused)
	}
	checkEntriesAfterReopen(t, dir, id, n+1)
}

// TestFirstSpareAfterTheDelay checks that a store left open makes its first spare once
// firstSpareDelay has passed, without a rotation asking for it.
func TestFirstSpareAfterTheDelay(t *testing.T) {
	dir := t.TempDir()
	wc := walConfig{segmentSize: 32 << 10, checkpointEvery: time.Hour, firstSpareDelay: time.Millisecond}
	s, err := open(dir, Options{}, wc)
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore(t, s)
	walDir := filepath.Join(dir, walDirName)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		nums, err := listSegments(walDir)
		if err != nil {
			t.Fatal(err)
		}
		if len(nums) == 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("segments 30 s after Open: %v, want the first and the spare", nums)
		}
	}
}

// TestNewStoreFormatNotSynced checks that opening a new store does not sync Badger to make its
// format key durable (checkFormat says why that is not needed), and that the key is there
// after a Close and reopen.
func TestNewStoreFormatNotSynced(t *testing.T) {
	dir := t.TempDir()
	before := z.MsyncCalls()
	s := openStore(t, dir)
	if got := z.MsyncCalls() - before; got != 0 {
		t.Errorf("Open of a new store made %d msyncs, want 0", got)
	}
	closeStore(t, s)
	s = openStore(t, dir)
	closeStore(t, s)
}
