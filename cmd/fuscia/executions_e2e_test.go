package main

// End-to-end tests of the commands that read and change past executions: executions list and
// prune, show, logs, cancel. The runs are journaled by the test itself (journal.Append), so
// these tests do not depend on apply.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/local"
	"github.com/fuscia/fuscia/internal/outcome"
)

// exRuns are the ids of the runs exSeed journals, oldest first.
type exRuns struct {
	old     string // orders, succeeded 72 hours ago, with for_each items, a loop, logs, outputs
	failed  string // mail, failed an hour ago
	running string // orders, running, but no process runs it
}

// exShortHome returns a fresh home whose socket path fits a unix socket address.
func exShortHome(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "fsc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func exAppend(t *testing.T, st *journal.Store, id string, entries ...journal.Entry) {
	t.Helper()
	if err := st.Append(context.Background(), id, true, entries...); err != nil {
		t.Fatal(err)
	}
}

// exLog journals log lines and waits for them: Log does not wait, a durable Append after it
// does.
func exLog(t *testing.T, st *journal.Store, id string, lines ...journal.LogLine) {
	t.Helper()
	if err := st.Log(id, lines...); err != nil {
		t.Fatal(err)
	}
	exAppend(t, st, id, journal.Entry{Type: journal.RunStatus, Status: journal.StatusRunning})
}

