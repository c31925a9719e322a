package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/outcome"
)

// shortHome returns a fresh home whose socket path fits a unix socket address (t.TempDir()
// can be too long on some machines).
func shortHome(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "fsc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

var idCounter atomic.Uint64

// newID returns an execution id that sorts after every earlier one, like a ULID.
func newID() string {
	return fmt.Sprintf("01TEST%07d%013d", os.Getpid()%10000000, idCounter.Add(1))
}

// startRun journals the start of a run of workflow with two top-level nodes.
func startRun(t *testing.T, st *journal.Store, workflow string) string {
	t.Helper()
	id := newID()
	err := st.Append(context.Background(), id, true, journal.Entry{Type: journal.RunStarted, Run: &journal.RunInfo{
		Workflow: workflow, Trigger: journal.Trigger{Type: "manual", Name: "start"},
		Durability: "strict", Nodes: []string{"task.fetch", "task.send"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// finishRun journals the end of run id at time at (now when zero).
func finishRun(t *testing.T, st *journal.Store, id, status string, at time.Time) {
	t.Helper()
	entries := []journal.Entry{
		{Type: journal.AttemptStarted, Node: "task.fetch", Attempt: 1, TaskID: id + "-fetch"},
		{Type: journal.NodeFinished, Node: "task.fetch", Status: journal.StatusSucceeded, Output: json.RawMessage(`{"n":1}`)},
		{Type: journal.RunFinished, Status: status, Outputs: json.RawMessage(`{"n":1}`), Time: at},
	}
	if status == journal.StatusFailed {
		entries[2].Error = &outcome.Error{Kind: outcome.Fatal, Message: "boom"}
	}
	if err := st.Append(context.Background(), id, true, entries...); err != nil {
		t.Fatal(err)
	}
}

// logLines journals log lines and waits until they are written: Log does not wait, but a
// durable Append queued after it does.
func logLines(t *testing.T, st *journal.Store, id string, lines ...journal.LogLine) {
	t.Helper()
	if err := st.Log(id, lines...); err != nil {
		t.Fatal(err)
	}
	if err := st.Append(context.Background(), id, true, journal.Entry{Type: journal.RunStatus, Status: journal.StatusRunning}); err != nil {
		t.Fatal(err)
	}
}

func ownHome(t *testing.T, home string) *Owner {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o, err := Own(ctx, OwnerConfig{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := o.Close(); err != nil {
			t.Error(err)
		}
	})
	return o
}

func openBackend(t *testing.T, home string) Backend {
	t.Helper()
	b, err := OpenBackend(context.Background(), home, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// openStore opens home's store directly, for tests without an owner.
func openStore(t *testing.T, home string) *journal.Store {
	t.Helper()
	st, err := journal.Open(filepath.Join(home, stateDirName), journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// checkBackend runs the read and cancel checks shared by both backends on a store holding
// done (succeeded, workflow "a"), failed (workflow "b") and running (workflow "a"), in that
// order; running has status unfinished (interrupted when the store was reopened since).
func checkBackend(t *testing.T, b Backend, done, failed, running, unfinished string) {
	ctx := context.Background()
	all, err := b.List(ctx, journal.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range all {
		ids = append(ids, s.ID)
	}
	if want := []string{running, failed, done}; !slices.Equal(ids, want) {
		t.Fatalf("List = %v, want newest first %v", ids, want)
	}
	if all[0].FinishedAt != nil || all[2].FinishedAt == nil || all[2].Trigger.Name != "start" {
		t.Errorf("summaries: %+v", all)
	}
	for _, tc := range []struct {
		f    journal.Filter
		want []string
	}{
		{journal.Filter{Workflow: "a"}, []string{running, done}},
		{journal.Filter{Status: journal.StatusFailed}, []string{failed}},
		{journal.Filter{Status: unfinished}, []string{running}},
		{journal.Filter{CompletedBefore: time.Now().Add(time.Hour)}, []string{failed, done}},
		{journal.Filter{Limit: 1}, []string{running}},
	} {
		got, err := b.List(ctx, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		ids = ids[:0]
		for _, s := range got {
			ids = append(ids, s.ID)
		}
		if !slices.Equal(ids, tc.want) {
			t.Errorf("List(%+v) = %v, want %v", tc.f, ids, tc.want)
		}
	}

	x, err := b.Execution(ctx, failed)
	if err != nil {
		t.Fatal(err)
	}
	if x.ID != failed || x.Workflow != "b" || x.Status != journal.StatusFailed || x.Error == nil || x.Error.Message != "boom" {
		t.Errorf("Execution = %+v", x)
	}
	if n := x.Nodes["task.fetch"]; n == nil || n.Status != journal.StatusSucceeded || n.Attempts != 1 || string(n.Output) != `{"n":1}` {
		t.Errorf("task.fetch = %+v", n)
	}
	if n := x.Nodes["task.send"]; n == nil || n.Status != journal.StatusPending {
		t.Errorf("task.send = %+v", n)
	}
	// An id prefix, in any case, names the run; unknown ids are ErrNotFound.
	if x, err := b.Execution(ctx, strings.ToLower(done)); err != nil || x.ID != done {
		t.Errorf("Execution(prefix) = %v, %v", x, err)
	}
	for _, bad := range []string{"01NOPE00000000000000000000", "nope"} {
		if _, err := b.Execution(ctx, bad); !errors.Is(err, journal.ErrNotFound) {
			t.Errorf("Execution(%s) error = %v, want ErrNotFound", bad, err)
		}
		if err := b.Logs(ctx, bad, "", false, func(journal.LogLine) error { return nil }); !errors.Is(err, journal.ErrNotFound) {
			t.Errorf("Logs(%s) error = %v, want ErrNotFound", bad, err)
		}
		if _, err := b.Cancel(ctx, bad); !errors.Is(err, journal.ErrNotFound) {
			t.Errorf("Cancel(%s) error = %v, want ErrNotFound", bad, err)
		}
	}
	if _, err := b.Execution(ctx, "01TEST"); !errors.Is(err, journal.ErrAmbiguous) {
		t.Errorf("Execution(shared prefix) error = %v, want ErrAmbiguous", err)
	}

	// Logs, filtered by node.
	for _, tc := range []struct {
		node string
		want []string
	}{
		{"", []string{"one", "two", "three"}},
		{"fetch", []string{"one", "three"}},
		{"task.send", []string{"two"}},
		{"task.other", nil},
	} {
		var got []string
		err := b.Logs(ctx, done, tc.node, false, func(l journal.LogLine) error {
			got = append(got, l.Message)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Logs(node %q) = %q, want %q", tc.node, got, tc.want)
		}
	}

	// Cancel: a finished run refuses, a run nobody runs is marked cancelled.
	status, err := b.Cancel(ctx, done)
	if !errors.Is(err, ErrFinished) || status != journal.StatusSucceeded {
		t.Errorf("Cancel(finished) = %q, %v; want succeeded, ErrFinished", status, err)
	}
	status, err = b.Cancel(ctx, running)
	if err != nil || status != journal.StatusCancelled {
		t.Fatalf("Cancel(running) = %q, %v; want cancelled", status, err)
	}
	x, err = b.Execution(ctx, running)
	if err != nil || x.Status != journal.StatusCancelled || x.FinishedAt == nil || x.Error == nil || x.Error.Kind != outcome.Cancelled {
		t.Errorf("after cancel: %+v, %v", x, err)
	}
}

// seed journals the runs checkBackend expects.
func seed(t *testing.T, st *journal.Store) (done, failed, running string) {
	done = startRun(t, st, "a")
	logLines(t, st, done,
		journal.LogLine{Node: "task.fetch", Level: "info", Message: "one"},
		journal.LogLine{Node: "task.send", Level: "warn", Message: "two"},
		journal.LogLine{Node: "task.fetch", Level: "error", Message: "three"})
	finishRun(t, st, done, journal.StatusSucceeded, time.Time{})
	failed = startRun(t, st, "b")
	finishRun(t, st, failed, journal.StatusFailed, time.Time{})
	running = startRun(t, st, "a")
	return done, failed, running
}

func TestOwnerServesTheAPI(t *testing.T) {
	home := shortHome(t)
	o := ownHome(t, home)
	done, failed, running := seed(t, o.Store)
	if _, err := os.Stat(filepath.Join(home, SocketName)); err != nil {
		t.Fatalf("no socket: %v", err)
	}
	owner, err := os.ReadFile(filepath.Join(home, OwnerFileName))
	if err != nil || !strings.HasPrefix(string(owner), fmt.Sprint(os.Getpid())+" ") {
		t.Errorf("owner file = %q, %v", owner, err)
	}
	b := openBackend(t, home)
	if _, ok := b.(*client); !ok {
		t.Fatalf("OpenBackend with an owner running = %T, want the API client", b)
	}
	checkBackend(t, b, done, failed, running, journal.StatusRunning)
}

func TestBackendDirectWithoutOwner(t *testing.T) {
	home := shortHome(t)
	st := openStore(t, home)
	done, failed, running := seed(t, st)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	b := openBackend(t, home)
	if _, ok := b.(*direct); !ok {
		t.Fatalf("OpenBackend without an owner = %T, want the direct store", b)
	}
	// The process that journaled running is gone: opening the store made it interrupted.
	checkBackend(t, b, done, failed, running, journal.StatusInterrupted)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	// Close released the store.
	openStore(t, home).Close()
}

func TestBackendWithoutStore(t *testing.T) {
	home := shortHome(t)
	b := openBackend(t, home)
	ctx := context.Background()
	runs, err := b.List(ctx, journal.Filter{})
	if err != nil || runs == nil || len(runs) != 0 {
		t.Errorf("List = %v, %v; want an empty list", runs, err)
	}
	if _, err := b.Execution(ctx, "01ABCDEF"); !errors.Is(err, journal.ErrNotFound) {
		t.Errorf("Execution error = %v, want ErrNotFound", err)
	}
	if _, err := b.Cancel(ctx, "01ABCDEF"); !errors.Is(err, journal.ErrNotFound) {
		t.Errorf("Cancel error = %v, want ErrNotFound", err)
	}
	if ids, err := b.Prune(ctx, time.Now()); err != nil || len(ids) != 0 {
		t.Errorf("Prune = %v, %v", ids, err)
	}
	if ents, _ := os.ReadDir(home); len(ents) != 0 {
		t.Errorf("a read command created files in the home: %v", ents)
	}
}

// staleSocket leaves a socket file nobody listens on, like an owner that was killed.
func staleSocket(t *testing.T, path string) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

func TestOwnerStaleSocket(t *testing.T) {
	home := shortHome(t)
	sock := filepath.Join(home, SocketName)
	staleSocket(t, sock)

	// Without an owner, a stale socket does not stop a command from using the store.
	b := openBackend(t, home)
	if _, ok := b.(*direct); !ok {
		t.Fatalf("OpenBackend with a stale socket = %T, want the direct store", b)
	}
	b.Close()

	// Writing a store, then owning it: the stale socket is replaced.
	st := openStore(t, home)
	id := startRun(t, st, "a")
	st.Close()
	o := ownHome(t, home)
	b = openBackend(t, home)
	if _, ok := b.(*client); !ok {
		t.Fatalf("OpenBackend = %T, want the API client", b)
	}
	if x, err := b.Execution(context.Background(), id); err != nil || x.ID != id {
		t.Fatalf("Execution through the new socket = %v, %v", x, err)
	}
	b.Close()
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{SocketName, OwnerFileName} {
		if _, err := os.Stat(filepath.Join(home, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there after Close: %v", name, err)
		}
	}
}

// follow runs b.Logs with follow in a goroutine, sending each message to the returned channel,
// which is closed when Logs returns; the error is sent to errc.
func follow(b Backend, id, node string) (<-chan string, <-chan error) {
	lines := make(chan string, 100)
	errc := make(chan error, 1)
	go func() {
		defer close(lines)
		errc <- b.Logs(context.Background(), id, node, true, func(l journal.LogLine) error {
			lines <- l.Message
			return nil
		})
	}()
	return lines, errc
}

func receive(t *testing.T, lines <-chan string, want ...string) {
	t.Helper()
	for _, w := range want {
		select {
		case got, ok := <-lines:
			if !ok {
				t.Fatalf("the follow ended before %q", w)
			}
			if got != w {
				t.Fatalf("line %q, want %q", got, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no line %q after 10s", w)
		}
	}
}

func checkFollow(t *testing.T, b Backend, st *journal.Store) {
	id := startRun(t, st, "a")
	logLines(t, st, id, journal.LogLine{Node: "task.fetch", Level: "info", Message: "before"})
	lines, errc := follow(b, id, "")
	receive(t, lines, "before")
	logLines(t, st, id, journal.LogLine{Node: "task.fetch", Level: "info", Message: "after 1"})
	receive(t, lines, "after 1")
	// Lines logged just before the run ends are delivered before the follow ends.
	if err := st.Log(id, journal.LogLine{Node: "task.send", Level: "info", Message: "last"}); err != nil {
		t.Fatal(err)
	}
	finishRun(t, st, id, journal.StatusSucceeded, time.Time{})
	receive(t, lines, "last")
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("follow: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the follow did not end with the run")
	}
	if extra, ok := <-lines; ok {
		t.Errorf("extra line %q", extra)
	}
}

func TestLogsFollowOwner(t *testing.T) {
	home := shortHome(t)
	o := ownHome(t, home)
	checkFollow(t, openBackend(t, home), o.Store)
}

// A follow through a store it opened itself releases it, so that a process can resume the run;
// it then follows the run through that process's socket.
func TestLogsFollowDirect(t *testing.T) {
	home := shortHome(t)
	st := openStore(t, home)
	id := startRun(t, st, "a")
	logLines(t, st, id, journal.LogLine{Node: "task.fetch", Level: "info", Message: "before"})
	st.Close()
	b := openBackend(t, home)
	if _, ok := b.(*direct); !ok {
		t.Fatalf("OpenBackend = %T, want the direct store", b)
	}
	lines, errc := follow(b, id, "fetch")
	receive(t, lines, "before")

	o := ownHome(t, home) // waits while a look of the follow holds the store
	logLines(t, o.Store, id,
		journal.LogLine{Node: "task.send", Level: "info", Message: "filtered out"},
		journal.LogLine{Node: "task.fetch", Level: "info", Message: "resumed"})
	receive(t, lines, "resumed")
	finishRun(t, o.Store, id, journal.StatusSucceeded, time.Time{})
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("follow: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the follow did not end with the run")
	}
	// The backend still works, through the owner that took the store.
	x, err := b.Execution(context.Background(), id)
	if err != nil || x.Status != journal.StatusSucceeded {
		t.Fatalf("Execution after the follow = %+v, %v", x, err)
	}
}

// openStoreRetry opens home's store, waiting while a follow's look holds it.
func openStoreRetry(t *testing.T, home string) *journal.Store {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := journal.Open(filepath.Join(home, stateDirName), journal.Options{})
		if err == nil {
			return st
		}
		if !errors.Is(err, journal.ErrLocked) || time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An owner that stops before the run ends ends its follows at once (Close does not wait for
// them); the client goes on following by looking at the store itself.
func TestFollowOutlivesOwner(t *testing.T) {
	home := shortHome(t)
	o := ownHome(t, home)
	id := startRun(t, o.Store, "a")
	b := openBackend(t, home)
	logLines(t, o.Store, id, journal.LogLine{Node: "task.fetch", Level: "info", Message: "x"})
	lines, errc := follow(b, id, "")
	receive(t, lines, "x")
	start := time.Now()
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > shutdownGrace {
		t.Errorf("Close took %s with a follow under way", d)
	}
	select {
	case err := <-errc:
		t.Fatalf("the follow ended with the owner: %v", err)
	case <-time.After(300 * time.Millisecond):
	}

	// A process that does not serve the socket finishes the run: the follow's next look
	// sees it.
	st := openStoreRetry(t, home)
	logLines(t, st, id, journal.LogLine{Node: "task.fetch", Level: "info", Message: "y"})
	finishRun(t, st, id, journal.StatusFailed, time.Time{})
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	receive(t, lines, "y")
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("follow: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the follow did not end with the run")
	}
}

func TestLogsFollowCancelled(t *testing.T) {
	home := shortHome(t)
	st := openStore(t, home)
	id := startRun(t, st, "a")
	st.Close()
	b := openBackend(t, home)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	err := b.Logs(ctx, id, "", true, func(journal.LogLine) error { return nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("follow = %v, want the context's error", err)
	}
}

func checkPrune(t *testing.T, b Backend, st *journal.Store, home string) {
	ctx := context.Background()
	old := time.Now().Add(-48 * time.Hour)
	oldRun := startRun(t, st, "a")
	finishRun(t, st, oldRun, journal.StatusSucceeded, old)
	recent := startRun(t, st, "a")
	finishRun(t, st, recent, journal.StatusFailed, time.Time{})
	running := startRun(t, st, "a")

	arts := artifact.Dir{Root: filepath.Join(home, artifactsName)}
	if _, err := arts.Put(ctx, oldRun, "text/plain", []byte("old")); err != nil {
		t.Fatal(err)
	}
	if _, err := arts.Put(ctx, recent, "text/plain", []byte("recent")); err != nil {
		t.Fatal(err)
	}

	ids, err := b.Prune(ctx, time.Now().Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{oldRun}) {
		t.Errorf("Prune = %v, want [%s]", ids, oldRun)
	}
	if _, err := b.Execution(ctx, oldRun); !errors.Is(err, journal.ErrNotFound) {
		t.Errorf("the pruned run is still there: %v", err)
	}
	if refs, _ := arts.List(ctx, oldRun); len(refs) != 0 {
		t.Errorf("the pruned run's artifacts are still there: %v", refs)
	}
	if refs, _ := arts.List(ctx, recent); len(refs) != 1 {
		t.Errorf("the recent run's artifacts: %v", refs)
	}
	// A running run is never pruned, however old the cutoff.
	ids, err = b.Prune(ctx, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{recent}) {
		t.Errorf("Prune(now) = %v, want [%s]", ids, recent)
	}
	runs, err := b.List(ctx, journal.Filter{})
	if err != nil || len(runs) != 1 || runs[0].ID != running {
		t.Errorf("left after prune: %v, %v", runs, err)
	}
	if _, err := b.Prune(ctx, time.Time{}); err == nil {
		t.Error("Prune without a time did not fail")
	}
}

func TestPruneOwner(t *testing.T) {
	home := shortHome(t)
	o := ownHome(t, home)
	checkPrune(t, openBackend(t, home), o.Store, home)
}

func TestPruneDirect(t *testing.T) {
	home := shortHome(t)
	openStore(t, home).Close()
	b := openBackend(t, home)
	checkPrune(t, b, b.(*direct).ops.st, home)
}

func TestOwnerWaitsForTheLock(t *testing.T) {
	home := shortHome(t)
	st := openStore(t, home) // a process that holds the store without serving the socket
	// The owner file names a live process (this one, in the test).
	ownerLine := fmt.Sprintf("%d fuscia apply x.fsc.hcl\n", os.Getpid())
	if err := os.WriteFile(filepath.Join(home, OwnerFileName), []byte(ownerLine), 0o644); err != nil {
		t.Fatal(err)
	}
	waited := make(chan string, 1)
	type result struct {
		o   *Owner
		err error
	}
	res := make(chan result, 1)
	go func() {
		o, err := Own(context.Background(), OwnerConfig{Home: home, OnWait: func(by string) { waited <- by }})
		res <- result{o, err}
	}()
	select {
	case by := <-waited:
		if want := fmt.Sprintf("process %d (fuscia apply x.fsc.hcl)", os.Getpid()); by != want {
			t.Errorf("OnWait(%q)", by)
		}
	case r := <-res:
		t.Fatalf("Own did not wait: %v, %v", r.o, r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("OnWait was not called")
	}
	st.Close()
	select {
	case r := <-res:
		if r.err != nil {
			t.Fatal(r.err)
		}
		if err := r.o.Close(); err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Own did not take the freed store")
	}
}

func TestOwnerWhileOwned(t *testing.T) {
	home := shortHome(t)
	ownHome(t, home)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := Own(ctx, OwnerConfig{Home: home, OnWait: func(string) { t.Error("OnWait called although the owner answers") }})
	if !errors.Is(err, ErrOwned) {
		t.Fatalf("Own while owned: %v, want ErrOwned", err)
	}
}

func TestOwnerCancelled(t *testing.T) {
	home := shortHome(t)
	st := openStore(t, home)
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := Own(ctx, OwnerConfig{Home: home}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Own = %v, want the context's error", err)
	}
}

func TestBackendBusyStore(t *testing.T) {
	home := shortHome(t)
	st := openStore(t, home)
	defer st.Close()
	start := time.Now()
	_, err := OpenBackend(context.Background(), home, nil)
	if !errors.Is(err, ErrBusy) || !errors.Is(err, journal.ErrLocked) || !strings.Contains(err.Error(), home) {
		t.Fatalf("OpenBackend on a held store: %v", err)
	}
	if d := time.Since(start); d < lockRetry {
		t.Errorf("gave up after %s, before %s", d, lockRetry)
	}
}

func TestOwnerSocketPathTooLong(t *testing.T) {
	home := filepath.Join(shortHome(t), strings.Repeat("d", 120))
	if _, err := Own(context.Background(), OwnerConfig{Home: home}); err == nil || !strings.Contains(err.Error(), "too deep") {
		t.Fatalf("Own = %v", err)
	}
}

func TestLocalMatchNode(t *testing.T) {
	for _, tc := range []struct {
		filter, addr string
		want         bool
	}{
		{"", "task.fetch", true},
		{"task.fetch", "task.fetch", true},
		{"fetch", "task.fetch", true},
		{"fetch", "task.fetcher", false},
		{"task.send", "loop.notify/task.send", true},
		{"send", "loop.notify/task.send", true},
		{"loop.notify/task.send", "loop.notify/task.send", true},
		{"loop.notify", "loop.notify/task.send", true},
		{"notify", "loop.notify", true},
		{"task.fetch", "task.send", false},
		{"loop.notify", "loop.notifyx/task.send", false},
	} {
		if got := MatchNode(tc.filter, tc.addr); got != tc.want {
			t.Errorf("MatchNode(%q, %q) = %v, want %v", tc.filter, tc.addr, got, tc.want)
		}
	}
}

func TestLocalLockedBy(t *testing.T) {
	home := shortHome(t)
	if got := lockedBy(home); got != "another process" {
		t.Errorf("without an owner file: %q", got)
	}
	write := func(line string) {
		if err := os.WriteFile(filepath.Join(home, OwnerFileName), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(fmt.Sprintf("%d fuscia serve .\n", os.Getpid()))
	if got, want := lockedBy(home), fmt.Sprintf("process %d (fuscia serve .)", os.Getpid()); got != want {
		t.Errorf("lockedBy = %q, want %q", got, want)
	}
	// An owner that crashed leaves its file; the process it names is gone.
	write("2147483000 fuscia apply x.fsc.hcl\n")
	if got := lockedBy(home); got != "another process" {
		t.Errorf("with a dead owner's file: %q", got)
	}
	write("garbage")
	if got := lockedBy(home); got != "another process" {
		t.Errorf("with a garbled owner file: %q", got)
	}
}
