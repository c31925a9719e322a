package main

// Helpers of the cluster end-to-end tests (cluster_e2e_test.go): a cluster key file, worker
// processes, a test HTTP server that counts the calls of each run and can hold some of them,
// webhook senders that never fail the test from their goroutines, and the journal read back
// once serve has stopped.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/natstest"
	"github.com/fuscia/fuscia/internal/syncbuf"
)

// clusterDeadline bounds every wait of the cluster tests for something the processes do on
// their own: a worker compiles the fetch component (3.7 MB of Wasm) on first use, and the
// machine is shared and busy.
const clusterDeadline = 3 * time.Minute

// clusterKeyFile writes a new cluster key (32 random bytes, standard base64, as
// `head -c 32 /dev/urandom | base64` writes it) and returns its path.
func clusterKeyFile(t *testing.T) string {
	t.Helper()
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cluster.key")
	writeFile(t, path, []byte(base64.StdEncoding.EncodeToString(b[:])+"\n"), 0o600)
	return path
}

// startCoordinator is startServe with clusterDeadline: serve compiles the components its
// workflows use before it says it serves, which takes a while on a busy machine.
func startCoordinator(t *testing.T, h *harness, env []string, args ...string) *serveProc {
	t.Helper()
	sp := launchServe(t, h, env, args...)
	sp.waitServing(clusterDeadline)
	return sp
}

// clusterProc is a long-running fuscia process other than serve (a worker).
type clusterProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdout *syncbuf.Buffer
	stderr *syncbuf.Buffer
	exited chan struct{}
	code   int // once exited is closed; -1 when killed by a signal
}

// launchFuscia starts bin with args in dir; the process is stopped and reaped when the test
// ends.
func launchFuscia(t *testing.T, bin, dir string, env []string, args ...string) *clusterProc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(baseEnv(), env...)
	p := &clusterProc{t: t, cmd: cmd, stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start fuscia %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.code = ee.ExitCode()
		} else if err != nil {
			p.code = -2
		}
		close(p.exited)
	}()
	t.Cleanup(p.cleanup)
	return p
}

// workerJoinedRE is the line `fuscia worker` prints once it joined the cluster.
var workerJoinedRE = regexp.MustCompile(`(?m)^Worker (\S+) taking the attempts of pool\(s\) `)

// startWorker starts `fuscia worker` with its own home and waits until it joined the cluster.
func startWorker(t *testing.T, natsURL, keyFile string, args ...string) *clusterProc {
	t.Helper()
	w := launchWorker(t, fusciaBin, natsURL, keyFile, args...)
	w.waitOutput(workerJoinedRE, clusterDeadline)
	return w
}

// launchWorker starts `fuscia worker` (the binary bin) with its own home and returns at once.
func launchWorker(t *testing.T, bin, natsURL, keyFile string, args ...string) *clusterProc {
	t.Helper()
	home := t.TempDir()
	all := append([]string{"worker", "-nats", natsURL, "-cluster-key-file", keyFile, "-home", home, "-shutdown-grace", "2s"}, args...)
	return launchFuscia(t, bin, t.TempDir(), []string{"FUSCIA_HOME=" + home}, all...)
}

func (p *clusterProc) String() string {
	return fmt.Sprintf("fuscia %s\n--- stdout:\n%s\n--- stderr:\n%s", strings.Join(p.cmd.Args[1:], " "), p.stdout, p.stderr)
}

func (p *clusterProc) done() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// waitOutput waits until stdout matches re.
func (p *clusterProc) waitOutput(re *regexp.Regexp, limit time.Duration) {
	p.t.Helper()
	deadline := time.After(limit)
	for !re.MatchString(p.stdout.String()) {
		select {
		case <-p.exited:
			p.t.Fatalf("exited (code %d) before printing %q:\n%s", p.code, re, p)
		case <-deadline:
			p.t.Fatalf("did not print %q within %s:\n%s", re, limit, p)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// wait waits for the process to exit by itself and returns its exit code.
func (p *clusterProc) wait(limit time.Duration) int {
	p.t.Helper()
	select {
	case <-p.exited:
		p.checkNoCrash()
		return p.code
	case <-time.After(limit):
		p.t.Fatalf("still running after %s:\n%s", limit, p)
		return 0
	}
}

// kill SIGKILLs the process and reaps it.
func (p *clusterProc) kill() {
	p.t.Helper()
	_ = p.cmd.Process.Kill()
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.t.Fatalf("not reaped 10s after SIGKILL:\n%s", p)
	}
}

// cleanup stops a process the test left running: SIGTERM, then SIGKILL after a while.
func (p *clusterProc) cleanup() {
	if !p.done() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(15 * time.Second):
			quitOrKill(p.cmd.Process, p.exited, 5*time.Second)
			p.t.Errorf("did not stop within 15s of SIGTERM; its goroutines at a SIGQUIT then:\n%s", p)
			return
		}
	}
	p.checkNoCrash()
}

