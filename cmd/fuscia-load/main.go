// Command fuscia-load drives `fuscia serve` with webhook load and measures it (docs/performance.md).
//
// It makes a temporary home and workflow directory, starts `fuscia serve` on free ports, runs
// one mode, then stops serve with SIGTERM (SIGKILL after 40 s) and reaps it:
//
//	bench  closed-loop workers POST the webhook for -duration: accepted runs/s, request → 202
//	       latency, webhook-to-finished throughput, peak RSS.
//	soak   an open-loop fixed -rate for -duration: webhook-to-finished latency, RSS over time
//	       (flat or growing), and a durability check: no accepted run lost or duplicated.
//	idle   -workflows workflows loaded and nothing to do: RSS after 5 s and after 15 s.
//	slowloris
//	       connection floods, slow headers then big headers, for -duration each: serve's
//	       memory and whether it still answers (flood.go).
//
// Every figure is printed as it is measured and, at the end, in one line `RESULT {json}`.
// Typical use (the Makefile's bench and soak targets):
//
//	fuscia-load -mode bench -duration 20s
//	fuscia-load -mode soak -duration 10m -rate 100
//	fuscia-load -mode idle -workflows 10
//	fuscia-load -mode slowloris -duration 30s
package main

import (
	"bufio"
	"bytes"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	exitOK      = 0
	exitFailed  = 1 // a measurement ran and found lost or duplicated runs
	exitError   = 2 // the tool could not measure: bad flags, serve missing or failing
	mib         = 1 << 20
	killAfter   = 40 * time.Second
	startupWait = 60 * time.Second
)

type config struct {
	fuscia       string
	mode         string
	duration     time.Duration
	rate         float64
	concurrency  int
	workflows    int
	keep         bool
	tmpdir       string
	drainTimeout time.Duration
	fetchers     int
	client       string
	flood        floodConfig
}

func main() {
	os.Exit(run())
}

func run() int {
	var cfg config
	flag.StringVar(&cfg.fuscia, "fuscia", "bin/fuscia", "the fuscia binary (`PATH`)")
	flag.StringVar(&cfg.mode, "mode", "bench", "`bench`, soak, idle or slowloris")
	flag.DurationVar(&cfg.duration, "duration", 0, "how long to send load (`D`; default 20s for bench, 10m for soak)")
	flag.Float64Var(&cfg.rate, "rate", 100, "soak: requests per second, on a fixed open-loop schedule (`N`)")
	flag.IntVar(&cfg.concurrency, "concurrency", 64, "bench: closed-loop workers (`N`)")
	flag.IntVar(&cfg.workflows, "workflows", 10, "idle: how many workflows to load (`N`)")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the temporary home, workflows and serve's log for inspection")
	flag.StringVar(&cfg.tmpdir, "tmpdir", "", "make the temporary home under `DIR` (default: the system's temp dir); its file system matters for strict durability")
	flag.DurationVar(&cfg.drainTimeout, "drain-timeout", 5*time.Minute, "bench, soak: how long to wait for the accepted runs to finish (`D`)")
	flag.StringVar(&cfg.client, "client", "go", "bench: the load generator, `go` (built in) or wrk (Debian's wrk, a C client that takes less CPU)")
	flag.IntVar(&cfg.fetchers, "fetchers", 16, "soak: parallel GET /v1/executions/{id} when checking the runs (`N`)")
	registerFloodFlags(&cfg.flood)
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: fuscia-load [-fuscia PATH] -mode bench|soak|idle|slowloris [-duration D] [-rate N] [-concurrency N] [-workflows N] [-keep]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		return usageError("unexpected arguments: %s", strings.Join(flag.Args(), " "))
	}
	switch cfg.mode {
	case "bench":
		if cfg.duration == 0 {
			cfg.duration = 20 * time.Second
		}
	case "soak":
		if cfg.duration == 0 {
			cfg.duration = 10 * time.Minute
		}
	case "idle":
	case "slowloris":
		if cfg.duration == 0 {
			cfg.duration = 30 * time.Second
		}
	default:
		return usageError("-mode must be bench, soak, idle or slowloris, not %q", cfg.mode)
	}
	if cfg.client != "go" && cfg.client != "wrk" {
		return usageError("-client must be go or wrk, not %q", cfg.client)
	}
	if cfg.duration < 0 || cfg.rate <= 0 || cfg.concurrency < 1 || cfg.workflows < 1 || cfg.fetchers < 1 || cfg.drainTimeout <= 0 {
		return usageError("-duration, -drain-timeout, -rate, -concurrency, -workflows and -fetchers must be positive")
	}
	bin, err := checkBinary(cfg.fuscia)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fuscia-load: %v\n", err)
		return exitError
	}
	cfg.fuscia = bin

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	dir, err := os.MkdirTemp(cfg.tmpdir, "fuscia-load-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "fuscia-load: cannot make a temporary directory: %v\n", err)
		return exitError
	}
	defer func() {
		if !cfg.keep {
			_ = os.RemoveAll(dir)
		}
	}()
	home, wfDir := filepath.Join(dir, "home"), filepath.Join(dir, "workflows")
	if err := os.MkdirAll(wfDir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "fuscia-load: %v\n", err)
		return exitError
	}
	if cfg.mode == "idle" {
		err = writeIdleWorkflows(wfDir, cfg.workflows)
	} else {
		err = os.WriteFile(filepath.Join(wfDir, "hook.fsc.hcl"), []byte(hookWorkflow), 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fuscia-load: cannot write the workflows: %v\n", err)
		return exitError
	}

	res := map[string]any{"mode": cfg.mode}
	describeMachine(res, bin, home)
	fmt.Printf("fuscia-load %s: %d CPUs (GOMAXPROCS %d), fuscia-load built with %s, %s built with %s\n",
		cfg.mode, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), bin, res["fuscia_go_version"])
	fmt.Printf("home %s on %s (%s)\n", home, res["home_fs"], res["home_mount"])

	sp, err := startServe(ctx, bin, wfDir, home, filepath.Join(dir, "serve.log"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "fuscia-load: %v\n", err)
		return exitError
	}
	code := exitOK
	defer func() {
		// Always stop and reap serve, even on a panic of the mode.
		d, werr := sp.stop()
		fmt.Printf("serve stopped in %.2f s (%s)\n", d.Seconds(), exitText(werr))
		res["serve_stop_seconds"] = round(d.Seconds(), 3)
		res["serve_exit"] = exitText(werr)
		res["serve_killed"] = sp.killed
		if cfg.keep {
			res["kept"] = dir
			fmt.Printf("kept: %s (home %s, workflows %s, serve's output %s)\n", dir,
				filepath.Join(dir, "home"), filepath.Join(dir, "workflows"), filepath.Join(dir, "serve.log"))
		}
		if werr != nil {
			fmt.Fprintf(os.Stderr, "fuscia-load: serve exited with an error; the end of its output:\n%s", sp.tail.String())
		}
		printResult(res)
	}()
	fmt.Printf("serve pid %d: API %s, metrics %s; %d workflow(s) loaded\n", sp.pid(), sp.api, sp.metrics, sp.loaded)
	res["serve_workflows"] = sp.loaded
	if want := map[bool]int{true: cfg.workflows, false: 1}[cfg.mode == "idle"]; sp.loaded != want {
		res["error"] = fmt.Sprintf("serve loaded %d of the %d workflows", sp.loaded, want)
		fmt.Fprintf(os.Stderr, "fuscia-load: serve loaded %d of the %d workflows; the end of its output:\n%s", sp.loaded, want, sp.tail.String())
		code = exitError
		res["exit_code"] = code
		return code
	}
	if h, err := health(ctx, sp); err == nil {
		res["fuscia_version"] = h.Version
	}

	switch cfg.mode {
	case "bench":
		code, err = runBench(ctx, cfg, sp, res)
	case "soak":
		code, err = runSoak(ctx, cfg, sp, res)
	case "idle":
		code, err = runIdle(ctx, cfg, sp, res)
	case "slowloris":
		code, err = runSlowloris(ctx, cfg, sp, res)
	}
	if err != nil {
		res["error"] = err.Error()
		fmt.Fprintf(os.Stderr, "fuscia-load: %v\n", err)
		if !sp.running() {
			fmt.Fprintf(os.Stderr, "serve is no longer running; the end of its output:\n%s", sp.tail.String())
		}
		if code == exitOK {
			code = exitError
		}
	}
	res["exit_code"] = code
	return code
}

