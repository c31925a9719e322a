package main

// The slowloris mode: serve's memory and responsiveness under connection floods
// (docs/performance.md, "Bounded requests"). Two phases of -duration each, on 127.0.0.1:
//
//	slowloris     -connections clients send a request line and then a header line a second,
//	              never finishing the header; each one serve closes reconnects at once.
//	big headers   -header-connections clients send -header-kib KiB of header lines and then
//	              nothing more (reconnecting likewise). Requests with 300 KiB headers, sent
//	              before the floods and midway through this one, must be refused: with 431,
//	              or (midway) by closing the connection.
//
// Throughout, a probe sends GET /v1/health on a new connection every half second: its latency
// says whether serve still answers. serve's VmRSS and VmHWM are sampled from /proc.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// floodTargetMiB is the memory serve must stay under (issue 14: bounded, target ≤ 150 MB).
const floodTargetMiB = 150

type floodConfig struct {
	conns       int // -connections: slowloris clients
	headerConns int // -header-connections: big-header clients
	headerKiB   int // -header-kib: the header each of them sends
}

func registerFloodFlags(fc *floodConfig) {
	flag.IntVar(&fc.conns, "connections", 3000, "slowloris: clients that never finish their header (`N`)")
	flag.IntVar(&fc.headerConns, "header-connections", 1500, "slowloris: clients that send a big header and stop (`N`)")
	flag.IntVar(&fc.headerKiB, "header-kib", 60, "slowloris: the size of each big header, in KiB (`N`; serve's limit is 64)")
}

// floodPhase is what one phase measured.
type floodPhase struct {
	name        string
	dials       atomic.Int64 // connections opened
	dialErrors  atomic.Int64
	closed      atomic.Int64 // connections serve closed
	lifetimeSum atomic.Int64 // nanoseconds from dial to serve's close, summed over closed
	refused431  atomic.Int64 // 300 KiB requests answered 431
	cut431      atomic.Int64 // closed with no answer (serve made room)
	other431    atomic.Int64 // answered otherwise, or not at all
	probeMu     sync.Mutex
	probes      []time.Duration
	probeFails  int
}

func runSlowloris(ctx context.Context, cfg config, sp *serveProc, res map[string]any) (int, error) {
	fc := cfg.flood
	if fc.conns < 1 || fc.headerConns < 1 || fc.headerKiB < 1 {
		return exitError, errors.New("-connections, -header-connections and -header-kib must be positive")
	}
	raiseFileLimit(res, fc.conns+fc.headerConns+256)
	addr := strings.TrimPrefix(sp.api, "http://")
	base, err := readStatus(sp.pid())
	if err != nil {
		return exitError, fmt.Errorf("cannot read /proc/%d/status: %v", sp.pid(), err)
	}
	fmt.Printf("slowloris: serve at rest: VmRSS %s, VmHWM %s\n", fmtMiB(float64(base.VmRSS)/mib), fmtMiB(float64(base.VmHWM)/mib))
	out := map[string]any{"baseline_vmrss_mib": round(float64(base.VmRSS)/mib, 1), "duration_s": cfg.duration.Seconds(),
		"target_mib": floodTargetMiB, "connections": fc.conns, "header_connections": fc.headerConns, "header_kib": fc.headerKiB}
	res["slowloris"] = out
	quiet := &floodPhase{name: "at rest"}
	check431(addr, quiet, 10)
	fmt.Printf("at rest: 300 KiB headers: %d of 10 refused with 431\n", quiet.refused431.Load())
	out["at_rest_huge_header_431"] = quiet.refused431.Load()

	t0 := time.Now()
	samp := startSampler(sp.pid(), 200*time.Millisecond, t0, nil)
	slow := &floodPhase{name: "slowloris"}
	floodRun(ctx, sp, slow, cfg.duration, fc.conns, func(c net.Conn) error { return slowClient(c) }, nil)
	slowSamples := samp.finish()
	out["slowloris_phase"] = phaseResult(slow, slowSamples)
	printPhase(slow, slowSamples)
	if err := ctx.Err(); err != nil {
		return exitError, err
	}

	samp = startSampler(sp.pid(), 200*time.Millisecond, time.Now(), nil)
	big := &floodPhase{name: "big headers"}
	header := bigHeader(fc.headerKiB)
	floodRun(ctx, sp, big, cfg.duration, fc.headerConns, func(c net.Conn) error { return bigHeaderClient(c, header) },
		func() { check431(addr, big, 10) })
	bigSamples := samp.finish()
	out["big_header_phase"] = phaseResult(big, bigSamples)
	printPhase(big, bigSamples)
	if err := ctx.Err(); err != nil {
		return exitError, err
	}

	// After: serve gives the memory back (GC returns it to the OS over minutes; RSS shows
	// what is still held).
	time.Sleep(5 * time.Second)
	after, _ := readStatus(sp.pid())
	out["after_5s_vmrss_mib"] = round(float64(after.VmRSS)/mib, 1)
	peak := maxMem(append(slowSamples, bigSamples...))
	out["peak_vmrss_mib"] = round(float64(peak.VmRSS)/mib, 1)
	out["vmhwm_mib"] = round(float64(after.VmHWM)/mib, 1)
	within := float64(after.VmHWM)/1e6 <= floodTargetMiB
	out["within_target"] = within
	fmt.Printf("slowloris: peak VmRSS %s, VmHWM %s (target %d MB: %s); 5 s after the floods VmRSS %s\n",
		fmtMiB(float64(peak.VmRSS)/mib), fmtMiB(float64(after.VmHWM)/mib), floodTargetMiB,
		map[bool]string{true: "met", false: "NOT met"}[within], fmtMiB(float64(after.VmRSS)/mib))
	switch {
	case quiet.refused431.Load() != 10:
		return exitFailed, fmt.Errorf("%d of 10 requests with a 300 KiB header were refused with 431 at rest", quiet.refused431.Load())
	case big.other431.Load() > 0:
		return exitFailed, fmt.Errorf("%d requests with a 300 KiB header were not refused during the flood", big.other431.Load())
	case !within:
		return exitFailed, fmt.Errorf("serve's VmHWM %.1f MB is over the %d MB target", float64(after.VmHWM)/1e6, floodTargetMiB)
	}
	return exitOK, nil
}

