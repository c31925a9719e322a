package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/fuscia/fuscia/engine/internal/journalfixture"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/addrs"
)

// The journal's bytes on disk and the task ids in them are a contract with every store already
// written: a resumed run reads journals an older fuscia wrote, and a task recognizes its retries
// by the task id. journal/testdata/format-v1 holds the journal and log records of real runs of
// instances.fsc.hcl (and the child run of its call), as the engine wrote them into a real Badger
// store, with the `show -json` view of each run. The journal package reads them back and
// re-encodes them byte for byte (engine/journal/format_test.go); the tests here check that the
// engine still writes the same instances, attempts and task ids.
//
// To rewrite the fixture after a deliberate format change (the store's format version changes
// with it, docs/state.md):
//
//	go test ./engine -run TestJournalFormat -journal-fixture-from=$(git rev-parse --short HEAD)
var journalFixtureFrom = flag.String("journal-fixture-from", "", "rewrite journal/testdata/format-v1 from the runs this code journals, naming the commit it is built from")

const journalFixtureDir = "journal/testdata/format-v1"

// flakyServer answers the first request of each path with 503 and the next ones with 200 and
// {"path": PATH}; paths under /broken/ always get 503. Every instance of the fixture has a path
// of its own, so which attempts fail does not depend on the order the requests come in.
func flakyServer(t *testing.T) string {
	t.Helper()
	var mu sync.Mutex
	seen := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		again := seen[r.URL.Path]
		seen[r.URL.Path] = true
		mu.Unlock()
		if !again || strings.HasPrefix(r.URL.Path, "/broken/") {
			http.Error(w, "not now", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"path":` + jsonString(r.URL.Path) + `}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// loggingTasks logs a line for every call before passing it on, so that the fixture holds
// log lines of every kind of instance too.
type loggingTasks struct{ task.Dispatcher }

func (l loggingTasks) Call(ctx context.Context, b task.Binding, call task.Call) outcome.Result {
	call.Log("info", fmt.Sprintf("attempt %d of %s", call.Attempt, call.TaskID[strings.IndexByte(call.TaskID, ':')+1:]))
	return l.Dispatcher.Call(ctx, b, call)
}

// recordFixtureRuns runs instances.fsc.hcl with this code into a fresh store: the run itself
// ("main"), its call's child ("child"), a copy of the run cut where the process would have
// died in the middle of an iteration's attempt, resumed ("resumed"), and the child that the
// resumed run calls ("resumed-child"). It returns the runs, their records as stored and their
// `show -json` views.
func recordFixtureRuns(t *testing.T) (*journalfixture.Fixture, map[string][]byte) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(journalFixtureDir, "instances.fsc.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	child, err := os.ReadFile(filepath.Join(journalFixtureDir, "child.fsc.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	te := newTestEnv(t)
	te.engine.cfg.Tasks = loggingTasks{te.engine.cfg.Tasks}
	te.write("child.fsc.hcl", string(child))
	url := flakyServer(t)

	ex := te.apply(string(src), StartOptions{}, "url="+url)
	checkFixtureRun(t, ex)
	resumedID := te.crashCopy(ex.ID, is(journal.AttemptStarted, "loop.outer/task.fetch", 1))
	rex := te.resume(resumedID)
	wantRun(t, rex, journal.StatusCompletedWithErrors)
	fx := &journalfixture.Fixture{Runs: []journalfixture.Run{
		{Label: "main", ID: ex.ID},
		{Label: "child", ID: wantNode(t, ex, "call.child", journal.StatusSucceeded).ChildID},
		{Label: "resumed", ID: rex.ID},
		{Label: "resumed-child", ID: wantNode(t, rex, "call.child", journal.StatusSucceeded).ChildID},
	}}
	shows := map[string][]byte{}
	for _, run := range fx.Runs {
		x, err := te.store.Execution(run.ID)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.MarshalIndent(x, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		shows[run.Label] = append(b, '\n')
	}
	te.closeStore()
	fx.Records = readRecords(t, filepath.Join(te.dir, "state"), fx.Runs)
	return fx, shows
}

// checkFixtureRun checks that a run of instances.fsc.hcl went the way the fixture says: retried
// attempts, a skipped item, a failed iteration, a failed task and a called child.
func checkFixtureRun(t *testing.T, ex *journal.Execution) {
	t.Helper()
	wantRun(t, ex, journal.StatusCompletedWithErrors)
	items := wantNode(t, ex, "task.items", journal.StatusSucceeded)
	if len(items.Instances) != 3 || items.Instances[0].Attempts != 2 || items.Instances[1].Attempts != 2 || items.Instances[2].Status != journal.StatusSkipped {
		t.Fatalf("task.items: %s", jsonOf(t, items))
	}
	outer := wantNode(t, ex, "loop.outer", journal.StatusCompletedWithErrors)
	if len(outer.Iterations) != 3 || outer.Iterations[2].Status != journal.StatusFailed || outer.Iterations[1].Nodes["task.big"].Status != journal.StatusSucceeded {
		t.Fatalf("loop.outer: %s", jsonOf(t, outer))
	}
	if f := wantNode(t, ex, "task.flaky", journal.StatusFailed); f.Attempts != 2 {
		t.Fatalf("task.flaky: %s", jsonOf(t, f))
	}
	wantNode(t, ex, "wait.pause", journal.StatusSucceeded)
}

// readRecords reads the journal and log records of runs from the closed store at dir, in key
// order, straight from Badger.
func readRecords(t *testing.T, dir string, runs []journalfixture.Run) map[string][]journalfixture.Record {
	t.Helper()
	db, err := badger.Open(badger.DefaultOptions(dir).WithReadOnly(true).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string][]journalfixture.Record{}
	err = db.View(func(txn *badger.Txn) error {
		for _, run := range runs {
			for _, prefix := range []string{"j/", "l/"} {
				it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefix + run.ID + "/")})
				for it.Rewind(); it.Valid(); it.Next() {
					v, err := it.Item().ValueCopy(nil)
					if err != nil {
						it.Close()
						return err
					}
					out[run.ID] = append(out[run.ID], journalfixture.Record{Key: it.Item().KeyCopy(nil), Value: v})
				}
				it.Close()
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// writeFixture rewrites records.txt and the runs' show-LABEL.json views.
func writeFixture(t *testing.T, fx *journalfixture.Fixture, shows map[string][]byte, from string) {
	t.Helper()
	b, err := journalfixture.Encode(fx, []string{
		"Journal and log records of runs of instances.fsc.hcl, as written by fuscia at commit " + from,
		"(go test ./engine -run TestJournalFormat -journal-fixture-from=" + from + "). Do not edit: the journal",
		"package reads them back and must re-encode every value byte for byte.",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(journalFixtureDir, "records.txt"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for label, show := range shows {
		if err := os.WriteFile(filepath.Join(journalFixtureDir, "show-"+label+".json"), show, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readJournalFixture reads records.txt.
func readJournalFixture(t *testing.T) *journalfixture.Fixture {
	t.Helper()
	fx, err := journalfixture.Read(filepath.Join(journalFixtureDir, "records.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return fx
}

// instanceFacts describes what a run's records say about its instances, with the execution
// id taken out of the task ids (each run has a new one) and what varies from one run to the
// next (times, ports, durations, log messages) left out: one line per journal entry of a node and per log
// line, sorted. all is false for a run whose entries depend on timing (the resumed one: what
// its cut copy holds depends on which iteration got there first); then only its instances
// are listed, once each.
func instanceFacts(t *testing.T, id string, records []journalfixture.Record, all bool) []string {
	t.Helper()
	var facts []string
	seen := map[string]bool{}
	for _, r := range records {
		var fact string
		switch {
		case bytes.HasPrefix(r.Key, []byte("j/")):
			var e journal.Entry
			if err := json.Unmarshal(r.Value, &e); err != nil {
				t.Fatalf("%s: %v", r.Key, err)
			}
			if e.Node == "" {
				continue
			}
			taskID := e.TaskID
			if taskID != "" {
				if !strings.HasPrefix(taskID, id+":") {
					t.Fatalf("task id %q of %s: not in the run's id", taskID, id)
				}
				taskID = "ID" + taskID[len(id):]
			}
			fact = fmt.Sprintf("%s %s %v attempt=%d task_id=%s status=%s", e.Type, e.Node, e.Index, e.Attempt, taskID, e.Status)
			if !all {
				fact = fmt.Sprintf("%s %v", e.Node, e.Index)
			}
		case bytes.HasPrefix(r.Key, []byte("l/")):
			var l journal.LogLine
			if err := json.Unmarshal(r.Value, &l); err != nil {
				t.Fatalf("%s: %v", r.Key, err)
			}
			// The message is left out: builtin.http's names the server's port and the time taken.
			fact = fmt.Sprintf("log %s %v attempt=%d %s", l.Node, l.Index, l.Attempt, l.Level)
			if !all {
				fact = fmt.Sprintf("%s %v", l.Node, l.Index)
			}
		}
		if !all && seen[fact] {
			continue
		}
		seen[fact] = true
		facts = append(facts, fact)
	}
	slices.Sort(facts)
	return facts
}

// TestJournalFormat: the engine journals the fixture's workflow today with the same instances,
// attempts, task ids and log lines as the code that wrote the fixture (with
// -journal-fixture-from, it rewrites the fixture instead).
func TestJournalFormat(t *testing.T) {
	got, shows := recordFixtureRuns(t)
	if *journalFixtureFrom != "" {
		writeFixture(t, got, shows, *journalFixtureFrom)
		return
	}
	want := readJournalFixture(t)
	if len(got.Runs) != len(want.Runs) {
		t.Fatalf("%d runs; the fixture has %d", len(got.Runs), len(want.Runs))
	}
	for i, run := range want.Runs {
		all := run.Label != "resumed"
		g := instanceFacts(t, got.Runs[i].ID, got.Records[got.Runs[i].ID], all)
		w := instanceFacts(t, run.ID, want.Records[run.ID], all)
		if !slices.Equal(g, w) {
			t.Errorf("run %s: the journal differs from the fixture's:\n got: %s\nwant: %s", run.Label, strings.Join(g, "\n      "), strings.Join(w, "\n      "))
		}
	}
}

// TestJournalFixtureReplay: a resumed run reads the journals an earlier fuscia wrote. Every
// instance they name is found under its address, with the status its last entry gave it;
// every key of the replay is an address whose text parses back to it; and every task id in
// them is the one today's code gives that instance, so a task recognizes its retries across
// an upgrade.
func TestJournalFixtureReplay(t *testing.T) {
	fx := readJournalFixture(t)
	workflows := map[string]*lang.Workflow{}
	for _, file := range []string{"instances.fsc.hcl", "child.fsc.hcl"} {
		w, diags := lang.NewParser().Load(filepath.Join(journalFixtureDir, file), lang.Options{Planning: true, Vars: lang.VarInputs{Flags: []string{"url=http://127.0.0.1:1"}}})
		if diags.HasErrors() {
			t.Fatalf("load %s: %s", file, diags.Error())
		}
		workflows[w.Name] = w
	}
	for _, run := range fx.Runs {
		var entries []journal.Entry
		for _, r := range fx.Records[run.ID] {
			if !bytes.HasPrefix(r.Key, []byte("j/")) {
				continue
			}
			var e journal.Entry
			if err := json.Unmarshal(r.Value, &e); err != nil {
				t.Fatalf("%q: %v", r.Key, err)
			}
			entries = append(entries, e)
		}
		if len(entries) == 0 || entries[0].Run == nil || workflows[entries[0].Run.Workflow] == nil {
			t.Fatalf("run %s: no run_started entry of a fixture workflow", run.Label)
		}
		rp := buildReplay(entries, workflows[entries[0].Run.Workflow])
		status := map[string]string{}
		tasks := 0
		for _, e := range entries {
			if e.Node == "" {
				continue
			}
			inst, err := e.Instance()
			if err != nil {
				t.Fatalf("run %s: %v", run.Label, err)
			}
			if rp.insts[inst.String()] == nil {
				t.Errorf("run %s: the replay has no %s", run.Label, inst)
			}
			if e.Type == journal.NodeFinished {
				status[inst.String()] = e.Status
			}
			if e.TaskID != "" {
				tasks++
				if got := taskID(run.ID, inst); got != e.TaskID {
					t.Errorf("run %s: %s has task id %s; the journal has %s", run.Label, inst, got, e.TaskID)
				}
			}
		}
		if tasks == 0 {
			t.Errorf("run %s: no task id in the fixture", run.Label)
		}
		for k, ri := range rp.insts {
			back, err := addrs.ParseInstance(k)
			if err != nil || !back.Equal(ri.addr) || ri.addr.String() != k {
				t.Errorf("run %s: replay key %q holds %+v (parsed: %+v, %v)", run.Label, k, ri.addr, back, err)
			}
			if ri.status != status[k] {
				t.Errorf("run %s: %s replays as %q; its last node_finished says %q", run.Label, k, ri.status, status[k])
			}
		}
	}
}