// exSeedStore journals the runs of exRuns into st.
func exSeedStore(t *testing.T, st *journal.Store) exRuns {
	t.Helper()
	now := time.Now().UTC()
	runs := exRuns{
		old:     "01E2E0000000000000000000A1",
		failed:  "01E2E0000000000000000000B2",
		running: "01E2E0000000000000000000C3",
	}
	at := func(ago time.Duration) time.Time { return now.Add(-ago) }
	start := at(72 * time.Hour)
	info := &journal.RunInfo{
		Workflow: "orders", File: "orders.fsc.hcl", Trigger: journal.Trigger{Type: "manual", Name: "start", Payload: json.RawMessage(`{"order":7}`)},
		Durability: "strict", Nodes: []string{"task.fetch", "task.send_all", "loop.notify", "task.never"},
		Bodies: map[string][]string{"loop.notify": {"task.send"}},
	}
	ms := func(n int) time.Time { return start.Add(time.Duration(n) * time.Millisecond) }
	exAppend(t, st, runs.old,
		journal.Entry{Type: journal.RunStarted, Time: start, Run: info},
		journal.Entry{Type: journal.AttemptStarted, Time: ms(1), Node: "task.fetch", Attempt: 1, TaskID: "t1"},
		journal.Entry{Type: journal.NodeFinished, Time: ms(121), Node: "task.fetch", Status: "succeeded", Output: json.RawMessage(`{"items":[1,2,3]}`)},
		journal.Entry{Type: journal.NodeStarted, Time: ms(130), Node: "task.send_all", Total: 3},
	)
	for i := range 3 {
		e := journal.Entry{Type: journal.NodeFinished, Time: ms(200 + i), Node: "task.send_all", Index: []int{i}, Key: json.RawMessage(fmt.Sprint(i)), Status: "succeeded", Output: json.RawMessage(`{}`)}
		if i == 2 {
			e.Status, e.Output, e.Error = "failed", nil, &outcome.Error{Kind: outcome.Fatal, Message: "mailbox full"}
		}
		exAppend(t, st, runs.old,
			journal.Entry{Type: journal.AttemptStarted, Time: ms(140 + i), Node: "task.send_all", Index: []int{i}, Key: json.RawMessage(fmt.Sprint(i)), Attempt: 1},
			e)
	}
	exLog(t, st, runs.old,
		journal.LogLine{Time: ms(2), Node: "task.fetch", Attempt: 1, Level: "info", Message: "fetching order 7"},
		journal.LogLine{Time: ms(150), Node: "task.send_all", Index: []int{2}, Attempt: 1, Level: "error", Message: "mailbox full"},
		journal.LogLine{Time: ms(310), Node: "loop.notify/task.send", Index: []int{1}, Attempt: 1, Level: "warn", Message: "slow"},
	)
	exAppend(t, st, runs.old,
		journal.Entry{Type: journal.NodeFinished, Time: ms(210), Node: "task.send_all", Status: "completed_with_errors"},
		journal.Entry{Type: journal.NodeStarted, Time: ms(300), Node: "loop.notify", Total: 2},
		journal.Entry{Type: journal.NodeStarted, Time: ms(300), Node: "loop.notify", Index: []int{0}, Key: json.RawMessage("0")},
		journal.Entry{Type: journal.AttemptStarted, Time: ms(301), Node: "loop.notify/task.send", Index: []int{0}, Attempt: 1},
		journal.Entry{Type: journal.NodeFinished, Time: ms(302), Node: "loop.notify/task.send", Index: []int{0}, Status: "succeeded"},
		journal.Entry{Type: journal.NodeFinished, Time: ms(303), Node: "loop.notify", Index: []int{0}, Status: "succeeded"},
		journal.Entry{Type: journal.NodeStarted, Time: ms(304), Node: "loop.notify", Index: []int{1}, Key: json.RawMessage("1")},
		journal.Entry{Type: journal.AttemptStarted, Time: ms(305), Node: "loop.notify/task.send", Index: []int{1}, Attempt: 3},
		journal.Entry{Type: journal.NodeFinished, Time: ms(400), Node: "loop.notify/task.send", Index: []int{1}, Status: "failed",
			Error: &outcome.Error{Kind: outcome.Timeout, Message: "took longer than 1s"}},
		journal.Entry{Type: journal.NodeFinished, Time: ms(401), Node: "loop.notify", Index: []int{1}, Status: "failed",
			Error: &outcome.Error{Kind: outcome.Timeout, Message: "took longer than 1s"}},
		journal.Entry{Type: journal.NodeFinished, Time: ms(402), Node: "loop.notify", Status: "completed_with_errors"},
		journal.Entry{Type: journal.RunFinished, Time: ms(2500), Status: "succeeded", Outputs: json.RawMessage(`{"total": 3, "who": {"name": "ann"}}`)},
	)

	exAppend(t, st, runs.failed,
		journal.Entry{Type: journal.RunStarted, Time: at(time.Hour), Run: &journal.RunInfo{
			Workflow: "mail", Trigger: journal.Trigger{Type: "schedule", Name: "nightly"}, Durability: "strict", Nodes: []string{"task.send"}}},
		journal.Entry{Type: journal.AttemptStarted, Time: at(time.Hour), Node: "task.send", Attempt: 1},
		journal.Entry{Type: journal.NodeFinished, Time: at(time.Hour - time.Second), Node: "task.send", Status: "failed",
			Error: &outcome.Error{Kind: outcome.Fatal, Message: "no route"}},
		journal.Entry{Type: journal.RunFinished, Time: at(time.Hour - time.Second), Status: "failed",
			Error: &outcome.Error{Kind: outcome.Fatal, Message: "task.send failed"}},
	)

	exAppend(t, st, runs.running,
		journal.Entry{Type: journal.RunStarted, Time: at(time.Minute), Run: &journal.RunInfo{
			Workflow: "orders", Trigger: journal.Trigger{Type: "manual", Name: "start"}, Durability: "strict", Nodes: []string{"task.fetch"}}},
		journal.Entry{Type: journal.AttemptStarted, Time: at(time.Minute), Node: "task.fetch", Attempt: 1},
	)
	exLog(t, st, runs.running, journal.LogLine{Node: "task.fetch", Level: "info", Message: "started"})
	return runs
}

// exSeed journals the runs into home's store, and closes it.
func exSeed(t *testing.T, home string) exRuns {
	t.Helper()
	st, err := journal.Open(filepath.Join(home, "state"), journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}()
	return exSeedStore(t, st)
}

type exListOutput struct {
	Executions []json.RawMessage `json:"executions"`
}

