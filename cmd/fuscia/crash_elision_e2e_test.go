//go:build linux

package main

// Kill tests of the durability rule (docs/engine.md, "Durability"): in a strict run a pure
// node's result is appended without waiting for a sync, and a barrier syncs everything before
// an effect starts. The workflow alternates pure nodes and effects (requests to a counting
// server); the process is killed between a pure node's result and the next effect (at the
// barrier, FUSCIA_TEST_CRASH) or during an effect, and the run is resumed. With
// FUSCIA_TEST_STORE=lossy the kill loses every write that was not synced, as a power loss
// would: the pure results before the barrier are gone and must be computed again. In every
// case the resumed run ends with the outputs of an uninterrupted one, and no effect whose
// result the journal had is repeated.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/syncbuf"
)

// elisionWorkflow is pure → effect → pure → switch → effect → pure. Each effect answers
// n + 1 for the n it is sent, so the outputs depend on every value along the chain: a pure
// node computed again to another value would show.
const elisionWorkflow = `workflow "elide" {}

variable "base" { type = string }

task "p1" {
  uses   = builtin.transform
  inputs = { n = 2 }
}

task "e1" {
  uses   = builtin.http
  inputs = { url = "${var.base}/e1?n=${task.p1.output.n}" }
}

task "p2" {
  uses   = builtin.transform
  inputs = { n = task.e1.output.body.n * 10 + task.p1.output.n }
}

switch "route" {
  case "big" {
    when = task.p2.output.n > 5
  }
  default "small" {}
}

task "e2" {
  uses   = builtin.http
  after  = [switch.route.big]
  inputs = { url = "${var.base}/e2?n=${task.p2.output.n}" }
}

task "p3" {
  uses   = builtin.transform
  inputs = { sum = task.e2.output.body.n + task.p2.output.n }
}

output "sum" { value = task.p3.output.sum }
output "route" { value = switch.route.output.selected }
`

// effectServer counts the requests of each path and answers {"n": n+1}. While hold names a
// path, the first request to it waits until release is closed (the test kills the process
// meanwhile) and reached is closed when it arrives.
type effectServer struct {
	*httptest.Server
	mu      sync.Mutex
	counts  map[string]int
	hold    string
	reached chan struct{}
	release chan struct{}
}

