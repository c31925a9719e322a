package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"
)

// Everything fuscia-load prints on stdout is written here: each figure line as it is measured,
// from the mode's typed result, and at the end the RESULT line, the whole report as JSON.
// docs/performance.md quotes these lines; keep their wording.

// report is the RESULT line: the machine, serve's start and stop, and the result of the mode
// that ran (the others are nil). Its JSON keys are sorted at every level (sortedJSON).
type report struct {
	Mode string `json:"mode"`
	machine
	ServeWorkflows int              `json:"serve_workflows"` // the workflows serve said it loaded
	FusciaVersion  *string          `json:"fuscia_version,omitempty"`
	NofileLimit    *uint64          `json:"nofile_limit,omitempty"` // slowloris: this process's open-file limit
	Bench          *benchResult     `json:"bench,omitempty"`
	Soak           *soakResult      `json:"soak,omitempty"`
	Idle           *idleResult      `json:"idle,omitempty"`
	Slowloris      *slowlorisResult `json:"slowloris,omitempty"`
	Error          string           `json:"error,omitempty"`
	ExitCode       *int             `json:"exit_code,omitempty"` // nil only if the mode panicked
	ServeStop      seconds          `json:"serve_stop_seconds"`  // SIGTERM → reaped
	ServeExit      string           `json:"serve_exit"`
	ServeKilled    bool             `json:"serve_killed"` // SIGKILLed after killAfter
	Kept           string           `json:"kept,omitempty"`
}

// writeResult writes the RESULT line.
func writeResult(w io.Writer, r *report) {
	b, err := sortedJSON(r)
	if err != nil {
		fmt.Fprintf(w, "RESULT {\"error\": %q}\n", err.Error())
		return
	}
	fmt.Fprintf(w, "RESULT %s\n", b)
}

// sortedJSON is v in JSON with the keys of every object sorted, as a map's are: the RESULT
// line's keys come out in the same order whatever the order of the fields, and the fields of
// embedded structs (absent when nil) can sit where they belong.
func sortedJSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // numbers keep their text
	var x any
	if err := d.Decode(&x); err != nil {
		return nil, err
	}
	return json.Marshal(x)
}

// ---- the run ----

func writeHeader(w io.Writer, r *report) {
	fmt.Fprintf(w, "fuscia-load %s: %d CPUs (GOMAXPROCS %d), fuscia-load built with %s, %s built with %s\n",
		r.Mode, r.CPUs, r.GOMAXPROCS, r.GoVersion, r.FusciaBinary, r.FusciaGoVersion)
	fmt.Fprintf(w, "home %s on %s (%s)\n", r.Home, r.HomeFS, r.HomeMount)
}

func writeServeStarted(w io.Writer, pid int, api, metrics string, loaded int) {
	fmt.Fprintf(w, "serve pid %d: API %s, metrics %s; %d workflow(s) loaded\n", pid, api, metrics, loaded)
}

func writeServeStopped(w io.Writer, r *report) {
	fmt.Fprintf(w, "serve stopped in %.2f s (%s)\n", float64(r.ServeStop), r.ServeExit)
	if r.Kept != "" {
		fmt.Fprintf(w, "kept: %s (home %s, workflows %s, serve's output %s)\n", r.Kept,
			filepath.Join(r.Kept, "home"), filepath.Join(r.Kept, "workflows"), filepath.Join(r.Kept, "serve.log"))
	}
}

func writeServeKilled(w io.Writer) {
	fmt.Fprintf(w, "serve did not stop within %s of SIGTERM: SIGKILL\n", killAfter)
}

// writeWaiting says the mode waits for n accepted runs to finish.
func writeWaiting(w io.Writer, n int) {
	fmt.Fprintf(w, "waiting for the %d accepted runs to finish…\n", n)
}

func writeWarning(w io.Writer, err error) { fmt.Fprintf(w, "warning: %v\n", err) }

// writeLatency writes a request → 202 latency line.
func writeLatency(w io.Writer, p pcts) {
	fmt.Fprintf(w, "request → 202 latency: p50 %s  p90 %s  p99 %s  max %s\n", ms(p.p50), ms(p.p90), ms(p.p99), ms(p.max))
}

// ---- bench ----

