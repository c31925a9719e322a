package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The bench mode's other load generator, -client wrk.

// wrkScript makes wrk POST the bench's webhook body. wrk sends the same body every time (the
// Go client numbers them); the workflow does not care.
const wrkScript = `wrk.method = "POST"
wrk.body   = '{"id":1}'
wrk.headers["Content-Type"] = "application/json"
`

// wrkPacing makes wrk send at a fixed rate (-rate with -client wrk): request i is due at
// start + i/rate whichever connection is free, and wrk's delay() holds each connection until
// its request's slot (LuaJIT's FFI reads the monotonic clock; wrk has none in Lua). The Go soak
// client could not hold 2,000 requests/s beside serve on two cores; wrk can. wrk measures a
// request from its send, so a stall longer than the connections can cover (concurrency ÷ rate)
// delays the requests due meanwhile without counting their wait: the report says so.
const wrkPacing = `
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } fuscia_load_timespec;
int clock_gettime(int clk, fuscia_load_timespec *tp);
]]
local ts = ffi.new("fuscia_load_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end
local period = 1000 / %g
local due = nil
function delay()
  local t = now_ms()
  if due == nil then due = t end
  local slot = due
  due = due + period
  if slot > t then return slot - t end
  return 0
end
`

// wrkScriptFor is the script for cfg: paced at cfg.rate when cfg.paced.
func wrkScriptFor(cfg config) string {
	if !cfg.paced {
		return wrkScript
	}
	return wrkScript + fmt.Sprintf(wrkPacing, cfg.rate)
}

// wrkLoad sends the bench load with wrk (Debian's wrk package), a C client that leaves more
// of the two cores to serve than the Go client, and reads its report: closed-loop, or paced
// at cfg.rate.
func wrkLoad(ctx context.Context, cfg config, url string, t0 time.Time) (loadResult, error) {
	bin, err := exec.LookPath("wrk")
	if err != nil {
		return loadResult{}, errors.New("-client wrk: wrk is not installed (apt-get install wrk)")
	}
	script := filepath.Join(os.TempDir(), fmt.Sprintf("fuscia-load-%d.lua", os.Getpid()))
	if err := os.WriteFile(script, []byte(wrkScriptFor(cfg)), 0o644); err != nil {
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