// quitOrKill ends a fuscia process with SIGQUIT, so that the Go runtime prints every
// goroutine's stack (where it hung or stalled) before it exits, and SIGKILLs it when it has
// not exited within wait. It returns once exited is closed (the process was reaped).
func quitOrKill(proc *os.Process, exited <-chan struct{}, wait time.Duration) {
	_ = proc.Signal(syscall.SIGQUIT)
	select {
	case <-exited:
	case <-time.After(wait):
		_ = proc.Kill()
		<-exited
	}
}

func (p *clusterProc) checkNoCrash() {
	for _, bad := range []string{"panic:", "goroutine ", "fatal error:", "DATA RACE"} {
		if strings.Contains(p.stdout.String(), bad) || strings.Contains(p.stderr.String(), bad) {
			p.t.Errorf("the output contains %q (a crash or a Go stack):\n%s", bad, p)
			return
		}
	}
}

// callServer answers GET ?n=N with {"n": N, "token": …} after a short pause (so that a kill
// lands while attempts run), counting the calls of each n. The calls whose rank (from 0, in
// arrival order) is in [holdFrom, holdFrom+holdCount) are held until release: the test knows
// which attempts were running at that moment.
type callServer struct {
	*httptest.Server
	holdFrom, holdCount int

	mu      sync.Mutex
	calls   map[string]int    // by n
	tokens  map[string]string // the last token query value received, by n
	total   int
	held    []string // the n of each held call, in order
	running int      // calls in the handler
	gate    chan struct{}
	opened  sync.Once
}