func usageError(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "fuscia-load: "+format+"\n", args...)
	flag.Usage()
	return exitError
}

// checkBinary resolves the fuscia binary and says how to get one when it is missing.
func checkBinary(p string) (string, error) {
	if !strings.ContainsRune(p, os.PathSeparator) {
		if lp, err := exec.LookPath(p); err == nil {
			p = lp
		}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("the fuscia binary %s does not exist: build it with `make build` (or `go build -o bin/fuscia ./cmd/fuscia`), or give its path with -fuscia PATH", p)
	case err != nil:
		return "", fmt.Errorf("the fuscia binary %s: %v", p, err)
	case fi.IsDir():
		return "", fmt.Errorf("the fuscia binary %s is a directory; give the binary with -fuscia PATH", p)
	case fi.Mode()&0o111 == 0:
		return "", fmt.Errorf("the fuscia binary %s is not executable", p)
	}
	return abs, nil
}

// ---- workflows ----

const hookWorkflow = `# Written by fuscia-load: one webhook, one transform (strict durability, the default).
workflow "hook" {}

trigger "webhook" "in" {
  path = "/hooks/in"
}

task "shape" {
  uses   = builtin.transform
  inputs = { id = trigger.payload.body.id }
}

output "id" {
  value = task.shape.output.id
}
`

// writeIdleWorkflows writes n workflows, in turn a webhook + transform, a nightly schedule +
// transform, and a manual trigger + wait.
func writeIdleWorkflows(dir string, n int) error {
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("idle_%03d", i)
		var body string
		switch i % 3 {
		case 1:
			body = fmt.Sprintf(`workflow %q {}

trigger "webhook" "in" {
  path = "/hooks/%s"
}

task "shape" {
  uses   = builtin.transform
  inputs = { id = trigger.payload.body.id }
}

output "id" {
  value = task.shape.output.id
}
`, name, name)
		case 2:
			body = fmt.Sprintf(`workflow %q {}

trigger "schedule" "nightly" {
  cron = "0 3 * * *"
}

task "shape" {
  uses   = builtin.transform
  inputs = { fired_by = trigger.type }
}

output "fired_by" {
  value = task.shape.output.fired_by
}
`, name)
		default:
			body = fmt.Sprintf(`workflow %q {}

trigger "manual" "by_hand" {}

wait "pause" {
  duration = "1h"
}

task "shape" {
  uses   = builtin.transform
  after  = [wait.pause]
  inputs = { done = true }
}

output "done" {
  value = task.shape.output.done
}
`, name)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".fsc.hcl"), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ---- serve ----

type serveProc struct {
	cmd     *exec.Cmd
	api     string // http://ADDR
	metrics string // http://ADDR/metrics
	tail    *tailBuffer
	exited  chan struct{}
	waitErr error
	killed  bool
	client  *http.Client
	serving bool   // serve printed "Serving N workflow(s)…"
	loaded  int    // that N
	token   string // a read token for the API (token.go)
}

func (s *serveProc) pid() int { return s.cmd.Process.Pid }

func (s *serveProc) running() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// startServe starts `fuscia serve` and returns once its addresses are known and GET
// /v1/health answers 200. Its stdout and stderr go to logPath and a tail kept for errors.
func startServe(ctx context.Context, bin, wfDir, home, logPath string) (*serveProc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	s := &serveProc{tail: &tailBuffer{max: 16 << 10}, exited: make(chan struct{})}
	var mu sync.Mutex
	ready := make(chan struct{})
	var readyOnce sync.Once
	onLine := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		if rest, ok := strings.CutPrefix(line, "API and webhooks on "); ok {
			s.api = strings.TrimSpace(rest)
		}
		if rest, ok := strings.CutPrefix(line, "Metrics on "); ok {
			s.metrics = strings.TrimSpace(rest)
		}
		// The webhooks answer 404 until the workflows are loaded: wait for the line after that.
		if rest, ok := strings.CutPrefix(line, "Serving "); ok {
			n, _, _ := strings.Cut(rest, " ")
			s.loaded, _ = strconv.Atoi(n)
			s.serving = true
		}
		if s.api != "" && s.metrics != "" && s.serving {
			readyOnce.Do(func() { close(ready) })
		}
	}
	logw := &lockedWriter{w: logf}
	s.cmd = exec.Command(bin, "serve", wfDir, "-home", home, "-listen", "127.0.0.1:0", "-metrics-listen", "127.0.0.1:0")
	s.cmd.Stdout = &lineWriter{w: io.MultiWriter(logw, s.tail), onLine: onLine}
	s.cmd.Stderr = io.MultiWriter(logw, s.tail)
	if err := s.cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("cannot start %s serve: %v", bin, err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		_ = logf.Close()
		close(s.exited)
	}()
	fail := func(msg string) (*serveProc, error) {
		if s.running() {
			_, _ = s.stop()
		}
		return nil, fmt.Errorf("%s (%s); the end of serve's output:\n%s", msg, exitText(s.waitErr), s.tail.String())
	}
	timer := time.NewTimer(startupWait)
	defer timer.Stop()
	select {
	case <-ready:
	case <-s.exited:
		return fail("fuscia serve exited before it listened")
	case <-timer.C:
		return fail(fmt.Sprintf("fuscia serve printed no API and metrics addresses and no \"Serving N workflow(s)\" line within %s", startupWait))
	case <-ctx.Done():
		return fail("interrupted while serve was starting")
	}
	mu.Lock()
	s.api = strings.TrimSuffix(s.api, "/")
	mu.Unlock()
	if s.token, err = createToken(ctx, bin, home); err != nil {
		return fail(err.Error())
	}
	s.client = withToken(newClient(8), s.token)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.api+"/v1/health", nil)
		if resp, err := s.client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case <-s.exited:
			return fail("fuscia serve exited before GET /v1/health answered")
		case <-timer.C:
			return fail(fmt.Sprintf("GET /v1/health did not answer 200 within %s", startupWait))
		case <-ctx.Done():
			return fail("interrupted while serve was starting")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM, waits for serve (SIGKILL after 40 s) and reaps it.
