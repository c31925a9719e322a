package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang/addrs"
)

// journalAt journals entries as run id, entry i at t0 + i+1 seconds.
func journalAt(t *testing.T, s *Store, id string, t0 time.Time, entries []Entry) {
	t.Helper()
	stamped := make([]Entry, len(entries))
	for i, e := range entries {
		e.Time = t0.Add(time.Duration(i+1) * time.Second)
		stamped[i] = e
	}
	if err := s.Append(context.Background(), id, true, stamped...); err != nil {
		t.Fatal(err)
	}
}

// sameJSON compares got, encoded, with want, in which "ID" stands for id and ":SS" for
// t0 + SS seconds.
func sameJSON(t *testing.T, what string, got any, want, id string, t0 time.Time) {
	t.Helper()
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	want = strings.ReplaceAll(want, `"ID"`, `"`+id+`"`)
	for sec := 1; sec <= 30; sec++ {
		want = strings.ReplaceAll(want, fmt.Sprintf(`":%02d"`, sec), `"`+t0.Add(time.Duration(sec)*time.Second).Format(time.RFC3339Nano)+`"`)
	}
	var g, w any
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, b, mustCompact(want))
	}
}

// timelineRun is a run with a retried task, an approval, a for_each whose item 0 was
// interrupted by a shutdown and then by a crash, and a loop body's task. It is still running.
func timelineRun() []Entry {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	st := started("wf", "", "task.a", "wait.w", "task.f", "loop.l")
	st.Run.Bodies = map[string][]string{"loop.l": {"task.b"}}
	boom := outcome.Errorf(outcome.Retryable, "boom")
	return []Entry{
		st, // :01
		{Type: AttemptStarted, Node: "task.a", Attempt: 1, Input: raw(`{"x":1}`)},                                        // :02
		{Type: AttemptFailed, Node: "task.a", Attempt: 1, Error: boom},                                                   // :03
		{Type: AttemptStarted, Node: "task.a", Attempt: 2, Input: raw(`{"x":2,"token":{"sensitive":true}}`)},             // :04
		{Type: NodeFinished, Node: "task.a", Attempt: 2, Status: StatusSucceeded, Output: raw(`{"ok":true}`)},            // :05
		{Type: NodeStarted, Node: "wait.w"},                                                                              // :06
		{Type: NodeWaiting, Node: "wait.w", WaitKind: "approval"},                                                        // :07
		{Type: WaitResolved, Node: "wait.w", AnsweredBy: "alice", Output: raw(`{"yes":1}`)},                              // :08
		{Type: NodeFinished, Node: "wait.w", Status: StatusSucceeded, Output: raw(`{"yes":1}`)},                          // :09
		{Type: NodeStarted, Node: "task.f", Total: 3},                                                                    // :10
		{Type: AttemptStarted, Node: "task.f", Index: []int{0}, Key: raw(`"k0"`), Attempt: 1},                            // :11
		{Type: AttemptInterrupted, Node: "task.f", Index: []int{0}, Key: raw(`"k0"`), Attempt: 1},                        // :12
		{Type: AttemptStarted, Node: "task.f", Index: []int{0}, Key: raw(`"k0"`), Attempt: 2},                            // :13
		{Type: AttemptStarted, Node: "task.f", Index: []int{1}, Key: raw(`"k1"`), Attempt: 1},                            // :14
		{Type: NodeFinished, Node: "task.f", Index: []int{1}, Key: raw(`"k1"`), Status: StatusFailed, Error: boom},       // :15
		{Type: AttemptStarted, Node: "task.f", Index: []int{0}, Key: raw(`"k0"`), Attempt: 3, Input: raw(`{"k":"k0"}`)},  // :16
		{Type: NodeStarted, Node: "loop.l", Total: 2},                                                                    // :17
		{Type: NodeStarted, Node: "loop.l", Index: []int{0}, Key: raw(`0`)},                                              // :18
		{Type: AttemptStarted, Node: "loop.l/task.b", Index: []int{0}, Key: raw(`0`), Attempt: 1, Input: raw(`{"i":0}`)}, // :19
		{Type: NodeFinished, Node: "loop.l/task.b", Index: []int{0}, Key: raw(`0`), Status: StatusSucceeded},             // :20
		{Type: NodeFinished, Node: "loop.l", Index: []int{0}, Key: raw(`0`), Status: StatusSucceeded},                    // :21
		{Type: NodeStarted, Node: "loop.l", Index: []int{1}, Key: raw(`1`)},                                              // :22
		{Type: AttemptStarted, Node: "loop.l/task.b", Index: []int{1}, Key: raw(`1`), Attempt: 1, Input: raw(`{"i":1}`)}, // :23
		{Type: AttemptFailed, Node: "loop.l/task.b", Index: []int{1}, Key: raw(`1`), Attempt: 1, Error: boom},            // :24
	}
}

