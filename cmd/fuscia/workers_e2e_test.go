package main

// End-to-end tests of `fuscia workers list` and of the cluster's metrics: a real NATS server
// with JetStream in the test process (internal/natstest), `fuscia serve -nats` with its local
// worker of the default pool, and a `fuscia worker -pool gpu` process (the helpers are in
// cluster_helpers_e2e_test.go).

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/internal/natstest"
)

// waitCluster polls cond every 100 ms until it holds, failing the test with cond's last
// words after clusterDeadline.
func waitCluster(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(clusterDeadline)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; last:\n%s", what, clusterDeadline, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// listedWorkers is `workers list -json` as docs/reference/cli.md describes it.
type listedWorkers struct {
	Workers    []listedWorker   `json:"workers"`
	QueueDepth map[string]int64 `json:"queue_depth"`
}

type listedWorker struct {
	ID            string    `json:"id"`
	Host          string    `json:"host"`
	Pools         []string  `json:"pools"`
	Concurrency   int       `json:"concurrency"`
	Running       int64     `json:"running"`
	LastHeartbeat time.Time `json:"last_heartbeat"`
	Version       string    `json:"version"`
	Local         bool      `json:"local"`
}

// workerWithPools returns the id of the listed worker, serve's own (local) or not, whose
// pools are exactly pools.
func (l listedWorkers) workerWithPools(local bool, pools ...string) (string, bool) {
	for _, w := range l.Workers {
		if w.Local == local && slices.Equal(w.Pools, pools) {
			return w.ID, true
		}
	}
	return "", false
}

// metricSeries GETs serve's /metrics and returns its sample lines by series ("name{labels}").
func metricSeries(t *testing.T, sp *serveProc) (map[string]string, string) {
	t.Helper()
	resp, err := serveClient.Get(sp.metrics)
	if err != nil {
		t.Fatalf("GET %s: %v", sp.metrics, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d\n%s", resp.StatusCode, b)
	}
	series := map[string]string{}
	var fuscia []string
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			series[line[:i]] = line[i+1:]
		}
		if strings.HasPrefix(line, "fuscia_") {
			fuscia = append(fuscia, line)
		}
	}
	return series, strings.Join(fuscia, "\n")
}

// workersListWorkflow's one task is a builtin.http call that only a worker of pool gpu runs.
const workersListWorkflow = `workflow "gpujob" {}

trigger "manual" "go" {}

task "call" {
  uses   = builtin.http
  pool   = "gpu"
  inputs = { url = "%s/work" }
}
`

