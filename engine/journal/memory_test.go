package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

func openMemory(t testing.TB) *Store {
	t.Helper()
	s, err := OpenMemory(Options{})
	if err != nil {
		t.Fatalf("OpenMemory: %v", err)
	}
	return s
}

// memWorkloadNodes are the nodes of each run of memWorkload.
func memWorkloadNodes(n int) []string {
	nodes := make([]string, n)
	for i := range nodes {
		nodes[i] = "task.n" + strconv.Itoa(i)
	}
	return nodes
}

// memWorkload journals runs runs of nodes nodes each, the runs concurrently (as the engine
// runs them), and returns the number of entries appended. Per node: NodeStarted and
// AttemptStarted relaxed, a log line, NodeFinished durable; the run starts and ends durably.
func memWorkload(t testing.TB, s *Store, first, runs, nodes int) int {
	t.Helper()
	ctx := context.Background()
	names := memWorkloadNodes(nodes)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for r := range runs {
		wg.Go(func() {
			id := testID(first + r)
			if err := s.Append(ctx, id, true, started("wf", "", names...)); err != nil {
				fail(err)
				return
			}
			for i, n := range names {
				out := json.RawMessage(fmt.Sprintf(`{"run":%d,"node":%d}`, first+r, i))
				err := errors.Join(
					s.Append(ctx, id, false, Entry{Type: NodeStarted, Node: n}),
					s.Append(ctx, id, false, Entry{Type: AttemptStarted, Node: n, Attempt: 1, TaskID: id + n}),
					s.Log(id, LogLine{Node: n, Level: "info", Message: "ran " + n}),
					s.Append(ctx, id, true, Entry{Type: NodeFinished, Node: n, Status: StatusSucceeded, Output: out}),
				)
				if err != nil {
					fail(err)
					return
				}
			}
			if err := s.Append(ctx, id, true, Entry{Type: RunFinished, Status: StatusSucceeded}); err != nil {
				fail(err)
				return
			}
			s.Forget(id)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return runs * (2 + 3*nodes)
}

// checkMemWorkload reads back what memWorkload journaled.
func checkMemWorkload(t testing.TB, s *Store, first, runs, nodes int) {
	t.Helper()
	for r := range runs {
		id := testID(first + r)
		x, err := s.Execution(id)
		if err != nil {
			t.Fatalf("Execution(%s): %v", id, err)
		}
		if x.Status != StatusSucceeded || len(x.Nodes) != nodes {
			t.Fatalf("execution %s: status %s, %d nodes; want succeeded, %d", id, x.Status, len(x.Nodes), nodes)
		}
		for i := range nodes {
			n := x.Nodes["task.n"+strconv.Itoa(i)]
			want := fmt.Sprintf(`{"run":%d,"node":%d}`, first+r, i)
			if n == nil || n.Status != StatusSucceeded || n.Attempts != 1 || string(n.Output) != want {
				t.Fatalf("execution %s node %d = %+v; want succeeded after 1 attempt with %s", id, i, n, want)
			}
		}
		entries := collectEntries(t, s, id, 0)
		if len(entries) != 2+3*nodes {
			t.Fatalf("execution %s: %d entries, want %d", id, len(entries), 2+3*nodes)
		}
		for i, e := range entries {
			if e.Seq != uint64(i+1) {
				t.Fatalf("execution %s: entry %d has seq %d", id, i, e.Seq)
			}
		}
		lines := 0
		if err := s.Logs(id, 0, func(LogLine) error { lines++; return nil }); err != nil || lines != nodes {
			t.Fatalf("execution %s: %d log lines (%v), want %d", id, lines, err, nodes)
		}
	}
	all, err := s.List(Filter{Workflow: "wf", Status: StatusSucceeded})
	if err != nil || len(all) < runs {
		t.Fatalf("List: %d runs (%v), want at least %d", len(all), err, runs)
	}
}

// TestMemoryOperations runs the store's main operations on a store in memory: strict and
// relaxed appends, the execution view, summaries, logs, KV, plans, tokens, Forget and Delete.
func TestMemoryOperations(t *testing.T) {
	s := openMemory(t)
	defer closeStore(t, s)
	ctx := context.Background()
	id := testID(1)

	// Strict: readable when Append returns.
	first := []Entry{
		started("wf", "", "task.a", "task.b"),
		{Type: AttemptStarted, Node: "task.a", Attempt: 1, TaskID: "t1"},
		{Type: NodeFinished, Node: "task.a", Status: StatusSucceeded, Output: json.RawMessage(`{"x":1}`)},
	}
	if err := s.Append(ctx, id, true, first...); err != nil {
		t.Fatal(err)
	}
	if got := collectEntries(t, s, id, 0); len(got) != 3 || got[2].Seq != 3 || string(got[2].Output) != `{"x":1}` {
		t.Fatalf("entries after a strict Append = %+v", got)
	}
	// Relaxed: queued, then readable without any other write (polled, no barrier).
	relaxed := []Entry{{Type: NodeFinished, Node: "task.b", Status: StatusFailed, Reason: "boom"}}
	if err := s.Append(ctx, id, false, relaxed...); err != nil {
		t.Fatal(err)
	}
	if relaxed[0].Seq != 4 {
		t.Errorf("relaxed entry seq = %d, want 4", relaxed[0].Seq)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(collectEntries(t, s, id, 3)) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("a relaxed entry was not readable within 30 s")
		}
		time.Sleep(time.Millisecond)
	}
	if err := s.Log(id, LogLine{Node: "task.a", Level: "info", Message: "hello"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, id, true, Entry{Type: RunFinished, Status: StatusFailed}); err != nil {
		t.Fatal(err)
	}
	x, err := s.Execution(id)
	if err != nil {
		t.Fatal(err)
	}
	if x.Status != StatusFailed || x.Nodes["task.a"].Status != StatusSucceeded || x.Nodes["task.b"].Reason != "boom" || string(x.Nodes["task.a"].Output) != `{"x":1}` {
		t.Errorf("execution = %+v (a %+v, b %+v)", x, x.Nodes["task.a"], x.Nodes["task.b"])
	}
	if sum, err := s.Summary(id); err != nil || sum.Status != StatusFailed || sum.FinishedAt == nil {
		t.Errorf("summary = %+v, %v", sum, err)
	}
	var lines []LogLine
	if err := s.Logs(id, 0, func(l LogLine) error { lines = append(lines, l); return nil }); err != nil || len(lines) != 1 || lines[0].Message != "hello" {
		t.Errorf("logs = %+v, %v", lines, err)
	}
	if got, err := s.ResolveID(id[:20]); err != nil || got != id {
		t.Errorf("ResolveID = %q, %v", got, err)
	}

	// Forget: the counters are read back from the store in memory.
	s.Forget(id)
	more := []Entry{{Type: RunStatus, Status: StatusRunning}}
	if err := s.Append(ctx, id, true, more...); err != nil {
		t.Fatal(err)
	}
	if more[0].Seq != 6 {
		t.Errorf("seq after Forget = %d, want 6", more[0].Seq)
	}

	// KV, plans and tokens.
	scope := ExecutionScope(id)
	if err := s.KVSet(scope, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := s.KVGet(scope, "k"); !ok || err != nil || string(v) != "v" {
		t.Errorf("KVGet = %q, %v, %v", v, ok, err)
	}
	if err := s.KVDelete(scope, "k"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.KVGet(scope, "k"); ok {
		t.Error("a deleted KV key is still there")
	}
	if err := s.KVSet(scope, "kept", []byte("until Delete")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPlan("sha256:p", []byte("plan")); err != nil {
		t.Fatal(err)
	}
	if p, err := s.Plan("sha256:p"); err != nil || string(p) != "plan" {
		t.Errorf("Plan = %q, %v", p, err)
	}
	tok := Token{Name: "ci", Scope: "read", Hash: strings.Repeat("ab", 32), CreatedAt: time.Now().UTC()}
	if err := s.CreateToken(tok); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateToken(tok); !errors.Is(err, ErrTokenExists) {
		t.Errorf("second CreateToken = %v, want ErrTokenExists", err)
	}
	if got, ok, err := s.TokenByHash(tok.Hash); !ok || err != nil || got.Name != "ci" {
		t.Errorf("TokenByHash = %+v, %v, %v", got, ok, err)
	}
	if err := s.RevokeToken("ci"); err != nil {
		t.Fatal(err)
	}

	// Delete removes the run, its journal, logs and KV scope.
	if err := s.Delete(id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Summary(id); !errors.Is(err, ErrNotFound) {
		t.Errorf("Summary after Delete = %v, want ErrNotFound", err)
	}
	if err := s.Entries(id, 0, func(Entry) error { return nil }); !errors.Is(err, ErrNotFound) {
		t.Errorf("Entries after Delete = %v, want ErrNotFound", err)
	}
	if _, ok, _ := s.KVGet(scope, "kept"); ok {
		t.Error("the run's KV outlived Delete")
	}
	if ids, err := s.InterruptRunning(); err != nil || len(ids) != 0 {
		t.Errorf("InterruptRunning of a fresh store = %v, %v", ids, err)
	}
}

// TestMemoryConcurrentRuns journals 100 runs of 50 nodes at once (the size of a `fuscia test`
// suite) and reads every one back.
func TestMemoryConcurrentRuns(t *testing.T) {
	s := openMemory(t)
	defer closeStore(t, s)
	start := time.Now()
	n := memWorkload(t, s, 1, 100, 50)
	t.Logf("%d entries in %v (%.0f/s)", n, time.Since(start), float64(n)/time.Since(start).Seconds())
	checkMemWorkload(t, s, 1, 100, 50)
}

// TestMemoryWritesNoFile runs a workload with the working directory, TMPDIR, HOME and
// FUSCIA_HOME all pointed at one empty directory, and checks that the store opened no file
// (/proc/self/fd, on Linux) and left the directory empty.
func TestMemoryWritesNoFile(t *testing.T) {
	empty := t.TempDir()
	t.Chdir(empty)
	t.Setenv("TMPDIR", empty)
	t.Setenv("HOME", empty)
	t.Setenv("FUSCIA_HOME", filepath.Join(empty, "home"))
	before := openFiles(t)

	s := openMemory(t)
	memWorkload(t, s, 1, 20, 10)
	if err := s.KVSet(TriggerScope("wf", "tick"), "k", bytes.Repeat([]byte("v"), 64<<10)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPlan("sha256:p", bytes.Repeat([]byte("p"), 512<<10)); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(testID(1)); err != nil {
		t.Fatal(err)
	}
	checkMemWorkload(t, s, 2, 19, 10)
	during := openFiles(t)
	closeStore(t, s)

	for f := range during {
		if !before[f] {
			t.Errorf("the store in memory has a file open: %s", f)
		}
	}
	entries, err := os.ReadDir(empty)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("the store in memory created %s", filepath.Join(empty, e.Name()))
	}
}

// openFiles returns the paths of the files (not pipes, sockets or devices) the process has
// open; nil where /proc/self/fd does not exist.
func openFiles(t *testing.T) map[string]bool {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil
	}
	out := make(map[string]bool)
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err != nil || !strings.HasPrefix(target, "/") || strings.HasPrefix(target, "/dev/") || strings.HasPrefix(target, "/proc/") {
			continue
		}
		out[target] = true
	}
	return out
}

// TestMemoryAfterClose checks that Close ends the store: writes and reads fail with ErrClosed,
// and Close again returns nil.
func TestMemoryAfterClose(t *testing.T) {
	s := openMemory(t)
	ctx := context.Background()
	if err := s.Append(ctx, testID(1), false, started("wf", "")); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := s.Append(ctx, testID(1), true, Entry{Type: RunFinished, Status: StatusSucceeded}); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close = %v", err)
	}
	if err := s.Append(ctx, testID(2), false, started("wf", "")); !errors.Is(err, ErrClosed) {
		t.Errorf("relaxed Append after Close = %v", err)
	}
	if err := s.Log(testID(1), LogLine{Message: "x"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Log after Close = %v", err)
	}
	if err := s.KVSet(ExecutionScope(testID(1)), "k", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("KVSet after Close = %v", err)
	}
	if err := s.PutPlan("d", []byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("PutPlan after Close = %v", err)
	}
	if err := s.Delete(testID(1)); !errors.Is(err, ErrClosed) {
		t.Errorf("Delete after Close = %v", err)
	}
	if _, err := s.Summary(testID(1)); !errors.Is(err, ErrClosed) {
		t.Errorf("Summary after Close = %v", err)
	}
}

// TestMemoryCloseStopsGoroutines checks that no goroutine of the store or of Badger outlives
// Close.
func TestMemoryCloseStopsGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	s := openMemory(t)
	memWorkload(t, s, 1, 4, 4)
	closeStore(t, s)
	deadline := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines before OpenMemory, %d after Close:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMemoryValueSizes checks the limits of a store in memory: values up to 1 MiB - 1 byte
// stay in Badger, larger ones (which Badger in memory cannot take) are kept beside it and read
// back whole, through KV, plans and entries, up to the file store's 64 MiB, and a larger one
// is refused with a message giving the limit; a request larger than a Badger batch is written
// in several.
func TestMemoryValueSizes(t *testing.T) {
	s := openMemory(t)
	defer closeStore(t, s)
	scope := TriggerScope("wf", "tick")
	key := strings.Repeat("k", 60000)
	for _, n := range []int{1<<20 - 1, 1 << 20, 3 << 20} {
		v := bytes.Repeat([]byte{byte('a' + n%26)}, n)
		if err := s.KVSet(scope, key, v); err != nil {
			t.Fatalf("KVSet of %d bytes: %v", n, err)
		}
		if got, ok, err := s.KVGet(scope, key); !ok || err != nil || !bytes.Equal(got, v) {
			t.Fatalf("KVGet of %d bytes: %d bytes, %v, %v", n, len(got), ok, err)
		}
	}
	err := s.KVSet(scope, "k", make([]byte, 64<<20+1))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("at most %d", 64<<20)) {
		t.Errorf("KVSet of 64 MiB + 1 = %v, want a refusal naming the limit", err)
	}
	plan := bytes.Repeat([]byte("p"), 2<<20)
	if err := s.PutPlan("sha256:big", plan); err != nil {
		t.Fatalf("PutPlan of 2 MiB: %v", err)
	}
	if got, err := s.Plan("sha256:big"); err != nil || !bytes.Equal(got, plan) {
		t.Fatalf("Plan of 2 MiB: %d bytes, %v", len(got), err)
	}

	// An entry of 5 MiB (a task's output under the default max_node_output of 10 MiB).
	big := testID(2)
	out := json.RawMessage(`{"text":"` + strings.Repeat("y", 5<<20) + `"}`)
	if err := s.Append(context.Background(), big, true, started("wf", "", "task.a"),
		Entry{Type: NodeFinished, Node: "task.a", Status: "succeeded", Output: out}); err != nil {
		t.Fatal(err)
	}
	if got := collectEntries(t, s, big, 0); len(got) != 2 || !bytes.Equal(got[1].Output, out) {
		t.Fatalf("the 5 MiB entry did not read back whole (%d entries)", len(got))
	}

	// 3,000 entries of ~1 KiB in one Append: more than a Badger batch (15% of 8 MiB).
	id := testID(1)
	entries := []Entry{started("wf", "", "task.a")}
	out = json.RawMessage(`{"pad":"` + strings.Repeat("x", 1000) + `"}`)
	for i := range 3000 {
		entries = append(entries, Entry{Type: AttemptContinued, Node: "task.a", Attempt: 1, State: out, Progress: float64(i)})
	}
	if err := s.Append(context.Background(), id, true, entries...); err != nil {
		t.Fatal(err)
	}
	if got := collectEntries(t, s, id, 0); len(got) != len(entries) || got[len(got)-1].Seq != uint64(len(entries)) {
		t.Errorf("%d entries read back, want %d", len(got), len(entries))
	}
}

// TestMemoryBigValuesFreed checks that a large value kept beside Badger is freed when its key
// is written again or deleted (a long `fuscia test` suite deletes each finished run), but not
// while a read that started before could still see it.
func TestMemoryBigValuesFreed(t *testing.T) {
	s := openMemory(t)
	defer closeStore(t, s)
	kept := func() int {
		s.big.mu.Lock()
		defer s.big.mu.Unlock()
		return len(s.big.vals)
	}
	scope := TriggerScope("wf", "tick")
	for i := range 20 {
		if err := s.KVSet(scope, "k", bytes.Repeat([]byte{byte('a' + i)}, 2<<20)); err != nil {
			t.Fatal(err)
		}
	}
	if n := kept(); n != 1 {
		t.Errorf("%d large values kept after 20 writes of one key, want 1", n)
	}
	if err := s.KVSet(scope, "k", []byte("small")); err != nil {
		t.Fatal(err)
	}
	if n := kept(); n != 0 {
		t.Errorf("%d large values kept after a small one replaced the last, want 0", n)
	}

	id := testID(3)
	out := json.RawMessage(`{"text":"` + strings.Repeat("z", 2<<20) + `"}`)
	if err := s.Append(context.Background(), id, true, started("wf", "", "task.a"),
		Entry{Type: NodeFinished, Node: "task.a", Status: "succeeded", Output: out},
		Entry{Type: NodeFinished, Node: "task.b", Status: "succeeded", Output: out}); err != nil {
		t.Fatal(err)
	}
	if n := kept(); n != 2 {
		t.Errorf("%d large values kept for a run with two, want 2", n)
	}

	// A read under way when the run is deleted still reads its entries whole; the values go
	// when it ends.
	old := bytes.Repeat([]byte("o"), 2<<20)
	if err := s.KVSet(scope, "k", old); err != nil {
		t.Fatal(err)
	}
	k, _ := kvKey(scope, "k")
	inRead, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- s.view(func(txn *badger.Txn) error {
			close(inRead)
			<-release
			item, err := txn.Get(k)
			if err != nil {
				return err
			}
			v, err := s.valueCopy(item)
			if err == nil && !bytes.Equal(v, old) {
				err = fmt.Errorf("read %d bytes, not the value the read started with", len(v))
			}
			return err
		})
	}()
	<-inRead
	if err := s.KVDelete(scope, "k"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(id); err != nil {
		t.Fatal(err)
	}
	if n := kept(); n != 3 {
		t.Errorf("%d large values kept while a read that can see them is under way, want 3", n)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the read under way: %v", err)
	}
	if n := kept(); n != 0 {
		t.Errorf("%d large values kept after the read ended, want 0", n)
	}
}

// TestMemoryOptions checks that a memtable too small to hold the largest value is refused,
// naming the field, and that a larger one is taken.
func TestMemoryOptions(t *testing.T) {
	_, err := OpenMemory(Options{Sizes: Sizes{MemTable: 4 << 20}})
	if err == nil || !strings.Contains(err.Error(), "MemTable") || !strings.Contains(err.Error(), "in memory") {
		t.Errorf("OpenMemory with a 4 MiB memtable = %v, want a refusal naming MemTable", err)
	}
	s, err := OpenMemory(Options{Sizes: Sizes{MemTable: 16 << 20, WALSegment: 1 << 20}, GCInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	memWorkload(t, s, 1, 2, 2)
	closeStore(t, s)
}

// TestMemoryWriteErrors checks the write failures of a store in memory: as in the file store, a
// failed durable write is returned, a failed relaxed one by the run's next Append; a failed
// Badger write stops every later write, and reads go on.
func TestMemoryWriteErrors(t *testing.T) {
	s := openMemory(t)
	defer closeStore(t, s)
	ctx := context.Background()
	id := testID(1)
	if err := s.Append(ctx, id, true, started("wf", "")); err != nil {
		t.Fatal(err)
	}
	full := errors.New("out of memory")
	s.failWrites.Store(&full)
	if err := s.Append(ctx, id, true, Entry{Type: NodeStarted, Node: "x"}); !errors.Is(err, full) || !strings.Contains(err.Error(), "write state store in memory") {
		t.Errorf("durable Append on a failing store = %v", err)
	}
	if err := s.Append(ctx, id, false, Entry{Type: NodeStarted, Node: "x"}); err != nil {
		t.Errorf("relaxed Append = %v, want nil (it only queues)", err)
	}
	if err := s.barrier(); err != nil {
		t.Fatal(err)
	}
	s.failWrites.Store(nil)
	if err := s.Append(ctx, id, false, Entry{Type: NodeStarted, Node: "x"}); !errors.Is(err, full) || !strings.Contains(err.Error(), "earlier relaxed write failed") {
		t.Errorf("Append after a failed relaxed write = %v", err)
	}

	broken := errors.New("badger broke")
	s.failApply.Store(&broken)
	if err := s.Append(ctx, id, true, Entry{Type: NodeStarted, Node: "y"}); !errors.Is(err, broken) {
		t.Errorf("durable Append whose Badger write fails = %v", err)
	}
	if err := s.Append(ctx, id, true, Entry{Type: NodeStarted, Node: "z"}); !errors.Is(err, broken) || !strings.Contains(err.Error(), "writes are stopped") {
		t.Errorf("Append after a failed Badger write = %v, want writes stopped", err)
	}
	if got := collectEntries(t, s, id, 0); len(got) != 1 || got[0].Type != RunStarted {
		t.Errorf("entries = %+v, want only the first", got)
	}
}

// TestMemoryOpenFootprint checks that opening a store in memory reserves tens of MiB at most:
// Badger's defaults would allocate 64 MiB memtables and caches.
func TestMemoryOpenFootprint(t *testing.T) {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	s := openMemory(t)
	runtime.ReadMemStats(&m1)
	defer closeStore(t, s)
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 32<<20 {
		t.Errorf("OpenMemory allocated %d MiB, want at most 32", alloc>>20)
	}
}

// BenchmarkMemoryAppend compares appends to a store in memory with appends to a store in a
// directory: one entry per op, durable from one goroutine, durable from 16 (each its own run,
// sharing group commits), and relaxed; "suite" is a `fuscia test`-sized workload per op (100
// concurrent runs of 50 nodes, 15,200 entries and 5,000 log lines).
func BenchmarkMemoryAppend(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) *Store
	}{
		{"memory", func(b *testing.B) *Store { return openMemory(b) }},
		{"file", func(b *testing.B) *Store { return openStore(b, b.TempDir()) }},
	}
	for _, st := range stores {
		for _, mode := range []struct {
			name    string
			par     int
			durable bool
		}{{"durable", 1, true}, {"durable-x16", 16, true}, {"relaxed", 1, false}} {
			b.Run(st.name+"/"+mode.name, func(b *testing.B) {
				s := st.open(b)
				defer closeStore(b, s)
				benchAppend(b, s, mode.par, mode.durable)
			})
		}
		b.Run(st.name+"/suite", func(b *testing.B) {
			s := st.open(b)
			defer closeStore(b, s)
			entries, first := 0, 1
			start := time.Now()
			for b.Loop() {
				entries += memWorkload(b, s, first, 100, 50)
				first += 100
			}
			b.ReportMetric(float64(entries)/time.Since(start).Seconds(), "entries/s")
		})
	}
}

// benchAppend appends b.N entries from par goroutines, each to its own run.
func benchAppend(b *testing.B, s *Store, par int, durable bool) {
	ctx := context.Background()
	for w := range par {
		if err := s.Append(ctx, testID(w), true, started("bench", "")); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	per := b.N / par
	for w := range par {
		n := per
		if w == 0 {
			n += b.N % par
		}
		wg.Go(func() {
			for range n {
				if err := s.Append(ctx, testID(w), durable, benchEntry()); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := s.barrier(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "entries/s")
}
