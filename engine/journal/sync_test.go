package journal

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestSync: Sync makes the relaxed entries before it durable with one sync, costs no sync when
// there is nothing to sync, and knows nothing of runs it never saw. The store holds relaxed
// writes (HoldRelaxed), so that they are readable only once something synced them.
func TestSync(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{HoldRelaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore(t, s)
	id := testID(1)
	if err := s.Append(ctx, id, true, started("wf", "", "task.a")); err != nil {
		t.Fatal(err)
	}
	syncs := s.Syncs()
	if err := s.Sync(ctx, id); err != nil {
		t.Fatalf("Sync with nothing to sync: %v", err)
	}
	if s.Syncs() != syncs {
		t.Errorf("Sync with nothing to sync made %d syncs", s.Syncs()-syncs)
	}

	relaxed := []Entry{
		{Type: AttemptStarted, Node: "task.a", Attempt: 1},
		{Type: NodeFinished, Node: "task.a", Status: StatusSucceeded, Output: json.RawMessage(`{"v":1}`)},
	}
	if err := s.Append(ctx, id, false, relaxed...); err != nil {
		t.Fatal(err)
	}
	if err := s.Log(id, LogLine{Node: "task.a", Attempt: 1, Level: "info", Message: "hello"}); err != nil {
		t.Fatal(err)
	}
	if got := collectEntries(t, s, id, 0); len(got) != 1 {
		t.Fatalf("%d entries readable before Sync; want 1 (relaxed ones are held)", len(got))
	}
	if err := s.Sync(ctx, id); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if got := s.Syncs() - syncs; got != 1 {
		t.Errorf("Sync made %d syncs, want 1", got)
	}
	if got := collectEntries(t, s, id, 0); len(got) != 3 {
		t.Errorf("%d entries readable after Sync, want 3", len(got))
	}
	var lines int
	if err := s.Logs(id, 0, func(LogLine) error { lines++; return nil }); err != nil || lines != 1 {
		t.Errorf("log lines after Sync: %d (%v), want 1", lines, err)
	}

	syncs = s.Syncs()
	if err := s.Sync(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(ctx, testID(2)); err != nil {
		t.Errorf("Sync of a run the store never saw: %v", err)
	}
	if s.Syncs() != syncs {
		t.Errorf("Sync after Sync made %d syncs", s.Syncs()-syncs)
	}
	if err := s.Sync(ctx, "a/b"); err == nil {
		t.Error("Sync of an invalid id: no error")
	}
}

// appendFailingRelaxed starts run id with a durable Append, then makes the store's writes fail
// ("no space left on device") and appends a relaxed entry, which returns before its write
// fails. The caller stores nil in s.failWrites when the failure has served.
func appendFailingRelaxed(ctx context.Context, t *testing.T, s *Store, id string) {
	t.Helper()
	if err := s.Append(ctx, id, true, started("wf", "", "task.a")); err != nil {
		t.Fatal(err)
	}
	diskFull := errors.New("no space left on device")
	s.failWrites.Store(&diskFull)
	if err := s.Append(ctx, id, false, Entry{Type: AttemptStarted, Node: "task.a", Attempt: 1}); err != nil {
		t.Fatalf("a relaxed Append returns before its write: %v", err)
	}
}

// openHoldingFailedCommit opens a store in a new directory whose syncer calls hold in its commit
// of a job with a failed batch, once the applier has the job and before the waited writes are
// answered (walConfig.commitHook); holdRelaxed keeps relaxed writes in memory until a Sync.
func openHoldingFailedCommit(t *testing.T, holdRelaxed bool, hold func()) *Store {
	t.Helper()
	wc := defaultWALConfig()
	wc.holdRelaxed = holdRelaxed
	wc.commitHook = func(failed bool) {
		if failed {
			hold()
		}
	}
	s, err := open(t.TempDir(), Options{}, wc)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSyncReportsFailedRelaxedWrite: a relaxed write that failed is returned by the Sync after
// it, once; the run's next Append then goes through.
func TestSyncReportsFailedRelaxedWrite(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{HoldRelaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore(t, s)
	id := testID(1)
	appendFailingRelaxed(ctx, t, s, id)
	err = s.Sync(ctx, id)
	s.failWrites.Store(nil)
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("Sync after a failed relaxed write: %v; want its failure", err)
	}
	if err := s.Append(ctx, id, true, Entry{Type: AttemptStarted, Node: "task.a", Attempt: 2}); err != nil {
		t.Errorf("the next Append reports the failure again: %v", err)
	}
}

// TestSyncReportsFailedRelaxedWriteBarrier gives the barrier of Sync its worst timing: the
// syncer commits the failed relaxed write and Sync's barrier together, and answers the
// barrier in that commit. Sync must still be waiting when the commit hands the job to the
// applier (the hook; the failure is recorded before it), and must then report the failure.
func TestSyncReportsFailedRelaxedWriteBarrier(t *testing.T) {
	ctx := context.Background()
	returned := make(chan struct{})
	early := make(chan struct{}, 1)
	s := openHoldingFailedCommit(t, true, func() {
		select {
		case <-returned:
			early <- struct{}{}
		default:
		}
	})
	defer closeStore(t, s)
	id := testID(1)
	appendFailingRelaxed(ctx, t, s, id)
	err := s.Sync(ctx, id)
	close(returned)
	s.failWrites.Store(nil)
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("Sync after a failed relaxed write: %v; want its failure", err)
	}
	select {
	case <-early:
		t.Error("Sync returned before the syncer committed the failed write")
	default:
	}
}

// TestSyncDoesNotWaitForBadger: Sync returns once the run's writes are synced in the WAL, even
// while Badger's write of them is held up: a strict run's barrier before an effect waits for
// the sync only, and reads still see the writes once Badger has them.
func TestSyncDoesNotWaitForBadger(t *testing.T) {
	// holdRelaxed: the relaxed write waits for Sync, so no timed sync takes it first.
	id := testID(1)
	s, release := openHoldingApplier(t, true, id)
	ctx := context.Background()
	// Badger's writes are held from here on: a relaxed append, then Sync, must return.
	if err := s.Append(ctx, id, false, Entry{Type: AttemptStarted, Node: "task.a", Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	syncs := s.Syncs()
	done := make(chan error, 1)
	go func() { done <- s.Sync(ctx, id) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Sync waited for Badger's write")
	}
	if s.Syncs() == syncs {
		t.Error("Sync returned without a WAL sync of the relaxed write")
	}
	release()
	if es := collectEntries(t, s, id, 0); len(es) != 2 || es[1].Type != AttemptStarted {
		t.Errorf("entries after Sync: %+v", es)
	}
}

// TestSyncFastPathReportsFailedRelaxedWrite calls Sync from within the syncer's commit of a
// failed relaxed write, after the write is acknowledged and before the waited writes are
// answered: Sync must not take the write for synced (its fast path) without reporting its
// failure. Its context is cancelled: a Sync that queued a barrier returns that error, since
// the syncer it waits for is the caller.
func TestSyncFastPathReportsFailedRelaxedWrite(t *testing.T) {
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	var id string
	var s *Store
	result := make(chan error, 1)
	s = openHoldingFailedCommit(t, false, func() { result <- s.Sync(cancelled, id) })
	defer closeStore(t, s)
	id = testID(1)
	appendFailingRelaxed(ctx, t, s, id)
	defer s.failWrites.Store(nil)
	select {
	case err := <-result:
		if err == nil {
			t.Fatal("Sync during the commit of a failed relaxed write: <nil>; want an error")
		}
		if !strings.Contains(err.Error(), "no space left on device") {
			t.Errorf("Sync during the commit of a failed relaxed write: %v; want its failure", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the failed relaxed write was not committed within 30 s")
	}
}

const (
	holdChildEnv = "JOURNAL_TEST_HOLD_CHILD"
	holdDirEnv   = "JOURNAL_TEST_HOLD_DIR"
)

// TestHoldRelaxedKill kills a process whose store holds relaxed writes: what it appended
// relaxed after its last sync is lost, as a power loss would lose it, and what Sync covered is
// kept.
func TestHoldRelaxedKill(t *testing.T) {
	if mode := os.Getenv(holdChildEnv); mode != "" {
		holdChild(os.Getenv(holdDirEnv), mode == "sync")
		os.Exit(0)
	}
	for _, sync := range []bool{false, true} {
		t.Run(fmt.Sprintf("sync=%v", sync), func(t *testing.T) {
			dir := t.TempDir()
			exe, err := os.Executable()
			if err != nil {
				t.Skip(err)
			}
			mode := "hold"
			if sync {
				mode = "sync"
			}
			cmd := exec.Command(exe, "-test.run=^TestHoldRelaxedKill$")
			cmd.Env = append(os.Environ(), holdChildEnv+"="+mode, holdDirEnv+"="+dir)
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
			if err != nil || line != "appended\n" {
				t.Fatalf("child said %q (%v)", line, err)
			}
			s := openStore(t, dir)
			defer closeStore(t, s)
			got := collectEntries(t, s, testID(1), 0)
			want := 1 // run_started, durable
			if sync {
				want = 3
			}
			if len(got) != want {
				t.Errorf("%d entries after the kill, want %d: %+v", len(got), want, got)
			}
		})
	}
}

// holdChild appends a durable entry, then two relaxed ones (and syncs them with sync), says so
// and waits to be killed.
func holdChild(dir string, sync bool) {
	ctx := context.Background()
	s, err := Open(dir, Options{HoldRelaxed: true})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	id := testID(1)
	if err := s.Append(ctx, id, true, started("wf", "", "task.a")); err != nil {
		fmt.Println("append:", err)
		os.Exit(2)
	}
	if err := s.Append(ctx, id, false, Entry{Type: AttemptStarted, Node: "task.a", Attempt: 1},
		Entry{Type: NodeFinished, Node: "task.a", Status: StatusSucceeded}); err != nil {
		fmt.Println("append:", err)
		os.Exit(2)
	}
	if sync {
		if err := s.Sync(ctx, id); err != nil {
			fmt.Println("sync:", err)
			os.Exit(2)
		}
	}
	fmt.Println("appended")
	time.Sleep(time.Minute) // killed long before: the store is never closed
	os.Exit(3)
}

// TestAckDoesNotWaitForBadger: a durable append returns once its WAL record is synced, even
// while Badger's write of an earlier batch is held up (a memtable flush, a starved CPU); reads
// still see every acknowledged write once Badger has it.
func TestAckDoesNotWaitForBadger(t *testing.T) {
	s, release := openHoldingApplier(t, false, testID(1))
	ctx := context.Background()
	// Badger's write of the first batch is held: a second durable append must still return.
	done := make(chan error, 1)
	go func() { done <- s.Append(ctx, testID(2), true, started("wf", "")) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a durable append waited for Badger's write of an earlier batch")
	}
	release()
	for _, id := range []string{testID(1), testID(2)} {
		if es := collectEntries(t, s, id, 0); len(es) != 1 || es[0].Type != RunStarted {
			t.Errorf("run %s: entries %+v", id, es)
		}
	}
}

// openHoldingApplier opens a store in a new directory, appends run id's start durably, and
// returns once the applier holds that batch: from then on, Badger's writes wait until release
// is called (the test's end calls it too). holdRelaxed is walConfig.holdRelaxed.
func openHoldingApplier(t *testing.T, holdRelaxed bool, id string) (*Store, func()) {
	t.Helper()
	hold := make(chan struct{})
	entered := make(chan struct{}, 1)
	wc := defaultWALConfig()
	wc.holdRelaxed = holdRelaxed
	wc.applyHook = func() {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-hold
	}
	s, err := open(t.TempDir(), Options{}, wc)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(func() {
		release()
		closeStore(t, s)
	})
	if err := s.Append(context.Background(), id, true, started("wf", "")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the first batch was not written to Badger within 30 s")
	}
	return s, release
}