func (s *serveProc) stop() (time.Duration, error) {
	if !s.running() {
		return 0, s.waitErr
	}
	t0 := time.Now()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(killAfter)
	defer timer.Stop()
	select {
	case <-s.exited:
	case <-timer.C:
		fmt.Printf("serve did not stop within %s of SIGTERM: SIGKILL\n", killAfter)
		s.killed = true
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	return time.Since(t0), s.waitErr
}

func exitText(err error) string {
	if err == nil {
		return "exit 0"
	}
	return err.Error()
}

type healthInfo struct {
	Status     string `json:"status"`
	Version    string `json:"version"`
	Workflows  int    `json:"workflows"`
	ActiveRuns int    `json:"active_runs"`
	ParkedRuns int    `json:"parked_runs"`
}

func health(ctx context.Context, s *serveProc) (healthInfo, error) {
	var h healthInfo
	err := getJSON(ctx, s.client, s.api+"/v1/health", &h)
	return h, err
}

// lineWriter passes every byte on to w and every complete line to onLine.
type lineWriter struct {
	w      io.Writer
	onLine func(string)
	buf    []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	_, _ = l.w.Write(p)
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.onLine(strings.TrimRight(string(l.buf[:i]), "\r"))
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > 64<<10 {
		l.buf = l.buf[:0] // a line that long is not an address line
	}
	return len(p), nil
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

// String is the last 40 lines.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimRight(string(t.b), "\n"), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	out := ""
	for _, l := range lines {
		out += "  | " + l + "\n"
	}
	return out
}

// ---- HTTP ----

func newClient(conns int) *http.Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns * 2,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}

type httpStatusError struct {
	code int
	body string
}

func (e *httpStatusError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.code, strings.TrimSpace(e.body))
}

func getJSON(ctx context.Context, c *http.Client, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return &httpStatusError{code: resp.StatusCode, body: string(b)}
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// postHook POSTs {"id": id} to the webhook and returns the status and execution id.
func postHook(ctx context.Context, c *http.Client, url string, id int64) (int, string, error) {
	body := strconv.AppendInt([]byte(`{"id":`), id, 10)
	body = append(body, '}')
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return resp.StatusCode, "", err
	}
	if resp.StatusCode != http.StatusAccepted {
		return resp.StatusCode, "", nil
	}
	var r struct {
		ID string `json:"execution_id"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.ID == "" {
		return resp.StatusCode, "", fmt.Errorf("a 202 without an execution_id: %q", b)
	}
	return resp.StatusCode, r.ID, nil
}

type runSummary struct {
	ID         string     `json:"execution_id"`
	Workflow   string     `json:"workflow"`
	Status     string     `json:"status"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
}

func listRuns(ctx context.Context, c *http.Client, api string, q string) ([]runSummary, error) {
	var r struct {
		Executions []runSummary `json:"executions"`
	}
	err := getJSON(ctx, c, api+"/v1/executions?"+q, &r)
	return r.Executions, err
}

// waitDrained waits until no run of workflow hook is running, waiting or interrupted and at
// least want runs have finished; it returns every run of hook and when the drain was seen.
func waitDrained(ctx context.Context, c *http.Client, sp *serveProc, want int, timeout time.Duration) ([]runSummary, time.Time, error) {
	deadline := time.Now().Add(timeout)
	var last string
	for {
		if !sp.running() {
			return nil, time.Time{}, errors.New("serve exited while the runs were finishing")
		}
		busy := false
		for _, st := range []string{"running", "waiting", "interrupted"} {
			runs, err := listRuns(ctx, c, sp.api, "workflow=hook&status="+st+"&limit=1")
			if err != nil {
				last = err.Error()
				busy = true
				break
			}
			if len(runs) > 0 {
				last = fmt.Sprintf("a run is still %s", st)
				busy = true
				break
			}
		}
		if !busy {
			seen := time.Now()
			runs, err := listRuns(ctx, c, sp.api, "workflow=hook")
			if err == nil {
				finished := 0
				for _, r := range runs {
					if r.FinishedAt != nil {
						finished++
					}
				}
				if finished >= want {
					return runs, seen, nil
				}
				last = fmt.Sprintf("%d of %d runs finished", finished, want)
			} else {
				last = err.Error()
			}
		}
		if time.Now().After(deadline) {
			runs, _ := listRuns(ctx, c, sp.api, "workflow=hook")
			return runs, time.Time{}, fmt.Errorf("the accepted runs did not all finish within -drain-timeout %s (%s)", timeout, last)
		}
		select {
		case <-ctx.Done():
			return nil, time.Time{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ---- /proc and metrics ----

type memSample struct {
	At      time.Duration
	VmRSS   int64 // bytes
	RssAnon int64
	RssFile int64
	VmHWM   int64
	Threads int64
}

// readStatus reads serve's memory figures from /proc/PID/status (Linux).
func readStatus(pid int) (memSample, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memSample{}, err
	}
	var m memSample
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		switch k {
		case "VmRSS":
			m.VmRSS = n
		case "RssAnon":
			m.RssAnon = n
		case "RssFile":
			m.RssFile = n
		case "VmHWM":
			m.VmHWM = n
		case "Threads":
			m.Threads = n
		}
	}
	return m, nil
}

// sampler reads /proc/PID/status every interval until stopped; it keeps the samples.
type sampler struct {
	mu      sync.Mutex
	samples []memSample
	errs    int
	stop    chan struct{}
	done    chan struct{}
}

func startSampler(pid int, every time.Duration, t0 time.Time, each func(memSample)) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	take := func() {
		m, err := readStatus(pid)
		s.mu.Lock()
		if err != nil {
			s.errs++
			s.mu.Unlock()
			return
		}
		m.At = time.Since(t0)
		s.samples = append(s.samples, m)
		s.mu.Unlock()
		if each != nil {
			each(m)
		}
	}
	go func() {
		defer close(s.done)
		take()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
				take()
			}
		}
	}()
	return s
}

func (s *sampler) finish() []memSample {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]memSample(nil), s.samples...)
}

