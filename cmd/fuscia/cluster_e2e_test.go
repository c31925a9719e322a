package main

// End-to-end tests of cluster mode (docs/cluster.md) through the binaries: a NATS server with
// JetStream runs in the test process (internal/natstest), `fuscia serve -nats` is the
// coordinator and `fuscia worker -nats` processes run the attempts. The tests kill workers and
// the coordinator with SIGKILL, stop NATS under a running serve, grep NATS's store for a
// secret, and check the errors of a cluster that cannot be joined.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/natstest"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/internal/version"
)

// fanWorkflow: every webhook run calls the test server once through the fetch component,
// with the webhook's n in the query, so that the server counts the calls of each run.
const fanWorkflow = `workflow "fan" {}

component "fetch" {
  source        = "fuscia/fetch"
  version       = "~> 1.0"
  allowed_hosts = ["127.0.0.1"]
}

trigger "webhook" "in" { path = "/hooks/fan" }

task "call" {
  uses   = component.fetch.get
  inputs = { url = "%s/call?n=${trigger.payload.body.n}" }
}

output "body" { value = task.call.output.body }
`

// clusterServeArgs are serve's arguments for a coordinator without a local worker, whose
// attempts go to another worker clusterAckWait after their worker stopped answering.
func clusterServeArgs(natsURL, keyFile string) []string {
	return []string{"flows", "-nats", natsURL, "-cluster-key-file", keyFile, "-local-worker=false", "-nats-ack-wait", clusterAckWait}
}

// clusterAckWait is the tests' -nats-ack-wait: short, so that a killed worker's attempts move on
// soon, and long enough that a worker starved of CPU on a busy machine still renews its
// attempts in time (at 2 s, two runs of TestClusterWorkerKilled were redelivered from a live
// worker under load).
const clusterAckWait = "5s"

// killedConcurrency is the concurrency of the worker TestClusterWorkerKilled kills.
const killedConcurrency = 4

