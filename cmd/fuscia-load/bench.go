package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The bench mode: closed-loop clients POST the webhook for -duration; then the accepted runs
// must finish. It measures the webhook's throughput and latency and serve's memory.

// benchResult is what the bench mode measured (RESULT's "bench").
type benchResult struct {
	Duration        float64        `json:"duration_s"` // -duration
	Concurrency     int            `json:"concurrency"`
	Client          string         `json:"client"`               // go or wrk
	Rate            float64        `json:"rate_per_s,omitempty"` // -rate: wrk paced at it; 0: closed-loop
	LoadSeconds     seconds        `json:"load_seconds"`         // from the first request to the last answer (wrk: its own count)
	Requests        int            `json:"requests"`
	Accepted        int            `json:"accepted"` // answered 202
	Non202          int            `json:"non_202"`
	Non202Codes     map[string]int `json:"non_202_codes"` // by status code; wrk: "not 2xx"
	TransportErrors int            `json:"transport_errors"`
	FirstError      string         `json:"first_error,omitempty"`
	AcceptedPerS    perSecond      `json:"accepted_per_s"`
	Latency202      pcts           `json:"latency_202_ms"` // request → 202
	RunsListed      int            `json:"runs_listed"`    // runs of hook in GET /v1/executions after the drain
	RunStatuses     map[string]int `json:"run_statuses"`
	*benchDrain                    // nil when the runs did not all finish within -drain-timeout
	RSSSamples      int            `json:"rss_samples"` // serve's /proc status, every 500 ms
	MaxVmRSS        mebibytes      `json:"max_vmrss_mib"`
	MaxRssAnon      mebibytes      `json:"max_rssanon_mib"`
	MaxRssFile      mebibytes      `json:"max_rssfile_mib"`
	// The same maxima over the samples taken while the load was sent, before the drain's
	// listing of every run through the API (which, for 100,000 runs, is what the maxima above
	// were after a 30-s bench).
	LoadMaxVmRSS   mebibytes `json:"load_max_vmrss_mib"`
	LoadMaxRssAnon mebibytes `json:"load_max_rssanon_mib"`
	LoadMaxRssFile mebibytes `json:"load_max_rssfile_mib"`
	VmHWM          mebibytes `json:"vmhwm_mib"`
	MaxThreads     int64     `json:"max_threads"`
	// ServeCPUPer1000 is serve's CPU time (user + system) from the first request until the
	// runs drained, in ms per 1,000 accepted runs; 0 when /proc could not be read.
	ServeCPUPer1000 millisFloat `json:"serve_cpu_ms_per_1000_runs,omitempty"`
	*serveMetrics               // nil when /metrics could not be read
}

// benchDrain is how quickly the accepted runs finished.
type benchDrain struct {
	WebhookToFinished     seconds   `json:"webhook_to_finished_seconds"` // first request → last run finished
	WebhookToFinishedPerS perSecond `json:"webhook_to_finished_per_s"`
	DrainSeenAfterLoad    seconds   `json:"drain_seen_after_load_seconds"` // last answer → the drain seen
}

// runBench runs the bench mode. Its result is nil when the load could not be sent.
func runBench(ctx context.Context, cfg config, sp *serveProc, w io.Writer) (*benchResult, int, error) {
	url := sp.api + "/hooks/in"
	writeBenchStart(w, cfg, url)
	t0 := time.Now()
	mem := startSampler(sp.pid(), 500*time.Millisecond, t0, nil)
	cpu0, cpuErr := readCPU(sp.pid())
	var lr loadResult
	var err error
	if cfg.client == "wrk" {
		lr, err = wrkLoad(ctx, cfg, url, t0)
	} else {
		lr, err = goLoad(ctx, cfg, url, t0)
	}
	if err != nil {
		mem.finish()
		return nil, exitError, err
	}
	b := &benchResult{
		Duration: cfg.duration.Seconds(), Concurrency: cfg.concurrency, Client: cfg.client,
		LoadSeconds: seconds(lr.loadSecs), Requests: lr.sent, Accepted: lr.accepted, Non202: lr.non202,
		Non202Codes: lr.codes, TransportErrors: lr.errs, FirstError: lr.firstErr,
		AcceptedPerS: perSecond(float64(lr.accepted) / lr.loadSecs), Latency202: lr.lat,
	}
	if cfg.paced {
		b.Rate = cfg.rate
	}
	writeBenchLoad(w, b)

	writeWaiting(w, lr.accepted)
	runs, drained, derr := waitDrained(ctx, sp.client, sp, lr.accepted, cfg.drainTimeout)
	ss := mem.finish()
	if cpu1, err := readCPU(sp.pid()); err == nil && cpuErr == nil && lr.accepted > 0 {
		b.ServeCPUPer1000 = millisFloat((cpu1 - cpu0) * 1e3 * 1e3 / float64(lr.accepted))
	}
	b.RunsListed = len(runs)
	b.RunStatuses = map[string]int{}
	var lastFinished time.Time
	for _, r := range runs {
		b.RunStatuses[r.Status]++
		if r.FinishedAt != nil && r.FinishedAt.After(lastFinished) {
			lastFinished = *r.FinishedAt
		}
	}
	if derr == nil {
		fin := lastFinished.Sub(t0).Seconds()
		b.benchDrain = &benchDrain{
			WebhookToFinished:     seconds(fin),
			WebhookToFinishedPerS: perSecond(float64(lr.accepted) / fin),
			DrainSeenAfterLoad:    seconds(drained.Sub(lr.lastResp).Seconds()),
		}
	}
	m := maxMem(ss)
	b.RSSSamples = len(ss)
	b.MaxVmRSS, b.MaxRssAnon, b.MaxRssFile, b.VmHWM = toMiB(m.VmRSS), toMiB(m.RssAnon), toMiB(m.RssFile), toMiB(m.VmHWM)
	b.MaxThreads = m.Threads
	lm := maxMem(duringLoad(ss, lr.lastResp.Sub(t0)))
	b.LoadMaxVmRSS, b.LoadMaxRssAnon, b.LoadMaxRssFile = toMiB(lm.VmRSS), toMiB(lm.RssAnon), toMiB(lm.RssFile)
	b.serveMetrics = scrapeServe(ctx, sp.client, sp.metrics)
	writeBenchRuns(w, b)
	if derr != nil {
		return b, exitError, derr
	}
	return b, exitOK, nil
}

// loadResult is what one bench load phase measured, whichever client sent it.
type loadResult struct {
	sent, accepted, non202, errs int
	codes                        map[string]int
	firstErr                     string
	loadSecs                     float64
	lastResp                     time.Time
	lat                          pcts
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

// duringLoad returns the samples of ss taken up to end (the last answer to the load).
func duringLoad(ss []memSample, end time.Duration) []memSample {
	n := 0
	for n < len(ss) && ss[n].At <= end {
		n++
	}
	return ss[:n]
}