func maxMem(ss []memSample) memSample {
	var m memSample
	for _, s := range ss {
		m.VmRSS = max(m.VmRSS, s.VmRSS)
		m.RssAnon = max(m.RssAnon, s.RssAnon)
		m.RssFile = max(m.RssFile, s.RssFile)
		m.VmHWM = max(m.VmHWM, s.VmHWM)
		m.Threads = max(m.Threads, s.Threads)
	}
	return m
}

// scrape reads serve's Prometheus text: the sum of every series of each name asked for,
// and fuscia_runs_total of workflow hook by status.
func scrape(ctx context.Context, c *http.Client, url string) (map[string]float64, map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	vals := map[string]float64{}
	hook := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			continue
		}
		series := line[:sp]
		name, labels, _ := strings.Cut(series, "{")
		vals[name] += v
		if name == "fuscia_runs_total" && strings.Contains(labels, `workflow="hook"`) {
			hook[labelValue(labels, "outcome")] += v
		}
	}
	return vals, hook, sc.Err()
}

func labelValue(labels, name string) string {
	i := strings.Index(labels, name+`="`)
	if i < 0 {
		return ""
	}
	rest := labels[i+len(name)+2:]
	if j := strings.IndexByte(rest, '"'); j >= 0 {
		return rest[:j]
	}
	return rest
}

func sumValues(m map[string]float64) float64 {
	var t float64
	for _, v := range m {
		t += v
	}
	return t
}

// ---- bench ----

// loadResult is what one bench load phase measured, whichever client sent it.
type loadResult struct {
	sent, accepted, non202, errs int
	codes                        map[string]int
	firstErr                     string
	loadSecs                     float64
	lastResp                     time.Time
	lat                          pcts
}

func runBench(ctx context.Context, cfg config, sp *serveProc, res map[string]any) (int, error) {
	url := sp.api + "/hooks/in"
	fmt.Printf("bench: %d closed-loop %s clients POST %s for %s (durability strict, the default)\n", cfg.concurrency, cfg.client, url, cfg.duration)
	t0 := time.Now()
	mem := startSampler(sp.pid(), 500*time.Millisecond, t0, nil)
	var lr loadResult
	var err error
	if cfg.client == "wrk" {
		lr, err = wrkLoad(ctx, cfg, url, t0)
	} else {
		lr, err = goLoad(ctx, cfg, url, t0)
	}
	if err != nil {
		mem.finish()
		return exitError, err
	}
	accepted, loadSecs, p := lr.accepted, lr.loadSecs, lr.lat
	fmt.Printf("requests sent: %d in %.2f s; 202: %d  non-202: %d %v  transport errors: %d\n", lr.sent, loadSecs, accepted, lr.non202, lr.codes, lr.errs)
	if lr.firstErr != "" {
		fmt.Printf("first error: %s\n", lr.firstErr)
	}
	fmt.Printf("accepted runs/s: %.1f\n", float64(accepted)/loadSecs)
	fmt.Printf("request → 202 latency: p50 %s  p90 %s  p99 %s  max %s\n", ms(p.p50), ms(p.p90), ms(p.p99), ms(p.max))

	fmt.Printf("waiting for the %d accepted runs to finish…\n", accepted)
	runs, drained, derr := waitDrained(ctx, sp.client, sp, accepted, cfg.drainTimeout)
	ss := mem.finish()
	statuses := map[string]int{}
	var lastFinished time.Time
	for _, r := range runs {
		statuses[r.Status]++
		if r.FinishedAt != nil && r.FinishedAt.After(lastFinished) {
			lastFinished = *r.FinishedAt
		}
	}
	b := map[string]any{
		"duration_s": cfg.duration.Seconds(), "concurrency": cfg.concurrency, "client": cfg.client, "load_seconds": round(loadSecs, 3),
		"requests": lr.sent, "accepted": accepted, "non_202": lr.non202, "non_202_codes": lr.codes, "transport_errors": lr.errs,
		"accepted_per_s": round(float64(accepted)/loadSecs, 1),
		"latency_202_ms": p.msMap(), "runs_listed": len(runs), "run_statuses": statuses,
	}
	if lr.firstErr != "" {
		b["first_error"] = lr.firstErr
	}
	if derr == nil {
		fin := lastFinished.Sub(t0).Seconds()
		b["webhook_to_finished_seconds"] = round(fin, 3)
		b["webhook_to_finished_per_s"] = round(float64(accepted)/fin, 1)
		b["drain_seen_after_load_seconds"] = round(drained.Sub(lr.lastResp).Seconds(), 3)
		fmt.Printf("runs listed: %d %v; last run finished %.2f s after the first request (drain seen %.2f s after the last 202)\n",
			len(runs), statuses, fin, drained.Sub(lr.lastResp).Seconds())
		fmt.Printf("webhook-to-finished runs/s: %.1f\n", float64(accepted)/fin)
	}
	m := maxMem(ss)
	b["rss_samples"] = len(ss)
	b["max_vmrss_mib"] = round(float64(m.VmRSS)/mib, 1)
	b["max_rssanon_mib"] = round(float64(m.RssAnon)/mib, 1)
	b["max_rssfile_mib"] = round(float64(m.RssFile)/mib, 1)
	b["vmhwm_mib"] = round(float64(m.VmHWM)/mib, 1)
	b["max_threads"] = m.Threads
	fmt.Printf("serve RSS (every 500 ms, %d samples): max VmRSS %.1f MiB  max RssAnon %.1f MiB  max RssFile %.1f MiB  VmHWM %.1f MiB  threads %d\n",
		len(ss), float64(m.VmRSS)/mib, float64(m.RssAnon)/mib, float64(m.RssFile)/mib, float64(m.VmHWM)/mib, m.Threads)
	if vals, hook, err := scrape(ctx, sp.client, sp.metrics); err == nil {
		b["metric_runs_total_hook"] = hook
		b["metric_process_resident_memory_mib"] = round(vals["process_resident_memory_bytes"]/mib, 1)
		fmt.Printf("metrics: fuscia_runs_total{workflow=\"hook\"} %v (sum %.0f)  process_resident_memory_bytes %.1f MiB\n",
			hook, sumValues(hook), vals["process_resident_memory_bytes"]/mib)
	}
	res["bench"] = b
	if derr != nil {
		return exitError, derr
	}
	return exitOK, nil
}

