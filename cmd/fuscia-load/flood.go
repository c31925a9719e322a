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
// says whether serve still answers. serve's VmRSS and VmHWM are sampled from /proc. The
// clients are in slowloris.go and bigheaders.go.

import (
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

func registerFloodFlags(fs *flag.FlagSet, fc *floodConfig) {
	fs.IntVar(&fc.conns, "connections", 3000, "slowloris: clients that never finish their header (`N`)")
	fs.IntVar(&fc.headerConns, "header-connections", 1500, "slowloris: clients that send a big header and stop (`N`)")
	fs.IntVar(&fc.headerKiB, "header-kib", 60, "slowloris: the size of each big header, in KiB (`N`; serve's limit is 64)")
}

// check says what is wrong with the flood's flags, if anything.
func (fc floodConfig) check() error {
	if fc.conns < 1 || fc.headerConns < 1 || fc.headerKiB < 1 {
		return errors.New("-connections, -header-connections and -header-kib must be positive")
	}
	return nil
}

// need is how many files the flood keeps open at most: its connections and some to spare.
func (fc floodConfig) need() int { return fc.conns + fc.headerConns + 256 }

// slowlorisResult is what the slowloris mode measured (RESULT's "slowloris"). It holds the
// phases measured before an error or an interrupt.
type slowlorisResult struct {
	BaselineVmRSS     mebibytes         `json:"baseline_vmrss_mib"` // serve at rest
	BaselineVmHWM     mebibytes         `json:"-"`
	Duration          float64           `json:"duration_s"` // -duration, of each phase
	TargetMiB         int               `json:"target_mib"`
	Connections       int               `json:"connections"`
	HeaderConnections int               `json:"header_connections"`
	HeaderKiB         int               `json:"header_kib"`
	AtRest431         int64             `json:"at_rest_huge_header_431"` // of 10 requests with a 300 KiB header
	SlowPhase         *floodPhaseResult `json:"slowloris_phase,omitempty"`
	BigPhase          *floodPhaseResult `json:"big_header_phase,omitempty"`
	*floodAfter                         // nil until both phases ran
}

// floodAfter is serve's memory over and after both phases.
type floodAfter struct {
	After5sVmRSS mebibytes `json:"after_5s_vmrss_mib"`
	PeakVmRSS    mebibytes `json:"peak_vmrss_mib"` // over both phases
	VmHWM        mebibytes `json:"vmhwm_mib"`      // serve's own high-water mark, 5 s after
	WithinTarget bool      `json:"within_target"`  // VmHWM ≤ floodTargetMiB MB
}

// floodPhaseResult is what one phase measured.
type floodPhaseResult struct {
	Name                string        `json:"-"`
	Dials               int64         `json:"dials"`
	DialErrors          int64         `json:"dial_errors"`
	ClosedByServe       int64         `json:"closed_by_serve"`
	MeanConnection      *centiseconds `json:"mean_connection_s,omitempty"` // dial → serve's close; nil when it closed none
	PeakVmRSS           mebibytes     `json:"peak_vmrss_mib"`
	VmHWM               mebibytes     `json:"vmhwm_mib"`
	PeakThreads         int64         `json:"peak_threads"`
	HealthProbes        int           `json:"health_probes"` // answered 200
	HealthProbeFailures int           `json:"health_probe_failures"`
	Health              *pcts         `json:"health_ms,omitempty"` // nil when no probe was answered
	*hugeHeaders                      // nil when the phase sent no 300 KiB header
}

// hugeHeaders counts how serve met requests with a 300 KiB header.
type hugeHeaders struct {
	Refused431 int64 `json:"huge_header_431"`
	Closed     int64 `json:"huge_header_closed"` // closed with no answer
	Other      int64 `json:"huge_header_other"`  // answered otherwise, or not at all
}

func (h hugeHeaders) total() int64 { return h.Refused431 + h.Closed + h.Other }

// floodPhase counts what one phase sees while it runs; its goroutines write it, result reads
// it once they have ended.
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
	probes      []time.Duration // guarded by probeMu
	probeFails  int             // guarded by probeMu
}