func writeBenchStart(w io.Writer, cfg config, url string) {
	if cfg.paced {
		fmt.Fprintf(w, "bench: %s paced at %g requests/s over %d connections POSTs %s for %s (durability strict, the default); "+
			"latency from each send: a stall over %.0f ms (connections ÷ rate) delays the requests due meanwhile uncounted\n",
			cfg.client, cfg.rate, cfg.concurrency, url, cfg.duration, float64(cfg.concurrency)/cfg.rate*1e3)
		return
	}
	fmt.Fprintf(w, "bench: %d closed-loop %s clients POST %s for %s (durability strict, the default)\n", cfg.concurrency, cfg.client, url, cfg.duration)
}

// writeBenchLoad writes what the webhook answered.
func writeBenchLoad(w io.Writer, b *benchResult) {
	fmt.Fprintf(w, "requests sent: %d in %.2f s; 202: %d  non-202: %d %v  transport errors: %d\n",
		b.Requests, float64(b.LoadSeconds), b.Accepted, b.Non202, b.Non202Codes, b.TransportErrors)
	if b.FirstError != "" {
		fmt.Fprintf(w, "first error: %s\n", b.FirstError)
	}
	fmt.Fprintf(w, "accepted runs/s: %.1f\n", float64(b.AcceptedPerS))
	writeLatency(w, b.Latency202)
}

// writeBenchRuns writes how the runs finished and serve's memory.
func writeBenchRuns(w io.Writer, b *benchResult) {
	if d := b.benchDrain; d != nil {
		fmt.Fprintf(w, "runs listed: %d %v; last run finished %.2f s after the first request (drain seen %.2f s after the last 202)\n",
			b.RunsListed, b.RunStatuses, float64(d.WebhookToFinished), float64(d.DrainSeenAfterLoad))
		fmt.Fprintf(w, "webhook-to-finished runs/s: %.1f\n", float64(d.WebhookToFinishedPerS))
	}
	fmt.Fprintf(w, "serve RSS (every 500 ms, %d samples): max VmRSS %.1f MiB  max RssAnon %.1f MiB  max RssFile %.1f MiB  VmHWM %.1f MiB  threads %d\n",
		b.RSSSamples, float64(b.MaxVmRSS), float64(b.MaxRssAnon), float64(b.MaxRssFile), float64(b.VmHWM), b.MaxThreads)
	fmt.Fprintf(w, "serve RSS while the load was sent: max VmRSS %.1f MiB  max RssAnon %.1f MiB  max RssFile %.1f MiB\n",
		float64(b.LoadMaxVmRSS), float64(b.LoadMaxRssAnon), float64(b.LoadMaxRssFile))
	if b.ServeCPUPer1000 > 0 {
		fmt.Fprintf(w, "serve CPU (user + system, first request to drained): %.0f ms per 1,000 runs\n", float64(b.ServeCPUPer1000))
	}
	if m := b.serveMetrics; m != nil {
		fmt.Fprintf(w, "metrics: fuscia_runs_total{workflow=\"hook\"} %v (sum %.0f)  process_resident_memory_bytes %.1f MiB\n",
			m.RunsTotalHook, sumValues(m.RunsTotalHook), float64(m.ResidentMemory))
	}
}

// ---- soak ----

// writeSoakStart writes what the soak sends and the header of its memory table.
func writeSoakStart(w io.Writer, n int, rate float64, url string, d time.Duration) {
	fmt.Fprintf(w, "soak: %d requests at %.1f/s (open loop, fixed schedule) to %s for %s (durability strict, the default)\n", n, rate, url, d)
	fmt.Fprintf(w, "%8s %10s %10s %10s %8s %9s %9s %10s\n", "t", "VmRSS", "RssAnon", "RssFile", "threads", "sent", "202s", "finished")
}

// writeSoakRow writes a row of the memory table: serve's sample m, the requests sent and
// accepted so far, and the runs finished by /metrics (fin, "?" when unknown).
func writeSoakRow(w io.Writer, m memSample, sent, accepted int64, fin string) {
	fmt.Fprintf(w, "%7.0fs %6.1f MiB %6.1f MiB %6.1f MiB %8d %9d %9d %10s\n", m.At.Seconds(), float64(m.VmRSS)/mib,
		float64(m.RssAnon)/mib, float64(m.RssFile)/mib, m.Threads, sent, accepted, fin)
}