// floodRun keeps n clients connected for d, each running client on its connection and
// reconnecting when serve closes it; mid (if any) runs once halfway. A probe measures
// GET /v1/health meanwhile. It returns when every client and the probe have stopped.
func floodRun(ctx context.Context, sp *serveProc, ph *floodPhase, d time.Duration, n int, client func(net.Conn) error, mid func()) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	addr := strings.TrimPrefix(sp.api, "http://")
	var wg sync.WaitGroup
	var conns sync.Map // net.Conn → struct{}: closed at the end so that clients stop at once
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Spread the first dials over a second rather than n at once.
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Duration(i) * time.Second / time.Duration(n)):
			}
			dialer := net.Dialer{Timeout: 10 * time.Second}
			for ctx.Err() == nil {
				c, err := dialer.DialContext(ctx, "tcp", addr)
				if err != nil {
					if ctx.Err() == nil {
						ph.dialErrors.Add(1)
						time.Sleep(100 * time.Millisecond)
					}
					continue
				}
				ph.dials.Add(1)
				conns.Store(c, struct{}{})
				start := time.Now()
				err = client(c)
				conns.Delete(c)
				_ = c.Close()
				if ctx.Err() == nil && err != nil {
					ph.closed.Add(1)
					ph.lifetimeSum.Add(int64(time.Since(start)))
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		probe(ctx, sp, ph)
	}()
	if mid != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-ctx.Done():
			case <-time.After(d / 2):
				mid()
			}
		}()
	}
	<-ctx.Done()
	conns.Range(func(k, _ any) bool {
		_ = k.(net.Conn).Close()
		return true
	})
	wg.Wait()
}

// slowClient sends a request line and then a header line a second until serve closes the
// connection (the error it returns) or it is closed at the phase's end.
func slowClient(c net.Conn) error {
	if _, err := io.WriteString(c, "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n"); err != nil {
		return err
	}
	buf := make([]byte, 512)
	for i := 0; ; i++ {
		if err := waitClosed(c, buf, time.Second); err != nil {
			return err
		}
		if _, err := fmt.Fprintf(c, "X-Slow-%d: %d\r\n", i, i); err != nil {
			return err
		}
	}
}

// bigHeaderClient sends header (a request line and header lines without the blank line that
// ends them), then waits for serve to close the connection.
func bigHeaderClient(c net.Conn, header []byte) error {
	if _, err := c.Write(header); err != nil {
		return err
	}
	buf := make([]byte, 512)
	for {
		if err := waitClosed(c, buf, 5*time.Second); err != nil {
			return err
		}
	}
}