// TestClusterWorkerKilled: a coordinator and two workers; 200 webhook runs whose component
// task calls a test server; one worker is SIGKILLed in the middle while it runs attempts.
// Every webhook is accepted, every run succeeds, and the only calls made twice are those of
// the attempts that were running on the killed worker, which the journal shows interrupted.
func TestClusterWorkerKilled(t *testing.T) {
	t.Parallel()
	ns := natstest.Start(t)
	key := clusterKeyFile(t)
	// Worker A starts alone: the first calls, one per slot of A, are all A's, and are held
	// (running) until A is killed.
	cs := newCallServer(t, 0, killedConcurrency)
	h := newHarness(t)
	crInstall(t, h, "fetch")
	h.write("flows/fan.fsc.hcl", fmt.Sprintf(fanWorkflow, cs.URL))
	sp := startCoordinator(t, h, nil, clusterServeArgs(ns.URL(), key)...)
	a := startWorker(t, ns.URL(), key, "-concurrency", strconv.Itoa(killedConcurrency), "-nats-ack-wait", clusterAckWait)

	const total = 200
	first := make(chan []hookAnswer, 1)
	go func() { first <- sendHooks(sp.base, "/hooks/fan", seq(0, total/2), 16) }()
	held := cs.waitHeld(t, clusterDeadline, sp, a)
	// Worker B takes the rest. A dies as soon as B has joined: A's held calls end with the
	// fetch component's own 30 s timeout, which B's first compile of fetch could outlast on a
	// busy machine had A waited for B to answer calls first (a run then failed on A).
	b := startWorker(t, ns.URL(), key, "-concurrency", "4", "-nats-ack-wait", clusterAckWait)
	// The second half of the webhooks flows while A dies.
	second := make(chan []hookAnswer, 1)
	go func() { second <- sendHooks(sp.base, "/hooks/fan", seq(total/2, total), 16) }()
	killedAt := time.Now()
	a.kill()
	cs.release() // the held handlers answer a dead worker
	answers := append(<-first, <-second...)

	idOf := map[int]string{}
	var ids []string
	for _, ans := range answers {
		if ans.err != nil || ans.code/100 != 2 || ans.id == "" {
			t.Errorf("webhook n=%d: %d %q (%v), want 2xx with an execution_id", ans.n, ans.code, ans.body, ans.err)
			continue
		}
		idOf[ans.n] = ans.id
		ids = append(ids, ans.id)
	}
	if t.Failed() {
		t.FailNow()
	}
	waitAllSucceeded(t, sp, ids, clusterDeadline, b)
	t.Logf("the %d runs finished %s after the kill", total, time.Since(killedAt).Round(time.Millisecond))

	calls, _, _ := cs.snapshot()
	var repeated []string
	for n := range total {
		k := strconv.Itoa(n)
		c := calls[k]
		switch {
		case slices.Contains(held, k) && c != 2:
			t.Errorf("run n=%s (%s) was running on the killed worker: %d calls, want 2 (the interrupted one and the next attempt)", k, idOf[n], c)
		case !slices.Contains(held, k) && c != 1:
			t.Errorf("run n=%s (%s): %d calls, want 1 (it did not run on the killed worker)", k, idOf[n], c)
		}
		if c > 1 {
			repeated = append(repeated, k)
		}
	}
	if len(repeated) > killedConcurrency {
		t.Errorf("%d runs called the server more than once, more than the killed worker's concurrency %d: %v", len(repeated), killedConcurrency, repeated)
	}
	t.Logf("%d of %d runs called the server twice (n = %v): the attempts running on the killed worker (concurrency %d)", len(repeated), total, repeated, killedConcurrency)

	sp.stopOK()
	entries := journalEntries(t, h.home, ids)
	for n, id := range idOf {
		counts, attempts, interrupted := nodeEntries(entries[id], "task.call")
		if counts[journal.NodeFinished] != 1 {
			t.Errorf("run n=%d (%s): %d node_finished entries for task.call, want 1", n, id, counts[journal.NodeFinished])
		}
		if slices.Contains(held, strconv.Itoa(n)) {
			if len(interrupted) != 1 || interrupted[0].Attempt != 1 || interrupted[0].Error == nil || interrupted[0].Error.Kind != outcome.AttemptInterrupted {
				t.Errorf("run n=%d (%s), running on the killed worker: attempt_interrupted entries %+v, want one for attempt 1 of kind attempt_interrupted", n, id, interrupted)
			}
			if !slices.Equal(attempts, []int{1, 2}) {
				t.Errorf("run n=%d (%s): attempts started %v, want [1 2]", n, id, attempts)
			}
		} else if len(interrupted) != 0 || !slices.Equal(attempts, []int{1}) {
			t.Errorf("run n=%d (%s): attempts started %v and interrupted %+v, want attempt 1 only", n, id, attempts, interrupted)
		}
	}
	// show -json counts the interrupted attempt.
	heldN, _ := strconv.Atoi(held[0])
	if got := nodeOf(t, showJSON(t, h, idOf[heldN]), "task.call").Attempts; got != 2 {
		t.Errorf("show -json %s: task.call attempts = %d, want 2 (one interrupted by the kill)", idOf[heldN], got)
	}
}