// goLoad sends the bench load from cfg.concurrency closed-loop Go clients, each request a new
// {"id": n}.
func goLoad(ctx context.Context, cfg config, url string, t0 time.Time) (loadResult, error) {
	client := newClient(cfg.concurrency)
	type worker struct {
		lat      []time.Duration
		accepted int
		codes    map[int]int
		errs     int
		firstErr string
		lastResp time.Time
	}
	workers := make([]*worker, cfg.concurrency)
	var seq atomic.Int64
	deadline := t0.Add(cfg.duration)
	lctx, cancel := context.WithDeadline(ctx, deadline.Add(60*time.Second))
	defer cancel()
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{codes: map[int]int{}, lat: make([]time.Duration, 0, 4096)}
		workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) && lctx.Err() == nil {
				id := seq.Add(1)
				s := time.Now()
				code, _, err := postHook(lctx, client, url, id)
				w.lastResp = time.Now()
				switch {
				case err != nil && code == 0:
					w.errs++
					if w.firstErr == "" {
						w.firstErr = err.Error()
					}
				case code == http.StatusAccepted && err == nil:
					w.accepted++
					w.lat = append(w.lat, w.lastResp.Sub(s))
				default:
					w.codes[code]++
					if err != nil && w.firstErr == "" {
						w.firstErr = err.Error()
					}
				}
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return loadResult{}, errors.New("interrupted")
	}
	var lat []time.Duration
	accepted, errs := 0, 0
	codes := map[string]int{}
	firstErr := ""
	lastResp := t0
	for _, w := range workers {
		lat = append(lat, w.lat...)
		accepted += w.accepted
		errs += w.errs
		for c, n := range w.codes {
			codes[strconv.Itoa(c)] += n
		}
		if firstErr == "" {
			firstErr = w.firstErr
		}
		if w.lastResp.After(lastResp) {
			lastResp = w.lastResp
		}
	}
	sent := int(seq.Load())
	loadSecs := lastResp.Sub(t0).Seconds()
	non202 := 0
	for _, n := range codes {
		non202 += n
	}
	return loadResult{sent: sent, accepted: accepted, non202: non202, errs: errs, codes: codes, firstErr: firstErr,
		loadSecs: loadSecs, lastResp: lastResp, lat: percentiles(lat)}, nil
}

// wrkScript makes wrk POST the bench's webhook body. wrk sends the same body every time (the
// Go client numbers them); the workflow does not care.
const wrkScript = `wrk.method = "POST"
wrk.body   = '{"id":1}'
wrk.headers["Content-Type"] = "application/json"
`

// wrkLoad sends the bench load with wrk (Debian's wrk package), a C client that leaves more
// of the two cores to serve than the Go client, and reads its report.
func wrkLoad(ctx context.Context, cfg config, url string, t0 time.Time) (loadResult, error) {
	bin, err := exec.LookPath("wrk")
	if err != nil {
		return loadResult{}, errors.New("-client wrk: wrk is not installed (apt-get install wrk)")
	}
	script := filepath.Join(os.TempDir(), fmt.Sprintf("fuscia-load-%d.lua", os.Getpid()))
	if err := os.WriteFile(script, []byte(wrkScript), 0o644); err != nil {
		return loadResult{}, err
	}
	defer os.Remove(script)
	secs := max(int(cfg.duration.Round(time.Second).Seconds()), 1)
	cmd := exec.CommandContext(ctx, bin, "-t1", "-c"+strconv.Itoa(cfg.concurrency), "-d"+strconv.Itoa(secs)+"s",
		"--timeout", "10s", "--latency", "-s", script, url)
	out, err := cmd.Output()
	lastResp := time.Now()
	if err != nil {
		return loadResult{}, fmt.Errorf("wrk: %w\n%s", err, out)
	}
	return parseWrk(string(out), lastResp.Sub(t0).Seconds(), lastResp)
}

var (
	wrkTotal   = regexp.MustCompile(`(\d+) requests in ([\d.]+)(ms|s|m)`)
	wrkNon2xx  = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	wrkErrors  = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
	wrkLatency = regexp.MustCompile(`(?m)^\s+(50|90|99)%\s+([\d.]+)(us|ms|s)\s*$`)
	wrkMax     = regexp.MustCompile(`(?m)^\s+Latency\s+\S+\s+\S+\s+([\d.]+)(us|ms|s)`)
)

// parseWrk reads wrk's --latency report. wrk counts every answer that is not 2xx or 3xx; the
// webhook answers 202 or an error, so the rest are accepted runs.
func parseWrk(out string, wall float64, lastResp time.Time) (loadResult, error) {
	m := wrkTotal.FindStringSubmatch(out)
	if m == nil {
		return loadResult{}, fmt.Errorf("wrk printed no request count:\n%s", out)
	}
	lr := loadResult{codes: map[string]int{}, lastResp: lastResp, loadSecs: wall}
	lr.sent, _ = strconv.Atoi(m[1])
	if d, err := time.ParseDuration(m[2] + m[3]); err == nil && d > 0 {
		lr.loadSecs = d.Seconds()
	}
	if m := wrkNon2xx.FindStringSubmatch(out); m != nil {
		lr.non202, _ = strconv.Atoi(m[1])
		lr.codes["not 2xx"] = lr.non202
	}
	if m := wrkErrors.FindStringSubmatch(out); m != nil {
		for _, v := range m[1:] {
			n, _ := strconv.Atoi(v)
			lr.errs += n
		}
		lr.firstErr = strings.TrimSpace(m[0])
	}
	lr.accepted = lr.sent - lr.non202
	// wrk's units (us, ms, s) are Go's.
	dur := func(v, unit string) time.Duration {
		d, _ := time.ParseDuration(v + unit)
		return d
	}
	for _, m := range wrkLatency.FindAllStringSubmatch(out, -1) {
		switch m[1] {
		case "50":
			lr.lat.p50 = dur(m[2], m[3])
		case "90":
			lr.lat.p90 = dur(m[2], m[3])
		case "99":
			lr.lat.p99 = dur(m[2], m[3])
		}
	}
	if m := wrkMax.FindStringSubmatch(out); m != nil {
		lr.lat.max = dur(m[1], m[2])
	}
	return lr, nil
}

// ---- soak ----

type soakRec struct {
	sent   time.Time
	lag    time.Duration // sent − scheduled
	lat    time.Duration // request → answer
	status int
	execID string
	err    string
}

type runView struct {
	Status     string     `json:"status"`
	FinishedAt *time.Time `json:"finished_at"`
	Trigger    struct {
		Payload struct {
			Body struct {
				ID *json.Number `json:"id"`
			} `json:"body"`
		} `json:"payload"`
	} `json:"trigger"`
}