// exList runs `executions list -json` with args and returns the ids, checking every element's
// shape against docs/reference/cli.md.
func exList(t *testing.T, h *harness, args ...string) []string {
	t.Helper()
	r := h.run(append([]string{"executions", "list", "-json"}, args...)...)
	wantCode(t, r, 0)
	if got := keys(t, json.RawMessage(r.stdout)); !slices.Equal(got, []string{"executions"}) {
		t.Fatalf("list -json keys %v:\n%s", got, r)
	}
	var out exListOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Executions == nil {
		t.Fatalf("executions is not a list:\n%s", r)
	}
	ids := []string{}
	for _, raw := range out.Executions {
		want := []string{"execution_id", "finished_at", "parent_execution_id", "started_at", "status", "trigger", "workflow"}
		if got := keys(t, raw); !slices.Equal(got, want) {
			t.Errorf("execution keys %v, want %v", got, want)
		}
		var s journal.Summary
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		var trig map[string]json.RawMessage
		_ = json.Unmarshal(raw, &trig)
		if got := keys(t, trig["trigger"]); !slices.Equal(got, []string{"name", "type"}) {
			t.Errorf("trigger keys %v", got)
		}
		ids = append(ids, s.ID)
	}
	return ids
}

func TestExecutionsList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	runs := exSeed(t, h.home)

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{runs.running, runs.failed, runs.old}},
		{[]string{"-workflow", "orders"}, []string{runs.running, runs.old}},
		{[]string{"-status", "failed"}, []string{runs.failed}},
		// No process ran it when the store was opened: it is interrupted, not running.
		{[]string{"-status=interrupted", "-workflow=orders"}, []string{runs.running}},
		{[]string{"-status=running"}, []string{}},
		{[]string{"-workflow", "nope"}, []string{}},
		{[]string{"-completed-before", "48h"}, []string{runs.old}},
		{[]string{"-completed-before", "2d"}, []string{runs.old}},
		{[]string{"-completed-before", time.Now().Add(time.Minute).UTC().Format(time.RFC3339)}, []string{runs.failed, runs.old}},
		{[]string{"-completed-before", "2001-01-01"}, []string{}},
	} {
		if got := exList(t, h, tc.args...); !slices.Equal(got, tc.want) {
			t.Errorf("list %v = %v, want %v", tc.args, got, tc.want)
		}
	}

	r := h.run("executions", "list")
	wantCode(t, r, 0)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "ID ") {
		t.Fatalf("list table:\n%s", r)
	}
	for _, col := range []string{"WORKFLOW", "STATUS", "TRIGGER", "STARTED", "DURATION"} {
		wantContains(t, "header", lines[0], col)
	}
	wantContains(t, "list", lines[1], runs.running, "orders", "interrupted", "manual.start")
	wantContains(t, "list", lines[2], runs.failed, "mail", "failed", "schedule.nightly", "1s")
	wantContains(t, "list", lines[3], runs.old, "succeeded", "2.5s")
	if r := h.run("executions", "list", "-workflow", "nope"); r.code != 0 || !strings.Contains(r.stdout, "No executions") {
		t.Errorf("empty list:\n%s", r)
	}

	// A home without any store lists nothing, and a read creates nothing.
	empty := newHarness(t)
	if got := exList(t, empty); len(got) != 0 {
		t.Errorf("list in an empty home = %v", got)
	}
	if ents, _ := os.ReadDir(empty.home); len(ents) != 0 {
		t.Errorf("executions list created files in the home")
	}
}

func TestExecutionsBadInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	exSeed(t, h.home)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"executions", "list", "-status", "done"}, "Invalid -status"},
		{[]string{"executions", "list", "-status", "pending"}, "Invalid -status"},
		{[]string{"executions", "list", "-completed-before", "yesterday"}, "Invalid -completed-before"},
		{[]string{"executions", "list", "-completed-before", "-5h"}, "Invalid -completed-before"},
		{[]string{"executions", "list", "extra"}, "Unexpected argument"},
		{[]string{"executions", "prune"}, "Missing -completed-before"},
		{[]string{"executions", "prune", "-completed-before", "2026-13-01"}, "Invalid -completed-before"},
		{[]string{"executions"}, "Usage: fuscia executions"},
		{[]string{"executions", "bogus"}, "unknown subcommand"},
		{[]string{"executions", "list", "-bogus"}, "bogus"},
		{[]string{"show"}, "No execution given"},
		{[]string{"show", "a", "b"}, "Too many arguments"},
		{[]string{"logs"}, "No execution given"},
		{[]string{"cancel"}, "No execution given"},
	} {
		r := h.run(tc.args...)
		wantCode(t, r, 2)
		wantContains(t, "stderr", r.stderr, tc.want)
	}
	r := h.run("executions", "list", "-json", "-status", "done")
	wantCode(t, r, 2)
	if v := decodeValidate(t, r.stdout); v.Valid || len(v.Diagnostics) != 1 || v.Diagnostics[0].Summary != "Invalid -status" {
		t.Errorf("list -json with a bad status: %+v", v)
	}
}

func TestExecutionsHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"show"}, {"logs"}, {"cancel"}, {"executions"}, {"executions", "list"}, {"executions", "prune"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			r := newHarness(t).run(append(args, "-help")...)
			wantCode(t, r, 0)
			if !strings.HasPrefix(r.stdout, "Usage: fuscia "+strings.Join(args, " ")) {
				t.Errorf("help does not start with the usage:\n%s", r)
			}
			wantContains(t, "help", r.stdout, "-home")
		})
	}
	r := newHarness(t).run("-help")
	wantContains(t, "help", r.stdout, "executions", "show", "logs", "cancel")
}

func TestShowJSON(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	runs := exSeed(t, h.home)
	r := h.run("show", runs.old, "-json")
	wantCode(t, r, 0)
	want := []string{"execution_id", "finished_at", "nodes", "outputs", "parent_execution_id", "started_at", "status", "trigger", "workflow"}
	if got := keys(t, json.RawMessage(r.stdout)); !slices.Equal(got, want) {
		t.Errorf("show -json keys %v, want %v", got, want)
	}
	var x journal.Execution
	if err := json.Unmarshal([]byte(r.stdout), &x); err != nil {
		t.Fatal(err)
	}
	if x.ID != runs.old || x.Workflow != "orders" || x.Status != "succeeded" || x.Trigger.Name != "start" ||
		x.FinishedAt == nil || x.Parent != nil {
		t.Errorf("execution %+v", x)
	}
	jsonEqual(t, "trigger payload", x.Trigger.Payload, `{"order":7}`)
	jsonEqual(t, "outputs", x.Outputs, `{"total": 3, "who": {"name": "ann"}}`)
	if got := keys(t, mustField(t, r.stdout, "nodes")); !slices.Equal(got, []string{"loop.notify", "task.fetch", "task.never", "task.send_all"}) {
		t.Errorf("nodes %v", got)
	}
	fetch := x.Nodes["task.fetch"]
	if fetch.Status != "succeeded" || fetch.Attempts != 1 || fetch.StartedAt == nil || fetch.FinishedAt == nil {
		t.Errorf("task.fetch %+v", fetch)
	}
	jsonEqual(t, "task.fetch output", fetch.Output, `{"items":[1,2,3]}`)
	if all := x.Nodes["task.send_all"]; len(all.Instances) != 3 || all.Instances[2].Status != "failed" ||
		all.Instances[2].Error == nil || all.Instances[2].Error.Kind != "fatal" || string(all.Instances[1].Key) != "1" {
		t.Errorf("task.send_all %+v", all)
	}
	if loop := x.Nodes["loop.notify"]; len(loop.Iterations) != 2 || loop.Iterations[1].Nodes["task.send"] == nil ||
		loop.Iterations[1].Nodes["task.send"].Status != "failed" {
		t.Errorf("loop.notify %+v", loop)
	}
	if x.Nodes["task.never"].Status != "pending" {
		t.Errorf("task.never %+v", x.Nodes["task.never"])
	}

	// A unique prefix works too, in any case.
	r = h.run("show", strings.ToLower(runs.failed[:len(runs.failed)-1]), "-json")
	wantCode(t, r, 0)
	wantContains(t, "show prefix", r.stdout, runs.failed, `"kind": "fatal"`)
}