// result is the phase's figures with serve's memory samples ss.
func (ph *floodPhase) result(ss []memSample) *floodPhaseResult {
	m := maxMem(ss)
	ph.probeMu.Lock()
	defer ph.probeMu.Unlock()
	r := &floodPhaseResult{
		Name: ph.name, Dials: ph.dials.Load(), DialErrors: ph.dialErrors.Load(), ClosedByServe: ph.closed.Load(),
		PeakVmRSS: toMiB(m.VmRSS), VmHWM: toMiB(m.VmHWM), PeakThreads: m.Threads,
		HealthProbes: len(ph.probes), HealthProbeFailures: ph.probeFails,
	}
	if n := ph.closed.Load(); n > 0 {
		mean := centiseconds(float64(ph.lifetimeSum.Load()) / float64(n) / 1e9)
		r.MeanConnection = &mean
	}
	if len(ph.probes) > 0 {
		p := percentiles(ph.probes)
		r.Health = &p
	}
	if h := (hugeHeaders{ph.refused431.Load(), ph.cut431.Load(), ph.other431.Load()}); h.total() > 0 {
		r.hugeHeaders = &h
	}
	return r
}

// runSlowloris runs the slowloris mode. Its result is nil when serve's memory could not be
// read at rest; exitFailed says serve did not hold its bounds.
func runSlowloris(ctx context.Context, cfg config, sp *serveProc, w io.Writer) (*slowlorisResult, int, error) {
	fc := cfg.flood
	addr := strings.TrimPrefix(sp.api, "http://")
	base, err := readStatus(sp.pid())
	if err != nil {
		return nil, exitError, fmt.Errorf("cannot read /proc/%d/status: %v", sp.pid(), err)
	}
	out := &slowlorisResult{BaselineVmRSS: toMiB(base.VmRSS), BaselineVmHWM: toMiB(base.VmHWM),
		Duration: cfg.duration.Seconds(), TargetMiB: floodTargetMiB,
		Connections: fc.conns, HeaderConnections: fc.headerConns, HeaderKiB: fc.headerKiB}
	writeFloodBaseline(w, out)
	quiet := &floodPhase{name: "at rest"}
	check431(addr, quiet, 10)
	out.AtRest431 = quiet.refused431.Load()
	writeFloodAtRest(w, out)

	t0 := time.Now()
	samp := startSampler(sp.pid(), 200*time.Millisecond, t0, nil)
	slow := &floodPhase{name: "slowloris"}
	floodRun(ctx, sp, slow, cfg.duration, fc.conns, func(c net.Conn) error { return slowClient(c) }, nil)
	slowSamples := samp.finish()
	out.SlowPhase = slow.result(slowSamples)
	writeFloodPhase(w, out.SlowPhase)
	if err := ctx.Err(); err != nil {
		return out, exitError, err
	}

	samp = startSampler(sp.pid(), 200*time.Millisecond, time.Now(), nil)
	big := &floodPhase{name: "big headers"}
	header := bigHeader(fc.headerKiB)
	floodRun(ctx, sp, big, cfg.duration, fc.headerConns, func(c net.Conn) error { return bigHeaderClient(c, header) },
		func() { check431(addr, big, 10) })
	bigSamples := samp.finish()
	out.BigPhase = big.result(bigSamples)
	writeFloodPhase(w, out.BigPhase)
	if err := ctx.Err(); err != nil {
		return out, exitError, err
	}

	// After: serve gives the memory back (GC returns it to the OS over minutes; RSS shows
	// what is still held).
	time.Sleep(5 * time.Second)
	after, _ := readStatus(sp.pid())
	peak := maxMem(append(slowSamples, bigSamples...))
	within := float64(after.VmHWM)/1e6 <= floodTargetMiB
	out.floodAfter = &floodAfter{After5sVmRSS: toMiB(after.VmRSS), PeakVmRSS: toMiB(peak.VmRSS),
		VmHWM: toMiB(after.VmHWM), WithinTarget: within}
	writeFloodAfter(w, out.floodAfter)
	switch {
	case quiet.refused431.Load() != 10:
		return out, exitFailed, fmt.Errorf("%d of 10 requests with a 300 KiB header were refused with 431 at rest", quiet.refused431.Load())
	case big.other431.Load() > 0:
		return out, exitFailed, fmt.Errorf("%d requests with a 300 KiB header were not refused during the flood", big.other431.Load())
	case !within:
		return out, exitFailed, fmt.Errorf("serve's VmHWM %.1f MB is over the %d MB target", float64(after.VmHWM)/1e6, floodTargetMiB)
	}
	return out, exitOK, nil
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

// fileLimit is this process's open-file limit and what the flood needs.
type fileLimit struct {
	cur  uint64
	need int
}

// raiseFileLimit raises this process's open-file limit to need if the hard limit allows it
// (serve, a Go program, raises its own to the hard limit when it starts). ok is false when
// the limit cannot be read.
func raiseFileLimit(need int) (lim fileLimit, ok bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return fileLimit{}, false
	}
	if rl.Cur < uint64(need) {
		rl.Cur = min(uint64(need), rl.Max)
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl)
	}
	return fileLimit{cur: rl.Cur, need: need}, true
}
