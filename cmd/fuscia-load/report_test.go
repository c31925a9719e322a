package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// update rewrites testdata/*.golden from the current rendering:
//
//	go test ./cmd/fuscia-load -run TestReportGolden -update
//
// bench, idle, slowloris and soak.golden are the output of real runs of the tool from before
// it was split into files (its results were maps then); the results below hold the figures of
// those runs, so the typed rendering must print them byte for byte. Do not -update them unless
// the output format changes on purpose (docs/performance.md quotes it). edges.golden covers
// the lines that only some runs print.
var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current rendering")

// mb is x MiB in bytes, to the byte: its figures print and round back to x.
func mb(x float64) int64 { return int64(math.Round(x * mib)) }

func us(n int64) time.Duration { return time.Duration(n) * time.Microsecond }

func ptr[T any](v T) *T { return &v }

// testMachine is the machine of the golden runs, home aside.
func testMachine(home string) machine {
	return machine{CPUs: 2, GOMAXPROCS: 2, GoVersion: "go1.26.8", FusciaGoVersion: "go1.26.8",
		FusciaBinary: "/tmp/fl/fuscia", Home: home, HomeFS: "ext4", HomeMount: "/"}
}

// finish writes the lines every run ends with.
func finish(w io.Writer, r *report, code int) {
	r.ExitCode = &code
	writeServeStopped(w, r)
	writeResult(w, r)
}

func goldenBench(w io.Writer) {
	r := &report{Mode: "bench", machine: testMachine("/tmp/fuscia-load-571755956/home"), ServeWorkflows: 1,
		FusciaVersion: ptr("0.1.0-dev"), ServeStop: 0.15, ServeExit: "exit 0"}
	writeHeader(w, r)
	writeServeStarted(w, 12643, "http://127.0.0.1:33623", "http://127.0.0.1:37683/metrics", 1)
	cfg := config{concurrency: 8, client: "go", duration: 3 * time.Second}
	writeBenchStart(w, cfg, "http://127.0.0.1:33623/hooks/in")
	b := &benchResult{Duration: 3, Concurrency: 8, Client: "go", LoadSeconds: 3.001, Requests: 1950, Accepted: 1950,
		Non202Codes: map[string]int{}, AcceptedPerS: 649.7,
		Latency202: pcts{p50: us(8361), p90: us(19367), p99: us(73911), max: us(160978)}}
	writeBenchLoad(w, b)
	writeWaiting(w, b.Accepted)
	b.RunsListed, b.RunStatuses = 1950, map[string]int{"succeeded": 1950}
	b.benchDrain = &benchDrain{WebhookToFinished: 3.027, WebhookToFinishedPerS: 644.2, DrainSeenAfterLoad: 0.031}
	b.RSSSamples, b.MaxVmRSS, b.MaxRssAnon, b.MaxRssFile, b.VmHWM, b.MaxThreads = 7, 54.8, 22.9, 31.9, 58, 9
	b.serveMetrics = &serveMetrics{ResidentMemory: 56.7, RunsTotalHook: map[string]float64{"succeeded": 1950}}
	writeBenchRuns(w, b)
	r.Bench = b
	finish(w, r, exitOK)
}

func goldenIdle(w io.Writer) {
	r := &report{Mode: "idle", machine: testMachine("/tmp/fuscia-load-1708893984/home"), ServeWorkflows: 4,
		FusciaVersion: ptr("0.1.0-dev"), ServeStop: 0.108, ServeExit: "exit 0"}
	writeHeader(w, r)
	writeServeStarted(w, 12794, "http://127.0.0.1:38979", "http://127.0.0.1:33407/metrics", 4)
	writeIdleStart(w, 4, 4)
	r.Idle = &idleResult{Workflows: 4, WorkflowsLoaded: 4,
		After5s: &idleSample{VmRSS: 35.4, RssAnon: 7.4, RssFile: 28.1, VmHWM: 35.4, Threads: 9,
			ResidentMemory: ptr(mebibytes(35.4)), Goroutines: ptr(31.0)},
		After15s: &idleSample{VmRSS: 35.6, RssAnon: 7.5, RssFile: 28.1, VmHWM: 35.6, Threads: 9,
			ResidentMemory: ptr(mebibytes(35.4)), Goroutines: ptr(31.0)}}
	writeIdleSample(w, "after_5s", r.Idle.After5s)
	writeIdleSample(w, "after_15s", r.Idle.After15s)
	finish(w, r, exitOK)
}

