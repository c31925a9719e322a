//go:build linux

package main

// The crash matrix (docs/state.md, "Crash matrix"): `fuscia serve` under webhook load and
// `fuscia apply`/`resume` of a fan-out chain are SIGKILLed again and again, each time at a chosen
// moment of the state store's life — Badger creating a memtable log or a value-log file, writing
// or deleting a table (flushes and compactions), the journal's WAL creating or removing a segment
// (rotation, checkpoint) — found by watching the store's directory with inotify, or at a random
// time, or during startup (WAL replay, resume). The store runs with FUSCIA_TEST_STORE=small so
// that those moments come every few runs. After every kill:
//
//   - the store opens, the first time, through the binary (`executions list -json` exits 0);
//   - every acknowledged run is there: each webhook answered 202, each run whose apply printed
//     execution_started, and each node_finished (and execution_finished) an apply or resume
//     printed is in the journal with that status;
//   - no finished node ran again: in the journal no instance starts (attempt_started or
//     node_started) after its node_finished, seqs run 1, 2, 3… without a gap, and the side
//     effect of every node found finished (a request to a counting HTTP server) is never
//     repeated afterwards.
//
// Every few kills the home is settled (serve restarted, or runs resumed, without a kill): every
// run must then have succeeded with the right outputs. FUSCIA_CRASH_KILLS sets the number of
// kills (default crashDefaultKills, what `make test` runs; `make crash` runs 500).

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/syncbuf"
)

const (
	// crashKillsEnv sets the number of kills; crashDefaultKills is `make test`'s.
	crashKillsEnv     = "FUSCIA_CRASH_KILLS"
	crashDefaultKills = 32
	// crashEpochKills is the number of kills in one home before it is settled and a new one
	// starts: the store grows over an epoch, so its later kills meet deeper compactions.
	crashEpochKills = 8
	// crashPointWait is how long a cycle waits for its kill point before killing anyway;
	// crashSkips bounds how many events of the point it lets pass first (chosen at random), so
	// that kills land at the first rotation after a start and at later ones.
	crashPointWait = 8 * time.Second
	crashSkips     = 4
	// crashSenders send webhooks concurrently; crashCycleRuns bounds the webhooks acknowledged
	// by one serve process (the load stops there, the runs go on).
	crashSenders   = 4
	crashCycleRuns = 400
	// crashFanItems is the width of the apply workflow's fan-out.
	crashFanItems = 60
	// crashSettle bounds the wait for every run of a home to finish once nothing is killed.
	crashSettle = 3 * time.Minute
)

// The kill points. The fs ones are inotify events in the state directory or its wal/.
const (
	pointMemCreated  = "mem+"
	pointMemRemoved  = "mem-"
	pointVlogCreated = "vlog+"
	pointSstCreated  = "sst+"
	pointSstRemoved  = "sst-"
	pointWALCreated  = "wal+"
	pointWALRemoved  = "wal-"
	pointRandom      = "random"
	pointStartup     = "startup"
	pointDeadline    = "deadline"
)

// crashPoints is the rotation of kill points: each cycle takes the next.
var crashPoints = []string{
	pointMemCreated, pointVlogCreated, pointSstCreated, pointWALCreated, pointRandom,
	pointSstRemoved, pointMemRemoved, pointWALRemoved, pointStartup,
}

var crashPointText = map[string]string{
	pointMemCreated:  "memtable rotation (a new *.mem)",
	pointMemRemoved:  "memtable flushed (its *.mem removed)",
	pointVlogCreated: "value-log rotation (a new *.vlog)",
	pointSstCreated:  "table written by a flush or a compaction (a new *.sst)",
	pointSstRemoved:  "compaction done (its input *.sst removed)",
	pointWALCreated:  "WAL segment rotation (a wal/*.log created or reused)",
	pointWALRemoved:  "WAL checkpoint (a wal/*.log removed or kept for reuse)",
	pointRandom:      "a random time under load",
	pointStartup:     "startup: store open, WAL replay, resume of unfinished runs",
	pointDeadline:    "its point not reached within 8 s: killed then",
}

// crashHookWorkflow is serve's: one webhook, four requests to the counting server per run, the
// payload (4.5 KiB) and the last output (64 KiB) over Badger's 4 KiB value threshold: they go
// to the value log, whose 1 MiB files (FUSCIA_TEST_STORE=small) then rotate every ~15 runs.
const crashHookWorkflow = `workflow "crashhook" {}

variable "base" { type = string }

trigger "webhook" "in" { path = "/hooks/crash" }

task "fetch" {
  uses   = builtin.http
  inputs = { url = "${var.base}/w/${trigger.payload.body.n}/fetch" }
}

task "fan" {
  uses     = builtin.http
  for_each = ["x", "y"]
  after    = [task.fetch]
  inputs   = { url = "${var.base}/w/${trigger.payload.body.n}/fan-${each.value}" }
}

task "last" {
  uses   = builtin.http
  after  = [task.fan]
  inputs = { url = "${var.base}/w/${trigger.payload.body.n}/last?kib=64" }
}

output "path" { value = task.last.output.body.path }
`