// TestTimeline: a run's timeline has each instance in the order of its first entry with its
// attempts (a failed one that is retried is "retrying"; one a shutdown cut short is
// "interrupted" and ends then; one a crash cut short is "interrupted" without an end) and its
// waits, from the entries' times. Once the run is interrupted, the attempts still open were
// cut short.
func TestTimeline(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer closeStore(t, s)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	id := testID(1)
	journalAt(t, s, id, t0, timelineRun())
	tl, err := s.Timeline(id)
	if err != nil {
		t.Fatal(err)
	}
	boom := `{"kind":"retryable","message":"boom"}`
	want := `{"execution_id":"ID","status":"running","started_at":":01","finished_at":null,"nodes":[
		{"node":"task.a","index":null,"key":null,"status":"succeeded","started_at":":02","finished_at":":05","waits":[],"attempts":[
			{"attempt":1,"started_at":":02","finished_at":":03","status":"retrying","error":` + boom + `},
			{"attempt":2,"started_at":":04","finished_at":":05","status":"succeeded","error":null}]},
		{"node":"wait.w","index":null,"key":null,"status":"succeeded","started_at":":06","finished_at":":09","attempts":[],
			"waits":[{"started_at":":07","finished_at":":08"}]},
		{"node":"task.f","index":null,"key":null,"status":"running","started_at":":10","finished_at":null,"attempts":[],"waits":[]},
		{"node":"task.f","index":[0],"key":"k0","status":"running","started_at":":11","finished_at":null,"waits":[],"attempts":[
			{"attempt":1,"started_at":":11","finished_at":":12","status":"interrupted","error":null},
			{"attempt":2,"started_at":":13","finished_at":null,"status":"interrupted","error":null},
			{"attempt":3,"started_at":":16","finished_at":null,"status":"running","error":null}]},
		{"node":"task.f","index":[1],"key":"k1","status":"failed","started_at":":14","finished_at":":15","waits":[],"attempts":[
			{"attempt":1,"started_at":":14","finished_at":":15","status":"failed","error":` + boom + `}]},
		{"node":"loop.l","index":null,"key":null,"status":"running","started_at":":17","finished_at":null,"attempts":[],"waits":[]},
		{"node":"loop.l","index":[0],"key":0,"status":"succeeded","started_at":":18","finished_at":":21","attempts":[],"waits":[]},
		{"node":"loop.l/task.b","index":[0],"key":0,"status":"succeeded","started_at":":19","finished_at":":20","waits":[],"attempts":[
			{"attempt":1,"started_at":":19","finished_at":":20","status":"succeeded","error":null}]},
		{"node":"loop.l","index":[1],"key":1,"status":"running","started_at":":22","finished_at":null,"attempts":[],"waits":[]},
		{"node":"loop.l/task.b","index":[1],"key":1,"status":"retrying","started_at":":23","finished_at":null,"waits":[],"attempts":[
			{"attempt":1,"started_at":":23","finished_at":":24","status":"retrying","error":` + boom + `}]}]}`
	sameJSON(t, "timeline", tl, want, id, t0)

	// Interrupted (the process running it ended): item 0's third attempt was cut short.
	if err := s.Append(context.Background(), id, true, Entry{Type: RunStatus, Status: StatusInterrupted}); err != nil {
		t.Fatal(err)
	}
	tl, err = s.Timeline(id)
	if err != nil {
		t.Fatal(err)
	}
	if a := tl.Nodes[3].Attempts[2]; tl.Status != StatusInterrupted || a.Status != "interrupted" || a.FinishedAt != nil {
		t.Errorf("after the interruption: run %s, item 0's attempt 3 %+v", tl.Status, a)
	}
	if _, err := s.Timeline(testID(99)); !errors.Is(err, ErrNotFound) {
		t.Errorf("Timeline of no run: %v", err)
	}
}

// TestTimelineBounded: a run with more instances than maxTimelineInstances has its first ones
// and says it was cut.
func TestTimelineBounded(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer closeStore(t, s)
	id := testID(1)
	entries := []Entry{started("wf", "", "task.f"), {Type: NodeStarted, Node: "task.f", Total: maxTimelineInstances + 5}}
	for i := range maxTimelineInstances + 5 {
		entries = append(entries, Entry{Type: AttemptStarted, Node: "task.f", Index: []int{i}, Attempt: 1})
	}
	journalAt(t, s, id, time.Now(), entries)
	tl, err := s.Timeline(id)
	if err != nil {
		t.Fatal(err)
	}
	if !tl.Truncated || len(tl.Nodes) != maxTimelineInstances || tl.Nodes[maxTimelineInstances-1].Index[0] != maxTimelineInstances-2 {
		t.Errorf("timeline of %d instances: truncated %v, %d nodes", maxTimelineInstances+6, tl.Truncated, len(tl.Nodes))
	}
}