func goldenSlowloris(w io.Writer) {
	r := &report{Mode: "slowloris", machine: testMachine("/tmp/fuscia-load-3994896230/home"), ServeWorkflows: 1,
		FusciaVersion: ptr("0.1.0-dev"), ServeStop: 0.053, ServeExit: "exit 0", NofileLimit: ptr(uint64(20000))}
	writeHeader(w, r)
	writeServeStarted(w, 13422, "http://127.0.0.1:35517", "http://127.0.0.1:35857/metrics", 1)
	writeFileLimit(w, fileLimit{cur: 20000, need: 50 + 20 + 256})
	s := &slowlorisResult{BaselineVmRSS: 35.1, BaselineVmHWM: 35.1, Duration: 3, TargetMiB: floodTargetMiB,
		Connections: 50, HeaderConnections: 20, HeaderKiB: 60}
	writeFloodBaseline(w, s)
	s.AtRest431 = 10
	writeFloodAtRest(w, s)
	s.SlowPhase = &floodPhaseResult{Name: "slowloris", Dials: 50, PeakVmRSS: 38.3, VmHWM: 38.3, PeakThreads: 9,
		HealthProbes: 5, Health: &pcts{p50: us(2763), p90: us(3718), p99: us(3718), max: us(3718)}}
	writeFloodPhase(w, s.SlowPhase)
	s.BigPhase = &floodPhaseResult{Name: "big headers", Dials: 20, PeakVmRSS: 40.2, VmHWM: 40.2, PeakThreads: 9,
		HealthProbes: 5, Health: &pcts{p50: us(2630), p90: us(10360), p99: us(10360), max: us(10360)},
		hugeHeaders: &hugeHeaders{Refused431: 10}}
	writeFloodPhase(w, s.BigPhase)
	s.floodAfter = &floodAfter{After5sVmRSS: 40.2, PeakVmRSS: 40.2, VmHWM: 40.2, WithinTarget: true}
	writeFloodAfter(w, s.floodAfter)
	r.Slowloris = s
	finish(w, r, exitOK)
}

func goldenSoak(w io.Writer) {
	r := &report{Mode: "soak", machine: testMachine("/tmp/fuscia-load-886946808/home"), ServeWorkflows: 1,
		FusciaVersion: ptr("0.1.0-dev"), ServeStop: 0.143, ServeExit: "exit 0"}
	writeHeader(w, r)
	writeServeStarted(w, 13285, "http://127.0.0.1:46499", "http://127.0.0.1:41999/metrics", 1)
	writeSoakStart(w, 100, 20, "http://127.0.0.1:46499/hooks/in", 5*time.Second)
	first := memSample{VmRSS: mb(35.1), RssAnon: mb(7), RssFile: mb(28.2), Threads: 8}
	writeSoakRow(w, first, 1, 0, "0")
	s := &soakResult{Duration: 5, Rate: 20, Scheduled: 100, Sent: 100, MaxScheduleLag: millis(us(22015)),
		LoadTime: 5 * time.Second, Accepted: 100, Non202Codes: map[string]int{}, DistinctIDs: 100,
		Latency202: pcts{p50: us(4984), p90: us(14378), p99: us(36305), max: us(69993)}}
	writeSoakLoad(w, s)
	writeWaiting(w, s.DistinctIDs)
	last := memSample{At: 5100 * time.Millisecond, VmRSS: mb(40), RssAnon: mb(11.6), RssFile: mb(28.4), Threads: 9}
	writeSoakLastRow(w, last)
	writeFetching(w, 100, 16)
	s.FetchTime = 100 * time.Millisecond
	writeFetched(w, s)
	s.RunsListed, s.NotSucceededByStatus, s.Finished = 100, map[string]int{}, 100
	s.WebhookToFinished = pcts{p50: us(6951), p90: us(19994), p99: us(40158), max: us(80752)}
	s.RSSTable = []rssRow{rssRow(first), rssRow(last)}
	s.MaxVmRSS, s.MaxRssAnon = 40, 11.6
	nan := math.NaN()
	s.rssTrend = rssTrend{First: memAvg{37.6, 9.3}, Second: memAvg{nan, nan}, Last: memAvg{37.6, 9.3},
		Slopes:  rssSlopes{VM: slope(nan), Anon: slope(nan), VMAll: 57.668, AnonAll: 55.219},
		Verdict: "n/a (needs -duration 3m or more)", VerdictVM: "n/a", VerdictAnon: "n/a"}
	writeSoakRuns(w, s)
	s.serveMetrics = &serveMetrics{ResidentMemory: 40.4, RunsTotalHook: map[string]float64{"succeeded": 100}}
	writeSoakMetrics(w, s.serveMetrics)
	r.Soak = s
	finish(w, r, exitOK)
}