// TestWorkersList: `fuscia workers list` (text and -json) shows serve's local worker and a
// `fuscia worker -pool gpu` with their pools; GET /v1/workers answers a read token on
// -listen; the metrics show the workers and the attempts waiting by pool, and
// fuscia_redeliveries_total from the start. Without a serve, or with one without -nats, the
// command says so and exits 1.
func TestWorkersList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)

	// No serve: nothing to ask.
	r := h.run("workers", "list")
	wantCode(t, r, exitFailed)
	wantContains(t, "workers list without serve", r.stderr, "No fuscia serve is running", h.home)

	nats := natstest.Start(t)
	key := clusterKeyFile(t)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok": true}`)
	}))
	defer target.Close()
	h.write("flows/gpu.fsc.hcl", fmt.Sprintf(workersListWorkflow, target.URL))

	sp := startServe(t, h, nil, "flows", "-metrics-listen", "127.0.0.1:0",
		"-nats", nats.URL(), "-cluster-key-file", key)
	gpu := startWorker(t, nats.URL(), key, "-pool", "gpu", "-concurrency", "2")

	// Both workers are listed, with their pools.
	var list listedWorkers
	var raw string
	waitCluster(t, "workers list -json shows serve's worker and the gpu worker", func() (bool, string) {
		r := h.run("workers", "list", "-json")
		if r.code != exitOK {
			return false, r.String() + "\n" + sp.String()
		}
		raw, list = r.stdout, listedWorkers{}
		if err := json.Unmarshal([]byte(raw), &list); err != nil {
			t.Fatalf("workers list -json is not JSON: %v\n%s", err, r)
		}
		_, okDefault := list.workerWithPools(true, "default")
		_, okGPU := list.workerWithPools(false, "gpu")
		// Not exactly two: a worker of another test whose NATS server had this port before
		// may still be reconnecting to it.
		return okDefault && okGPU, r.String()
	})
	if got := keys(t, json.RawMessage(raw)); !slices.Equal(got, []string{"queue_depth", "workers"}) {
		t.Errorf("workers list -json has the keys %q, want workers and queue_depth", got)
	}
	var shape struct {
		Workers []json.RawMessage `json:"workers"`
	}
	_ = json.Unmarshal([]byte(raw), &shape)
	for _, w := range shape.Workers {
		got := keys(t, w)
		for _, k := range []string{"id", "host", "pools", "concurrency", "running", "last_heartbeat", "version"} {
			if !slices.Contains(got, k) {
				t.Errorf("a worker of workers list -json lacks %q: %s", k, w)
			}
		}
	}
	if !slices.IsSortedFunc(list.Workers, func(a, b listedWorker) int { return strings.Compare(a.ID, b.ID) }) {
		t.Errorf("workers list -json: the workers are not sorted by id:\n%s", raw)
	}
	gpuID, _ := list.workerWithPools(false, "gpu")
	localID, _ := list.workerWithPools(true, "default")
	for _, w := range list.Workers {
		if w.ID == "" || w.Host == "" || w.Version == "" || w.Concurrency < 1 || w.LastHeartbeat.IsZero() {
			t.Errorf("worker %+v: empty fields in\n%s", w, raw)
		}
		if age := time.Since(w.LastHeartbeat); age > 30*time.Second || age < -30*time.Second {
			t.Errorf("worker %s: last heartbeat %s ago, want a recent one", w.ID, age)
		}
		if w.Local && w.ID != localID {
			t.Errorf("worker %s: local = true; only serve's own worker (%s) is local", w.ID, localID)
		}
		if w.ID == gpuID && w.Concurrency != 2 {
			t.Errorf("gpu worker's concurrency = %d, want -concurrency 2", w.Concurrency)
		}
	}
	if _, ok := list.QueueDepth["default"]; !ok {
		t.Errorf("queue_depth has no default pool: %v", list.QueueDepth)
	}

	// The text: a table of both, then the waiting attempts.
	r = h.run("workers", "list")
	wantCode(t, r, exitOK)
	lines := strings.Split(r.stdout, "\n")
	if head := strings.Fields(lines[0]); !slices.Equal(head, []string{"ID", "HOST", "POOLS", "CONCURRENCY", "RUNNING", "LAST", "HEARTBEAT", "VERSION"}) {
		t.Errorf("workers list's header is %q:\n%s", lines[0], r)
	}
	for id, pool := range map[string]string{gpuID: "gpu", localID: "default"} {
		found := false
		for _, l := range lines[1:] {
			f := strings.Fields(l)
			if len(f) > 0 && f[0] == id {
				found = true
				if !slices.Contains(f, pool) || !strings.Contains(l, " ago") {
					t.Errorf("workers list: the line of worker %s does not show pool %s and its heartbeat's age: %q", id, pool, l)
				}
			}
		}
		if !found {
			t.Errorf("workers list has no line for worker %s:\n%s", id, r)
		}
	}
	wantContains(t, "workers list", r.stdout, "Attempts waiting for a worker:")

	// -listen: a read token suffices.
	tr := h.run("token", "create", "reader", "-scope", "read")
	wantCode(t, tr, exitOK)
	code, b := sp.request(http.MethodGet, "/v1/workers", nil, http.Header{"Authorization": {"Bearer " + strings.TrimSpace(tr.stdout)}})
	if code != http.StatusOK || !strings.Contains(string(b), gpuID) {
		t.Errorf("GET /v1/workers with a read token: %d %s, want 200 with worker %s", code, b, gpuID)
	}

	// The metrics: the workers by pool, and the redeliveries from the start.
	waitCluster(t, "/metrics shows a worker in each pool", func() (bool, string) {
		series, text := metricSeries(t, sp)
		return series[`fuscia_workers{pool="default"}`] == "1" && series[`fuscia_workers{pool="gpu"}`] == "1", text
	})
	if series, text := metricSeries(t, sp); series["fuscia_redeliveries_total"] != "0" {
		t.Errorf("/metrics: fuscia_redeliveries_total = %q, want 0 from the start:\n%s", series["fuscia_redeliveries_total"], text)
	}

	// With the gpu worker stopped, a gpu attempt waits: the queue depth of gpu is 1.
	gpu.cleanup() // SIGTERM, and reaped
	id := sp.startRun("gpujob", `{}`)
	waitCluster(t, "/metrics shows the gpu attempt waiting", func() (bool, string) {
		series, text := metricSeries(t, sp)
		return series[`fuscia_queue_depth{pool="gpu"}`] == "1", text
	})
	r = h.run("workers", "list", "-json")
	wantCode(t, r, exitOK)
	list = listedWorkers{}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || list.QueueDepth["gpu"] != 1 {
		t.Errorf("workers list -json: queue_depth %v (%v), want gpu 1:\n%s", list.QueueDepth, err, r)
	}
	r = h.run("workers", "list")
	if !strings.Contains(r.stdout, "Attempts waiting for a worker:") || !hasLineFields(r.stdout, "gpu", "1") {
		t.Errorf("workers list does not show the gpu attempt waiting:\n%s", r)
	}

	// A gpu worker again: it takes the attempt, the run succeeds, nothing waits.
	startWorker(t, nats.URL(), key, "-pool", "gpu")
	waitCluster(t, "the gpu run succeeds", func() (bool, string) {
		ex := sp.execution(id)
		return ex.Status == "succeeded", ex.Status
	})
	waitCluster(t, "/metrics shows no gpu attempt waiting", func() (bool, string) {
		series, text := metricSeries(t, sp)
		return series[`fuscia_queue_depth{pool="gpu"}`] == "0", text
	})
	sp.stopOK()

	// A serve without -nats has no workers.
	plain := startServe(t, h, nil, "flows")
	r = h.run("workers", "list")
	wantCode(t, r, exitFailed)
	wantContains(t, "workers list on a serve without -nats", r.stderr, "without -nats")
	r = h.run("workers", "list", "-json")
	wantCode(t, r, exitFailed)
	if r.stdout != "" {
		t.Errorf("workers list -json printed on stdout on an error:\n%s", r)
	}
	code, b = plain.get("/v1/workers")
	var eb struct{ Code string }
	if code != http.StatusConflict || json.Unmarshal(b, &eb) != nil || eb.Code != "no_cluster" {
		t.Errorf("GET /v1/workers on a serve without -nats: %d %s, want 409 no_cluster", code, b)
	}
	plain.stopOK()
}

// hasLineFields reports whether a line of text has exactly the fields want.
func hasLineFields(text string, want ...string) bool {
	for _, l := range strings.Split(text, "\n") {
		if slices.Equal(strings.Fields(l), want) {
			return true
		}
	}
	return false
}
