package main

// Benchmarks of the cluster mode through the real binaries (docs/performance.md, "Cluster
// (NATS JetStream)"): one NATS server with JetStream in the benchmark's process, a coordinator
// (`fuscia serve -nats … -local-worker=false`) and `fuscia worker` processes. Runs are started
// through serve's socket with `?wait=true` by closed-loop clients. `make bench` runs them;
// they are benchmarks only, so `make test` never starts them. The dispatch overhead of one
// attempt is engine/cluster's BenchmarkDispatchOverhead.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/hostabi/guesttest"
	"github.com/fuscia/fuscia/internal/natstest"
	"github.com/fuscia/fuscia/internal/syncbuf"
)

// cbDeadline bounds every wait of these benchmarks for something a process does on its own.
const cbDeadline = 60 * time.Second

// BenchmarkClusterScaling is runs/s of a workflow whose one task, builtin.http, calls a
// loopback server that answers after 50 ms (I/O-bound), with 1, 2 and 4 worker processes of
// concurrency 8, driven by 128 closed-loop clients: four times the slots of 4 workers, so that
// the work queue stays full and the workers, not the clients, are measured (mean-queued
// reports its mean depth). Each sub-benchmark adds workers to the same cluster and reports
// runs/s; those of 2 and 4 workers also the ratio to 1 worker. slot-cycle-ms is how long a
// worker's slot takes from one attempt to the next (50 ms of it the task's), and the CPU time
// per run of each process and the cores they used together are reported too: on a small
// machine they say what limits the scaling.
func BenchmarkClusterScaling(b *testing.B) {
	nap := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(50 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"slept_ms":50}`))
	}))
	b.Cleanup(nap.Close)
	c := newCBCluster(b, "nap", fmt.Sprintf(`workflow "nap" {}

trigger "manual" "go" {}

task "nap" {
  uses   = builtin.http
  inputs = { method = "GET", url = %q }
}
`, nap.URL+"/nap"), nil)
	check := func(ex journal.Execution) error {
		if ex.Status != "succeeded" {
			return fmt.Errorf("run %s ended %s", ex.ID, ex.Status)
		}
		return nil
	}
	var base float64
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			c.setWorkers(b, n, 8)
			rate := c.measure(b, 128, 4*n*8, check)
			b.ReportMetric(float64(n*8)/rate*1000, "slot-cycle-ms")
			if n == 1 {
				base = rate
			} else if base > 0 {
				b.ReportMetric(rate/base, "x-vs-1-worker")
			}
		})
	}
}

// BenchmarkClusterWasmCPU is runs/s of a workflow whose one task is CPU-bound Wasm: the
// fuscia/text example's spin, which loops until it has used its max_fuel of 10^8 (about 50 ms
// of one core here), then fails fatal; the task has fail_workflow = false, so each run ends
// completed_with_errors after exactly that much work. With 1 and 2 worker processes of
// concurrency 1 (a worker is one core's worth) and of concurrency 8 (one worker may use
// every core already).
func BenchmarkClusterWasmCPU(b *testing.B) {
	c := newCBCluster(b, "burn", `workflow "burn" {}

trigger "manual" "go" {}

component "text" {
  source   = "fuscia/text"
  max_fuel = 100000000
}

task "burn" {
  uses          = component.text.spin
  fail_workflow = false
}
`, func(home string) { guesttest.Install(b, filepath.Join(home, "components"), "text") })
	check := func(ex journal.Execution) error {
		n := ex.Nodes["task.burn"]
		if ex.Status != "completed_with_errors" || n == nil || n.Error == nil || !strings.Contains(n.Error.Message, "CPU budget") {
			raw, _ := json.Marshal(ex)
			return fmt.Errorf("run %s did not end with its task out of fuel: %s", ex.ID, raw)
		}
		return nil
	}
	for _, conc := range []int{1, 8} {
		var base float64
		for _, n := range []int{1, 2} {
			b.Run(fmt.Sprintf("concurrency=%d/workers=%d", conc, n), func(b *testing.B) {
				c.setWorkers(b, n, conc)
				c.warmCompiled(b, check)
				rate := c.measure(b, max(8, 2*n*conc), 2*n*conc, check)
				if n == 1 {
					base = rate
				} else if base > 0 {
					b.ReportMetric(rate/base, "x-vs-1-worker")
				}
			})
		}
	}
}

// BenchmarkClusterRedelivery is the time from a worker's SIGKILL, while it runs an attempt,
// to the start of that task's next attempt on another worker, with -nats-ack-wait 2s. The
// task calls a loopback server that holds the request until the benchmark lets it go; the
// first request marks the attempt started on worker A; then worker B joins, A is killed, and
// B's request marks the next attempt's start. Each iteration kills the worker that ran the
// last one, at a random point between two of its heartbeats. Reports the p50 and the largest
// of the iterations, and the target: ack wait + 1 s.
func BenchmarkClusterRedelivery(b *testing.B) {
	const ackWait = 2 * time.Second
	hold := newCBHold()
	srv := httptest.NewServer(hold)
	b.Cleanup(srv.Close)
	b.Cleanup(hold.releaseAll)
	c := newCBCluster(b, "held", fmt.Sprintf(`workflow "held" {}

trigger "manual" "go" {}

task "held" {
  uses   = builtin.http
  inputs = { method = "GET", url = %q }
}
`, srv.URL+"/held"), nil, "-nats-ack-wait", ackWait.String())
	c.workerArgs = []string{"-nats-ack-wait", ackWait.String()}
	a := c.addWorker(b, 8)
	var gaps []time.Duration
	b.ResetTimer()
	for i := range b.N {
		hold.reset()
		done := make(chan cbRunResult, 1)
		go func() { done <- c.startRun(b.Context(), true) }()
		if _, err := hold.next(cbDeadline); err != nil {
			b.Fatalf("iteration %d: the first attempt did not start: %v\n%s", i, err, c)
		}
		bw := c.addWorker(b, 8)
		// The kill falls at a random point between two of A's heartbeats (every ack wait / 3),
		// not always at the same distance from the last one.
		time.Sleep(time.Duration(mrand.Int64N(int64(ackWait / 3))))
		killed := time.Now()
		a.kill()
		again, err := hold.next(cbDeadline)
		if err != nil {
			b.Fatalf("iteration %d: no attempt started after the SIGKILL: %v\n%s", i, err, c)
		}
		gaps = append(gaps, again.Sub(killed))
		hold.releaseAll()
		r := <-done
		if r.err != nil {
			b.Fatalf("iteration %d: %v\n%s", i, r.err, c)
		}
		if n := r.ex.Nodes["task.held"]; r.ex.Status != "succeeded" || n == nil || n.Attempts < 2 {
			raw, _ := json.Marshal(r.ex)
			b.Fatalf("iteration %d: want a run that succeeded after an interrupted attempt, got %s", i, raw)
		}
		a = bw
	}
	b.StopTimer()
	slices.Sort(gaps)
	b.ReportMetric(gaps[len(gaps)/2].Seconds(), "p50-s")
	b.ReportMetric(gaps[len(gaps)-1].Seconds(), "max-s")
	b.ReportMetric((ackWait + time.Second).Seconds(), "target-s")
}

// cbHold is an HTTP handler that records when each request arrives and holds it until
// released (or its client goes away).
type cbHold struct {
	arrivals chan time.Time
	mu       sync.Mutex
	gate     chan struct{}
}

func newCBHold() *cbHold {
	return &cbHold{arrivals: make(chan time.Time, 64), gate: make(chan struct{})}
}

func (h *cbHold) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.arrivals <- time.Now()
	h.mu.Lock()
	gate := h.gate
	h.mu.Unlock()
	select {
	case <-gate:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"held":true}`))
	case <-r.Context().Done():
	}
}

