package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/journal"
)

// seedKV writes value under key in scope of h's store, as a serve that crashed would have left it.
func seedKV(t *testing.T, h *harness, scope, key, value string) {
	t.Helper()
	st, err := journal.Open(filepath.Join(h.home, "state"), journal.Options{})
	if err != nil {
		t.Fatalf("open the store: %v", err)
	}
	defer st.Close()
	if err := st.KVSet(scope, key, []byte(value)); err != nil {
		t.Fatal(err)
	}
}

// waitListed waits until serve lists execution id.
func waitListed(t *testing.T, sp *serveProc, id string) {
	t.Helper()
	deadline := time.Now().Add(serveDeadline)
	for {
		for _, s := range sp.executions("") {
			if s.ID == id {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no execution %s within %s: %v\n%s", id, serveDeadline, sp.executions(""), sp)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServeScheduleFiredNeverStarted: a serve killed after it recorded an occurrence as fired
// but before the run's first journal entry left a pending firing; the next serve starts that
// run, under the recorded id, once.
func TestServeScheduleFiredNeverStarted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("minutely.fsc.hcl", everyMinuteWorkflow)
	occurrence := time.Date(2026, 3, 1, 10, 1, 0, 0, time.UTC)
	at := occurrence.Format(time.RFC3339)
	id := engine.NewExecutionID()
	seedKV(t, h, journal.TriggerScope("minutely", "every"), "fuscia.schedule.last_fired",
		`{"at":"`+occurrence.Format(time.RFC3339Nano)+`","execution_id":"`+id+`","pending":true}`)

	now := []string{"FUSCIA_NOW=" + occurrence.Add(20*time.Second).Format(time.RFC3339)}
	sp := startServe(t, h, now, "minutely.fsc.hcl")
	waitListed(t, sp, id)
	ex := sp.waitStatus(id, "succeeded")
	jsonSame(t, "task.echo output", nodeOf(t, ex, "task.echo").Output, `{"at": "`+at+`"}`)
	sp.stopOK()

	// Confirmed now: a second restart in the same minute starts nothing more.
	sp = startServe(t, h, now, "minutely.fsc.hcl")
	time.Sleep(1500 * time.Millisecond)
	sp.stopOK()
	runs := scheduledRuns(t, h)
	if len(runs) != 1 || len(runs[at]) != 1 || runs[at][0] != id {
		t.Errorf("runs by occurrence = %v, want only %s: [%s]", runs, at, id)
	}
}

// TestServePollEventNeverStarted: the dedup record of a poll event whose run never started (a
// crash in between) does not swallow the event: its next poll starts the run, under the
// recorded id, and dedup holds from then on.
func TestServePollEventNeverStarted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	installGreeter(t, filepath.Join(h.home, "plugins"))
	h.write("ticks.fsc.hcl", pollWorkflow)
	// The first poll answers n = 1: dedup_key floor(1 / 3) = 0.
	sum := sha256.Sum256([]byte("0"))
	id := engine.NewExecutionID()
	seedKV(t, h, journal.TriggerScope("ticks", "tick"), "fuscia.dedup."+hex.EncodeToString(sum[:]),
		`{"execution_id":"`+id+`","pending":true}`)

	sp := startServe(t, h, nil, "ticks.fsc.hcl")
	waitListed(t, sp, id)
	ex := sp.waitStatus(id, "succeeded")
	var p struct {
		N int `json:"n"`
	}
	if err := json.Unmarshal(ex.Trigger.Payload, &p); err != nil || p.N != 1 {
		t.Errorf("run %s payload = %s, want the first poll's event (n = 1)", id, ex.Trigger.Payload)
	}
	deadline := time.Now().Add(serveDeadline)
	for len(sp.executions("")) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	sp.stopOK()
	polls, runs := pollState(t, h)
	checkDedup(t, "after the recorded event", polls, runs)
	if _, ok := runs[id]; !ok {
		t.Errorf("the recorded id %s is not among the runs %v", id, runs)
	}
}