// crashChainWorkflow is apply's: a head, a fan-out of crashFanItems outputs, alternately 40 KiB
// (to the value log) and 3 KiB (kept in the LSM tree: they fill memtables), and a chain. One
// run writes more than a memtable, a value-log file and a WAL segment of the small store: a
// process opens new ones, so only a run that fills them rotates them under load.
var crashChainWorkflow = fmt.Sprintf(`workflow "crashchain" {}

variable "base" { type = string }
variable "tag" { type = string }

task "head" {
  uses   = builtin.http
  inputs = { url = "${var.base}/a/${var.tag}/head" }
}

task "fan" {
  uses     = builtin.http
  for_each = %s
  after    = [task.head]
  inputs   = { url = "${var.base}/a/${var.tag}/fan/${each.value}?kib=${each.value %% 2 == 0 ? 40 : 3}" }
}

task "mid" {
  uses   = builtin.http
  after  = [task.fan]
  inputs = { url = "${var.base}/a/${var.tag}/mid?kib=16" }
}

task "tail" {
  uses   = builtin.http
  after  = [task.mid]
  inputs = { url = "${var.base}/a/${var.tag}/tail" }
}

output "count" { value = length(task.fan.output) }
output "tail" { value = task.tail.output.body.path }
`, fanList())

func fanList() string {
	items := make([]string, crashFanItems)
	for i := range items {
		items[i] = strconv.Itoa(i)
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// effects is the counting server: every request is a node's side effect, counted by path. It
// answers {"path": …}, padded by N KiB with ?kib=N.
type effects struct {
	*httptest.Server
	mu     sync.Mutex
	counts map[string]int
}

func newEffects(t *testing.T) *effects {
	fx := &effects{counts: map[string]int{}}
	fx.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fx.mu.Lock()
		fx.counts[r.URL.Path]++
		fx.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if kib, _ := strconv.Atoi(r.URL.Query().Get("kib")); kib > 0 {
			fmt.Fprintf(w, `{"path": %q, "pad": %q}`, r.URL.Path, strings.Repeat("p", kib<<10))
			return
		}
		fmt.Fprintf(w, `{"path": %q}`, r.URL.Path)
	}))
	t.Cleanup(fx.Close)
	return fx
}

func (fx *effects) count(path string) int {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return fx.counts[path]
}

// crashMatrix is one run of the matrix and its figures.
type crashMatrix struct {
	t      *testing.T
	fx     *effects
	client *http.Client
	nextN  atomic.Int64 // the last webhook number sent
	epochs int
	point  map[string]int // next index into crashPoints, by mode

	kills      int
	modeKills  map[string]int // kills by mode ("serve", "apply")
	hits       map[string]int // kills by point
	missed     map[string]int // pointDeadline kills, by the point they waited for
	seen       map[string]int // store events seen while a kill was armed, by mode and point
	failed     int            // kills (or settles) after which a check failed
	violations []string
	refused    map[string]int // webhook answers other than 202, by status (or "error")
	acked      int            // webhooks answered 202
	applied    int            // runs acknowledged by apply
	runs       int            // runs checked to the end
}

// crashEpoch is one home and what has been acknowledged and observed in it.
type crashEpoch struct {
	mode  string // "serve" or "apply"
	h     *harness
	watch *storeWatch
	// acked: execution id → what acknowledged it.
	acked map[string]string
	// printed: execution id → node → status of the node_finished events apply/resume printed;
	// printedEnd: the status of their execution_finished.
	printed    map[string]map[string]string
	printedEnd map[string]string
	// done: the runs found finished (their journal checked for good), with their status.
	done map[string]string
	// snaps: side-effect path → its count when its node was first found finished.
	snaps map[string]int
	// unfinished: runs of an apply epoch to resume, oldest first; tags counts applies.
	unfinished []string
	tags       int
	// startup is how long the last process took to serve (serve) or to print its first event
	// (apply, resume): startup kills land within it.
	startup time.Duration
}

func TestCrashMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash matrix is slow")
	}
	kills := crashDefaultKills
	if v := os.Getenv(crashKillsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a number of kills", crashKillsEnv, v)
		}
		kills = n
	}
	m := &crashMatrix{
		t: t, fx: newEffects(t),
		client:    &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: crashSenders}},
		point:     map[string]int{},
		hits:      map[string]int{},
		modeKills: map[string]int{},
		missed:    map[string]int{},
		seen:      map[string]int{},
		refused:   map[string]int{},
	}
	start := time.Now()
	// Every cycle but a failed start kills; the bound only stops a matrix whose processes keep
	// ending by themselves.
	for cycles := 0; m.kills < kills && cycles < 4*kills; {
		mode := "serve"
		if m.epochs%2 == 1 {
			mode = "apply"
		}
		ep := m.newEpoch(mode)
		for i := 0; i < crashEpochKills && m.kills < kills; i++ {
			cycles++
			if !m.cycle(ep) {
				break // the home is broken: settle what can be, start a new one
			}
		}
		m.settle(ep)
		if t.Failed() && len(m.violations) == 0 {
			break // a harness error (t.Fatal in a helper) already stopped the test
		}
	}
	m.report(time.Since(start))
	if m.kills < kills {
		t.Errorf("only %d of %d kills landed", m.kills, kills)
	}
}