// next waits for the next request's arrival.
func (h *cbHold) next(limit time.Duration) (time.Time, error) {
	select {
	case t := <-h.arrivals:
		return t, nil
	case <-time.After(limit):
		return time.Time{}, fmt.Errorf("no request within %s", limit)
	}
}

// releaseAll answers the requests held and those to come, until reset.
func (h *cbHold) releaseAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.gate:
	default:
		close(h.gate)
	}
}

// reset holds the requests to come, and forgets arrivals not waited for.
func (h *cbHold) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gate = make(chan struct{})
	for {
		select {
		case <-h.arrivals:
		default:
			return
		}
	}
}

// cbCluster is a NATS server in this process, a coordinator process and worker processes,
// each with its own home.
type cbCluster struct {
	tb       testing.TB
	root     string // short, for serve's unix socket (a path of at most 108 bytes)
	natsURL  string
	keyFile  string
	workflow string
	serve    *cbProc
	api      *http.Client // over serve's socket
	js       jetstream.JetStream
	workers  jetstream.KeyValue
	// workerArgs are added to every worker's command line.
	workerArgs []string
	// running are the workers; a worker's home is reused by the next worker of its index,
	// so that the components it fetched and compiled stay.
	running []*cbProc
	homes   []string
	conc    int
}

// newCBCluster starts NATS and a coordinator serving one workflow (src, named workflow);
// prepare, when not nil, is given serve's home before serve starts.
func newCBCluster(tb testing.TB, workflow, src string, prepare func(home string), serveArgs ...string) *cbCluster {
	tb.Helper()
	root, err := os.MkdirTemp("", "fcb-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = os.RemoveAll(root) })
	srv := natstest.Start(tb)
	c := &cbCluster{tb: tb, root: root, natsURL: srv.URL(), keyFile: filepath.Join(root, "cluster.key"), workflow: workflow}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	if err := os.WriteFile(c.keyFile, []byte(base64.StdEncoding.EncodeToString(raw)+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	home, dir := filepath.Join(root, "serve"), filepath.Join(root, "wf")
	for _, d := range []string{home, dir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, workflow+".fsc.hcl"), []byte(src), 0o644); err != nil {
		tb.Fatal(err)
	}
	if prepare != nil {
		prepare(home)
	}
	// -webhook-wait: a worker's first attempt of a component compiles it, which takes a while
	// on a busy machine, and the runs queued behind it wait as long.
	args := append([]string{"serve", dir, "-home", home, "-listen", "127.0.0.1:0", "-shutdown-grace", "2s", "-webhook-wait", "5m",
		"-nats", c.natsURL, "-cluster-key-file", c.keyFile, "-local-worker=false"}, serveArgs...)
	if c.serve, err = startCBProc(tb, home, args...); err != nil {
		tb.Fatal(err)
	}
	if _, err := c.serve.waitOutput(regexp.MustCompile(`(?m)^Serving \d+ workflow\(s\) from `), cbDeadline); err != nil {
		tb.Fatalf("%v\n%s", err, c.serve)
	}
	sock := filepath.Join(home, "fuscia.sock")
	c.api = &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		MaxIdleConnsPerHost: 256,
	}, Timeout: 5 * time.Minute}
	if c.js, err = jetstream.New(natstest.Connect(tb, c.natsURL)); err != nil {
		tb.Fatal(err)
	}
	if c.workers, err = c.js.KeyValue(context.Background(), "fuscia_workers"); err != nil {
		tb.Fatalf("the coordinator created no workers bucket: %v\n%s", err, c.serve)
	}
	// Workers stop before serve, and serve before NATS (cleanups run last registered first).
	tb.Cleanup(func() {
		for _, w := range c.running {
			w.stop()
		}
		c.serve.stop()
	})
	return c
}