// TestClusterCoordinatorKilled: the coordinator is SIGKILLed while webhooks flow and its
// worker runs attempts; the worker stores their results while it is down. Restarted on the
// same home, it finishes every run a webhook accepted, each task called exactly once and
// journaled finished once.
func TestClusterCoordinatorKilled(t *testing.T) {
	t.Parallel()
	ns := natstest.Start(t)
	key := clusterKeyFile(t)
	// The worker's four slots are all held from the 21st call on, so that attempts are
	// running when the coordinator dies.
	const holdFrom, holdCount = 20, 4
	cs := newCallServer(t, holdFrom, holdCount)
	h := newHarness(t)
	crInstall(t, h, "fetch")
	h.write("flows/fan.fsc.hcl", fmt.Sprintf(fanWorkflow, cs.URL))
	args := clusterServeArgs(ns.URL(), key)
	sp := startCoordinator(t, h, nil, args...)
	w := startWorker(t, ns.URL(), key, "-concurrency", strconv.Itoa(holdCount), "-nats-ack-wait", clusterAckWait)
	js := testJetStream(t, ns)

	// Warm up: the worker compiles the component and answers the first calls.
	var answers []hookAnswer
	for _, a := range sendHooks(sp.base, "/hooks/fan", seq(0, holdFrom), 4) {
		if a.code/100 != 2 {
			t.Fatalf("webhook n=%d: %d %q (%v)\n%s", a.n, a.code, a.body, a.err, sp)
		}
		answers = append(answers, a)
	}
	deadline := time.Now().Add(clusterDeadline)
	for {
		if calls, _, _ := cs.snapshot(); len(calls) == holdFrom {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first %d runs did not call the server within %s\n%s\n%s", holdFrom, clusterDeadline, sp, w)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Then webhooks flow, four at a time, until serve is killed; the worker's slots are all
	// held by then, and the attempts of the later runs are queued.
	var (
		mu   sync.Mutex
		next atomic.Int64
		stop atomic.Bool
		wg   sync.WaitGroup
	)
	t.Cleanup(func() { stop.Store(true) })
	accepted := func() int {
		mu.Lock()
		defer mu.Unlock()
		k := 0
		for _, a := range answers {
			if a.code/100 == 2 {
				k++
			}
		}
		return k
	}
	next.Store(holdFrom)
	base := sp.base
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				a := postHook(base, "/hooks/fan", int(next.Add(1)-1))
				mu.Lock()
				answers = append(answers, a)
				mu.Unlock()
				if a.err != nil {
					return // serve is gone
				}
			}
		}()
	}
	cs.waitHeld(t, clusterDeadline, sp, w)
	deadline = time.Now().Add(clusterDeadline)
	for accepted() < holdFrom+40 {
		if time.Now().After(deadline) {
			t.Fatalf("%d webhooks accepted within %s, want %d\n%s", accepted(), clusterDeadline, holdFrom+40, sp)
		}
		time.Sleep(20 * time.Millisecond)
	}
	sp.kill()
	stop.Store(true)
	wg.Wait()

	// The worker finishes what it holds and what is queued, while no coordinator runs.
	before := streamMsgs(t, js, "fuscia_results")
	cs.release()
	deadline = time.Now().Add(clusterDeadline)
	for {
		_, _, running := cs.snapshot()
		if running == 0 && streamMsgs(t, js, "fuscia_work_default") == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker did not finish the queued attempts within %s\n%s", clusterDeadline, w)
		}
		time.Sleep(50 * time.Millisecond)
	}
	storedWhileDown := streamMsgs(t, js, "fuscia_results") - before
	if storedWhileDown < holdCount {
		t.Errorf("%d results stored while the coordinator was down, want at least the %d attempts running at the kill", storedWhileDown, holdCount)
	}

	restartedAt := time.Now()
	sp2 := startCoordinator(t, h, nil, args...)
	var ids []string
	idOf := map[int]string{}
	for _, a := range answers {
		if a.code/100 == 2 {
			if a.id == "" {
				t.Fatalf("webhook n=%d: %d %s without an execution_id", a.n, a.code, a.body)
			}
			ids = append(ids, a.id)
			idOf[a.n] = a.id
		}
	}
	waitAllSucceeded(t, sp2, ids, clusterDeadline, w)
	t.Logf("%d webhooks accepted before the kill (%d sent); %d results stored while the coordinator was down; every run finished %s after the restart",
		len(ids), len(answers), storedWhileDown, time.Since(restartedAt).Round(time.Millisecond))

	calls, _, _ := cs.snapshot()
	for k, c := range calls {
		if c != 1 {
			t.Errorf("run n=%s: %d calls, want 1 (no attempt runs twice)", k, c)
		}
	}
	for n, id := range idOf {
		if calls[strconv.Itoa(n)] != 1 {
			t.Errorf("accepted run n=%d (%s): %d calls, want 1", n, id, calls[strconv.Itoa(n)])
		}
	}

	sp2.stopOK()
	entries := journalEntries(t, h.home, ids)
	for n, id := range idOf {
		counts, attempts, _ := nodeEntries(entries[id], "task.call")
		if counts[journal.NodeFinished] != 1 {
			t.Errorf("run n=%d (%s): %d node_finished entries for task.call, want 1 (a result journaled once)", n, id, counts[journal.NodeFinished])
		}
		for _, at := range attempts {
			if at != 1 {
				t.Errorf("run n=%d (%s): attempts started %v, want attempt 1 only (a finished attempt is not run again)", n, id, attempts)
				break
			}
		}
	}
}