func (m *crashMatrix) newEpoch(mode string) *crashEpoch {
	m.epochs++
	h := newHarness(m.t)
	ep := &crashEpoch{
		mode: mode, h: h,
		acked: map[string]string{}, printed: map[string]map[string]string{}, printedEnd: map[string]string{},
		done: map[string]string{}, snaps: map[string]int{},
	}
	if mode == "serve" {
		h.write("crash.fsc.hcl", crashHookWorkflow)
	} else {
		h.write("crash.fsc.hcl", crashChainWorkflow)
	}
	return ep
}

// nextPoint takes the next kill point of mode's rotation.
func (m *crashMatrix) nextPoint(mode string) string {
	i := m.point[mode]
	m.point[mode] = i + 1
	return crashPoints[i%len(crashPoints)]
}

// fail records the violations found after a kill (or a settle).
func (m *crashMatrix) fail(when string, violations []string) {
	if len(violations) == 0 {
		return
	}
	m.failed++
	for _, v := range violations {
		m.violations = append(m.violations, when+": "+v)
	}
}

// cycle runs one process of ep to its kill and checks the store; false when the home cannot go
// on (its store did not open, or serve did not start).
func (m *crashMatrix) cycle(ep *crashEpoch) bool {
	point := m.nextPoint(ep.mode)
	var hit string
	var problems []string
	if ep.mode == "serve" {
		hit, problems = m.killServe(ep, point)
	} else {
		hit, problems = m.killApply(ep, point)
	}
	when := fmt.Sprintf("%s kill %d (%s, home %s)", ep.mode, m.kills+1, point, ep.h.home)
	if hit == "" {
		m.fail(when, problems)
		return len(problems) == 0
	}
	m.kills++
	m.modeKills[ep.mode]++
	m.hits[hit]++
	if hit == pointDeadline {
		m.missed[point]++
	}
	violations, ok := m.check(ep, false)
	m.fail(when, append(problems, violations...))
	return ok
}

// ---------------------------------------------------------------------------------------------
// Processes

// crashProc is one fuscia process of the matrix.
type crashProc struct {
	cmd            *exec.Cmd
	stdout, stderr *syncbuf.Buffer
	exited         chan struct{}
	started        time.Time
}

func (m *crashMatrix) launch(ep *crashEpoch, args ...string) *crashProc {
	m.t.Helper()
	cmd := exec.Command(fusciaBin, args...)
	cmd.Dir = ep.h.dir
	cmd.Env = append(baseEnv(), "FUSCIA_HOME="+ep.h.home, "FUSCIA_TEST_STORE=small", "FUSCIA_LOG_LEVEL=warn",
		"FUSCIA_VAR_base="+m.fx.URL)
	p := &crashProc{cmd: cmd, stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		m.t.Fatalf("start fuscia %s: %v", strings.Join(args, " "), err)
	}
	p.started = time.Now()
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	m.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
	})
	return p
}

// startupDelay is when to kill a process during its startup: a random time within the last
// startup's length.
func startupDelay(ep *crashEpoch) time.Duration {
	d := max(ep.startup, 50*time.Millisecond)
	return time.Duration(rand.Int64N(int64(d)))
}

// kill sends SIGKILL (a no-op once the process has been reaped: os.Process knows).
func (p *crashProc) kill() { _ = p.cmd.Process.Signal(syscall.SIGKILL) }

// reap waits for the process to be gone; SIGKILL ends any process promptly.
func (p *crashProc) reap(t *testing.T) {
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("fuscia %s not reaped 30s after SIGKILL", strings.Join(p.cmd.Args[1:], " "))
	}
}

