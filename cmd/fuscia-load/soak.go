package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The soak mode: webhooks at a fixed -rate on an open-loop schedule for -duration, then a
// check of every accepted run (none lost, none duplicated) and of serve's memory over time.

// soakInflightCap bounds the requests in flight; a request scheduled while it is reached is
// not sent (and counted).
const soakInflightCap = 10000

// soakResult is what the soak mode measured (RESULT's "soak"). Figures tagged "-" are
// printed but not in RESULT.
type soakResult struct {
	Duration       float64       `json:"duration_s"` // -duration
	Rate           float64       `json:"rate"`       // -rate
	Scheduled      int           `json:"scheduled"`
	Sent           int           `json:"sent"`
	NotSentCap     int           `json:"not_sent_cap"` // not sent: soakInflightCap reached
	MaxScheduleLag millis        `json:"max_schedule_lag_ms"`
	LoadTime       time.Duration `json:"-"` // from the first scheduled request to the last answer

	// What the webhook answered.
	Accepted        int            `json:"accepted_202"`
	Non202          int            `json:"non_202"`
	Non202Codes     map[string]int `json:"non_202_codes"`
	TransportErrors int            `json:"transport_errors"`
	FirstError      string         `json:"first_error,omitempty"`
	DistinctIDs     int            `json:"distinct_ids"` // execution ids among the 202s
	DuplicatedIDs   int            `json:"duplicated_ids"`
	Latency202      pcts           `json:"latency_202_ms"`

	// What became of the runs.
	DrainError           string         `json:"drain_error,omitempty"`
	FetchTime            time.Duration  `json:"-"`
	FetchErrors          int            `json:"fetch_errors"`
	FirstFetchError      string         `json:"first_fetch_error,omitempty"`
	RunsListed           int            `json:"runs_listed"`
	AcceptedNotListed    int            `json:"accepted_not_listed"`
	AcceptedNotSucceeded int            `json:"accepted_not_succeeded"`
	NotSucceededByStatus map[string]int `json:"not_succeeded_by_status"` // "unreadable": GET failed
	PayloadMismatches    int            `json:"payload_mismatches"`      // a run whose payload id is not its request's
	OrphanRuns           int            `json:"orphan_runs"`             // listed runs of no accepted request
	Lost                 int            `json:"lost"`                    // accepted, and not listed or not succeeded
	Duplicated           int            `json:"duplicated"`              // runs beyond the first of one payload id
	Finished             int            `json:"-"`                       // runs with a finished_at: WebhookToFinished's sample
	WebhookToFinished    pcts           `json:"webhook_to_finished_ms"`  // finished_at − send time

	// serve's memory: every 10 s during the load, and once after the runs finished.
	RSSTable   []rssRow  `json:"rss_table"`
	MaxVmRSS   mebibytes `json:"max_vmrss_mib"`
	MaxRssAnon mebibytes `json:"max_rssanon_mib"`
	rssTrend
	*serveMetrics // nil when /metrics could not be read
}

// failed says whether the soak found an accepted run lost or duplicated.
func (s *soakResult) failed() bool { return s.Lost > 0 || s.Duplicated > 0 || s.DuplicatedIDs > 0 }

// rssRow is one memory sample in RESULT's rss_table.
type rssRow memSample

func (r rssRow) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		RssAnon mebibytes `json:"rssanon_mib"`
		RssFile mebibytes `json:"rssfile_mib"`
		T       float64   `json:"t_s"`
		Threads int64     `json:"threads"`
		VmRSS   mebibytes `json:"vmrss_mib"`
	}{toMiB(r.RssAnon), toMiB(r.RssFile), round(r.At.Seconds(), 1), r.Threads, toMiB(r.VmRSS)})
}

// soakRec is one scheduled request. Its goroutine writes it; the mode reads it after they
// have all ended.
type soakRec struct {
	sent   time.Time
	lag    time.Duration // sent − scheduled
	lat    time.Duration // request → answer
	status int
	execID string
	err    string
}