func runSoak(ctx context.Context, cfg config, sp *serveProc, res map[string]any) (int, error) {
	url := sp.api + "/hooks/in"
	n := int(cfg.rate * cfg.duration.Seconds())
	if n < 1 {
		return exitError, errors.New("-rate × -duration is less than one request")
	}
	const inflightCap = 10000
	client := newClient(256)
	recs := make([]soakRec, n)
	fmt.Printf("soak: %d requests at %.1f/s (open loop, fixed schedule) to %s for %s (durability strict, the default)\n", n, cfg.rate, url, cfg.duration)
	fmt.Printf("%8s %10s %10s %10s %8s %9s %9s %10s\n", "t", "VmRSS", "RssAnon", "RssFile", "threads", "sent", "202s", "finished")

	var sentN, acceptedN atomic.Int64
	t0 := time.Now()
	mctx, mcancel := context.WithCancel(ctx)
	defer mcancel()
	mem := startSampler(sp.pid(), 10*time.Second, t0, func(m memSample) {
		fin := "?"
		if _, hook, err := scrape(mctx, sp.client, sp.metrics); err == nil {
			fin = strconv.FormatFloat(sumValues(hook), 'f', 0, 64)
		}
		fmt.Printf("%7.0fs %6.1f MiB %6.1f MiB %6.1f MiB %8d %9d %9d %10s\n", m.At.Seconds(), float64(m.VmRSS)/mib,
			float64(m.RssAnon)/mib, float64(m.RssFile)/mib, m.Threads, sentN.Load(), acceptedN.Load(), fin)
	})
	sem := make(chan struct{}, inflightCap)
	var wg sync.WaitGroup
	skipped := 0
	interval := float64(time.Second) / cfg.rate
	lctx, lcancel := context.WithCancel(ctx)
	defer lcancel()
	stopped := false
	for i := 0; i < n && !stopped; i++ {
		at := t0.Add(time.Duration(float64(i) * interval))
		if d := time.Until(at); d > 0 {
			select {
			case <-ctx.Done():
				stopped = true
				continue
			case <-time.After(d):
			}
		}
		select {
		case sem <- struct{}{}:
		default:
			skipped++
			recs[i].err = "not sent: in-flight cap reached"
			continue
		}
		wg.Add(1)
		go func(i int, at time.Time) {
			defer wg.Done()
			defer func() { <-sem }()
			r := &recs[i]
			r.sent = time.Now()
			r.lag = r.sent.Sub(at)
			sentN.Add(1)
			code, id, err := postHook(lctx, client, url, int64(i+1))
			r.lat = time.Since(r.sent)
			r.status, r.execID = code, id
			if err != nil {
				r.err = err.Error()
			}
			if code == http.StatusAccepted && id != "" {
				acceptedN.Add(1)
			}
		}(i, at)
	}
	wg.Wait()
	loadEnd := time.Now()
	if ctx.Err() != nil {
		mem.finish()
		return exitError, errors.New("interrupted")
	}

	// What the webhook answered.
	var sent, accepted, errs int
	var maxLag time.Duration
	codes := map[string]int{}
	idCount := map[string]int{}
	var lat202 []time.Duration
	firstErr := ""
	for i := range recs {
		r := &recs[i]
		if r.sent.IsZero() {
			continue
		}
		sent++
		maxLag = max(maxLag, r.lag)
		switch {
		case r.status == http.StatusAccepted && r.execID != "":
			accepted++
			idCount[r.execID]++
			lat202 = append(lat202, r.lat)
		case r.status == 0:
			errs++
		default:
			codes[strconv.Itoa(r.status)]++
		}
		if r.err != "" && firstErr == "" {
			firstErr = r.err
		}
	}
	non202 := 0
	for _, c := range codes {
		non202 += c
	}
	dupIDs := 0
	for _, c := range idCount {
		dupIDs += c - 1
	}
	p202 := percentiles(lat202)
	fmt.Printf("requests sent: %d of %d scheduled in %.1f s (not sent, in-flight cap %d: %d; max schedule lag %s)\n",
		sent, n, loadEnd.Sub(t0).Seconds(), inflightCap, skipped, ms(maxLag))
	fmt.Printf("202s: %d  non-202s: %d %v  transport errors: %d\n", accepted, non202, codes, errs)
	if firstErr != "" {
		fmt.Printf("first error: %s\n", firstErr)
	}
	fmt.Printf("distinct execution ids: %d  duplicated ids: %d\n", len(idCount), dupIDs)
	fmt.Printf("request → 202 latency: p50 %s  p90 %s  p99 %s  max %s\n", ms(p202.p50), ms(p202.p90), ms(p202.p99), ms(p202.max))

	fmt.Printf("waiting for the %d accepted runs to finish…\n", len(idCount))
	listed, _, derr := waitDrained(ctx, sp.client, sp, len(idCount), cfg.drainTimeout)
	if derr != nil {
		fmt.Printf("warning: %v\n", derr)
	}
	ss := mem.finish()
	if last, err := readStatus(sp.pid()); err == nil {
		last.At = time.Since(t0)
		ss = append(ss, last)
		fmt.Printf("%7.0fs %6.1f MiB %6.1f MiB %6.1f MiB %8d  (after the runs finished)\n", last.At.Seconds(),
			float64(last.VmRSS)/mib, float64(last.RssAnon)/mib, float64(last.RssFile)/mib, last.Threads)
	}

	// Every accepted run, and every listed one, by GET /v1/executions/{id}.
	want := map[string]bool{}
	for id := range idCount {
		want[id] = true
	}
	listedSet := map[string]bool{}
	for _, r := range listed {
		listedSet[r.ID] = true
		want[r.ID] = true
	}
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	fmt.Printf("fetching %d runs with %d parallel GET /v1/executions/{id}…\n", len(ids), cfg.fetchers)
	ft := time.Now()
	views, fetchErrs := fetchRuns(ctx, sp, ids, cfg.fetchers)
	fmt.Printf("fetched in %.1f s (%d errors)\n", time.Since(ft).Seconds(), len(fetchErrs))

	// Lost: accepted and not listed, or not succeeded. Duplicated: a payload id in two runs.
	notListed, notSucceeded, mismatched := 0, 0, 0
	notSucceededBy := map[string]int{}
	var w2f []time.Duration
	for i := range recs {
		r := &recs[i]
		if r.execID == "" || r.status != http.StatusAccepted {
			continue
		}
		if !listedSet[r.execID] {
			notListed++
			continue
		}
		v, ok := views[r.execID]
		if !ok {
			notSucceeded++
			notSucceededBy["unreadable"]++
			continue
		}
		if v.Status != "succeeded" {
			notSucceeded++
			notSucceededBy[v.Status]++
		}
		if v.Trigger.Payload.Body.ID == nil || v.Trigger.Payload.Body.ID.String() != strconv.Itoa(i+1) {
			mismatched++
		}
		if v.FinishedAt != nil {
			w2f = append(w2f, v.FinishedAt.Sub(r.sent))
		}
	}
	lost := notListed + notSucceeded
	payloadRuns := map[string]int{}
	for _, id := range ids {
		if !listedSet[id] {
			continue
		}
		v, ok := views[id]
		if !ok || v.Trigger.Payload.Body.ID == nil {
			payloadRuns["?"]++
			continue
		}
		payloadRuns[v.Trigger.Payload.Body.ID.String()]++
	}
	duplicated, orphans := 0, 0
	acceptedSeq := map[string]bool{}
	for i := range recs {
		if recs[i].status == http.StatusAccepted && recs[i].execID != "" {
			acceptedSeq[strconv.Itoa(i+1)] = true
		}
	}
	for pid, c := range payloadRuns {
		if pid != "?" && c > 1 {
			duplicated += c - 1
		}
		if !acceptedSeq[pid] {
			orphans += c
		}
	}
	pw := percentiles(w2f)
	fmt.Printf("runs listed by GET /v1/executions?workflow=hook: %d\n", len(listed))
	fmt.Printf("webhook-to-finished latency (finished_at − send time, %d runs): p50 %s  p90 %s  p99 %s  max %s\n",
		len(w2f), ms(pw.p50), ms(pw.p90), ms(pw.p99), ms(pw.max))
	fmt.Printf("accepted not listed: %d  accepted not succeeded: %d %v  payload id mismatches: %d  listed runs of no accepted request: %d\n",
		notListed, notSucceeded, notSucceededBy, mismatched, orphans)
	fmt.Printf("lost: %d  duplicated: %d\n", lost, duplicated)

	// RSS over time.
	trend := rssTrend(ss, cfg.duration)
	fmt.Printf("RSS  first minute avg: VmRSS %s  RssAnon %s\n", fmtMiB(trend.first.vm), fmtMiB(trend.first.anon))
	fmt.Printf("RSS second minute avg: VmRSS %s  RssAnon %s\n", fmtMiB(trend.second.vm), fmtMiB(trend.second.anon))
	fmt.Printf("RSS  last minute avg: VmRSS %s  RssAnon %s\n", fmtMiB(trend.last.vm), fmtMiB(trend.last.anon))
	fmt.Printf("RSS slope (least squares, samples after the first minute): VmRSS %s  RssAnon %s (all samples: %s / %s)\n",
		fmtSlope(trend.slopeVM), fmtSlope(trend.slopeAnon), fmtSlope(trend.slopeVMAll), fmtSlope(trend.slopeAnonAll))
	fmt.Printf("verdict: %s (VmRSS %s, RssAnon %s: last-minute avg within 10%% or 5 MiB of the second minute's)\n",
		trend.verdict, trend.verdictVM, trend.verdictAnon)

	table := make([]map[string]any, 0, len(ss))
	for _, m := range ss {
		table = append(table, map[string]any{"t_s": round(m.At.Seconds(), 1), "vmrss_mib": round(float64(m.VmRSS)/mib, 1),
			"rssanon_mib": round(float64(m.RssAnon)/mib, 1), "rssfile_mib": round(float64(m.RssFile)/mib, 1), "threads": m.Threads})
	}
	s := map[string]any{
		"duration_s": cfg.duration.Seconds(), "rate": cfg.rate, "scheduled": n, "sent": sent, "not_sent_cap": skipped,
		"max_schedule_lag_ms": msf(maxLag), "accepted_202": accepted, "non_202": non202, "non_202_codes": codes,
		"transport_errors": errs, "distinct_ids": len(idCount), "duplicated_ids": dupIDs, "runs_listed": len(listed),
		"accepted_not_listed": notListed, "accepted_not_succeeded": notSucceeded, "not_succeeded_by_status": notSucceededBy,
		"payload_mismatches": mismatched, "orphan_runs": orphans, "lost": lost, "duplicated": duplicated,
		"latency_202_ms": p202.msMap(), "webhook_to_finished_ms": pw.msMap(), "fetch_errors": len(fetchErrs),
		"rss_table": table, "rss_first_min_avg_mib": trend.first.m(), "rss_second_min_avg_mib": trend.second.m(),
		"rss_last_min_avg_mib": trend.last.m(), "rss_slope_mib_per_min": map[string]any{
			"vmrss": orNil(trend.slopeVM), "rssanon": orNil(trend.slopeAnon),
			"vmrss_all": orNil(trend.slopeVMAll), "rssanon_all": orNil(trend.slopeAnonAll)},
		"verdict": trend.verdict, "verdict_vmrss": trend.verdictVM, "verdict_rssanon": trend.verdictAnon,
		"max_vmrss_mib": round(float64(maxMem(ss).VmRSS)/mib, 1), "max_rssanon_mib": round(float64(maxMem(ss).RssAnon)/mib, 1),
	}
	if firstErr != "" {
		s["first_error"] = firstErr
	}
	if len(fetchErrs) > 0 {
		s["first_fetch_error"] = fetchErrs[0]
	}
	if vals, hook, err := scrape(ctx, sp.client, sp.metrics); err == nil {
		s["metric_runs_total_hook"] = hook
		s["metric_process_resident_memory_mib"] = round(vals["process_resident_memory_bytes"]/mib, 1)
		fmt.Printf("metrics: fuscia_runs_total{workflow=\"hook\"} %v  process_resident_memory_bytes %.1f MiB\n",
			hook, vals["process_resident_memory_bytes"]/mib)
	}
	if derr != nil {
		s["drain_error"] = derr.Error()
	}
	res["soak"] = s
	if lost > 0 || duplicated > 0 || dupIDs > 0 {
		fmt.Println("FAIL: accepted runs were lost or duplicated")
		return exitFailed, nil
	}
	return exitOK, nil
}