func (c *cbCluster) String() string {
	var b strings.Builder
	b.WriteString(c.serve.String())
	for _, w := range c.running {
		b.WriteString("\n")
		b.WriteString(w.String())
	}
	return b.String()
}

// addWorker starts a worker of concurrency conc and returns once it has joined the cluster
// (its presence record is in the workers bucket).
func (c *cbCluster) addWorker(tb testing.TB, conc int) *cbProc {
	tb.Helper()
	i := len(c.running)
	if i == len(c.homes) {
		c.homes = append(c.homes, filepath.Join(c.root, "w"+strconv.Itoa(i)))
	}
	args := append([]string{"worker", "-nats", c.natsURL, "-cluster-key-file", c.keyFile, "-home", c.homes[i],
		"-concurrency", strconv.Itoa(conc), "-shutdown-grace", "2s"}, c.workerArgs...)
	// The cluster's owner stops the worker: the benchmark that added it may be one of several
	// that use it.
	w, err := startCBProc(c.tb, c.homes[i], args...)
	if err != nil {
		tb.Fatal(err)
	}
	c.running = append(c.running, w)
	m, err := w.waitOutput(regexp.MustCompile(`Worker (\S+) taking the attempts`), cbDeadline)
	if err != nil {
		tb.Fatalf("%v\n%s", err, w)
	}
	id := m[1]
	deadline := time.Now().Add(cbDeadline)
	for {
		if _, err := c.workers.Get(context.Background(), id); err == nil {
			return w
		}
		if time.Now().After(deadline) || w.done() {
			tb.Fatalf("worker %s did not join the cluster within %s\n%s", id, cbDeadline, c)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// setWorkers makes n workers of concurrency conc run: it adds workers, or stops them all
// first when they have another concurrency.
func (c *cbCluster) setWorkers(tb testing.TB, n, conc int) {
	tb.Helper()
	if c.conc != conc || len(c.running) > n {
		for _, w := range c.running {
			w.stop()
		}
		c.running = nil
		c.conc = conc
	}
	for len(c.running) < n {
		c.addWorker(tb, conc)
	}
}

// warmCompiled runs batches of runs until every running worker has fetched and compiled the
// workflow's component (its home's cache holds a compiled entry), so that no measured run
// pays for a compile.
func (c *cbCluster) warmCompiled(tb testing.TB, check func(journal.Execution) error) {
	tb.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		cold := 0
		for i := range c.running {
			if m, _ := filepath.Glob(filepath.Join(c.homes[i], "cache", "*.cwasm")); len(m) == 0 {
				cold++
			}
		}
		if cold == 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d workers have not compiled the component after 5 minutes of runs\n%s\n%s", cold, c.queues(), c.stacks())
		}
		c.runMany(tb, 2*len(c.running)*c.conc, 2*len(c.running)*c.conc, check)
	}
}

// measure runs warm runs, then b.N runs with clients closed-loop clients, and reports
// runs/s and the CPU time per run of serve, of the workers together and of this process
// (NATS, the clients and the test servers). It returns runs/s.
func (c *cbCluster) measure(b *testing.B, clients, warm int, check func(journal.Execution) error) float64 {
	b.Helper()
	c.runMany(b, warm, clients, check)
	pids := make([]int, 0, len(c.running))
	for _, w := range c.running {
		pids = append(pids, w.cmd.Process.Pid)
	}
	serve0, workers0, self0 := cbCPU(c.serve.cmd.Process.Pid), cbCPUOf(pids), cbSelfCPU()
	sampled := make(chan float64, 1)
	stop := make(chan struct{})
	go func() { sampled <- c.sampleQueue(stop) }()
	b.ResetTimer()
	start := time.Now()
	c.runMany(b, b.N, clients, check)
	took := time.Since(start)
	b.StopTimer()
	close(stop)
	queued := <-sampled
	serve, workers, self := cbCPU(c.serve.cmd.Process.Pid)-serve0, cbCPUOf(pids)-workers0, cbSelfCPU()-self0
	perRun := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	rate := float64(b.N) / took.Seconds()
	b.ReportMetric(rate, "runs/s")
	b.ReportMetric(queued, "mean-queued")
	b.ReportMetric(perRun(serve), "serve-cpu-ms/run")
	b.ReportMetric(perRun(workers), "workers-cpu-ms/run")
	b.ReportMetric(perRun(self), "nats+client-cpu-ms/run")
	b.ReportMetric((serve+workers+self).Seconds()/took.Seconds(), "cpu-cores")
	return rate
}

// sampleQueue reads the default pool's queue depth (attempts not yet taken by a worker) every
// 50 ms until stop is closed, and returns its mean.
func (c *cbCluster) sampleQueue(stop <-chan struct{}) float64 {
	var sum, n float64
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			if n == 0 {
				return 0
			}
			return sum / n
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if cons, err := c.js.Consumer(ctx, "fuscia_work_default", "workers"); err == nil {
			if info, err := cons.Info(ctx); err == nil {
				sum += float64(info.NumPending)
				n++
			}
		}
		cancel()
	}
}