// secretWorkflow passes a secret to the fetch component in its input; the server echoes it, so
// the result carries it too.
const secretWorkflow = `workflow "secretcall" {}

secret "tok" { env = "CLUSTER_E2E_TOKEN" }

component "fetch" {
  source        = "fuscia/fetch"
  version       = "~> 1.0"
  allowed_hosts = ["127.0.0.1"]
}

trigger "webhook" "in" { path = "/hooks/secret" }

task "call" {
  uses   = component.fetch.get
  inputs = { url = "%s/s?n=${trigger.payload.body.n}&token=${secret.tok}" }
}
`

// TestClusterSecretNotInNATS: a secret a run hands to a worker's task (in its input, and back
// in its result) is nowhere in the NATS server's store, in clear, base64 or hex.
func TestClusterSecretNotInNATS(t *testing.T) {
	t.Parallel()
	ns := natstest.Start(t)
	key := clusterKeyFile(t)
	cs := newCallServer(t, 0, 0)
	var raw [12]byte
	if _, err := rand.Read(raw[:]); err != nil {
		t.Fatal(err)
	}
	secret := "Sx" + strings.ToUpper(hex.EncodeToString(raw[:])) + "zq"
	h := newHarness(t)
	crInstall(t, h, "fetch")
	h.write("flows/secret.fsc.hcl", fmt.Sprintf(secretWorkflow, cs.URL))
	sp := startCoordinator(t, h, []string{"CLUSTER_E2E_TOKEN=" + secret}, clusterServeArgs(ns.URL(), key)...)
	w := startWorker(t, ns.URL(), key, "-concurrency", "2")

	const runs = 5
	var ids []string
	for _, a := range sendHooks(sp.base, "/hooks/secret", seq(0, runs), runs) {
		if a.code/100 != 2 || a.id == "" {
			t.Fatalf("webhook n=%d: %d %q (%v), want 2xx with an execution_id", a.n, a.code, a.body, a.err)
		}
		ids = append(ids, a.id)
	}
	waitAllSucceeded(t, sp, ids, clusterDeadline, w)
	// The worker compiled the component in a child process, as serve does: then the snapshot
	// it builds next, in the background, is built in a child too, which its stop below kills.
	// Built inside the worker, that compile could not be stopped, and held the stop past 15 s
	// on a busy machine.
	if !strings.Contains(w.stderr.String(), childCompiledMsg) {
		t.Errorf("the worker did not log %q before its attempts ran:\n%s", childCompiledMsg, w)
	}
	for n := range runs {
		if got := cs.token(strconv.Itoa(n)); got != secret {
			t.Errorf("run n=%d: the worker's call carried token %q, want the secret", n, got)
		}
	}
	sp.stopOK()
	w.cleanup()
	ns.Shutdown() // everything written to disk

	store := ns.StoreDir()
	// The store holds the streams in files we can read: the subjects are there in clear.
	if found := filesContaining(t, store, []byte("fuscia.results.")); len(found) == 0 {
		t.Fatalf("no file under %s holds the results' subjects: the grep below would prove nothing", store)
	}
	forms := [][]byte{
		[]byte(secret),
		[]byte(base64.StdEncoding.EncodeToString([]byte(secret))),
		[]byte(base64.RawURLEncoding.EncodeToString([]byte(secret))),
		[]byte(hex.EncodeToString([]byte(secret))),
	}
	if found := filesContaining(t, store, forms...); len(found) > 0 {
		t.Errorf("the secret is in NATS's store under %s: %v", store, found)
	}
}