// TestNodeDetail: a node's detail is its instance's attempts, the last attempt's input, its
// output and error, and a page of its items; an item's address has its own detail; a loop's
// items are its iterations; a loop body's node without an index stands for its latest
// iteration, with its instances as items; an unknown node is not found.
func TestNodeDetail(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer closeStore(t, s)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	id := testID(1)
	journalAt(t, s, id, t0, timelineRun())
	detail := func(addr string, offset, limit int) *NodeDetail {
		t.Helper()
		inst, err := addrs.ParseInstance(addr)
		if err != nil {
			t.Fatal(err)
		}
		d, err := s.NodeDetail(id, inst, offset, limit)
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		return d
	}
	boom := `{"kind":"retryable","message":"boom"}`
	sameJSON(t, "task.a", detail("task.a", 0, 50), `{"node":"task.a","status":"succeeded","started_at":":02","finished_at":":05",
		"attempts":[{"attempt":1,"started_at":":02","finished_at":":03","status":"retrying","error":`+boom+`},
			{"attempt":2,"started_at":":04","finished_at":":05","status":"succeeded","error":null}],
		"input":{"x":2,"token":{"sensitive":true}},"output":{"ok":true},"error":null,"items":[],"items_total":0}`, id, t0)
	sameJSON(t, "wait.w", detail("wait.w", 0, 50), `{"node":"wait.w","status":"succeeded","started_at":":06","finished_at":":09",
		"attempts":[],"input":null,"output":{"yes":1},"error":null,"answered_by":"alice","items":[],"items_total":0}`, id, t0)
	sameJSON(t, "task.f items 1-2", detail("task.f", 1, 5), `{"node":"task.f","status":"running","started_at":":10","finished_at":null,
		"attempts":[],"input":null,"output":null,"error":null,"items_total":3,"items":[
			{"index":[1],"key":"k1","status":"failed","attempts":1,"error":`+boom+`,"started_at":":14","finished_at":":15"},
			{"index":[2],"key":null,"status":"pending","attempts":0,"error":null,"started_at":null,"finished_at":null}]}`, id, t0)
	sameJSON(t, "task.f[0]", detail("task.f[0]", 0, 50), `{"node":"task.f[0]","status":"running","started_at":":11","finished_at":null,
		"attempts":[{"attempt":1,"started_at":":11","finished_at":":12","status":"interrupted","error":null},
			{"attempt":2,"started_at":":13","finished_at":null,"status":"interrupted","error":null},
			{"attempt":3,"started_at":":16","finished_at":null,"status":"running","error":null}],
		"input":{"k":"k0"},"output":null,"error":null,"items":[],"items_total":0}`, id, t0)
	sameJSON(t, "loop.l", detail("loop.l", 0, 1), `{"node":"loop.l","status":"running","started_at":":17","finished_at":null,
		"attempts":[],"input":null,"output":null,"error":null,"items_total":2,"items":[
			{"index":[0],"key":0,"status":"succeeded","attempts":0,"error":null,"started_at":":18","finished_at":":21"}]}`, id, t0)
	sameJSON(t, "loop.l/task.b", detail("loop.l/task.b", 0, 50), `{"node":"loop.l/task.b[1]","status":"retrying","started_at":":23","finished_at":null,
		"attempts":[{"attempt":1,"started_at":":23","finished_at":":24","status":"retrying","error":`+boom+`}],
		"input":{"i":1},"output":null,"error":`+boom+`,"items_total":2,"items":[
			{"index":[0],"key":0,"status":"succeeded","attempts":1,"error":null,"started_at":":19","finished_at":":20"},
			{"index":[1],"key":1,"status":"retrying","attempts":1,"error":`+boom+`,"started_at":":23","finished_at":null}]}`, id, t0)
	// Named in run_started but not reached: pending.
	st := started("wf2", "", "task.z")
	journalAt(t, s, testID(2), t0, []Entry{st})
	if d, err := s.NodeDetail(testID(2), addrs.Instance{Node: addrs.Node{Kind: addrs.KindTask, Name: "z"}}, 0, 50); err != nil || d.Status != StatusPending || d.Input != nil {
		t.Errorf("a node not reached: %+v, %v", d, err)
	}
	for _, addr := range []string{"task.nosuch", "loop.l/task.nosuch", "loop.nosuch"} {
		inst, _ := addrs.ParseInstance(addr)
		if _, err := s.NodeDetail(id, inst, 0, 50); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", addr, err)
		}
	}
	if _, err := s.NodeDetail(testID(99), addrs.Instance{Node: addrs.Node{Kind: addrs.KindTask, Name: "a"}}, 0, 50); !errors.Is(err, ErrNotFound) {
		t.Errorf("no run: %v", err)
	}
}