// runMany runs n runs of the workflow with at most clients at once, each started with
// ?wait=true, and checks each one's execution.
func (c *cbCluster) runMany(tb testing.TB, n, clients int, check func(journal.Execution) error) {
	tb.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range min(clients, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				r := c.startRun(context.Background(), true)
				err := r.err
				if err == nil {
					err = check(r.ex)
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		tb.Fatalf("%v\n%s\n%s", firstErr, c.queues(), c.stacks())
	}
}

// stacks ends the processes with SIGQUIT, so that each prints its goroutines' stacks (where
// a stalled run waits), and describes them with that output.
func (c *cbCluster) stacks() string {
	for _, p := range append(slices.Clone(c.running), c.serve) {
		p.stopOnce.Do(func() {
			if p.done() {
				return
			}
			quitOrKill(p.cmd.Process, p.exited, 10*time.Second)
		})
	}
	return c.String()
}

// queues describes the work and results streams' consumers, for a failure's message.
func (c *cbCluster) queues() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var b strings.Builder
	for _, sc := range [][2]string{{"fuscia_work_default", "workers"}, {"fuscia_results", "coordinator"}} {
		cons, err := c.js.Consumer(ctx, sc[0], sc[1])
		if err != nil {
			fmt.Fprintf(&b, "%s/%s: %v\n", sc[0], sc[1], err)
			continue
		}
		info, err := cons.Info(ctx)
		if err != nil {
			fmt.Fprintf(&b, "%s/%s: %v\n", sc[0], sc[1], err)
			continue
		}
		fmt.Fprintf(&b, "%s/%s: pending %d, ack pending %d, redelivered %d, waiting pulls %d, delivered %d, ack floor %d\n",
			sc[0], sc[1], info.NumPending, info.NumAckPending, info.NumRedelivered, info.NumWaiting, info.Delivered.Stream, info.AckFloor.Stream)
	}
	return b.String()
}

