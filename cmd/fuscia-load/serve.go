package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

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

// serveProc is a running `fuscia serve`. startServe makes it; its owner calls stop, which
// reaps the process, exactly once it is done with it.
type serveProc struct {
	cmd     *exec.Cmd
	api     string // http://ADDR
	metrics string // http://ADDR/metrics
	tail    *tailBuffer
	out     io.Writer     // where stop says it had to SIGKILL
	exited  chan struct{} // closed by the waiting goroutine once waitErr is set
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
func startServe(ctx context.Context, bin, wfDir, home, logPath string, out io.Writer) (*serveProc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	s := &serveProc{tail: &tailBuffer{max: 16 << 10}, out: out, exited: make(chan struct{})}
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
		writeServeKilled(s.out)
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