// runSoak runs the soak mode. Its result is nil when no load was sent or it was interrupted;
// exitFailed says a run was lost or duplicated.
func runSoak(ctx context.Context, cfg config, sp *serveProc, w io.Writer) (*soakResult, int, error) {
	url := sp.api + "/hooks/in"
	n := int(cfg.rate * cfg.duration.Seconds())
	if n < 1 {
		return nil, exitError, errors.New("-rate × -duration is less than one request")
	}
	client := newClient(256)
	recs := make([]soakRec, n)
	writeSoakStart(w, n, cfg.rate, url, cfg.duration)

	var sentN, acceptedN atomic.Int64
	t0 := time.Now()
	mctx, mcancel := context.WithCancel(ctx)
	defer mcancel()
	mem := startSampler(sp.pid(), 10*time.Second, t0, func(m memSample) {
		fin := "?"
		if _, hook, err := scrape(mctx, sp.client, sp.metrics); err == nil {
			fin = strconv.FormatFloat(sumValues(hook), 'f', 0, 64)
		}
		writeSoakRow(w, m, sentN.Load(), acceptedN.Load(), fin)
	})
	sem := make(chan struct{}, soakInflightCap)
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
		return nil, exitError, errors.New("interrupted")
	}

	// What the webhook answered.
	s := &soakResult{Duration: cfg.duration.Seconds(), Rate: cfg.rate, Scheduled: n, NotSentCap: skipped,
		LoadTime: loadEnd.Sub(t0), Non202Codes: map[string]int{}}
	var maxLag time.Duration
	idCount := map[string]int{}
	var lat202 []time.Duration
	for i := range recs {
		r := &recs[i]
		if r.sent.IsZero() {
			continue
		}
		s.Sent++
		maxLag = max(maxLag, r.lag)
		switch {
		case r.status == http.StatusAccepted && r.execID != "":
			s.Accepted++
			idCount[r.execID]++
			lat202 = append(lat202, r.lat)
		case r.status == 0:
			s.TransportErrors++
		default:
			s.Non202Codes[strconv.Itoa(r.status)]++
		}
		if r.err != "" && s.FirstError == "" {
			s.FirstError = r.err
		}
	}
	s.MaxScheduleLag = millis(maxLag)
	for _, c := range s.Non202Codes {
		s.Non202 += c
	}
	s.DistinctIDs = len(idCount)
	for _, c := range idCount {
		s.DuplicatedIDs += c - 1
	}
	s.Latency202 = percentiles(lat202)
	writeSoakLoad(w, s)

	writeWaiting(w, len(idCount))
	listed, _, derr := waitDrained(ctx, sp.client, sp, len(idCount), cfg.drainTimeout)
	if derr != nil {
		s.DrainError = derr.Error()
		writeWarning(w, derr)
	}
	ss := mem.finish()
	if last, err := readStatus(sp.pid()); err == nil {
		last.At = time.Since(t0)
		ss = append(ss, last)
		writeSoakLastRow(w, last)
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
	writeFetching(w, len(ids), cfg.fetchers)
	ft := time.Now()
	views, fetchErrs := fetchRuns(ctx, sp, ids, cfg.fetchers)
	s.FetchTime, s.FetchErrors = time.Since(ft), len(fetchErrs)
	if len(fetchErrs) > 0 {
		s.FirstFetchError = fetchErrs[0]
	}
	writeFetched(w, s)

	// Lost: accepted and not listed, or not succeeded. Duplicated: a payload id in two runs.
	s.RunsListed = len(listed)
	s.NotSucceededByStatus = map[string]int{}
	var w2f []time.Duration
	for i := range recs {
		r := &recs[i]
		if r.execID == "" || r.status != http.StatusAccepted {
			continue
		}
		if !listedSet[r.execID] {
			s.AcceptedNotListed++
			continue
		}
		v, ok := views[r.execID]
		if !ok {
			s.AcceptedNotSucceeded++
			s.NotSucceededByStatus["unreadable"]++
			continue
		}
		if v.Status != "succeeded" {
			s.AcceptedNotSucceeded++
			s.NotSucceededByStatus[v.Status]++
		}
		if v.Trigger.Payload.Body.ID == nil || v.Trigger.Payload.Body.ID.String() != strconv.Itoa(i+1) {
			s.PayloadMismatches++
		}
		if v.FinishedAt != nil {
			w2f = append(w2f, v.FinishedAt.Sub(r.sent))
		}
	}
	s.Lost = s.AcceptedNotListed + s.AcceptedNotSucceeded
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
	acceptedSeq := map[string]bool{}
	for i := range recs {
		if recs[i].status == http.StatusAccepted && recs[i].execID != "" {
			acceptedSeq[strconv.Itoa(i+1)] = true
		}
	}
	for pid, c := range payloadRuns {
		if pid != "?" && c > 1 {
			s.Duplicated += c - 1
		}
		if !acceptedSeq[pid] {
			s.OrphanRuns += c
		}
	}
	s.Finished = len(w2f)
	s.WebhookToFinished = percentiles(w2f)

	// RSS over time.
	s.rssTrend = trendOf(ss, cfg.duration)
	s.RSSTable = make([]rssRow, 0, len(ss))
	for _, m := range ss {
		s.RSSTable = append(s.RSSTable, rssRow(m))
	}
	peak := maxMem(ss)
	s.MaxVmRSS, s.MaxRssAnon = toMiB(peak.VmRSS), toMiB(peak.RssAnon)
	writeSoakRuns(w, s)
	s.serveMetrics = scrapeServe(ctx, sp.client, sp.metrics)
	writeSoakMetrics(w, s.serveMetrics)
	if s.failed() {
		writeFail(w)
		return s, exitFailed, nil
	}
	return s, exitOK, nil
}
