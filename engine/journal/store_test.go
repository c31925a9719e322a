package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// testID is a 26-character id ordered by n, like a ULID.
func testID(n int) string { return fmt.Sprintf("01HZ%022d", n) }

func openStore(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func closeStore(t testing.TB, s *Store) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func started(workflow, parent string, nodes ...string) Entry {
	return Entry{Type: RunStarted, Run: &RunInfo{
		Workflow:   workflow,
		PlanDigest: "sha256:plan",
		Trigger:    Trigger{Type: "manual", Name: "cli"},
		Durability: "strict",
		Parent:     parent,
		Nodes:      nodes,
	}}
}

func collectEntries(t testing.TB, s *Store, id string, after uint64) []Entry {
	t.Helper()
	var out []Entry
	if err := s.Entries(id, after, func(e Entry) error { out = append(out, e); return nil }); err != nil {
		t.Fatalf("Entries(%s): %v", id, err)
	}
	return out
}

// checkEntriesAfterReopen opens the store in dir again and checks that run id has want entries.
func checkEntriesAfterReopen(t *testing.T, dir, id string, want int) {
	t.Helper()
	s := openStore(t, dir)
	defer closeStore(t, s)
	if got := collectEntries(t, s, id, 0); len(got) != want {
		t.Errorf("%d entries after reopening, want %d", len(got), want)
	}
}

func TestRoundTripAndSeqContinuation(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	id := testID(1)
	s := openStore(t, dir)
	first := []Entry{
		started("wf", "", "task.a"),
		{Type: AttemptStarted, Node: "task.a", Attempt: 1, TaskID: "t1"},
		{Type: NodeFinished, Node: "task.a", Status: StatusSucceeded, Output: json.RawMessage(`{"x":1}`)},
	}
	if err := s.Append(ctx, id, true, first...); err != nil {
		t.Fatal(err)
	}
	for i, e := range first {
		if e.Seq != uint64(i+1) || e.Time.IsZero() {
			t.Errorf("entry %d: seq %d time %v, want seq %d and a time", i, e.Seq, e.Time, i+1)
		}
	}
	got := collectEntries(t, s, id, 0)
	if !reflect.DeepEqual(got, first) {
		t.Errorf("entries read back differ:\n got %+v\nwant %+v", got, first)
	}
	if got := collectEntries(t, s, id, 2); len(got) != 1 || got[0].Seq != 3 {
		t.Errorf("Entries after 2 = %+v, want seq 3 only", got)
	}
	if err := s.Log(id, LogLine{Node: "task.a", Level: "info", Message: "one"}); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)

	s = openStore(t, dir)
	defer closeStore(t, s)
	more := []Entry{{Type: RunFinished, Status: StatusSucceeded}}
	if err := s.Append(ctx, id, false, more...); err != nil {
		t.Fatal(err)
	}
	if more[0].Seq != 4 {
		t.Errorf("seq after reopen = %d, want 4", more[0].Seq)
	}
	if err := s.Log(id, LogLine{Node: "task.a", Level: "info", Message: "two"}); err != nil {
		t.Fatal(err)
	}
	if err := s.barrier(); err != nil {
		t.Fatal(err)
	}
	if got := collectEntries(t, s, id, 0); len(got) != 4 || got[3].Type != RunFinished {
		t.Errorf("after reopen: %d entries, last %+v", len(got), got[len(got)-1])
	}
	var lines []LogLine
	if err := s.Logs(id, 0, func(l LogLine) error { lines = append(lines, l); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || lines[0].Seq != 1 || lines[1].Seq != 2 || lines[1].Message != "two" {
		t.Errorf("log lines = %+v", lines)
	}
	sum, err := s.Summary(id)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != StatusSucceeded || sum.FinishedAt == nil || sum.Workflow != "wf" || sum.Parent != nil {
		t.Errorf("summary = %+v", sum)
	}
}

func TestAppendChecks(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer closeStore(t, s)
	ctx := context.Background()
	tests := []struct {
		name    string
		id      string
		entries []Entry
	}{
		{"empty id", "", []Entry{started("wf", "")}},
		{"slash in id", "a/b", []Entry{started("wf", "")}},
		{"entry before run_started", testID(1), []Entry{{Type: NodeStarted, Node: "x"}}},
		{"run_started without run", testID(2), []Entry{{Type: RunStarted}}},
		{"run_finished without final status", testID(3), []Entry{started("wf", ""), {Type: RunFinished, Status: StatusRunning}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.Append(ctx, tt.id, true, tt.entries...); err == nil {
				t.Error("Append succeeded")
			}
		})
	}
	// A refused Append journals nothing and consumes no seq.
	if err := s.Append(ctx, testID(3), true, started("wf", "")); err != nil {
		t.Fatal(err)
	}
	if got := collectEntries(t, s, testID(3), 0); len(got) != 1 || got[0].Seq != 1 {
		t.Errorf("entries = %+v", got)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Append(cancelled, testID(3), true, Entry{Type: NodeStarted, Node: "x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Append with a cancelled context = %v", err)
	}
}

func TestDurableAndRelaxed(t *testing.T) {
	s := openStore(t, t.TempDir())
	ctx := context.Background()
	durableID, relaxedID := testID(1), testID(2)
	if err := s.Append(ctx, durableID, true, started("wf", "")); err != nil {
		t.Fatal(err)
	}
	syncs := s.syncs.Load()
	if syncs == 0 {
		t.Error("a durable Append returned without a sync")
	}
	// Durable: written when Append returns.
	if _, err := s.Summary(durableID); err != nil {
		t.Errorf("Summary right after a durable Append: %v", err)
	}
	// Relaxed: queued; written and synced shortly after, without any durable Append.
	if err := s.Append(ctx, relaxedID, false, started("wf", "")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.syncs.Load() == syncs {
		if time.Now().After(deadline) {
			t.Fatal("relaxed entries were not synced within 5 s")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := s.Summary(relaxedID); err != nil {
		t.Errorf("Summary after the relaxed sync: %v", err)
	}
	// Idle: no more syncs.
	syncs = s.syncs.Load()
	time.Sleep(50 * time.Millisecond)
	if n := s.syncs.Load(); n != syncs {
		t.Errorf("%d syncs while idle", n-syncs)
	}
	closeStore(t, s)
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestAfterClose(t *testing.T) {
	s := openStore(t, t.TempDir())
	closeStore(t, s)
	ctx := context.Background()
	if err := s.Append(ctx, testID(1), true, started("wf", "")); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close = %v", err)
	}
	if err := s.Append(ctx, testID(1), false, started("wf", "")); !errors.Is(err, ErrClosed) {
		t.Errorf("relaxed Append after Close = %v", err)
	}
	if err := s.Log(testID(1), LogLine{Message: "x"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Log after Close = %v", err)
	}
	if err := s.PutPlan("d", []byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("PutPlan after Close = %v", err)
	}
	if err := s.Delete(testID(1)); !errors.Is(err, ErrClosed) {
		t.Errorf("Delete after Close = %v", err)
	}
	if _, err := s.List(Filter{}); !errors.Is(err, ErrClosed) {
		t.Errorf("List after Close = %v", err)
	}
	if _, err := s.Summary(testID(1)); !errors.Is(err, ErrClosed) {
		t.Errorf("Summary after Close = %v", err)
	}
}

func TestPlans(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer closeStore(t, s)
	if _, err := s.Plan("sha256:none"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Plan of an unknown digest = %v", err)
	}
	for range 2 {
		if err := s.PutPlan("sha256:abc", []byte("plan")); err != nil {
			t.Fatal(err)
		}
	}
	syncs := s.syncs.Load()
	if err := s.PutPlan("sha256:abc", []byte("plan")); err != nil {
		t.Fatal(err)
	}
	if s.syncs.Load() != syncs {
		t.Error("PutPlan of a stored digest wrote again")
	}
	data, err := s.Plan("sha256:abc")
	if err != nil || string(data) != "plan" {
		t.Errorf("Plan = %q, %v", data, err)
	}
}

func TestForget(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	defer closeStore(t, s)
	ctx := context.Background()
	id := testID(1)
	if err := s.Append(ctx, id, false, started("wf", ""), Entry{Type: RunFinished, Status: StatusFailed}); err != nil {
		t.Fatal(err)
	}
	s.Forget(id)
	// Appending again reads the counters and the summary back from the store.
	more := []Entry{{Type: RunStatus, Status: StatusRunning}}
	if err := s.Append(ctx, id, true, more...); err != nil {
		t.Fatal(err)
	}
	if more[0].Seq != 3 {
		t.Errorf("seq after Forget = %d, want 3", more[0].Seq)
	}
	s.Forget(id)
	if err := s.barrier(); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.sweepForgets()
	n := len(s.runs) + len(s.forgets)
	s.mu.Unlock()
	if n != 0 {
		t.Errorf("%d runs still in memory after Forget", n)
	}
}

// TestForgetWhileQueued: a run forgotten while its writes are still queued stays in memory
// until they are written, and goes at the first append after that.
func TestForgetWhileQueued(t *testing.T) {
	s, err := Open(t.TempDir(), Options{HoldRelaxed: true}) // relaxed writes wait for a durable one
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore(t, s)
	ctx := context.Background()
	a, b := testID(1), testID(2)
	if err := s.Append(ctx, a, false, started("wf", "")); err != nil {
		t.Fatal(err)
	}
	s.Forget(a)
	held := func() (inRuns, inForgets bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		_, inRuns = s.runs[a]
		_, inForgets = s.forgets[a]
		return inRuns, inForgets
	}
	if r, f := held(); !r || !f {
		t.Fatalf("forgotten with its write queued: in runs %v, in forgets %v; want both", r, f)
	}
	// b's durable write takes a's with it; its own append came before, when a's was queued.
	if err := s.Append(ctx, b, true, started("wf", "")); err != nil {
		t.Fatal(err)
	}
	if err := s.barrier(); err != nil { // until it is written to Badger too
		t.Fatal(err)
	}
	if r, f := held(); !r || !f {
		t.Fatalf("after an append made while its write was queued: in runs %v, in forgets %v; want both", r, f)
	}
	if err := s.Append(ctx, b, false, Entry{Type: RunStatus, Status: StatusRunning}); err != nil {
		t.Fatal(err)
	}
	if r, f := held(); r || f {
		t.Errorf("after the first append once its write was written: in runs %v, in forgets %v; want neither", r, f)
	}
}

// TestLocked opens one directory twice. Badger's flock is per open file, so a second Open in
// the same process is refused like one from another process; a child process checks that too.
func TestLocked(t *testing.T) {
	if dir := os.Getenv("JOURNAL_TEST_LOCKED_DIR"); dir != "" {
		_, err := Open(dir, Options{})
		if !errors.Is(err, ErrLocked) {
			fmt.Printf("child Open = %v\n", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	dir := t.TempDir()
	s := openStore(t, dir)
	defer closeStore(t, s)
	_, err := Open(dir, Options{})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open in the process = %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), dir) {
		t.Errorf("error %q does not name the directory", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestLocked$")
	cmd.Env = append(os.Environ(), "JOURNAL_TEST_LOCKED_DIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("Open in another process: %v\n%s", err, out)
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		name  string
		setup func(db *badger.DB) error
	}{
		{"other version", func(db *badger.DB) error {
			return db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(formatKey), []byte("2")) })
		}},
		{"data without version", func(db *badger.DB) error {
			return db.Update(func(txn *badger.Txn) error {
				if err := txn.Delete([]byte(formatKey)); err != nil {
					return err
				}
				return txn.Set([]byte("foreign"), []byte("x"))
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			closeStore(t, openStore(t, dir))
			db, err := badger.Open(badgerOptions(dir, nil))
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.setup(db); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := Open(dir, Options{}); !errors.Is(err, ErrFormat) {
				t.Errorf("Open = %v, want ErrFormat", err)
			}
		})
	}
	// A store reopened keeps its version.
	dir := t.TempDir()
	closeStore(t, openStore(t, dir))
	closeStore(t, openStore(t, dir))
}

// TestWriteError fails the writes (as a full disk would) and checks that durable appends get
// the error, that a failed relaxed append is reported by the run's next Append, and that the
// store works again once writes succeed.
func TestWriteError(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	ctx := context.Background()
	id := testID(1)
	if err := s.Append(ctx, id, true, started("wf", "")); err != nil {
		t.Fatal(err)
	}
	diskFull := errors.New("no space left on device")
	s.failWrites.Store(&diskFull)
	err := s.Append(ctx, id, true, Entry{Type: NodeStarted, Node: "x"})
	if !errors.Is(err, diskFull) || !strings.Contains(err.Error(), "write state store") {
		t.Errorf("durable Append on a failing store = %v", err)
	}
	if err := s.Append(ctx, id, false, Entry{Type: NodeStarted, Node: "x"}); err != nil {
		t.Errorf("relaxed Append = %v, want nil (it only queues)", err)
	}
	if err := s.barrier(); err != nil {
		t.Fatal(err)
	}
	s.failWrites.Store(nil)
	err = s.Append(ctx, id, false, Entry{Type: NodeStarted, Node: "x"})
	if !errors.Is(err, diskFull) || !strings.Contains(err.Error(), "earlier relaxed write failed") {
		t.Errorf("Append after a failed relaxed write = %v", err)
	}
	last := []Entry{{Type: RunFinished, Status: StatusFailed}}
	if err := s.Append(ctx, id, true, last...); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)
	s = openStore(t, dir)
	defer closeStore(t, s)
	// Nothing journaled before the failure is lost; the failed entries leave a gap in the seqs.
	got := collectEntries(t, s, id, 0)
	if len(got) != 2 || got[0].Type != RunStarted || got[1].Seq != last[0].Seq {
		t.Errorf("entries = %+v", got)
	}
	if sum, err := s.Summary(id); err != nil || sum.Status != StatusFailed {
		t.Errorf("summary = %+v, %v", sum, err)
	}
}

// TestCloseStopsGoroutines checks that no goroutine of the store (or of Badger) outlives Close,
// with background GC on, and that Open creates a missing directory.
func TestCloseStopsGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	s, err := Open(filepath.Join(t.TempDir(), "state", "nested"), Options{GCInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(context.Background(), testID(1), false, started("wf", "")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // let GC and the relaxed sync run
	closeStore(t, s)
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines before Open, %d after Close:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestBadgerLogger(t *testing.T) {
	var buf strings.Builder
	l := slogLogger{slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	l.Debugf("debug %d", 1)
	l.Infof("info %d\n", 2)
	l.Warningf("warn %d\n", 3)
	l.Errorf("error %d", 4)
	out := buf.String()
	if strings.Contains(out, "debug 1") || strings.Contains(out, "info 2") ||
		!strings.Contains(out, `level=WARN msg="warn 3" component=badger`) ||
		!strings.Contains(out, `level=ERROR msg="error 4" component=badger`) {
		t.Errorf("logged:\n%s", out)
	}
	slogLogger{}.Errorf("dropped") // a nil logger discards
}

// TestEncodingWithSeq checks that an entry or a log line encoded with Seq 0 and given its seq
// by withSeq is what encoding/json makes of it with that seq (Append encodes before it knows
// the seq), also when withSeq is called again on the same encoding with another seq (an Append
// that waited for room).
func TestEncodingWithSeq(t *testing.T) {
	now := time.Date(2026, 11, 21, 20, 0, 0, 123, time.UTC)
	values := []any{
		&Entry{Type: RunStarted, Time: now, Run: &RunInfo{Workflow: "wf", Vars: json.RawMessage(`{"a":1}`)}},
		func() any { e := benchEntry(); e.Time = now; return &e }(),
		&Entry{},
		&LogLine{Time: now, Node: "task.a", Level: "info", Message: "hello \"world\""},
	}
	for _, v := range values {
		var room []byte // one encoding with room, given each seq in turn
		for _, seq := range []uint64{1, 9, 10, 12345678901234567890, 7} {
			switch x := v.(type) {
			case *Entry:
				x.Seq = 0
			case *LogLine:
				x.Seq = 0
			}
			zero, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			switch x := v.(type) {
			case *Entry:
				x.Seq = seq
			case *LogLine:
				x.Seq = seq
			}
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if room == nil {
				room = withSeqRoom(zero)
			}
			if got := withSeq(room, seq); string(got) != string(want) {
				t.Errorf("withSeq(%s, %d) = %s, want %s", zero, seq, got, want)
			}
		}
	}
}