// fetchRuns GETs every run with a bounded pool.
func fetchRuns(ctx context.Context, sp *serveProc, ids []string, workers int) (map[string]runView, []string) {
	client := withToken(newClient(workers), sp.token)
	out := make(map[string]runView, len(ids))
	var errs []string
	var mu sync.Mutex
	next := make(chan string)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range next {
				var v runView
				var err error
				for attempt := 0; attempt < 3; attempt++ {
					if err = getJSON(ctx, client, sp.api+"/v1/executions/"+id, &v); err == nil {
						break
					}
					var he *httpStatusError
					if errors.As(err, &he) && he.code == http.StatusNotFound || ctx.Err() != nil {
						break
					}
				}
				mu.Lock()
				if err != nil {
					errs = append(errs, id+": "+err.Error())
				} else {
					out[id] = v
				}
				mu.Unlock()
			}
		}()
	}
	for _, id := range ids {
		next <- id
	}
	close(next)
	wg.Wait()
	return out, errs
}

type memAvg struct{ vm, anon float64 } // MiB; NaN: no sample

func (a memAvg) m() map[string]any {
	if math.IsNaN(a.vm) {
		return nil
	}
	return map[string]any{"vmrss": round(a.vm, 1), "rssanon": round(a.anon, 1)}
}

type trendResult struct {
	first, second, last                          memAvg
	slopeVM, slopeAnon, slopeVMAll, slopeAnonAll float64
	verdict, verdictVM, verdictAnon              string
}