// mustField returns one field of a JSON object.
func mustField(t *testing.T, obj, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(obj), &m); err != nil {
		t.Fatal(err)
	}
	return m[name]
}

func TestShowHuman(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	runs := exSeed(t, h.home)
	r := h.run("show", runs.old)
	wantCode(t, r, 0)
	wantContains(t, "show", r.stdout,
		"Execution "+runs.old, "Workflow:  orders", "Status:    succeeded", "Trigger:   manual.start",
		"Duration:  2.5s", "Nodes:", "Outputs:", "  total = 3\n", `  who = {"name":"ann"}`,
		"Node outputs:", `  task.fetch = {"items":[1,2,3]}`,
		"3 items: 2 succeeded, 1 failed", "item 2", "fatal: mailbox full",
		"2 iterations: 1 succeeded, 1 failed", "iteration 1", "task.send", "3 attempts", "timeout: took longer than 1s")
	// Nodes in the order they started, pending last.
	order := []string{"task.fetch ", "task.send_all ", "loop.notify ", "task.never "}
	last := -1
	for _, n := range order {
		i := strings.Index(r.stdout, "  "+n)
		if i < last {
			t.Errorf("%s out of order:\n%s", n, r.stdout)
		}
		last = i
	}
	if !regexpLine(r.stdout, `task\.fetch\s+succeeded\s+1 attempt\s+120ms`) {
		t.Errorf("task.fetch line:\n%s", r.stdout)
	}
	if !regexpLine(r.stdout, `task\.never\s+pending$`) {
		t.Errorf("task.never line:\n%s", r.stdout)
	}

	r = h.run("show", runs.failed)
	wantCode(t, r, 0)
	wantContains(t, "show failed", r.stdout, "Status:    failed", "Error:     fatal: task.send failed", "fatal: no route")
	if strings.Contains(r.stdout, "Outputs:") {
		t.Errorf("a run without outputs shows an Outputs section:\n%s", r.stdout)
	}
	// Nobody ran it when the store was opened: interrupted, with how to continue it.
	r = h.run("show", runs.running)
	wantCode(t, r, 0)
	wantContains(t, "show interrupted", r.stdout, "Status:    interrupted", "so far", "Continue it with: fuscia resume "+runs.running)
}

// regexpLine reports whether a line of s matches the regular expression re.
func regexpLine(s, re string) bool {
	rx := regexp.MustCompile(re)
	for _, l := range strings.Split(s, "\n") {
		if rx.MatchString(strings.TrimSpace(l)) {
			return true
		}
	}
	return false
}

func TestShowUnknownExecution(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// No store at all, then a store without that run.
	for round := range 2 {
		for _, args := range [][]string{
			{"show", "01NOPE0000000000000000000Z"}, {"show", "nope", "-json"}, {"logs", "01NOPE0000000000000000000Z"},
			{"logs", "01NOPE0000000000000000000Z", "-json"}, {"cancel", "01NOPE0000000000000000000Z"},
		} {
			r := h.run(args...)
			wantCode(t, r, 2)
			if slices.Contains(args, "-json") {
				v := decodeValidate(t, r.stdout)
				if len(v.Diagnostics) != 1 || v.Diagnostics[0].Summary != "Unknown execution" {
					t.Errorf("%v: %+v", args, v)
				}
				continue
			}
			wantContains(t, "stderr", r.stderr, "Error: Unknown execution", "fuscia executions list")
		}
		if round == 0 {
			if ents, _ := os.ReadDir(h.home); len(ents) != 0 {
				t.Errorf("show created files in the home")
			}
			exSeed(t, h.home)
		}
	}
	// A prefix shorter than 6 characters matches nothing, and the error says why.
	r := h.run("logs", "01E2E")
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, "Error: Unknown execution", "a prefix of at least 6 characters")
	// A prefix several runs share is refused as ambiguous, by every command that takes one.
	for _, cmd := range []string{"show", "resume", "cancel", "logs"} {
		r = h.run(cmd, "01E2E00000")
		wantCode(t, r, 2)
		wantContains(t, cmd+" stderr", r.stderr, "Error: Ambiguous execution id")
	}
	r = h.run("resume", "01E2E00000", "extra")
	wantCode(t, r, 2)
	wantContains(t, "resume with two ids", r.stderr, "Error: Too many arguments")
}

