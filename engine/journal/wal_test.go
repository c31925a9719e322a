package journal

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

func TestRecordCodec(t *testing.T) {
	reqs := []*request{
		{ops: []op{{key: []byte("a"), value: []byte("1")}, {key: []byte("b"), del: true}}},
		{ops: []op{{key: []byte("c"), value: []byte{}}, {key: []byte("d"), value: bytes.Repeat([]byte("x"), 300)}}},
	}
	rec := appendOpsRecord(nil, reqs, 1)
	if n := binary.LittleEndian.Uint32(rec); int(n) != len(rec)-recordHeaderSize {
		t.Fatalf("record length %d, payload is %d bytes", n, len(rec)-recordHeaderSize)
	}
	ops, err := decodeOps(rec[recordHeaderSize+1:], nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []op
	for _, r := range reqs {
		want = append(want, r.ops...)
	}
	if len(ops) != len(want) {
		t.Fatalf("%d ops decoded, want %d", len(ops), len(want))
	}
	for i := range ops {
		if !bytes.Equal(ops[i].key, want[i].key) || !bytes.Equal(ops[i].value, want[i].value) || ops[i].del != want[i].del {
			t.Errorf("op %d = %+v, want %+v", i, ops[i], want[i])
		}
	}
	// Cut inside the last op (the CRC catches the rest: a cut at an op boundary decodes).
	for _, cut := range []int{1, 2, 150, 300, 302, 304, 306, 307} {
		if _, err := decodeOps(rec[recordHeaderSize+1:len(rec)-cut], nil); err == nil {
			t.Errorf("a payload cut by %d bytes decodes", cut)
		}
	}
}

// TestReadSegment checks how reading a segment ends: at the zeros after the last record, at a
// seal, or at a torn record (bad CRC, length past the end, bad header).
func TestReadSegment(t *testing.T) {
	dir := t.TempDir()
	write := func(num uint64, recs ...[]byte) *segment {
		t.Helper()
		seg, err := createSegment(dir, num, 4096)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if _, err := seg.f.WriteAt(r, seg.off); err != nil {
				t.Fatal(err)
			}
			seg.off += int64(len(r))
		}
		return seg
	}
	rec := func(num uint64, v string) []byte {
		return appendOpsRecord(nil, []*request{{ops: []op{{key: []byte("k"), value: []byte(v)}}}}, num)
	}
	read := func(seg *segment) (segmentEnd, int64, []string) { return readValues(t, seg) }

	seg := write(1, rec(1, "a"), rec(1, "b"))
	if end, off, got := read(seg); end != endOfRecords || off != seg.off || strings.Join(got, "") != "ab" {
		t.Errorf("clean segment: end %d at %d (written %d), records %q", end, off, seg.off, got)
	}
	seg = write(2, rec(2, "a"), appendSealRecord(nil, 2))
	if end, _, got := read(seg); end != endSealed || strings.Join(got, "") != "a" {
		t.Errorf("sealed segment: end %d, records %q", end, got)
	}
	bad := rec(3, "b")
	bad[len(bad)-1] ^= 0xff
	seg = write(3, rec(3, "a"), bad, rec(3, "c"))
	if end, _, got := read(seg); end != endTorn || strings.Join(got, "") != "a" {
		t.Errorf("corrupt record: end %d, records %q", end, got)
	}
	long := rec(4, "b")
	binary.LittleEndian.PutUint32(long, 1<<20)
	seg = write(4, rec(4, "a"), long)
	if end, _, got := read(seg); end != endTorn || strings.Join(got, "") != "a" {
		t.Errorf("record past the end: end %d, records %q", end, got)
	}
	seg = write(5, rec(5, "a"))
	if _, err := seg.f.WriteAt([]byte("garbage!"), 0); err != nil {
		t.Fatal(err)
	}
	if end, _, got := read(seg); end != endTorn || len(got) != 0 {
		t.Errorf("bad header: end %d, records %q", end, got)
	}
}