func newEffectServer(t *testing.T, hold string) *effectServer {
	fx := &effectServer{counts: map[string]int{}, hold: hold, reached: make(chan struct{}), release: make(chan struct{})}
	fx.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fx.mu.Lock()
		fx.counts[r.URL.Path]++
		first := fx.counts[r.URL.Path] == 1 && r.URL.Path == fx.hold
		fx.mu.Unlock()
		if first {
			close(fx.reached)
			<-fx.release
			return // the process that asked is gone
		}
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"n": %d}`, n+1)
	}))
	t.Cleanup(func() {
		fx.unblock()
		fx.Close()
	})
	return fx
}

// unblock lets a held request end (once).
func (fx *effectServer) unblock() {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	select {
	case <-fx.release:
	default:
		close(fx.release)
	}
}

func (fx *effectServer) count(path string) int {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return fx.counts[path]
}

// elisionRun is the one run of a home: its id and its journal as the test finds it.
func elisionRun(t *testing.T, h *harness) (string, []journal.Entry) {
	t.Helper()
	st, err := journal.Open(filepath.Join(h.home, "state"), journal.Options{})
	if err != nil {
		t.Fatalf("open the store after the kill: %v", err)
	}
	defer st.Close()
	sums, err := st.List(journal.Filter{})
	if err != nil || len(sums) != 1 {
		t.Fatalf("the store has runs %v (%v); want exactly one", sums, err)
	}
	var entries []journal.Entry
	if err := st.Entries(sums[0].ID, 0, func(e journal.Entry) error {
		entries = append(entries, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return sums[0].ID, entries
}

// finishedAt returns the seq of node's node_finished entry with status succeeded (0 if none).
func finishedAt(entries []journal.Entry, node string) uint64 {
	for _, e := range entries {
		if e.Type == journal.NodeFinished && e.Node == node && len(e.Index) == 0 && e.Status == journal.StatusSucceeded {
			return e.Seq
		}
	}
	return 0
}

// resumedAt returns the seq of the run_status entry a resume wrote (0 if none).
func resumedAt(entries []journal.Entry) uint64 {
	for _, e := range entries {
		if e.Type == journal.RunStatus && e.Reason == "resumed" {
			return e.Seq
		}
	}
	return 0
}

func TestCrashMatrixPureElision(t *testing.T) {
	if testing.Short() {
		t.Skip("kill tests are slow")
	}
	baseFx := newEffectServer(t, "")
	base := newHarness(t)
	base.write("elide.fsc.hcl", elisionWorkflow)
	r := base.run("apply", "elide.fsc.hcl", "-json", "-var", "base="+baseFx.URL)
	wantCode(t, r, 0)
	want := outputsOf(t, r.stdout)
	// p1 = 2; e1 answers 3; p2 = 3*10 + 2 = 32, the big route; e2 answers 33; 33 + 32 = 65.
	if !sameJSON(json.RawMessage(want), `{"route": "big", "sum": 65}`) {
		t.Fatalf("an uninterrupted run's outputs are %s; want sum 65 by the big route", want)
	}
	if baseFx.count("/e1") != 1 || baseFx.count("/e2") != 1 {
		t.Fatalf("an uninterrupted run called e1 %d and e2 %d times; want once each", baseFx.count("/e1"), baseFx.count("/e2"))
	}

	tests := []struct {
		name string
		// kill: "barrier:task.X" (the process kills itself there) or "during:/PATH" (the
		// test kills it while the effect's request is held).
		kill  string
		lossy bool
		// lost: pure nodes whose results the kill must have lost (computed again on resume);
		// kept: nodes whose results must be in the journal after the kill.
		lost, kept []string
		// calls: the requests each effect gets in all, the killed process's included.
		calls map[string]int
	}{
		{name: "lossy kill before e1", kill: "barrier:task.e1", lossy: true,
			lost: []string{"task.p1"}, calls: map[string]int{"/e1": 1, "/e2": 1}},
		{name: "lossy kill before e2", kill: "barrier:task.e2", lossy: true,
			lost: []string{"task.p2", "switch.route"}, kept: []string{"task.p1", "task.e1"},
			calls: map[string]int{"/e1": 1, "/e2": 1}},
		{name: "kill before e2", kill: "barrier:task.e2",
			kept: []string{"task.e1"}, calls: map[string]int{"/e1": 1, "/e2": 1}},
		{name: "lossy kill during e2", kill: "during:/e2", lossy: true,
			kept:  []string{"task.p1", "task.e1", "task.p2", "switch.route"},
			calls: map[string]int{"/e1": 1, "/e2": 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, during := strings.CutPrefix(tt.kill, "during:")
			hold := ""
			if during {
				hold = path
			}
			fx := newEffectServer(t, hold)
			h := newHarness(t)
			h.write("elide.fsc.hcl", elisionWorkflow)
			env := append(baseEnv(), "FUSCIA_HOME="+h.home)
			if tt.lossy {
				env = append(env, "FUSCIA_TEST_STORE=lossy")
			}
			if !during {
				env = append(env, "FUSCIA_TEST_CRASH="+tt.kill)
			}
			cmd := exec.Command(fusciaBin, "apply", "elide.fsc.hcl", "-json", "-var", "base="+fx.URL)
			cmd.Dir, cmd.Env = h.dir, env
			var out syncbuf.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			if during {
				select {
				case <-fx.reached:
					_ = cmd.Process.Signal(syscall.SIGKILL)
				case err := <-exited:
					t.Fatalf("apply ended (%v) before its request to %s:\n%s", err, path, out.String())
				case <-time.After(commandTimeout):
					_ = cmd.Process.Kill()
					t.Fatalf("no request to %s within %s:\n%s", path, commandTimeout, out.String())
				}
			}
			var err error
			select {
			case err = <-exited:
			case <-time.After(commandTimeout):
				_ = cmd.Process.Kill()
				<-exited
				t.Fatalf("apply did not end within %s:\n%s", commandTimeout, out.String())
			}
			fx.unblock()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("apply was not killed (%v):\n%s", err, out.String())
			}

			id, entries := elisionRun(t, h)
			for _, node := range tt.lost {
				if seq := finishedAt(entries, node); seq != 0 {
					t.Errorf("after the kill the journal has %s finished (seq %d); the kill should have lost it", node, seq)
				}
			}
			for _, node := range tt.kept {
				if finishedAt(entries, node) == 0 {
					t.Errorf("after the kill the journal lacks %s, durable before the effect that followed it", node)
				}
			}
			before := map[string]int{"/e1": fx.count("/e1"), "/e2": fx.count("/e2")}

			res := h.run("resume", id, "-json")
			wantCode(t, res, 0)
			if got := outputsOf(t, res.stdout); !sameJSON(json.RawMessage(got), want) {
				t.Errorf("outputs after resume %s; an uninterrupted run's are %s", got, want)
			}
			for p, n := range tt.calls {
				if got := fx.count(p); got != n {
					t.Errorf("%s was called %d times in all (%d before the resume); want %d", p, got, before[p], n)
				}
			}
			_, entries = elisionRun(t, h)
			resumed := resumedAt(entries)
			if resumed == 0 {
				t.Fatal("the journal has no resumed entry")
			}
			for _, node := range tt.lost {
				if seq := finishedAt(entries, node); seq < resumed {
					t.Errorf("%s finished at seq %d, not after the resume (seq %d): it was not computed again", node, seq, resumed)
				}
			}
			for _, node := range tt.kept {
				if seq := finishedAt(entries, node); seq == 0 || seq > resumed {
					t.Errorf("%s finished at seq %d, after the resume (seq %d): it ran again", node, seq, resumed)
				}
			}
		})
	}
}