func TestExecutionsPrune(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	runs := exSeed(t, h.home)
	// The old run's artifact goes with it.
	refs := filepath.Join(h.home, "artifacts", "refs", runs.old)
	writeFile(t, filepath.Join(refs, strings.Repeat("a", 64)), []byte(`{}`), 0o644)
	writeFile(t, filepath.Join(h.home, "artifacts", "blobs", strings.Repeat("a", 64)), []byte("x"), 0o644)

	r := h.run("executions", "prune", "-completed-before", "24h")
	wantCode(t, r, 0)
	if strings.TrimSpace(r.stdout) != "Deleted 1 execution." {
		t.Errorf("prune output:\n%s", r)
	}
	if got := exList(t, h); !slices.Equal(got, []string{runs.running, runs.failed}) {
		t.Errorf("after prune: %v", got)
	}
	if _, err := os.Stat(refs); !os.IsNotExist(err) {
		t.Errorf("the pruned run's artifacts are still there: %v", err)
	}
	wantCode(t, h.run("show", runs.old), 2)

	// A running run is never pruned.
	r = h.run("executions", "prune", "-completed-before", time.Now().Add(time.Hour).Format(time.RFC3339))
	wantCode(t, r, 0)
	wantContains(t, "prune", r.stdout, "Deleted 1 execution.")
	r = h.run("executions", "prune", "-completed-before", "2099-01-01")
	wantCode(t, r, 0)
	wantContains(t, "prune", r.stdout, "Deleted 0 executions.")
	if got := exList(t, h); !slices.Equal(got, []string{runs.running}) {
		t.Errorf("after the second prune: %v", got)
	}
}

func TestLogs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	runs := exSeed(t, h.home)
	r := h.run("logs", runs.old)
	wantCode(t, r, 0)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("logs:\n%s", r)
	}
	for i, want := range []string{`^\S+ \S+ INFO  task\.fetch fetching order 7$`, `ERROR task\.send_all\[2\] mailbox full$`, `WARN  loop\.notify/task\.send\[1\] slow$`} {
		if !regexp.MustCompile(want).MatchString(lines[i]) {
			t.Errorf("line %d %q does not match %s", i, lines[i], want)
		}
	}
	for _, tc := range []struct {
		node string
		want int
	}{{"fetch", 1}, {"task.send_all", 1}, {"task.send", 1}, {"loop.notify", 1}, {"send", 1}} {
		r := h.run("logs", runs.old, "-node", tc.node)
		wantCode(t, r, 0)
		if got := strings.Count(r.stdout, "\n"); got != tc.want {
			t.Errorf("logs -node %s: %d lines, want %d:\n%s", tc.node, got, tc.want, r.stdout)
		}
	}
	// A node the run does not have is an error, not an empty log.
	r = h.run("logs", runs.old, "-node", "other")
	wantCode(t, r, 2)
	wantContains(t, "logs -node other", oneLine(r.stderr), "Error: Unknown node", `has no node "other"`)

	r = h.run("logs", runs.old, "-json")
	wantCode(t, r, 0)
	events := exEvents(t, r.stdout)
	if len(events) != 4 || events[0]["type"] != "version" || events[0]["ui"] != "1.0" {
		t.Fatalf("logs -json:\n%s", r.stdout)
	}
	for i, ev := range events[1:] {
		want := []string{"@timestamp", "execution_id", "level", "message", "node", "type"}
		if i > 0 {
			want = []string{"@timestamp", "execution_id", "index", "level", "message", "node", "type"}
		}
		if got := exKeys(ev); !slices.Equal(got, want) {
			t.Errorf("event %d keys %v, want %v", i, got, want)
		}
		if ev["type"] != "node_log" || ev["execution_id"] != runs.old {
			t.Errorf("event %d: %v", i, ev)
		}
		if _, err := time.Parse(time.RFC3339Nano, ev["@timestamp"].(string)); err != nil {
			t.Errorf("event %d timestamp: %v", i, err)
		}
	}
	if ev := events[2]; ev["node"] != "task.send_all" || ev["level"] != "error" || ev["message"] != "mailbox full" || fmt.Sprint(ev["index"]) != "[2]" {
		t.Errorf("event 2: %v", ev)
	}
	// -follow on a finished run prints what there is and ends.
	r = h.run("logs", runs.old, "-follow", "-json")
	wantCode(t, r, 0)
	events = exEvents(t, r.stdout)
	if last := events[len(events)-1]; last["type"] != "execution_finished" || last["status"] != "succeeded" {
		t.Errorf("last event of -follow -json: %v", last)
	}
	// docs/reference/cli.md: the stream of apply -json, rebuilt from the journal.
	types := map[any]int{}
	for _, ev := range events {
		types[ev["type"]]++
	}
	if types["version"] != 1 || types["execution_started"] != 1 || types["node_started"] == 0 || types["node_finished"] == 0 || types["node_log"] == 0 {
		t.Errorf("-follow -json of a finished run: event types %v, want version, execution_started, node events and node_log", types)
	}
}