type cbRunResult struct {
	ex  journal.Execution
	err error
}

// startRun starts a run through serve's socket; with wait, it answers once the run ended.
func (c *cbCluster) startRun(ctx context.Context, wait bool) cbRunResult {
	url := "http://fuscia/v1/workflows/" + c.workflow + "/runs"
	if wait {
		url += "?wait=true"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{}`))
	if err != nil {
		return cbRunResult{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.api.Do(req)
	if err != nil {
		return cbRunResult{err: fmt.Errorf("POST %s: %w", url, err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return cbRunResult{err: fmt.Errorf("POST %s: %w", url, err)}
	}
	want := http.StatusAccepted
	if wait {
		want = http.StatusOK
	}
	if resp.StatusCode != want {
		return cbRunResult{err: fmt.Errorf("POST %s: %d %s, want %d", url, resp.StatusCode, body, want)}
	}
	var r cbRunResult
	if err := json.Unmarshal(body, &r.ex); err != nil {
		r.err = fmt.Errorf("POST %s: %w: %s", url, err, body)
	}
	return r
}

// cbProc is one fuscia process of a benchmark; it is always stopped and reaped.
type cbProc struct {
	cmd            *exec.Cmd
	stdout, stderr *syncbuf.Buffer
	exited         chan struct{}
	stopOnce       sync.Once
}

// startCBProc starts fuscia with args; owner stops it when it ends at the latest.
func startCBProc(owner testing.TB, home string, args ...string) (*cbProc, error) {
	cmd := exec.Command(fusciaBin, args...)
	cmd.Env = append(baseEnv(), "FUSCIA_HOME="+home)
	p := &cbProc{cmd: cmd, stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start fuscia %s: %w", args[0], err)
	}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	owner.Cleanup(p.stop)
	return p, nil
}

func (p *cbProc) String() string {
	return fmt.Sprintf("fuscia %s\n--- stdout:\n%s\n--- stderr:\n%s", strings.Join(p.cmd.Args[1:], " "), p.stdout, p.stderr)
}

func (p *cbProc) done() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// waitOutput waits until stdout matches re and returns the match's groups.
func (p *cbProc) waitOutput(re *regexp.Regexp, limit time.Duration) ([]string, error) {
	deadline := time.Now().Add(limit)
	for {
		if m := re.FindStringSubmatch(p.stdout.String()); m != nil {
			return m, nil
		}
		if p.done() {
			return nil, errors.New("the process exited before printing " + re.String())
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no %s within %s", re, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop sends SIGTERM and reaps the process, SIGKILLing it after 20 s.
func (p *cbProc) stop() {
	p.stopOnce.Do(func() {
		if p.done() {
			return
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
}

// kill SIGKILLs the process and reaps it.
func (p *cbProc) kill() {
	p.stopOnce.Do(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
	})
}

// cbCPU is the user and system CPU time a process used so far (/proc/PID/stat); 0 when it
// cannot be read.
func cbCPU(pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ is 100 on Linux
}

func cbCPUOf(pids []int) time.Duration {
	var d time.Duration
	for _, p := range pids {
		d += cbCPU(p)
	}
	return d
}

func cbSelfCPU() time.Duration { return cbCPU(os.Getpid()) }