// killed reports whether the process ended by SIGKILL (rather than by itself).
func (p *crashProc) killed() bool {
	ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

func (p *crashProc) done() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

func (p *crashProc) String() string {
	return fmt.Sprintf("fuscia %s (%s)\n--- stdout:\n%s\n--- stderr:\n%s", strings.Join(p.cmd.Args[1:], " "), p.cmd.ProcessState, tailOf(p.stdout.String()), tailOf(p.stderr.String()))
}

// tailOf is the end of a long output.
func tailOf(s string) string {
	if len(s) > 3000 {
		return "…" + s[len(s)-3000:]
	}
	return s
}

// waitFor polls the process's stdout until cond holds; false if it exited first or limit
// passed.
func (p *crashProc) waitFor(limit time.Duration, cond func(stdout string) bool) bool {
	deadline := time.Now().Add(limit)
	for !cond(p.stdout.String()) {
		if p.done() || time.Now().After(deadline) {
			return cond(p.stdout.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// killAt waits for point (or its timer) while the process runs, kills it, reaps it and
// returns the point that killed it: "" when it ended by itself. Past deadline it kills at once
// (pointDeadline).
func (m *crashMatrix) killAt(ep *crashEpoch, p *crashProc, point string, skip *int, deadline time.Time) string {
	var timer <-chan time.Time
	var fired <-chan struct{}
	switch point {
	case pointRandom:
		timer = time.After(time.Duration(20+rand.IntN(1500)) * time.Millisecond)
	default:
		fired = ep.watch.arm(p, point, *skip)
	}
	late := time.NewTimer(time.Until(deadline))
	defer late.Stop()
	hit := point
	select {
	case <-fired:
	case <-timer:
	case <-late.C:
		hit = pointDeadline
	case <-p.exited:
	}
	if fired != nil {
		var ok bool
		if ok, *skip = ep.watch.disarm(); ok {
			hit = point
		}
	}
	p.kill()
	p.reap(m.t)
	if !p.killed() {
		return ""
	}
	return hit
}

// ---------------------------------------------------------------------------------------------
// serve

// killServe starts serve in ep's home, loads it with webhooks and kills it at point. It returns
// the point that killed it ("" when it was not killed) and what went wrong.
func (m *crashMatrix) killServe(ep *crashEpoch, point string) (string, []string) {
	p := m.launch(ep, "serve", "crash.fsc.hcl", "-listen", "127.0.0.1:0", "-shutdown-grace", "1s")
	if point == pointStartup {
		time.Sleep(startupDelay(ep)) // when to kill, not a wait for something
		hit := pointStartup
		if servingLineRE.MatchString(p.stdout.String()) {
			hit = pointRandom
		}
		p.kill()
		p.reap(m.t)
		if !p.killed() {
			return "", []string{"serve ended by itself during startup:\n" + p.String()}
		}
		return hit, nil
	}
	base, problem := m.waitServing(ep, p)
	if problem != "" {
		return "", []string{problem}
	}
	if ep.watch == nil {
		ep.watch = watchStore(m.t, filepath.Join(ep.h.home, "state"))
	}
	load := m.startLoad(base)
	skip := rand.IntN(crashSkips)
	hit := m.killAt(ep, p, point, &skip, time.Now().Add(crashPointWait))
	for n, id := range load.finish() {
		ep.acked[id] = fmt.Sprintf("webhook #%d answered 202", n)
	}
	m.client.Transport.(*http.Transport).CloseIdleConnections()
	if hit == "" {
		return "", []string{"serve ended by itself under load:\n" + p.String()}
	}
	return hit, nil
}

// waitServing waits for serve to say it serves; it returns the API's base URL, or a problem.
func (m *crashMatrix) waitServing(ep *crashEpoch, p *crashProc) (string, string) {
	if !p.waitFor(60*time.Second, servingLineRE.MatchString) {
		p.kill()
		p.reap(m.t)
		return "", "serve did not start (after the previous kill):\n" + p.String()
	}
	ep.startup = time.Since(p.started)
	mm := apiLineRE.FindStringSubmatch(p.stdout.String())
	if mm == nil {
		return "", "serve printed no API address:\n" + p.String()
	}
	return mm[1], ""
}

// hookLoad is the webhook senders of one serve process.
type hookLoad struct {
	m      *crashMatrix
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	acked  map[int64]string // webhook number → execution id, for every 202
}

// startLoad starts crashSenders goroutines posting webhooks to base until finish, or until
// crashCycleRuns were acknowledged.
func (m *crashMatrix) startLoad(base string) *hookLoad {
	ctx, cancel := context.WithCancel(context.Background())
	l := &hookLoad{m: m, cancel: cancel, acked: map[int64]string{}}
	pad := strings.Repeat("q", 4600)
	for range crashSenders {
		l.wg.Go(func() {
			for ctx.Err() == nil {
				l.mu.Lock()
				enough := len(l.acked) >= crashCycleRuns
				l.mu.Unlock()
				if enough {
					<-ctx.Done()
					return
				}
				n := m.nextN.Add(1)
				body := fmt.Sprintf(`{"n": %d, "pad": %q}`, n, pad)
				if !l.send(ctx, base, n, body) {
					// serve is gone (killed): no point hammering a closed port.
					select {
					case <-ctx.Done():
					case <-time.After(20 * time.Millisecond):
					}
				}
			}
		})
	}
	return l
}

// send posts one webhook; false when it got no answer.
func (l *hookLoad) send(ctx context.Context, base string, n int64, body string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/hooks/crash", strings.NewReader(body))
	if err != nil {
		l.refuse("bad request: " + err.Error())
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := l.m.client.Do(req)
	if err != nil {
		l.refuse("no answer")
		return false
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		l.refuse("answer cut")
		return false
	}
	if resp.StatusCode != http.StatusAccepted {
		l.refuse(strconv.Itoa(resp.StatusCode))
		return true
	}
	var v struct {
		ID string `json:"execution_id"`
	}
	if json.Unmarshal(b, &v) != nil || v.ID == "" {
		l.refuse("202 without an id")
		return true
	}
	l.mu.Lock()
	l.acked[n] = v.ID
	l.mu.Unlock()
	return true
}

func (l *hookLoad) refuse(why string) {
	l.mu.Lock()
	l.m.refused[why]++
	l.mu.Unlock()
}

// finish stops the senders and returns the acknowledged webhooks.
func (l *hookLoad) finish() map[int64]string {
	l.cancel()
	l.wg.Wait()
	l.m.acked += len(l.acked)
	return l.acked
}

// ---------------------------------------------------------------------------------------------
// apply and resume

// killApply runs apply (or resume of the run a previous kill interrupted) in ep's home until
// point, starting the next apply whenever one ends first, and kills it then.
func (m *crashMatrix) killApply(ep *crashEpoch, point string) (string, []string) {
	deadline := time.Now().Add(crashPointWait)
	skip := rand.IntN(crashSkips)
	var problems []string
	// Past the deadline the next process is killed at once (pointDeadline): the bound only stops
	// a loop of processes that end before anything can kill them.
	for range 100 {
		p := m.launchApply(ep)
		hit := ""
		if point == pointStartup {
			time.Sleep(startupDelay(ep)) // when to kill, not a wait for something
			hit = pointStartup
			if p.stdout.String() != "" {
				hit = pointRandom
			}
			p.kill()
			p.reap(m.t)
			if !p.killed() {
				hit = ""
			}
		} else {
			// The run's events start once the store is open and the run has started or resumed.
			if p.waitFor(60*time.Second, func(out string) bool { return out != "" }) {
				ep.startup = time.Since(p.started)
			}
			if ep.watch == nil {
				ep.watch = watchStore(m.t, filepath.Join(ep.h.home, "state"))
			}
			hit = m.killAt(ep, p, point, &skip, deadline)
		}
		problems = append(problems, m.collectApply(ep, p, hit != "")...)
		if hit != "" {
			return hit, problems
		}
	}
	return "", append(problems, "100 applies in a row ended before their kill")
}

// launchApply resumes the oldest unfinished run, or applies the workflow anew.
func (m *crashMatrix) launchApply(ep *crashEpoch) *crashProc {
	if len(ep.unfinished) > 0 {
		return m.launch(ep, "resume", ep.unfinished[0], "-json")
	}
	ep.tags++
	return m.launch(ep, "apply", "crash.fsc.hcl", "-json", "-var", fmt.Sprintf("tag=e%dr%d", m.epochs, ep.tags))
}

// collectApply records what an apply or resume printed: the run it started (acknowledged), the
// node_finished events (each must be in the journal with that status) and execution_finished.
// A process that was not killed must have succeeded.
func (m *crashMatrix) collectApply(ep *crashEpoch, p *crashProc, killed bool) []string {
	var problems []string
	id := ""
	for _, line := range strings.Split(p.stdout.String(), "\n") {
		var ev struct {
			Type      string `json:"type"`
			ID        string `json:"execution_id"`
			Node      string `json:"node"`
			Index     []int  `json:"index"`
			Status    string `json:"status"`
			Execution *struct {
				Status string `json:"status"`
			} `json:"execution"`
		}
		if json.Unmarshal([]byte(line), &ev) != nil || ev.ID == "" {
			continue
		}
		id = ev.ID
		switch ev.Type {
		case "execution_started":
			if _, ok := ep.acked[id]; !ok {
				ep.acked[id] = "apply printed execution_started"
				m.applied++
			}
		case "node_finished":
			if len(ev.Index) == 0 {
				if ep.printed[id] == nil {
					ep.printed[id] = map[string]string{}
				}
				ep.printed[id][ev.Node] = ev.Status
			}
		case "execution_finished":
			if ev.Execution != nil {
				ep.printedEnd[id] = ev.Execution.Status
			}
		}
	}
	if !killed {
		code := p.cmd.ProcessState.ExitCode()
		if code != 0 {
			problems = append(problems, fmt.Sprintf("%s exited %d, want 0:\n%s", p.cmd.Args[1], code, p))
		}
		if len(ep.unfinished) > 0 && p.cmd.Args[1] == "resume" {
			ep.unfinished = ep.unfinished[1:]
		}
		if id != "" && ep.printedEnd[id] == "" {
			problems = append(problems, fmt.Sprintf("%s of %s ended without execution_finished:\n%s", p.cmd.Args[1], id, p))
		}
	}
	return problems
}

// ---------------------------------------------------------------------------------------------
// Settling an epoch

// settle lets every run of ep's home finish without a kill, then checks them all.
func (m *crashMatrix) settle(ep *crashEpoch) {
	if ep.watch != nil {
		for pt, n := range ep.watch.close() {
			m.seen[ep.mode+" "+pt] += n
		}
	}
	when := fmt.Sprintf("settling the %s home %s after kill %d", ep.mode, ep.h.home, m.kills)
	if ep.mode == "serve" {
		m.fail(when, m.settleServe(ep))
	} else {
		for len(ep.unfinished) > 0 {
			id := ep.unfinished[0]
			p := m.launch(ep, "resume", id, "-json")
			p.reap(m.t)
			problems := m.collectApply(ep, p, false)
			m.fail(when, problems)
			if len(problems) > 0 {
				break
			}
		}
	}
	violations, _ := m.check(ep, true)
	m.fail(when, violations)
	m.runs += len(ep.done)
	if len(m.violations) == 0 {
		// Keep the disk use of a long matrix flat; a failed home stays until the test ends.
		_ = os.RemoveAll(ep.h.home)
		_ = os.RemoveAll(ep.h.dir)
	}
}

// settleServe starts serve, waits for every run to finish and stops it with SIGTERM.
func (m *crashMatrix) settleServe(ep *crashEpoch) []string {
	if _, err := os.Stat(filepath.Join(ep.h.home, "state")); err != nil {
		return nil // killed before it created the store
	}
	p := m.launch(ep, "serve", "crash.fsc.hcl", "-listen", "127.0.0.1:0", "-shutdown-grace", "1s")
	base, problem := m.waitServing(ep, p)
	if problem != "" {
		return []string{problem}
	}
	// The API on -listen asks for a token; this one is made through serve's socket.
	r := ep.h.run("token", "create", fmt.Sprintf("settle-%d", m.kills), "-json")
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &tok); r.code != 0 || err != nil {
		return []string{fmt.Sprintf("cannot create an API token to follow the runs: %v\n%s", err, r)}
	}
	var problems []string
	deadline := time.Now().Add(crashSettle)
	for {
		unfinished, err := m.unfinishedRuns(base, tok.Token)
		if err == nil && len(unfinished) == 0 {
			break
		}
		if time.Now().After(deadline) {
			if err != nil {
				problems = append(problems, err.Error())
			} else {
				problems = append(problems, fmt.Sprintf("%d runs still unfinished %s after serve restarted, e.g. %s", len(unfinished), crashSettle, unfinished[0]))
			}
			break
		}
		time.Sleep(100 * time.Millisecond) // a poll interval: the condition is checked again
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		if code := p.cmd.ProcessState.ExitCode(); code != 0 {
			problems = append(problems, fmt.Sprintf("serve exited %d after SIGTERM:\n%s", code, p))
		}
	case <-time.After(60 * time.Second):
		p.kill()
		p.reap(m.t)
		problems = append(problems, "serve did not stop within 60s of SIGTERM:\n"+p.String())
	}
	return problems
}

// unfinishedRuns lists the runs serve reports unfinished (an error while it cannot answer,
// e.g. 503 during a reload: the caller polls again).
func (m *crashMatrix) unfinishedRuns(base, token string) ([]string, error) {
	req, err := http.NewRequest(http.MethodGet, base+"/v1/executions", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := m.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET /v1/executions: %w", err)
	}
	defer resp.Body.Close()
	var v struct {
		Executions []journal.Summary `json:"executions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /v1/executions: %d %v", resp.StatusCode, err)
	}
	var out []string
	for _, s := range v.Executions {
		if !journal.Finished(s.Status) {
			out = append(out, s.ID)
		}
	}
	return out, nil
}

// ---------------------------------------------------------------------------------------------
// Checks

// check verifies ep's store after a kill (final: after settling, when every run must have
// succeeded). ok is false when the store does not open.
func (m *crashMatrix) check(ep *crashEpoch, final bool) (violations []string, ok bool) {
	stateDir := filepath.Join(ep.h.home, "state")
	if _, err := os.Stat(stateDir); err != nil {
		return nil, true // killed before it created the store: nothing acknowledged
	}
	// The store must open the first time, through the binary, as a user would list the runs.
	r := ep.h.run("executions", "list", "-json")
	if r.code != 0 {
		violations = append(violations, "the store did not open after the kill:\n"+r.String())
		if r = ep.h.run("executions", "list", "-json"); r.code != 0 {
			return append(violations, "nor the second time"), false
		}
		violations = append(violations, "(it opened the second time)")
	}
	var list struct {
		Executions []journal.Summary `json:"executions"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		return append(violations, fmt.Sprintf("executions list -json: %v\n%s", err, r)), false
	}
	status := map[string]string{}
	for _, s := range list.Executions {
		status[s.ID] = s.Status
	}
	for _, id := range sortedKeys(ep.acked) {
		if _, ok := status[id]; !ok {
			violations = append(violations, fmt.Sprintf("run %s is not in the store, although %s", id, ep.acked[id]))
		}
	}
	for _, id := range sortedKeys(ep.done) {
		if status[id] != ep.done[id] {
			violations = append(violations, fmt.Sprintf("run %s had finished %s; now it is %q", id, ep.done[id], status[id]))
		}
	}

	st, err := journal.Open(stateDir, journal.Options{})
	if err != nil {
		return append(violations, fmt.Sprintf("open the store in the test after executions list did: %v", err)), false
	}
	defer func() {
		if err := st.Close(); err != nil {
			violations = append(violations, fmt.Sprintf("close the store: %v", err))
		}
	}()
	ep.unfinished = ep.unfinished[:0]
	for _, s := range list.Executions {
		if _, ok := ep.done[s.ID]; ok {
			continue
		}
		violations = append(violations, m.checkRun(ep, st, s.ID, final)...)
	}
	// Oldest first, so that the run resumed next is the one a kill interrupted first.
	slices.Sort(ep.unfinished)
	for _, path := range sortedKeys(ep.snaps) {
		if n := m.fx.count(path); n != ep.snaps[path] {
			violations = append(violations, fmt.Sprintf("%s ran again after its node had finished: %d requests when it was found finished, %d now", path, ep.snaps[path], n))
		}
	}
	if final {
		for _, id := range sortedKeys(ep.acked) {
			if ep.done[id] == "" {
				violations = append(violations, fmt.Sprintf("run %s (%s) did not finish", id, ep.acked[id]))
			}
		}
	}
	return violations, true
}

// checkRun checks the journal of run id: entries in order without a gap, no instance starting
// after it finished, the nodes an apply printed finished, and the side effect of every finished
// node counted once and never again. A finished run is checked for good (its outputs too).
func (m *crashMatrix) checkRun(ep *crashEpoch, st *journal.Store, id string, final bool) []string {
	var entries []journal.Entry
	if err := st.Entries(id, 0, func(e journal.Entry) error {
		entries = append(entries, e)
		return nil
	}); err != nil {
		return []string{fmt.Sprintf("run %s: read its journal: %v", id, err)}
	}
	if len(entries) == 0 || entries[0].Type != journal.RunStarted || entries[0].Run == nil {
		return []string{fmt.Sprintf("run %s: its journal does not start with run_started (%d entries)", id, len(entries))}
	}
	var violations []string
	bad := func(format string, args ...any) {
		violations = append(violations, fmt.Sprintf("run %s: ", id)+fmt.Sprintf(format, args...))
	}
	effectOf := crashEffects(ep.mode, entries[0].Run)
	finished := map[string]journal.Entry{}
	var end *journal.Entry
	for i, e := range entries {
		if e.Seq != uint64(i+1) {
			bad("entry %d has seq %d: the journal has a gap or is out of order", i+1, e.Seq)
			break
		}
		inst := e.Node + fmt.Sprint(e.Index)
		switch e.Type {
		case journal.AttemptStarted, journal.NodeStarted:
			if f, ok := finished[inst]; ok {
				bad("%s %v started again (seq %d, %s) after it finished %s (seq %d)", e.Node, e.Index, e.Seq, e.Type, f.Status, f.Seq)
			}
		case journal.NodeFinished:
			if f, ok := finished[inst]; ok {
				bad("%s %v finished twice (seq %d and %d)", e.Node, e.Index, f.Seq, e.Seq)
			}
			finished[inst] = e
			if e.Status != journal.StatusSucceeded {
				if final {
					bad("%s %v finished %s: %v", e.Node, e.Index, e.Status, e.Error)
				}
				continue
			}
			path := effectOf(e.Node, e.Index)
			if path == "" {
				continue
			}
			n := m.fx.count(path)
			if n == 0 {
				bad("%s %v finished but its request %s never reached the server", e.Node, e.Index, path)
			}
			if _, ok := ep.snaps[path]; !ok {
				ep.snaps[path] = n
			}
		case journal.RunFinished:
			end = &entries[i]
		}
	}
	for node, want := range ep.printed[id] {
		if f, ok := finished[node+"[]"]; !ok || f.Status != want {
			bad("%s printed node_finished %s, the journal has %q", node, want, f.Status)
		}
	}
	if end == nil {
		if want := ep.printedEnd[id]; want != "" {
			bad("apply printed execution_finished %s but the run is unfinished in the journal", want)
		}
		if final {
			bad("unfinished after settling")
		}
		ep.unfinished = append(ep.unfinished, id)
		return violations
	}
	if want := ep.printedEnd[id]; want != "" && want != end.Status {
		bad("apply printed execution_finished %s, the journal has %s", want, end.Status)
	}
	if end.Status != journal.StatusSucceeded {
		bad("finished %s: %v", end.Status, end.Error)
	} else if want := crashOutputs(ep.mode, entries[0].Run); !sameJSON(end.Outputs, want) {
		bad("outputs %s, want %s", end.Outputs, want)
	}
	ep.done[id] = end.Status
	return violations
}

// crashEffects maps a node instance of a run to the request it makes ("" for none).
func crashEffects(mode string, run *journal.RunInfo) func(node string, index []int) string {
	if mode == "serve" {
		var p struct {
			Body struct {
				N int64 `json:"n"`
			} `json:"body"`
		}
		_ = json.Unmarshal(run.Trigger.Payload, &p)
		prefix := fmt.Sprintf("/w/%d/", p.Body.N)
		return func(node string, index []int) string {
			switch {
			case node == "task.fetch" || node == "task.last":
				return prefix + strings.TrimPrefix(node, "task.")
			case node == "task.fan" && len(index) == 1:
				return prefix + "fan-" + []string{"x", "y"}[index[0]]
			}
			return ""
		}
	}
	prefix := "/a/" + crashTag(run) + "/"
	return func(node string, index []int) string {
		switch {
		case node == "task.head" || node == "task.mid" || node == "task.tail":
			return prefix + strings.TrimPrefix(node, "task.")
		case node == "task.fan" && len(index) == 1:
			return prefix + "fan/" + strconv.Itoa(index[0])
		}
		return ""
	}
}

// crashOutputs are the outputs a run must end with.
func crashOutputs(mode string, run *journal.RunInfo) string {
	if mode == "serve" {
		return fmt.Sprintf(`{"path": "%s"}`, crashEffects(mode, run)("task.last", nil))
	}
	return fmt.Sprintf(`{"count": %d, "tail": "/a/%s/tail"}`, crashFanItems, crashTag(run))
}

func crashTag(run *journal.RunInfo) string {
	var v struct {
		Tag string `json:"tag"`
	}
	_ = json.Unmarshal(run.Vars, &v)
	return v.Tag
}

// sameJSON reports whether got and want are the same JSON value.
func sameJSON(got json.RawMessage, want string) bool {
	var g, w any
	return json.Unmarshal(got, &g) == nil && json.Unmarshal([]byte(want), &w) == nil && reflect.DeepEqual(g, w)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// report logs the figures (docs/performance.md, "Crash matrix") and fails the test on any
// violation.
func (m *crashMatrix) report(took time.Duration) {
	var b strings.Builder
	fmt.Fprintf(&b, "crash matrix: %d kills (%d of serve, %d of apply or resume), %d failed, in %s (%d homes; %d webhooks acknowledged, %d runs started by apply; %d runs checked to the end)\n",
		m.kills, m.modeKills["serve"], m.modeKills["apply"], m.failed, took.Round(time.Second), m.epochs, m.acked, m.applied, m.runs)
	fmt.Fprintf(&b, "kill points hit:\n")
	for _, pt := range append(slices.Clone(crashPoints), pointDeadline) {
		fmt.Fprintf(&b, "  %-8s %4d  %s\n", pt, m.hits[pt], crashPointText[pt])
	}
	fmt.Fprintf(&b, "store events seen while a kill was armed: %v\n", m.seen)
	if len(m.missed) > 0 {
		fmt.Fprintf(&b, "deadline kills, by the point they waited for: %v\n", m.missed)
	}
	if len(m.refused) > 0 {
		fmt.Fprintf(&b, "webhooks not acknowledged (not counted as acknowledged): %v\n", m.refused)
	}
	m.t.Log(b.String())
	for i, v := range m.violations {
		if i == 30 {
			m.t.Errorf("… and %d more violations", len(m.violations)-30)
			break
		}
		m.t.Error(v)
	}
}

// ---------------------------------------------------------------------------------------------
// Watching the store

// storeWatch watches a state directory and its wal/ with inotify and, while armed, SIGKILLs a
// process the moment the awaited kind of event happens (the reading goroutine kills, without a
// hop through a channel).
type storeWatch struct {
	f         *os.File
	closeOnce sync.Once
	stateWD   int32
	walWD     int32
	done      chan struct{}
	mu        sync.Mutex // guards the fields below
	proc      *crashProc
	target    string
	skip      int
	fired     chan struct{}
	firedOnce bool
	// seen counts the events of each point while armed (the report's "events seen").
	seen map[string]int
}

func watchStore(t *testing.T, stateDir string) *storeWatch {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	// A checkpoint renames a retired WAL segment away for reuse, and a spare made of one is
	// renamed into place: moves count as removals and creations.
	const mask = syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_MOVED_TO | syscall.IN_MOVED_FROM
	w := &storeWatch{done: make(chan struct{}), seen: map[string]int{}}
	for _, d := range []struct {
		dir string
		wd  *int32
	}{{stateDir, &w.stateWD}, {filepath.Join(stateDir, "wal"), &w.walWD}} {
		wd, err := syscall.InotifyAddWatch(fd, d.dir, mask)
		if err != nil {
			syscall.Close(fd)
			t.Fatalf("inotify watch %s: %v", d.dir, err)
		}
		*d.wd = int32(wd)
	}
	// Non-blocking, so that the runtime's poller waits for it and Close ends the read.
	w.f = os.NewFile(uintptr(fd), "inotify")
	go w.read()
	t.Cleanup(func() { w.close() })
	return w
}

func (w *storeWatch) read() {
	defer close(w.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			return
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			wd := int32(binary.NativeEndian.Uint32(buf[off:]))
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			nameLen := int(binary.NativeEndian.Uint32(buf[off+12:]))
			name := string(bytes.TrimRight(buf[off+syscall.SizeofInotifyEvent:off+syscall.SizeofInotifyEvent+nameLen], "\x00"))
			off += syscall.SizeofInotifyEvent + nameLen
			w.event(w.point(wd, mask, name))
		}
	}
}

// point names the kill point an event is ("" for none).
func (w *storeWatch) point(wd int32, mask uint32, name string) string {
	created := mask&(syscall.IN_CREATE|syscall.IN_MOVED_TO) != 0
	removed := mask&(syscall.IN_DELETE|syscall.IN_MOVED_FROM) != 0
	ext := filepath.Ext(name)
	switch {
	case wd == w.walWD && ext == ".log" && created:
		return pointWALCreated
	case wd == w.walWD && ext == ".log" && removed:
		return pointWALRemoved
	case wd != w.stateWD:
		return ""
	case ext == ".mem" && created:
		return pointMemCreated
	case ext == ".mem" && removed:
		return pointMemRemoved
	case ext == ".vlog" && created:
		return pointVlogCreated
	case ext == ".sst" && created:
		return pointSstCreated
	case ext == ".sst" && removed:
		return pointSstRemoved
	}
	return ""
}

func (w *storeWatch) event(point string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.proc == nil || point == "" {
		return
	}
	w.seen[point]++
	if point != w.target || w.firedOnce {
		return
	}
	if w.skip > 0 {
		w.skip--
		return
	}
	w.proc.kill()
	w.firedOnce = true
	close(w.fired)
}

// arm makes the watcher kill p at the next event of point after skip of them; the channel is
// closed when it did.
func (w *storeWatch) arm(p *crashProc, point string, skip int) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.proc, w.target, w.skip, w.firedOnce = p, point, skip, false
	w.fired = make(chan struct{})
	return w.fired
}

// disarm stops watching for the kill; it reports whether it had fired, and how many events
// were still to let pass.
func (w *storeWatch) disarm() (bool, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.proc = nil
	return w.firedOnce, w.skip
}

// close stops watching and returns the events seen while armed.
func (w *storeWatch) close() map[string]int {
	w.closeOnce.Do(func() { _ = w.f.Close() })
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen
}