// writeSoakLastRow writes the memory table's last row, once the runs finished.
func writeSoakLastRow(w io.Writer, m memSample) {
	fmt.Fprintf(w, "%7.0fs %6.1f MiB %6.1f MiB %6.1f MiB %8d  (after the runs finished)\n", m.At.Seconds(),
		float64(m.VmRSS)/mib, float64(m.RssAnon)/mib, float64(m.RssFile)/mib, m.Threads)
}

// writeSoakLoad writes what the webhook answered.
func writeSoakLoad(w io.Writer, s *soakResult) {
	fmt.Fprintf(w, "requests sent: %d of %d scheduled in %.1f s (not sent, in-flight cap %d: %d; max schedule lag %s)\n",
		s.Sent, s.Scheduled, s.LoadTime.Seconds(), soakInflightCap, s.NotSentCap, ms(time.Duration(s.MaxScheduleLag)))
	fmt.Fprintf(w, "202s: %d  non-202s: %d %v  transport errors: %d\n", s.Accepted, s.Non202, s.Non202Codes, s.TransportErrors)
	if s.FirstError != "" {
		fmt.Fprintf(w, "first error: %s\n", s.FirstError)
	}
	fmt.Fprintf(w, "distinct execution ids: %d  duplicated ids: %d\n", s.DistinctIDs, s.DuplicatedIDs)
	writeLatency(w, s.Latency202)
}

func writeFetching(w io.Writer, n, fetchers int) {
	fmt.Fprintf(w, "fetching %d runs with %d parallel GET /v1/executions/{id}…\n", n, fetchers)
}

func writeFetched(w io.Writer, s *soakResult) {
	fmt.Fprintf(w, "fetched in %.1f s (%d errors)\n", s.FetchTime.Seconds(), s.FetchErrors)
}

// writeSoakRuns writes what became of the runs and how serve's memory went.
func writeSoakRuns(w io.Writer, s *soakResult) {
	pw := s.WebhookToFinished
	fmt.Fprintf(w, "runs listed by GET /v1/executions?workflow=hook: %d\n", s.RunsListed)
	fmt.Fprintf(w, "webhook-to-finished latency (finished_at − send time, %d runs): p50 %s  p90 %s  p99 %s  max %s\n",
		s.Finished, ms(pw.p50), ms(pw.p90), ms(pw.p99), ms(pw.max))
	fmt.Fprintf(w, "accepted not listed: %d  accepted not succeeded: %d %v  payload id mismatches: %d  listed runs of no accepted request: %d\n",
		s.AcceptedNotListed, s.AcceptedNotSucceeded, s.NotSucceededByStatus, s.PayloadMismatches, s.OrphanRuns)
	fmt.Fprintf(w, "lost: %d  duplicated: %d\n", s.Lost, s.Duplicated)

	t := s.rssTrend
	fmt.Fprintf(w, "RSS  first minute avg: VmRSS %s  RssAnon %s\n", fmtMiB(t.First.vm), fmtMiB(t.First.anon))
	fmt.Fprintf(w, "RSS second minute avg: VmRSS %s  RssAnon %s\n", fmtMiB(t.Second.vm), fmtMiB(t.Second.anon))
	fmt.Fprintf(w, "RSS  last minute avg: VmRSS %s  RssAnon %s\n", fmtMiB(t.Last.vm), fmtMiB(t.Last.anon))
	fmt.Fprintf(w, "RSS slope (least squares, samples after the first minute): VmRSS %s  RssAnon %s (all samples: %s / %s)\n",
		fmtSlope(float64(t.Slopes.VM)), fmtSlope(float64(t.Slopes.Anon)), fmtSlope(float64(t.Slopes.VMAll)), fmtSlope(float64(t.Slopes.AnonAll)))
	fmt.Fprintf(w, "verdict: %s (VmRSS %s, RssAnon %s: last-minute avg within 10%% or 5 MiB of the second minute's)\n",
		t.Verdict, t.VerdictVM, t.VerdictAnon)
}

// writeSoakMetrics writes what /metrics said, if it could be read (m not nil).
func writeSoakMetrics(w io.Writer, m *serveMetrics) {
	if m == nil {
		return
	}
	fmt.Fprintf(w, "metrics: fuscia_runs_total{workflow=\"hook\"} %v  process_resident_memory_bytes %.1f MiB\n",
		m.RunsTotalHook, float64(m.ResidentMemory))
}