// TestClusterStartErrors: what cannot reach or join a cluster exits 2 and says why and what
// to do.
func TestClusterStartErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("flows/hello.fsc.hcl", validWorkflow)
	key := clusterKeyFile(t)
	flat := func(r result) string { return strings.Join(strings.Fields(r.stderr), " ") }
	serveArgs := func(extra ...string) []string {
		return append([]string{"serve", "flows", "-listen", "127.0.0.1:0", "-home", h.home}, extra...)
	}

	t.Run("closed port", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "nats://" + l.Addr().String()
		l.Close()
		r := h.run(serveArgs("-nats", url, "-cluster-key-file", key)...)
		wantCode(t, r, 2)
		wantContains(t, "serve's stderr", flat(r), url)
		// No address before the error: a script would take it for a started serve.
		if strings.Contains(r.stdout, "API and webhooks on") {
			t.Errorf("serve that cannot reach the cluster printed its address:\n%s", r.stdout)
		}
		r = h.run("worker", "-nats", url, "-cluster-key-file", key, "-home", t.TempDir())
		wantCode(t, r, 2)
		wantContains(t, "worker's stderr", flat(r), url)
	})
	t.Run("no key file", func(t *testing.T) {
		r := h.run(serveArgs("-nats", "nats://127.0.0.1:4222")...)
		wantCode(t, r, 2)
		wantContains(t, "serve's stderr", flat(r), "-cluster-key-file", "head -c 32 /dev/urandom | base64")
		r = h.run("worker", "-nats", "nats://127.0.0.1:4222", "-home", t.TempDir())
		wantCode(t, r, 2)
		wantContains(t, "worker's stderr", flat(r), "-cluster-key-file", "head -c 32 /dev/urandom | base64")
	})
	t.Run("bad key file", func(t *testing.T) {
		dir := t.TempDir()
		short := filepath.Join(dir, "short.key")
		writeFile(t, short, []byte(base64.StdEncoding.EncodeToString(make([]byte, 16))+"\n"), 0o600)
		text := filepath.Join(dir, "text.key")
		writeFile(t, text, []byte("not a key at all!\n"), 0o600)
		for _, f := range []string{short, text} {
			r := h.run(serveArgs("-nats", "nats://127.0.0.1:4222", "-cluster-key-file", f)...)
			wantCode(t, r, 2)
			wantContains(t, "serve's stderr", flat(r), f, "32", "base64")
			r = h.run("worker", "-nats", "nats://127.0.0.1:4222", "-cluster-key-file", f, "-home", t.TempDir())
			wantCode(t, r, 2)
			wantContains(t, "worker's stderr", flat(r), f, "32", "base64")
		}
	})
	t.Run("worker without -nats", func(t *testing.T) {
		r := h.run("worker", "-cluster-key-file", key, "-home", t.TempDir())
		wantCode(t, r, 2)
		wantContains(t, "worker's stderr", flat(r), "-nats")
	})
	t.Run("worker stopped while it waits for the coordinator", func(t *testing.T) {
		ns := natstest.Start(t) // a NATS server that no coordinator set up
		w := launchWorker(t, fusciaBin, ns.URL(), key)
		deadline := time.Now().Add(clusterDeadline)
		for !strings.Contains(w.stderr.String(), "the coordinator to set the cluster up") {
			if w.done() || time.Now().After(deadline) {
				t.Fatalf("the worker did not say it waits for the coordinator:\n%s", w)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if strings.Contains(w.stdout.String(), "taking the attempts") {
			t.Errorf("the worker says it takes attempts before it joined:\n%s", w)
		}
		if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := w.wait(clusterDeadline); code != 0 {
			t.Fatalf("a worker stopped by SIGTERM while joining exited %d, want 0:\n%s", code, w)
		}
		wantContains(t, "worker's stdout", w.stdout.String(), "Stopped.")
	})
	t.Run("worker with another key", func(t *testing.T) {
		ns := natstest.Start(t)
		wh := newHarness(t)
		wh.write("flows/hello.fsc.hcl", validWorkflow)
		sp := startCoordinator(t, wh, nil, clusterServeArgs(ns.URL(), key)...)
		w := launchWorker(t, fusciaBin, ns.URL(), clusterKeyFile(t))
		if code := w.wait(clusterDeadline); code != 2 {
			t.Fatalf("a worker with another cluster key exited %d, want 2:\n%s", code, w)
		}
		wantContains(t, "worker's stderr", strings.Join(strings.Fields(w.stderr.String()), " "), "cluster key", "-cluster-key-file")
		sp.stopOK()
	})
}

// outageWorkflow: a builtin.http task, which runs on a worker (here serve's local one).
const outageWorkflow = `workflow "outage" {}

trigger "webhook" "in" { path = "/hooks/outage" }

task "call" {
  uses   = builtin.http
  inputs = { url = "%s/o?n=${trigger.payload.body.n}" }
}
`

// TestClusterNATSOutage: NATS goes away under a running serve and comes back on the same port
// and store. Serve accepts webhooks meanwhile, says in its log that NATS was lost and then
// that dispatch resumed, and the runs it accepted during the outage finish afterwards.
func TestClusterNATSOutage(t *testing.T) {
	t.Parallel()
	ns := natstest.Start(t)
	key := clusterKeyFile(t)
	cs := newCallServer(t, 0, 0)
	h := newHarness(t)
	h.write("flows/outage.fsc.hcl", fmt.Sprintf(outageWorkflow, cs.URL))
	sp := startCoordinator(t, h, nil, "flows", "-nats", ns.URL(), "-cluster-key-file", key, "-nats-ack-wait", clusterAckWait)

	first := postHook(sp.base, "/hooks/outage", 0)
	if first.code/100 != 2 || first.id == "" {
		t.Fatalf("webhook before the outage: %d %q (%v)\n%s", first.code, first.body, first.err, sp)
	}
	waitAllSucceeded(t, sp, []string{first.id}, clusterDeadline)

	ns.Shutdown()
	const lost, resumed = "lost the connection to NATS", "dispatch resumes"
	waitStderr(t, sp, lost)
	var ids []string
	for _, a := range sendHooks(sp.base, "/hooks/outage", seq(1, 6), 5) {
		if a.code/100 != 2 || a.id == "" {
			t.Fatalf("webhook n=%d during the outage: %d %q (%v), want 2xx with an execution_id\n%s", a.n, a.code, a.body, a.err, sp)
		}
		ids = append(ids, a.id)
	}
	// Nothing reaches a worker without NATS: the runs wait.
	for _, id := range ids {
		if ex := sp.execution(id); journal.Finished(ex.Status) {
			t.Errorf("run %s accepted during the outage is %s before NATS came back", id, ex.Status)
		}
	}
	if calls, _, _ := cs.snapshot(); len(calls) != 1 {
		t.Errorf("calls during the outage: %v, want only n=0's", calls)
	}

	ns.Restart(t)
	back := time.Now()
	waitStderr(t, sp, resumed)
	if i, j := strings.Index(sp.stderr.String(), lost), strings.LastIndex(sp.stderr.String(), resumed); j < i {
		t.Errorf("serve's log says %q before %q:\n%s", resumed, lost, sp)
	}
	waitAllSucceeded(t, sp, ids, clusterDeadline)
	t.Logf("the %d runs accepted during the outage finished %s after NATS came back", len(ids), time.Since(back).Round(time.Millisecond))
	calls, _, _ := cs.snapshot()
	for n := range 6 {
		if c := calls[strconv.Itoa(n)]; c != 1 {
			t.Errorf("run n=%d: %d calls, want 1", n, c)
		}
	}
	sp.stopOK()
}

// waitStderr waits until serve's stderr contains s.
func waitStderr(t *testing.T, sp *serveProc, s string) {
	t.Helper()
	deadline := time.Now().Add(clusterDeadline)
	for !strings.Contains(sp.stderr.String(), s) {
		if sp.done() || time.Now().After(deadline) {
			t.Fatalf("serve's log does not say %q:\n%s", s, sp)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestClusterWorkerVersionMismatch: a worker built as another fuscia version is refused,
// naming both versions.
func TestClusterWorkerVersionMismatch(t *testing.T) {
	t.Parallel()
	other := filepath.Join(t.TempDir(), "fuscia-9.9.9")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// As `make build VERSION=9.9.9` does: the version in Go and in the C fast path of `fuscia
	// version` (version_fast.h).
	build := exec.CommandContext(ctx, "go", "build", "-o", other,
		"-ldflags", "-X github.com/fuscia/fuscia/internal/version.Fuscia=9.9.9", ".")
	build.Env = append(os.Environ(), `CGO_CFLAGS=-O2 -g '-DFUSCIA_VERSION="9.9.9"'`)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build fuscia 9.9.9: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"version"}, {"version", "-json"}, {"version", "-home", t.TempDir()}} {
		out, err := exec.CommandContext(ctx, other, args...).Output()
		if err != nil || !strings.Contains(string(out), "9.9.9") || strings.Contains(string(out), version.Fuscia) {
			t.Fatalf("fuscia-9.9.9 %v: %v\n%s", args, err, out)
		}
	}
	ns := natstest.Start(t)
	key := clusterKeyFile(t)
	h := newHarness(t)
	h.write("flows/hello.fsc.hcl", validWorkflow)
	sp := startCoordinator(t, h, nil, clusterServeArgs(ns.URL(), key)...)
	w := launchWorker(t, other, ns.URL(), key)
	if code := w.wait(clusterDeadline); code != 2 {
		t.Fatalf("a worker of fuscia 9.9.9 under a coordinator of %s exited %d, want 2:\n%s", version.Fuscia, code, w)
	}
	wantContains(t, "worker's stderr", w.stderr.String(), "9.9.9", version.Fuscia)
	sp.stopOK()
}

// TestClusterWaitingServeTakesNoResults: a second serve of the same home, waiting for the
// store the first one holds, does not coordinate yet: the first one's runs all finish. Before,
// the waiting serve consumed the cluster's results as soon as it started and acknowledged
// those nobody there waited for, and about half of the first serve's runs waited for their
// attempts' timeouts.
func TestClusterWaitingServeTakesNoResults(t *testing.T) {
	t.Parallel()
	ns := natstest.Start(t)
	key := clusterKeyFile(t)
	cs := newCallServer(t, 0, 0)
	h := newHarness(t)
	h.write("flows/outage.fsc.hcl", fmt.Sprintf(outageWorkflow, cs.URL))
	args := []string{"flows", "-nats", ns.URL(), "-cluster-key-file", key, "-nats-ack-wait", clusterAckWait}
	sp := startCoordinator(t, h, nil, args...)
	second := launchServe(t, h, nil, args...)
	waitStderr(t, second, "Waiting for the state store")

	var ids []string
	for _, a := range sendHooks(sp.base, "/hooks/outage", seq(0, 12), 4) {
		if a.code/100 != 2 || a.id == "" {
			t.Fatalf("webhook n=%d: %d %q (%v)\n%s", a.n, a.code, a.body, a.err, sp)
		}
		ids = append(ids, a.id)
	}
	waitAllSucceeded(t, sp, ids, time.Minute)
	if strings.Contains(second.stderr.String(), "coordinating a cluster") {
		t.Errorf("the serve waiting for the store coordinates the cluster:\n%s", second)
	}
	if code, _ := second.stop(serveDeadline); code != 0 || !strings.Contains(second.stdout.String(), "Stopped.") {
		t.Errorf("the waiting serve, stopped: exit %d, want 0 and Stopped.:\n%s", code, second)
	}
	sp.stopOK()
}