// waitClosed reads c for up to d: nil if it is still open then, else the error (EOF when
// serve closed it; anything it answered is read and dropped).
func waitClosed(c net.Conn, buf []byte, d time.Duration) error {
	_ = c.SetReadDeadline(time.Now().Add(d))
	for {
		_, err := c.Read(buf)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// bigHeader is a request line and kib KiB of 1 KiB header lines, unfinished.
func bigHeader(kib int) []byte {
	var b strings.Builder
	b.WriteString("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	value := strings.Repeat("h", 1024-len("X-Big-0000: \r\n"))
	for i := range kib {
		fmt.Fprintf(&b, "X-Big-%04d: %s\r\n", i, value)
	}
	return []byte(b.String())
}

// check431 sends n requests with a 300 KiB header, each on a connection of its own, and counts
// the 431 answers.
func check431(addr string, ph *floodPhase, n int) {
	req := "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Huge: " + strings.Repeat("a", 300<<10) + "\r\n\r\n"
	for range n {
		c, err := net.DialTimeout("tcp", addr, 30*time.Second)
		if err != nil {
			ph.other431.Add(1)
			continue
		}
		go func() { _, _ = io.WriteString(c, req) }() // serve may answer before it read it all
		_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		_ = c.Close()
		var ne net.Error
		switch {
		case strings.HasPrefix(line, "HTTP/1.1 431 "):
			ph.refused431.Add(1)
		case line == "" && err != nil && !(errors.As(err, &ne) && ne.Timeout()):
			ph.cut431.Add(1)
		default:
			ph.other431.Add(1)
		}
	}
}

// probe sends GET /v1/health on a new connection every half second until ctx ends.
func probe(ctx context.Context, sp *serveProc, ph *floodPhase) {
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		t := time.Now()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, sp.api+"/v1/health", nil)
		resp, err := client.Do(req)
		if ctx.Err() != nil {
			return // cut by the phase's end: not a measurement
		}
		ph.probeMu.Lock()
		if err != nil || resp.StatusCode != http.StatusOK {
			ph.probeFails++
		} else {
			ph.probes = append(ph.probes, time.Since(t))
		}
		ph.probeMu.Unlock()
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	}
}

func phaseResult(ph *floodPhase, ss []memSample) map[string]any {
	m := maxMem(ss)
	ph.probeMu.Lock()
	defer ph.probeMu.Unlock()
	out := map[string]any{
		"dials": ph.dials.Load(), "dial_errors": ph.dialErrors.Load(), "closed_by_serve": ph.closed.Load(),
		"peak_vmrss_mib": round(float64(m.VmRSS)/mib, 1), "vmhwm_mib": round(float64(m.VmHWM)/mib, 1), "peak_threads": m.Threads,
		"health_probes": len(ph.probes), "health_probe_failures": ph.probeFails,
	}
	if n := ph.closed.Load(); n > 0 {
		out["mean_connection_s"] = round(float64(ph.lifetimeSum.Load())/float64(n)/1e9, 2)
	}
	if len(ph.probes) > 0 {
		out["health_ms"] = percentiles(ph.probes).msMap()
	}
	if ph.refused431.Load()+ph.cut431.Load()+ph.other431.Load() > 0 {
		out["huge_header_431"] = ph.refused431.Load()
		out["huge_header_closed"] = ph.cut431.Load()
		out["huge_header_other"] = ph.other431.Load()
	}
	return out
}

func printPhase(ph *floodPhase, ss []memSample) {
	m := maxMem(ss)
	ph.probeMu.Lock()
	defer ph.probeMu.Unlock()
	fmt.Printf("%s: %d connections opened (%d dial errors), %d closed by serve", ph.name, ph.dials.Load(), ph.dialErrors.Load(), ph.closed.Load())
	if n := ph.closed.Load(); n > 0 {
		fmt.Printf(" after %.2f s on average", float64(ph.lifetimeSum.Load())/float64(n)/1e9)
	}
	fmt.Printf("; peak VmRSS %s, VmHWM %s, %d threads\n", fmtMiB(float64(m.VmRSS)/mib), fmtMiB(float64(m.VmHWM)/mib), m.Threads)
	if len(ph.probes) > 0 {
		p := percentiles(ph.probes)
		fmt.Printf("%s: GET /v1/health on a new connection: %d answered, p50 %s, p90 %s, max %s; %d failed\n",
			ph.name, len(ph.probes), ms(p.p50), ms(p.p90), ms(p.max), ph.probeFails)
	} else {
		fmt.Printf("%s: GET /v1/health on a new connection: none answered, %d failed\n", ph.name, ph.probeFails)
	}
	if n := ph.refused431.Load() + ph.cut431.Load() + ph.other431.Load(); n > 0 {
		fmt.Printf("%s: 300 KiB headers: %d of %d refused with 431, %d closed unanswered, %d answered otherwise\n",
			ph.name, ph.refused431.Load(), n, ph.cut431.Load(), ph.other431.Load())
	}
}

// raiseFileLimit raises this process's open-file limit to need if the hard limit allows it
// (serve, a Go program, raises its own to the hard limit when it starts).
func raiseFileLimit(res map[string]any, need int) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return
	}
	if lim.Cur < uint64(need) {
		lim.Cur = min(uint64(need), lim.Max)
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	res["nofile_limit"] = lim.Cur
	if lim.Cur < uint64(need) {
		fmt.Printf("slowloris: the open-file limit is %d, below the %d connections asked for: some dials will fail\n", lim.Cur, need)
	}
}
