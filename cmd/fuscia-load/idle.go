package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// The idle mode: -workflows workflows loaded and nothing to do; serve's memory after 5 s and
// after 15 s.

// idleResult is what the idle mode measured (RESULT's "idle").
type idleResult struct {
	Workflows       int         `json:"workflows"`        // written
	WorkflowsLoaded int         `json:"workflows_loaded"` // GET /v1/health's count
	After5s         *idleSample `json:"after_5s,omitempty"`
	After15s        *idleSample `json:"after_15s,omitempty"`
}

// idleSample is serve's memory at one moment.
type idleSample struct {
	VmRSS   mebibytes `json:"vmrss_mib"`
	RssAnon mebibytes `json:"rssanon_mib"`
	RssFile mebibytes `json:"rssfile_mib"`
	VmHWM   mebibytes `json:"vmhwm_mib"`
	Threads int64     `json:"threads"`
	// From /metrics: nil when it could not be read (or, for go_goroutines, did not say).
	ResidentMemory *mebibytes `json:"metric_process_resident_memory_mib,omitempty"`
	Goroutines     *float64   `json:"go_goroutines,omitempty"`
}

// runIdle runs the idle mode. Its result is nil when GET /v1/health failed; otherwise it
// holds the samples taken before any error.
func runIdle(ctx context.Context, cfg config, sp *serveProc, w io.Writer) (*idleResult, int, error) {
	h, err := health(ctx, sp)
	if err != nil {
		return nil, exitError, fmt.Errorf("GET /v1/health: %v", err)
	}
	writeIdleStart(w, cfg.workflows, h.Workflows)
	res := &idleResult{Workflows: cfg.workflows, WorkflowsLoaded: h.Workflows}
	sample := func(after time.Duration) (*idleSample, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-sp.exited:
			return nil, errors.New("serve exited while idle")
		case <-time.After(after):
		}
		m, err := readStatus(sp.pid())
		if err != nil {
			return nil, fmt.Errorf("cannot read /proc/%d/status: %v", sp.pid(), err)
		}
		s := &idleSample{VmRSS: toMiB(m.VmRSS), RssAnon: toMiB(m.RssAnon), RssFile: toMiB(m.RssFile),
			VmHWM: toMiB(m.VmHWM), Threads: m.Threads}
		if vals, _, err := scrape(ctx, sp.client, sp.metrics); err == nil {
			rss := mebibytes(vals["process_resident_memory_bytes"] / mib)
			s.ResidentMemory = &rss
			if g, ok := vals["go_goroutines"]; ok {
				s.Goroutines = &g
			}
		}
		return s, nil
	}
	if res.After5s, err = sample(5 * time.Second); err != nil {
		return res, exitError, err
	}
	writeIdleSample(w, "after_5s", res.After5s)
	if res.After15s, err = sample(10 * time.Second); err != nil {
		return res, exitError, err
	}
	writeIdleSample(w, "after_15s", res.After15s)
	if h.Workflows != cfg.workflows {
		return res, exitError, fmt.Errorf("serve loaded %d of the %d workflows; see its output", h.Workflows, cfg.workflows)
	}
	return res, exitOK, nil
}