func rssTrend(ss []memSample, d time.Duration) trendResult {
	avg := func(from, to time.Duration) memAvg {
		var vm, anon float64
		n := 0
		for _, s := range ss {
			if s.At >= from && s.At < to {
				vm += float64(s.VmRSS) / mib
				anon += float64(s.RssAnon) / mib
				n++
			}
		}
		if n == 0 {
			return memAvg{math.NaN(), math.NaN()}
		}
		return memAvg{vm / float64(n), anon / float64(n)}
	}
	t := trendResult{
		first:  avg(0, time.Minute),
		second: avg(time.Minute, 2*time.Minute),
		last:   avg(d-time.Minute, d+time.Second),
	}
	slope := func(after time.Duration, f func(memSample) int64) float64 {
		var xs, ys []float64
		for _, s := range ss {
			if s.At >= after {
				xs = append(xs, s.At.Minutes())
				ys = append(ys, float64(f(s))/mib)
			}
		}
		return linearSlope(xs, ys)
	}
	vm := func(s memSample) int64 { return s.VmRSS }
	anon := func(s memSample) int64 { return s.RssAnon }
	t.slopeVM, t.slopeAnon = slope(time.Minute, vm), slope(time.Minute, anon)
	t.slopeVMAll, t.slopeAnonAll = slope(0, vm), slope(0, anon)
	if d < 3*time.Minute || math.IsNaN(t.second.vm) || math.IsNaN(t.last.vm) {
		t.verdict, t.verdictVM, t.verdictAnon = "n/a (needs -duration 3m or more)", "n/a", "n/a"
		return t
	}
	flat := func(second, last float64) string {
		if math.Abs(last-second) <= math.Max(0.10*second, 5) {
			return "flat"
		}
		if last > second {
			return "growing"
		}
		return "shrinking"
	}
	t.verdictVM, t.verdictAnon = flat(t.second.vm, t.last.vm), flat(t.second.anon, t.last.anon)
	switch {
	case t.verdictVM == "growing" || t.verdictAnon == "growing":
		t.verdict = "growing"
	default:
		t.verdict = "flat"
	}
	return t
}

func linearSlope(xs, ys []float64) float64 {
	n := float64(len(xs))
	if len(xs) < 2 {
		return math.NaN()
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return math.NaN()
	}
	return (n*sxy - sx*sy) / den
}

// ---- idle ----

func runIdle(ctx context.Context, cfg config, sp *serveProc, res map[string]any) (int, error) {
	h, err := health(ctx, sp)
	if err != nil {
		return exitError, fmt.Errorf("GET /v1/health: %v", err)
	}
	fmt.Printf("idle: %d workflows written (webhook + transform, schedule \"0 3 * * *\" + transform, manual + wait); serve loaded %d\n", cfg.workflows, h.Workflows)
	i := map[string]any{"workflows": cfg.workflows, "workflows_loaded": h.Workflows}
	res["idle"] = i
	sample := func(label string, after time.Duration) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-sp.exited:
			return errors.New("serve exited while idle")
		case <-time.After(after):
		}
		m, err := readStatus(sp.pid())
		if err != nil {
			return fmt.Errorf("cannot read /proc/%d/status: %v", sp.pid(), err)
		}
		row := map[string]any{"vmrss_mib": round(float64(m.VmRSS)/mib, 1), "rssanon_mib": round(float64(m.RssAnon)/mib, 1),
			"rssfile_mib": round(float64(m.RssFile)/mib, 1), "vmhwm_mib": round(float64(m.VmHWM)/mib, 1), "threads": m.Threads}
		extra := ""
		if vals, _, err := scrape(ctx, sp.client, sp.metrics); err == nil {
			row["metric_process_resident_memory_mib"] = round(vals["process_resident_memory_bytes"]/mib, 1)
			extra = fmt.Sprintf("  (metrics: process_resident_memory_bytes %.1f MiB", vals["process_resident_memory_bytes"]/mib)
			if g, ok := vals["go_goroutines"]; ok {
				row["go_goroutines"] = g
				extra += fmt.Sprintf(", go_goroutines %.0f", g)
			}
			extra += ")"
		}
		i[label] = row
		fmt.Printf("%s: VmRSS %.1f MiB  RssAnon %.1f MiB  RssFile %.1f MiB  VmHWM %.1f MiB  threads %d%s\n", label,
			float64(m.VmRSS)/mib, float64(m.RssAnon)/mib, float64(m.RssFile)/mib, float64(m.VmHWM)/mib, m.Threads, extra)
		return nil
	}
	if err := sample("after_5s", 5*time.Second); err != nil {
		return exitError, err
	}
	if err := sample("after_15s", 10*time.Second); err != nil {
		return exitError, err
	}
	if h.Workflows != cfg.workflows {
		return exitError, fmt.Errorf("serve loaded %d of the %d workflows; see its output", h.Workflows, cfg.workflows)
	}
	return exitOK, nil
}

// ---- figures ----

type pcts struct{ p50, p90, p99, max time.Duration }

func percentiles(ds []time.Duration) pcts {
	if len(ds) == 0 {
		return pcts{}
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	at := func(q float64) time.Duration {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return pcts{at(0.50), at(0.90), at(0.99), s[len(s)-1]}
}

func (p pcts) msMap() map[string]float64 {
	return map[string]float64{"p50": msf(p.p50), "p90": msf(p.p90), "p99": msf(p.p99), "max": msf(p.max)}
}

// orNil is v rounded to 3 digits, or nil (JSON null) for NaN: no figure.
func orNil(v float64) any {
	if math.IsNaN(v) {
		return nil
	}
	return round(v, 3)
}

func fmtMiB(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " MiB"
}

func fmtSlope(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%+.2f MiB/min", v)
}

func msf(d time.Duration) float64 { return round(float64(d)/float64(time.Millisecond), 3) }

func ms(d time.Duration) string { return strconv.FormatFloat(msf(d), 'f', -1, 64) + " ms" }

func round(v float64, digits int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// describeMachine records the CPUs, the Go versions and the home's file system.
func describeMachine(res map[string]any, bin, home string) {
	res["cpus"] = runtime.NumCPU()
	res["gomaxprocs"] = runtime.GOMAXPROCS(0)
	res["go_version"] = runtime.Version()
	res["fuscia_go_version"] = "unknown"
	if bi, err := buildinfo.ReadFile(bin); err == nil {
		res["fuscia_go_version"] = bi.GoVersion
	}
	res["fuscia_binary"] = bin
	res["home"] = home
	res["home_fs"], res["home_mount"] = "unknown", "unknown"
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return
	}
	best := -1
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		mp := strings.ReplaceAll(f[1], `\040`, " ")
		if (home == mp || strings.HasPrefix(home, strings.TrimSuffix(mp, "/")+"/")) && len(mp) >= best {
			best = len(mp)
			res["home_fs"], res["home_mount"] = f[2], mp
		}
	}
}

func printResult(res map[string]any) {
	b, err := json.Marshal(res)
	if err != nil {
		fmt.Printf("RESULT {\"error\": %q}\n", err.Error())
		return
	}
	fmt.Printf("RESULT %s\n", b)
}