// goldenEdges prints the lines only some runs print: errors, a missing drain or scrape, a
// soak that lost runs, a phase whose connections serve closed and whose probes all failed,
// a low file limit, a kept home, a failed mode.
func goldenEdges(w io.Writer) {
	r := &report{Mode: "bench", machine: testMachine("/tmp/h/home"), ServeWorkflows: 1, ServeStop: 41.5,
		ServeExit: "signal: killed", ServeKilled: true, Kept: "/tmp/h", Error: "the accepted runs did not all finish"}
	b := &benchResult{Duration: 2, Concurrency: 4, Client: "wrk", LoadSeconds: 2.0049, Requests: 10, Accepted: 7,
		Non202: 3, Non202Codes: map[string]int{"not 2xx": 3}, TransportErrors: 2,
		FirstError: "Socket errors: connect 0, read 2, write 0, timeout 0", AcceptedPerS: perSecond(7 / 2.0049),
		RunsListed: 6, RunStatuses: map[string]int{"running": 1, "succeeded": 5}, RSSSamples: 5,
		MaxVmRSS: toMiB(mb(30.25)), MaxThreads: 7}
	writeBenchLoad(w, b)
	writeBenchRuns(w, b)
	writeWarning(w, errors.New("the accepted runs did not all finish"))
	r.Bench = b // no drain, no metrics: their keys are absent
	s := &soakResult{Scheduled: 3, Sent: 2, NotSentCap: 1, Non202: 1, Non202Codes: map[string]int{"503": 1},
		FirstError: "HTTP 503", RunsListed: 1, AcceptedNotListed: 1, AcceptedNotSucceeded: 1,
		NotSucceededByStatus: map[string]int{"failed": 1}, Lost: 2, Duplicated: 1}
	s.rssTrend = trendOf(nil, time.Second)
	writeSoakLoad(w, s)
	writeSoakRuns(w, s)
	writeSoakMetrics(w, nil)
	writeFail(w)
	writeFileLimit(w, fileLimit{cur: 1024, need: 4756})
	writeFloodPhase(w, &floodPhaseResult{Name: "slowloris", Dials: 3100, DialErrors: 4, ClosedByServe: 100,
		MeanConnection: ptr(centiseconds(2.815)), PeakVmRSS: 66.1, VmHWM: 66.1, PeakThreads: 12, HealthProbeFailures: 3,
		hugeHeaders: &hugeHeaders{Refused431: 8, Closed: 1, Other: 1}})
	writeFloodAfter(w, &floodAfter{After5sVmRSS: 91, PeakVmRSS: 121, VmHWM: 160, WithinTarget: false})
	finish(w, r, exitError)
}

func TestReportGolden(t *testing.T) {
	for name, write := range map[string]func(io.Writer){
		"bench": goldenBench, "idle": goldenIdle, "slowloris": goldenSlowloris, "soak": goldenSoak, "edges": goldenEdges,
	} {
		t.Run(name, func(t *testing.T) {
			var got bytes.Buffer
			write(&got)
			path := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./cmd/fuscia-load -run TestReportGolden -update writes it)", err)
			}
			if got.String() != string(want) {
				t.Errorf("the output differs from %s:\n%s", path, lineDiff(string(want), got.String()))
			}
		})
	}
}

// lineDiff lists the lines of want and got that differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %s\n  got  %s\n", i+1, wl, gl)
		}
	}
	return b.String()
}

// The RESULT line's objects have their keys sorted at every level, whatever the order of the
// fields, and a nil embedded struct leaves no key behind.
func TestSortedJSON(t *testing.T) {
	type inner struct {
		B int `json:"b"`
		A int `json:"a"`
	}
	type group struct {
		Y int `json:"y"`
		C int `json:"c"`
	}
	type outer struct {
		Z     []inner `json:"z"`
		M     map[string]int
		Big   float64 `json:"big"`
		Small float64 `json:"small"`
		*group
	}
	b, err := sortedJSON(outer{Z: []inner{{2, 1}}, M: map[string]int{"q": 1, "p": 2}, Big: 1e21, Small: 0.1, group: &group{Y: 5, C: 6}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"M":{"p":2,"q":1},"big":1e+21,"c":6,"small":0.1,"y":5,"z":[{"a":1,"b":2}]}`; string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	b, err = sortedJSON(outer{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"M":null,"big":0,"small":0,"z":null}`; string(b) != want {
		t.Errorf("a nil embedded struct: got %s, want %s", b, want)
	}
}

// Every figure type rounds as the RESULT line always has, and NaN or ±Inf (a rate over no
// time) is 0, or null for a slope with no samples.
func TestFigureJSON(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{mebibytes(30.25), "30.3"}, // half away from zero, where %.1f prints 30.2
		{toMiB(mb(35.1)), "35.1"},
		{toMiB(0), "0"},
		{seconds(3.0014), "3.001"},
		{seconds(math.Inf(1)), "0"},
		{centiseconds(2.815), "2.82"},
		{perSecond(649.74), "649.7"},
		{perSecond(math.NaN()), "0"},
		{millis(us(22015)), "22.015"},
		{millis(1500), "0.002"},
		{slope(math.NaN()), "null"},
		{slope(-1.23456), "-1.235"},
		{memAvg{math.NaN(), math.NaN()}, "null"},
		{memAvg{37.56, 9.34}, `{"rssanon":9.3,"vmrss":37.6}`},
		{pcts{}, `{"max":0,"p50":0,"p90":0,"p99":0}`},
		{rssRow{At: 5149 * time.Millisecond, VmRSS: mb(40), RssAnon: mb(11.6), RssFile: mb(28.4), Threads: 9},
			`{"rssanon_mib":11.6,"rssfile_mib":28.4,"t_s":5.1,"threads":9,"vmrss_mib":40}`},
	} {
		b, err := json.Marshal(c.v)
		if err != nil {
			t.Fatalf("%T %v: %v", c.v, c.v, err)
		}
		if string(b) != c.want {
			t.Errorf("%T %v: got %s, want %s", c.v, c.v, b, c.want)
		}
	}
}