func exEvents(t *testing.T, out string) []map[string]any {
	t.Helper()
	var events []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		if ev["type"] == nil || ev["@timestamp"] == nil {
			t.Errorf("line without type or @timestamp: %s", l)
		}
		events = append(events, ev)
	}
	return events
}

func exKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestCancel(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	runs := exSeed(t, h.home)
	// By a prefix: the full id is printed, for the commands that follow.
	r := h.run("cancel", runs.running[:len(runs.running)-1])
	wantCode(t, r, 0)
	wantContains(t, "cancel", r.stdout, "Cancelling execution "+runs.running+".")
	r = h.run("show", runs.running, "-json")
	wantCode(t, r, 0)
	var x journal.Execution
	if err := json.Unmarshal([]byte(r.stdout), &x); err != nil {
		t.Fatal(err)
	}
	if x.Status != "cancelled" || x.FinishedAt == nil || x.Error == nil || x.Error.Kind != "cancelled" {
		t.Errorf("after cancel: %+v", x)
	}
	for _, id := range []string{runs.running, runs.old} {
		r = h.run("cancel", id)
		wantCode(t, r, 1)
		wantContains(t, "cancel of a finished run", r.stderr, "Error: Execution already finished", id)
	}
}

// While a process owns the store, the commands go through its socket: they work although the
// store is locked.
func TestShowLogsCancelWhileOwned(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.home = exShortHome(t)
	ctx := context.Background()
	owner, err := local.Own(ctx, local.OwnerConfig{Home: h.home})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := owner.Close(); err != nil {
			t.Error(err)
		}
	}()
	runs := exSeedStore(t, owner.Store)

	r := h.run("show", runs.old, "-json")
	wantCode(t, r, 0)
	wantContains(t, "show through the socket", r.stdout, `"execution_id": "`+runs.old+`"`)
	if got := exList(t, h, "-workflow", "orders"); !slices.Equal(got, []string{runs.running, runs.old}) {
		t.Errorf("list through the socket: %v", got)
	}
	wantCode(t, h.run("show", "01NOPE0000000000000000000Z"), 2)
	r = h.run("logs", runs.old, "-node", "fetch")
	wantCode(t, r, 0)
	wantContains(t, "logs through the socket", r.stdout, "fetching order 7")

	// Follow the running run: lines logged meanwhile arrive, and the follow ends with the run.
	cctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, fusciaBin, "logs", runs.running, "-follow", "-json")
	cmd.Dir = h.dir
	cmd.Env = append(baseEnv(), "FUSCIA_HOME="+h.home)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	// next returns the next line that is a log line, the version or the end; the node events
	// between them (docs/reference/cli.md's stream, rebuilt from the journal) are counted by type.
	seen := map[string]int{}
	next := func() map[string]any {
		t.Helper()
		for {
			if !sc.Scan() {
				t.Fatalf("the follow ended early: %v\n%s", sc.Err(), stderr.String())
			}
			var ev map[string]any
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Fatalf("not JSON: %s", sc.Bytes())
			}
			typ, _ := ev["type"].(string)
			seen[typ]++
			if typ == "version" || typ == "node_log" || typ == "execution_finished" {
				return ev
			}
		}
	}
	if ev := next(); ev["type"] != "version" {
		t.Fatalf("first line %v", ev)
	}
	if ev := next(); ev["message"] != "started" {
		t.Fatalf("first log line %v", ev)
	}
	if seen["execution_started"] != 1 {
		t.Errorf("no execution_started before the first log line: %v", seen)
	}
	exLog(t, owner.Store, runs.running, journal.LogLine{Node: "task.fetch", Level: "info", Message: "still going"})
	if ev := next(); ev["message"] != "still going" || ev["type"] != "node_log" {
		t.Fatalf("followed line %v", ev)
	}
	// Cancelling through the socket ends the run (nobody runs it), and so the follow.
	r = h.run("cancel", strings.ToLower(runs.running))
	wantCode(t, r, 0)
	wantContains(t, "cancel through the socket", r.stdout, "Cancelling execution")
	if ev := next(); ev["type"] != "execution_finished" || ev["status"] != "cancelled" {
		t.Fatalf("last line %v", ev)
	}
	if sc.Scan() {
		t.Errorf("a line after execution_finished: %s", sc.Bytes())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("logs -follow: %v\n%s", err, stderr.String())
	}

	r = h.run("executions", "prune", "-completed-before", "24h")
	wantCode(t, r, 0)
	wantContains(t, "prune through the socket", r.stdout, "Deleted 1 execution.")
	if _, err := owner.Store.Summary(runs.old); err == nil {
		t.Error("the pruned run is still in the owner's store")
	}
}