// readValues reads segment seg from the start, as replay does, and returns how it ended, where,
// and the value of the first op of each record.
func readValues(t *testing.T, seg *segment) (segmentEnd, int64, []string) {
	t.Helper()
	f, err := os.Open(seg.path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []string
	end, off, err := readSegment(f, seg.num, func(p []byte) error {
		ops, err := decodeOps(p, nil)
		if err != nil {
			return err
		}
		got = append(got, string(ops[0].value))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return end, off, got
}

// Environment of the crash child (TestWALCrashReplay re-executing the test binary).
const (
	crashDirEnv  = "JOURNAL_TEST_CRASH_DIR"
	crashModeEnv = "JOURNAL_TEST_CRASH_MODE" // "apply" or "skip" (Badger gets nothing)
	crashRunsEnv = "JOURNAL_TEST_CRASH_RUNS"
)

// crashChild appends to JOURNAL_TEST_CRASH_RUNS runs concurrently, each node a relaxed
// attempt_started then a durable node_finished, printing "ok <run> <seq>" once the durable
// Append returned, until it is killed.
func crashChild(dir, mode string, runs int) {
	wc := walConfig{segmentSize: 64 << 10, checkpointEvery: time.Hour}
	if mode == "skip" {
		wc.skipApply, wc.keepSegments = true, true
	}
	s, err := open(dir, Options{}, wc)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for r := range runs {
		wg.Go(func() {
			id := testID(r)
			if err := s.Append(ctx, id, true, started("crash", "", "task.a")); err != nil {
				fmt.Println("append:", err)
				os.Exit(2)
			}
			for i := 1; ; i++ {
				if err := s.Append(ctx, id, false, Entry{Type: AttemptStarted, Node: "task.a", Attempt: i}); err != nil {
					fmt.Println("append:", err)
					os.Exit(2)
				}
				e := []Entry{{Type: NodeFinished, Node: "task.a", Attempt: i, Status: StatusSucceeded, Output: []byte(`{"i":` + strconv.Itoa(i) + `}`)}}
				if err := s.Append(ctx, id, true, e...); err != nil {
					fmt.Println("append:", err)
					os.Exit(2)
				}
				mu.Lock()
				fmt.Fprintf(out, "ok %d %d\n", r, e[0].Seq)
				out.Flush()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// runCrashChild is the crash child's whole life when crash started this process as one: it
// appends until the parent kills it. It runs first in the tests that call crash, before they
// make a temporary directory: the child never returns to remove one.
func runCrashChild() {
	if mode := os.Getenv(crashModeEnv); mode != "" {
		n, _ := strconv.Atoi(os.Getenv(crashRunsEnv))
		crashChild(os.Getenv(crashDirEnv), mode, n)
		os.Exit(0)
	}
}

// crash runs the crash child on dir and SIGKILLs it once it has acknowledged at least acks
// durable appends; it returns the highest acknowledged seq of each run.
func crash(t *testing.T, dir, mode string, runs, acks int) map[int]uint64 {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(exe, "-test.run=^"+t.Name()+"$")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashModeEnv+"="+mode, crashRunsEnv+"="+strconv.Itoa(runs))
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := make(map[int]uint64)
	sc := bufio.NewScanner(stdout)
	n := 0
	for n < acks && sc.Scan() {
		var r int
		var seq uint64
		if _, err := fmt.Sscanf(sc.Text(), "ok %d %d", &r, &seq); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("child: %s", sc.Text())
		}
		acked[r] = max(acked[r], seq)
		n++
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Acknowledgements printed before the kill took effect count too.
	for sc.Scan() {
		var r int
		var seq uint64
		if _, err := fmt.Sscanf(sc.Text(), "ok %d %d", &r, &seq); err == nil {
			acked[r] = max(acked[r], seq)
		}
	}
	_ = cmd.Wait()
	if n < acks {
		t.Fatalf("the child stopped after %d acknowledgements", n)
	}
	return acked
}

// checkRecovered checks that run r has entries 1..n without gaps, n at least the acknowledged
// seq, alternating attempt_started and node_finished after run_started, and that the next
// Append continues at n+1. It returns n.
func checkRecovered(t *testing.T, s *Store, r int, acked uint64) uint64 {
	t.Helper()
	id := testID(r)
	got := collectEntries(t, s, id, 0)
	if uint64(len(got)) < acked {
		t.Fatalf("run %d: %d entries after the crash, %d were acknowledged", r, len(got), acked)
	}
	for i, e := range got {
		want := AttemptStarted
		switch {
		case i == 0:
			want = RunStarted
		case i%2 == 0:
			want = NodeFinished
		}
		if e.Seq != uint64(i+1) || e.Type != want || (i > 0 && e.Attempt != (i+1)/2) {
			t.Fatalf("run %d: entry %d = seq %d %s attempt %d", r, i, e.Seq, e.Type, e.Attempt)
		}
	}
	if sum, err := s.Summary(id); err != nil || sum.Status != StatusRunning {
		t.Fatalf("run %d: summary %+v, %v", r, sum, err)
	}
	next := []Entry{{Type: RunFinished, Status: StatusSucceeded}}
	if err := s.Append(context.Background(), id, true, next...); err != nil {
		t.Fatal(err)
	}
	if next[0].Seq != uint64(len(got))+1 {
		t.Fatalf("run %d: seq after recovery %d, want %d", r, next[0].Seq, len(got)+1)
	}
	return uint64(len(got))
}

// TestWALCrashReplay kills a process appending durable entries and checks that every entry
// acknowledged before the kill is found by the next Open, and that seqs continue. With "skip"
// the child never writes Badger (as if Badger had lost everything since the last checkpoint):
// everything comes from replaying the WAL, across sealed segments. With "apply" the child
// runs as in production (checkpoints removing segments concurrently).
func TestWALCrashReplay(t *testing.T) {
	runCrashChild()
	for _, tt := range []struct {
		mode       string
		runs, acks int
	}{
		{"skip", 1, 300},
		{"skip", 4, 600},
		{"apply", 4, 600},
	} {
		t.Run(fmt.Sprintf("%s/%d", tt.mode, tt.runs), func(t *testing.T) {
			dir := t.TempDir()
			acked := crash(t, dir, tt.mode, tt.runs, tt.acks)
			if tt.mode == "skip" {
				nums, err := listSegments(filepath.Join(dir, walDirName))
				if err != nil || len(nums) < 3 {
					t.Fatalf("the child left segments %v (%v): want several, to replay across seals", nums, err)
				}
			}
			s := openStore(t, dir)
			for r := range tt.runs {
				n := checkRecovered(t, s, r, acked[r])
				t.Logf("run %d: %d acknowledged, %d recovered", r, acked[r], n)
			}
			closeStore(t, s)
			if nums, _ := listSegments(filepath.Join(dir, walDirName)); len(nums) != 0 {
				t.Errorf("segments %v left after Close", nums)
			}
		})
	}
}

// TestWALTornTail corrupts the end of the WAL a crash left: a torn record after the last one
// is ignored; a last record with a bad CRC is dropped, with nothing after it, and everything
// before it is kept.
func TestWALTornTail(t *testing.T) {
	runCrashChild()
	// lastRecord finds the segment holding the last ops record and that record's offset,
	// length and first journal seq.
	lastRecord := func(t *testing.T, walDir string) (path string, off, n int64, seq uint64) {
		t.Helper()
		nums, err := listSegments(walDir)
		if err != nil {
			t.Fatal(err)
		}
		for _, num := range nums {
			f, err := os.Open(segmentPath(walDir, num))
			if err != nil {
				t.Fatal(err)
			}
			pos := int64(segmentHeaderSize)
			_, _, err = readSegment(f, num, func(p []byte) error {
				ops, err := decodeOps(p, nil)
				if err != nil {
					return err
				}
				first := uint64(0)
				for _, o := range ops {
					if bytes.HasPrefix(o.key, runJournalPrefix(testID(0))) {
						first = keySeq(o.key)
						break
					}
				}
				path, off, n, seq = f.Name(), pos, int64(recordHeaderSize+1+len(p)), first
				pos += recordHeaderSize + 1 + int64(len(p))
				return nil
			})
			_ = f.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
		if path == "" || seq == 0 {
			t.Fatal("no record in the WAL")
		}
		return path, off, n, seq
	}

	t.Run("torn record after the last", func(t *testing.T) {
		dir := t.TempDir()
		acked := crash(t, dir, "skip", 1, 200)
		path, off, n, _ := lastRecord(t, filepath.Join(dir, walDirName))
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		torn := make([]byte, 40)
		binary.LittleEndian.PutUint32(torn, 500)
		binary.LittleEndian.PutUint32(torn[4:], 0xdeadbeef)
		copy(torn[8:], "half a record, cut by the crash")
		if _, err := f.WriteAt(torn, off+n); err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
		s := openStore(t, dir)
		defer closeStore(t, s)
		checkRecovered(t, s, 0, acked[0])
	})

	t.Run("corrupt last record", func(t *testing.T) {
		dir := t.TempDir()
		crash(t, dir, "skip", 1, 200)
		path, off, n, seq := lastRecord(t, filepath.Join(dir, walDirName))
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, off+n-1); err != nil {
			t.Fatal(err)
		}
		b[0] ^= 0xff
		if _, err := f.WriteAt(b, off+n-1); err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
		s := openStore(t, dir)
		defer closeStore(t, s)
		// Everything before the corrupt record is there, nothing from it on.
		if n := checkRecovered(t, s, 0, 0); n != seq-1 {
			t.Errorf("%d entries recovered, want %d (up to the corrupt record)", n, seq-1)
		}
	})
}

// TestCheckpoint checks that full segments are checkpointed and removed, that a segment is
// checkpointed checkpointEvery after its first record, and that what was checkpointed stays.
func TestCheckpoint(t *testing.T) {
	ctx := context.Background()
	waitSegments := func(t *testing.T, walDir string, ok func([]uint64) bool) []uint64 {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			nums, err := listSegments(walDir)
			if err != nil {
				t.Fatal(err)
			}
			if ok(nums) {
				return nums
			}
			if time.Now().After(deadline) {
				t.Fatalf("segments %v", nums)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	t.Run("full segments", func(t *testing.T) {
		dir := t.TempDir()
		walDir := filepath.Join(dir, walDirName)
		s, err := open(dir, Options{}, walConfig{segmentSize: 32 << 10, checkpointEvery: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		id := testID(1)
		if err := s.Append(ctx, id, true, started("wf", "")); err != nil {
			t.Fatal(err)
		}
		const n = 1000 // ~300 KB: about ten segments
		for i := range n {
			if err := s.Append(ctx, id, i%10 == 0, benchEntry()); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.barrier(); err != nil {
			t.Fatal(err)
		}
		// The current segment, the spare, and perhaps one being checkpointed.
		nums := waitSegments(t, walDir, func(nums []uint64) bool { return len(nums) <= 2 })
		if nums[0] < 8 {
			t.Errorf("segments %v: the full ones were not removed", nums)
		}
		closeStore(t, s)
		waitSegments(t, walDir, func(nums []uint64) bool { return len(nums) == 0 })
		s = openStore(t, dir)
		defer closeStore(t, s)
		if got := collectEntries(t, s, id, 0); len(got) != n+1 {
			t.Errorf("%d entries after reopening, want %d", len(got), n+1)
		}
	})

	t.Run("interval", func(t *testing.T) {
		dir := t.TempDir()
		walDir := filepath.Join(dir, walDirName)
		s, err := open(dir, Options{}, walConfig{segmentSize: 1 << 20, checkpointEvery: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer closeStore(t, s)
		first := waitSegments(t, walDir, func(nums []uint64) bool { return len(nums) == 2 })[0]
		time.Sleep(50 * time.Millisecond)
		if nums, _ := listSegments(walDir); nums[0] != first {
			t.Errorf("an empty segment was checkpointed: %v", nums)
		}
		if err := s.Append(ctx, testID(1), true, started("wf", "")); err != nil {
			t.Fatal(err)
		}
		waitSegments(t, walDir, func(nums []uint64) bool { return len(nums) > 0 && nums[0] > first })
		if _, err := s.Summary(testID(1)); err != nil {
			t.Error(err)
		}
	})
}

// TestCloseRemovesWALAfterBadger: Close leaves the durability of what is in Badger's memtable
// to Badger's own Close (no sync of its own before it), so the WAL segments must outlive
// Badger's Close — a kill during it replays them — and be gone once Close has returned, the
// store then holding everything on its own.
func TestCloseRemovesWALAfterBadger(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	walDir := filepath.Join(dir, walDirName)
	wc := defaultWALConfig()
	var before []uint64
	wc.badgerCloseHook = func() {
		nums, err := listSegments(walDir)
		if err != nil {
			t.Error(err)
		}
		before = nums
	}
	s, err := open(dir, Options{}, wc)
	if err != nil {
		t.Fatal(err)
	}
	id := testID(1)
	const n = 50
	if err := s.Append(ctx, id, true, started("wf", "")); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := s.Append(ctx, id, i%10 == 0, benchEntry()); err != nil {
			t.Fatal(err)
		}
	}
	closeStore(t, s)
	if len(before) == 0 {
		t.Error("no WAL segment left when Badger's Close began: a kill during it would lose the unsynced writes")
	}
	if nums, err := listSegments(walDir); err != nil || len(nums) != 0 {
		t.Fatalf("segments after Close: %v, %v", nums, err)
	}
	checkEntriesAfterReopen(t, dir, id, n+1)
}

// TestWALSyncFailure fails a WAL sync: the durable Append of that group fails, and the next
// one succeeds once the store has moved to a new segment and checkpointed the failed one.
func TestWALSyncFailure(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	ctx := context.Background()
	id := testID(1)
	if err := s.Append(ctx, id, true, started("wf", "")); err != nil {
		t.Fatal(err)
	}
	ioErr := errors.New("input/output error")
	s.failSync.Store(&ioErr)
	err := s.Append(ctx, id, true, Entry{Type: NodeStarted, Node: "x"})
	if !errors.Is(err, ioErr) || !strings.Contains(err.Error(), "sync write-ahead log") {
		t.Fatalf("durable Append whose sync failed = %v", err)
	}
	last := []Entry{{Type: RunFinished, Status: StatusSucceeded}}
	if err := s.Append(ctx, id, true, last...); err != nil {
		t.Fatalf("Append after a failed sync: %v", err)
	}
	if s.walFailed.Load() != 0 {
		t.Error("still blocked after the checkpoint")
	}
	closeStore(t, s)
	s = openStore(t, dir)
	defer closeStore(t, s)
	got := collectEntries(t, s, id, 0)
	if len(got) != 2 || got[1].Seq != last[0].Seq {
		t.Errorf("entries = %+v", got)
	}
}

// TestApplyFailure fails the Badger write of a synced batch: the durable Append that was
// acknowledged stays acknowledged, later writes fail, Close reports it and keeps the WAL, and
// the next Open replays the batch.
func TestApplyFailure(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	ctx := context.Background()
	id := testID(1)
	if err := s.Append(ctx, id, true, started("wf", "")); err != nil {
		t.Fatal(err)
	}
	if err := s.barrier(); err != nil { // run_started is in Badger: the hook hits the next batch
		t.Fatal(err)
	}
	diskErr := errors.New("no space left on device")
	s.failApply.Store(&diskErr)
	acked := []Entry{{Type: NodeStarted, Node: "x"}}
	if err := s.Append(ctx, id, true, acked...); err != nil {
		t.Fatalf("durable Append synced in the WAL = %v", err)
	}
	if err := s.barrier(); err != nil { // the Badger write has failed (after the Append returned)
		t.Fatal(err)
	}
	err := s.Append(ctx, id, true, Entry{Type: NodeStarted, Node: "y"})
	if !errors.Is(err, diskErr) || !strings.Contains(err.Error(), "writes are stopped") {
		t.Errorf("Append after a failed Badger write = %v", err)
	}
	if err := s.Close(); !errors.Is(err, diskErr) {
		t.Errorf("Close = %v", err)
	}
	if nums, _ := listSegments(filepath.Join(dir, walDirName)); len(nums) == 0 {
		t.Fatal("Close removed the WAL")
	}
	s = openStore(t, dir)
	defer closeStore(t, s)
	got := collectEntries(t, s, id, 0)
	if len(got) != 2 || got[1].Seq != acked[0].Seq || got[1].Node != "x" {
		t.Errorf("entries after reopening = %+v", got)
	}
	if err := s.Append(ctx, id, true, Entry{Type: RunFinished, Status: StatusFailed}); err != nil {
		t.Error(err)
	}
}

// TestReadsRefusedAfterApplyFailure: once the Badger write of an acknowledged batch failed,
// Badger lacks a write its caller was told is durable: reads fail, naming the failure, rather
// than return a journal with that write silently missing; reopening replays it.
func TestReadsRefusedAfterApplyFailure(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	ctx := context.Background()
	id := testID(1)
	if err := s.Append(ctx, id, true, started("wf", "")); err != nil {
		t.Fatal(err)
	}
	if err := s.barrier(); err != nil {
		t.Fatal(err)
	}
	diskErr := errors.New("no space left on device")
	s.failApply.Store(&diskErr)
	if err := s.Append(ctx, id, true, Entry{Type: NodeStarted, Node: "x"}); err != nil {
		t.Fatalf("durable Append synced in the WAL = %v", err)
	}
	var got []Entry
	err := s.Entries(id, 0, func(e Entry) error { got = append(got, e); return nil })
	if !errors.Is(err, diskErr) || !strings.Contains(err.Error(), "reads are refused") {
		t.Errorf("Entries after a failed Badger write of an acknowledged append = %v, entries %+v; want refused", err, got)
	}
	if _, err := s.Summary(id); !errors.Is(err, diskErr) {
		t.Errorf("Summary after a failed Badger write = %v, want refused", err)
	}
	if err := s.Close(); !errors.Is(err, diskErr) {
		t.Errorf("Close = %v", err)
	}
	s = openStore(t, dir)
	defer closeStore(t, s)
	if got := collectEntries(t, s, id, 0); len(got) != 2 || got[1].Node != "x" {
		t.Errorf("entries after reopening = %+v", got)
	}
}

// TestRefusedOps checks that what Badger would refuse is refused before the WAL, consuming no
// seq, and that replay skips such an op rather than failing Open.
func TestRefusedOps(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	ctx := context.Background()
	long := strings.Repeat("x", maxKeySize)
	if err := s.Append(ctx, long, true, started("wf", "")); err == nil || !strings.Contains(err.Error(), "key of") {
		t.Errorf("Append with a %d-byte id = %v", len(long), err)
	}
	if err := s.Log(long, LogLine{Message: "x"}); err == nil {
		t.Error("Log with an oversized key succeeded")
	}
	id := testID(1)
	if err := s.Append(ctx, id, true, started("wf", "")); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)

	// A WAL left by a crash, holding an op Badger refuses between two good ones.
	walDir := filepath.Join(dir, walDirName)
	seg, err := createSegment(walDir, 100, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	rec := appendOpsRecord(nil, []*request{{ops: []op{
		{key: []byte("kv/a"), value: []byte("1")},
		{key: []byte(long + "y"), value: []byte("2")},
		{key: []byte("kv/b"), value: []byte("3")},
	}}}, 100)
	if _, err := seg.f.WriteAt(rec, seg.off); err != nil {
		t.Fatal(err)
	}
	_ = seg.f.Close()
	s = openStore(t, dir)
	defer closeStore(t, s)
	for _, k := range []string{"kv/a", "kv/b"} {
		err := s.view(func(txn *badger.Txn) error {
			_, err := txn.Get([]byte(k))
			return err
		})
		if err != nil {
			t.Errorf("%s after replay: %v", k, err)
		}
	}
	if got := collectEntries(t, s, id, 0); len(got) != 1 {
		t.Errorf("entries = %+v", got)
	}
}