func newCallServer(t *testing.T, holdFrom, holdCount int) *callServer {
	cs := &callServer{holdFrom: holdFrom, holdCount: holdCount, calls: map[string]int{}, tokens: map[string]string{}, gate: make(chan struct{})}
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, token := r.URL.Query().Get("n"), r.URL.Query().Get("token")
		cs.mu.Lock()
		cs.calls[n]++
		cs.tokens[n] = token
		rank := cs.total
		cs.total++
		hold := rank >= cs.holdFrom && rank < cs.holdFrom+cs.holdCount
		if hold {
			cs.held = append(cs.held, n)
		}
		cs.running++
		cs.mu.Unlock()
		defer func() {
			cs.mu.Lock()
			cs.running--
			cs.mu.Unlock()
		}()
		if hold {
			select {
			case <-cs.gate:
			case <-r.Context().Done(): // the caller died
				return
			}
		} else {
			time.Sleep(30 * time.Millisecond) // a task that takes a little time
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"n": %q, "token": %q}`, n, token)
	}))
	// Registered after the server's Close would be, so it runs first: held handlers end.
	t.Cleanup(cs.Close)
	t.Cleanup(cs.release)
	return cs
}

// release lets the held calls answer.
func (cs *callServer) release() { cs.opened.Do(func() { close(cs.gate) }) }

// snapshot returns the calls by n, the held n and the calls in the handler now.
func (cs *callServer) snapshot() (calls map[string]int, held []string, running int) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	calls = make(map[string]int, len(cs.calls))
	for k, v := range cs.calls {
		calls[k] = v
	}
	return calls, append([]string(nil), cs.held...), cs.running
}

func (cs *callServer) token(n string) string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.tokens[n]
}

// waitHeld waits until the server holds its holdCount calls.
func (cs *callServer) waitHeld(t *testing.T, limit time.Duration, procs ...fmt.Stringer) []string {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		_, held, _ := cs.snapshot()
		if len(held) == cs.holdCount {
			return held
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server holds %d calls after %s, want %d\n%s", len(held), limit, cs.holdCount, describe(procs))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func describe(procs []fmt.Stringer) string {
	var b strings.Builder
	for _, p := range procs {
		b.WriteString(p.String())
		b.WriteString("\n")
	}
	return b.String()
}

// hookAnswer is the answer to one webhook request.
type hookAnswer struct {
	n    int
	code int // 0 when the request failed (err)
	id   string
	body string
	err  error
}

// postHook POSTs {"n": n} to base+path. It never fails the test: it runs in goroutines, and
// a request to a killed serve fails on purpose.
func postHook(base, path string, n int) hookAnswer {
	a := hookAnswer{n: n}
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(fmt.Sprintf(`{"n": %d}`, n)))
	if err != nil {
		a.err = err
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := serveClient.Do(req)
	if err != nil {
		a.err = err
		return a
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	a.code, a.body, a.err = resp.StatusCode, string(b), err
	var v struct {
		ID string `json:"execution_id"`
	}
	if json.Unmarshal(b, &v) == nil {
		a.id = v.ID
	}
	return a
}

// sendHooks POSTs {"n": n} for every n in ns, at most conc at once, and returns the answers in
// the order of ns.
func sendHooks(base, path string, ns []int, conc int) []hookAnswer {
	out := make([]hookAnswer, len(ns))
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i, n := range ns {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = postHook(base, path, n)
		}()
	}
	wg.Wait()
	return out
}

func seq(from, to int) []int {
	out := make([]int, 0, to-from)
	for n := from; n < to; n++ {
		out = append(out, n)
	}
	return out
}

// waitAllSucceeded polls the runs through serve's API until every one has ended; a run that
// ends otherwise than succeeded fails the test.
func waitAllSucceeded(t *testing.T, sp *serveProc, ids []string, limit time.Duration, procs ...fmt.Stringer) {
	t.Helper()
	pending := map[string]bool{}
	for _, id := range ids {
		pending[id] = true
	}
	deadline := time.Now().Add(limit)
	for len(pending) > 0 {
		for id := range pending {
			ex := sp.execution(id)
			if !journal.Finished(ex.Status) {
				continue
			}
			delete(pending, id)
			if ex.Status != journal.StatusSucceeded {
				b, _ := json.MarshalIndent(ex, "", "  ")
				t.Errorf("run %s ended %s, want succeeded:\n%s", id, ex.Status, b)
			}
		}
		if len(pending) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var some []string
			for id := range pending {
				some = append(some, id)
				if len(some) == 5 {
					break
				}
			}
			t.Fatalf("%d runs not finished after %s (some: %v)\n%s\n%s", len(pending), limit, some, sp, describe(procs))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// journalEntries reads the journal of each run from the store in home (serve stopped).
func journalEntries(t *testing.T, home string, ids []string) map[string][]journal.Entry {
	t.Helper()
	st, err := journal.Open(filepath.Join(home, "state"), journal.Options{})
	if err != nil {
		t.Fatalf("open the store: %v", err)
	}
	defer st.Close()
	out := map[string][]journal.Entry{}
	for _, id := range ids {
		err := st.Entries(id, 0, func(e journal.Entry) error {
			out[id] = append(out[id], e)
			return nil
		})
		if err != nil {
			t.Fatalf("the journal of %s: %v", id, err)
		}
	}
	return out
}

// nodeEntries counts the entries of each type about node in entries, and returns the attempt
// numbers of its attempt_started entries.
func nodeEntries(entries []journal.Entry, node string) (map[journal.EntryType]int, []int, []journal.Entry) {
	counts := map[journal.EntryType]int{}
	var attempts []int
	var interrupted []journal.Entry
	for _, e := range entries {
		if e.Node != node {
			continue
		}
		counts[e.Type]++
		switch e.Type {
		case journal.AttemptStarted:
			attempts = append(attempts, e.Attempt)
		case journal.AttemptInterrupted:
			interrupted = append(interrupted, e)
		}
	}
	return counts, attempts, interrupted
}

// streamMsgs is the number of messages in a JetStream stream (0 when it does not exist yet).
func streamMsgs(t *testing.T, js jetstream.JetStream, name string) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, name)
	if err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return 0
		}
		t.Fatalf("stream %s: %v", name, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatalf("stream %s: %v", name, err)
	}
	return info.State.Msgs
}

// testJetStream connects the test to the NATS server for looking at its streams.
func testJetStream(t *testing.T, ns *natstest.Server) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(natstest.Connect(t, ns.URL()))
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// filesContaining returns the files under dir whose bytes contain one of needles.
func filesContaining(t *testing.T, dir string, needles ...[]byte) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, n := range needles {
			if strings.Contains(string(b), string(n)) {
				rel, _ := filepath.Rel(dir, path)
				out = append(out, fmt.Sprintf("%s (%q)", rel, n))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	return out
}