func writeFail(w io.Writer) { fmt.Fprintln(w, "FAIL: accepted runs were lost or duplicated") }

// ---- idle ----

func writeIdleStart(w io.Writer, written, loaded int) {
	fmt.Fprintf(w, "idle: %d workflows written (webhook + transform, schedule \"0 3 * * *\" + transform, manual + wait); serve loaded %d\n", written, loaded)
}

// writeIdleSample writes sample s under label, its key in RESULT.
func writeIdleSample(w io.Writer, label string, s *idleSample) {
	extra := ""
	if s.ResidentMemory != nil {
		extra = fmt.Sprintf("  (metrics: process_resident_memory_bytes %.1f MiB", float64(*s.ResidentMemory))
		if s.Goroutines != nil {
			extra += fmt.Sprintf(", go_goroutines %.0f", *s.Goroutines)
		}
		extra += ")"
	}
	fmt.Fprintf(w, "%s: VmRSS %.1f MiB  RssAnon %.1f MiB  RssFile %.1f MiB  VmHWM %.1f MiB  threads %d%s\n", label,
		float64(s.VmRSS), float64(s.RssAnon), float64(s.RssFile), float64(s.VmHWM), s.Threads, extra)
}

// ---- slowloris ----

// writeFileLimit warns when the open-file limit is below what the flood needs.
func writeFileLimit(w io.Writer, lim fileLimit) {
	if lim.cur < uint64(lim.need) {
		fmt.Fprintf(w, "slowloris: the open-file limit is %d, below the %d connections asked for: some dials will fail\n", lim.cur, lim.need)
	}
}

func writeFloodBaseline(w io.Writer, r *slowlorisResult) {
	fmt.Fprintf(w, "slowloris: serve at rest: VmRSS %s, VmHWM %s\n", fmtMiB(float64(r.BaselineVmRSS)), fmtMiB(float64(r.BaselineVmHWM)))
}

func writeFloodAtRest(w io.Writer, r *slowlorisResult) {
	fmt.Fprintf(w, "at rest: 300 KiB headers: %d of 10 refused with 431\n", r.AtRest431)
}

// writeFloodPhase writes what a phase measured.
func writeFloodPhase(w io.Writer, p *floodPhaseResult) {
	fmt.Fprintf(w, "%s: %d connections opened (%d dial errors), %d closed by serve", p.Name, p.Dials, p.DialErrors, p.ClosedByServe)
	if p.MeanConnection != nil {
		fmt.Fprintf(w, " after %.2f s on average", float64(*p.MeanConnection))
	}
	fmt.Fprintf(w, "; peak VmRSS %s, VmHWM %s, %d threads\n", fmtMiB(float64(p.PeakVmRSS)), fmtMiB(float64(p.VmHWM)), p.PeakThreads)
	if h := p.Health; h != nil {
		fmt.Fprintf(w, "%s: GET /v1/health on a new connection: %d answered, p50 %s, p90 %s, max %s; %d failed\n",
			p.Name, p.HealthProbes, ms(h.p50), ms(h.p90), ms(h.max), p.HealthProbeFailures)
	} else {
		fmt.Fprintf(w, "%s: GET /v1/health on a new connection: none answered, %d failed\n", p.Name, p.HealthProbeFailures)
	}
	if h := p.hugeHeaders; h != nil {
		fmt.Fprintf(w, "%s: 300 KiB headers: %d of %d refused with 431, %d closed unanswered, %d answered otherwise\n",
			p.Name, h.Refused431, h.total(), h.Closed, h.Other)
	}
}

// writeFloodAfter writes serve's memory over and after the floods.
func writeFloodAfter(w io.Writer, a *floodAfter) {
	fmt.Fprintf(w, "slowloris: peak VmRSS %s, VmHWM %s (target %d MB: %s); 5 s after the floods VmRSS %s\n",
		fmtMiB(float64(a.PeakVmRSS)), fmtMiB(float64(a.VmHWM)), floodTargetMiB,
		map[bool]string{true: "met", false: "NOT met"}[a.WithinTarget], fmtMiB(float64(a.After5sVmRSS)))
}