// `logs -follow` on a run nobody runs does not keep the store from the process that resumes
// it: it follows the run through that process's socket once it owns the store.
func TestLogsFollowThenOwned(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.home = exShortHome(t)
	runs := exSeed(t, h.home)

	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, fusciaBin, "logs", runs.running, "-follow", "-json")
	cmd.Dir = h.dir
	cmd.Env = append(baseEnv(), "FUSCIA_HOME="+h.home)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	// got keeps the version, log and end lines; the node events between them are docs/reference/cli.md's
	// stream rebuilt from the journal, checked elsewhere.
	var got []string
	scan := func() bool {
		for sc.Scan() {
			if line := sc.Text(); strings.Contains(line, `"type":"version"`) || strings.Contains(line, `"type":"node_log"`) ||
				strings.Contains(line, `"type":"execution_finished"`) {
				got = append(got, line)
				return true
			}
		}
		return false
	}
	for len(got) < 2 && scan() {
	}
	if len(got) < 2 || !strings.Contains(got[1], `"message":"started"`) {
		t.Fatalf("first lines %q\n%s", got, stderr.String())
	}

	owner, err := local.Own(ctx, local.OwnerConfig{Home: h.home})
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	exLog(t, owner.Store, runs.running, journal.LogLine{Node: "task.fetch", Level: "info", Message: "resumed"})
	exAppend(t, owner.Store, runs.running, journal.Entry{Type: journal.RunFinished, Status: "succeeded"})
	for scan() {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("logs -follow: %v\n%s", err, stderr.String())
	}
	if len(got) != 4 || !strings.Contains(got[2], `"message":"resumed"`) || !strings.Contains(got[3], `"type":"execution_finished"`) ||
		!strings.Contains(got[3], `"status":"succeeded"`) {
		t.Errorf("follow output:\n%s", strings.Join(got, "\n"))
	}
}
