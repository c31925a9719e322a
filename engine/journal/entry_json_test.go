package journal

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/fuscia/fuscia/internal/outcome"
)

// sameAsEncodingJSON fails t unless appendEntryJSON encodes e exactly as encoding/json does,
// and refuses exactly what encoding/json refuses.
func sameAsEncodingJSON(t *testing.T, e *Entry) {
	t.Helper()
	want, wantErr := json.Marshal(e)
	got, gotErr := appendEntryJSON([]byte("prefix"), e)
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("entry %+v: error %v; encoding/json's %v", e, gotErr, wantErr)
	}
	if wantErr != nil {
		return
	}
	if !bytes.HasPrefix(got, []byte("prefix")) || !bytes.Equal(got[len("prefix"):], want) {
		t.Fatalf("entry %+v:\n got %s\nwant %s", e, got, want)
	}
}

func TestEntryJSONMatchesEncodingJSON(t *testing.T) {
	at := time.Date(2026, 11, 27, 22, 30, 1, 120000000, time.UTC)
	zone := time.FixedZone("x", -(3*3600 + 30*60))
	for name, e := range map[string]Entry{
		"empty":     {},
		"attempt":   {Seq: 7, Type: AttemptStarted, Time: at, Node: "task.t1", Index: []int{0, 12}, Key: json.RawMessage(` "k" `), Attempt: 2, TaskID: "01J:task.t1[0][12]", Input: json.RawMessage("{\n  \"a\": [1, 2.50, -3e7],\n  \"b\": \"x y\"\n}")},
		"finished":  {Type: NodeFinished, Time: at.In(zone), Node: "loop.l/task.x", Status: StatusSucceeded, Output: json.RawMessage(`{"html":"<a href='x'>&amp;</a>","sep":"a\u2028b\u2029c","raw":"` + "\u2028" + `"}`), Selected: "big"},
		"failed":    {Type: AttemptFailed, Node: "task.f", Error: &outcome.Error{Kind: outcome.Fatal, Message: "no <route> & \"quotes\"\n"}, RetryAt: at.Add(time.Second), Reason: "why\tnot"},
		"continued": {Type: AttemptContinued, State: json.RawMessage(`[true,false,null]`), Progress: 0.000000125, Output: json.RawMessage(`null`)},
		"progress":  {Type: AttemptContinued, Progress: 1e21},
		"waiting":   {Type: NodeWaiting, Deadline: at.Add(time.Hour), WaitKind: "approval", Rejected: true, AnsweredBy: "token ünïcode", Total: 3, ChildID: "01K"},
		"run":       {Type: RunStarted, Run: &RunInfo{Workflow: "w", Nodes: []string{"task.a"}, Bodies: map[string][]string{"loop.l": {"task.b"}}, Vars: json.RawMessage(`{ }`)}},
		"run, all fields": {Type: RunStarted, Run: &RunInfo{Workflow: "w<1>", File: "/tmp/a b/w.fsc.hcl", PlanDigest: "sha256:ab",
			Trigger: Trigger{Type: "webhook", Name: "in", Payload: json.RawMessage("{\n \"body\": {\"id\": \"<x>&\"}, \"n\": 1.50\n}")},
			Vars:    json.RawMessage(`{"k":"v"}`), Durability: "strict", Parallelism: 4, Parent: "01P", ParentNode: "call.c",
			Nodes: []string{}, Bodies: map[string][]string{"loop.z": nil, "loop.a": {"task.x", "wait.ü"}, "loop.<m>": {}}}},
		"run, empty":       {Type: RunStarted, Run: &RunInfo{}},
		"run, bad payload": {Type: RunStarted, Run: &RunInfo{Trigger: Trigger{Payload: json.RawMessage(`{`)}}},
		"finishedrun":      {Type: RunFinished, Status: StatusFailed, Outputs: json.RawMessage(` {"n" : 1} `)},
		"invalid utf8":     {Type: NodeFinished, Node: "task.\xff\xfe", Reason: "a\x00b\x1fc\x7f"},
		"bad raw":          {Type: NodeFinished, Output: json.RawMessage(`{"a":`)},
		"year 10000":       {Type: NodeFinished, Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"year -1":          {Type: NodeFinished, Time: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
		"zone 24h":         {Type: NodeFinished, Time: at.In(time.FixedZone("far", 24*3600))},
		"zone -25h":        {Type: NodeFinished, Time: at.In(time.FixedZone("far", -25*3600))},
	} {
		t.Run(name, func(t *testing.T) { sameAsEncodingJSON(t, &e) })
	}
}

// FuzzEntryJSON: whatever the strings, raw messages and times, appendEntryJSON and
// encoding/json agree. `go test` runs the seeds; `go test -fuzz FuzzEntryJSON` explores.
func FuzzEntryJSON(f *testing.F) {
	f.Add("task.t1", "succeeded", []byte(`{"n": 1}`), []byte(`1`), int64(1764282601120000000), 0, 2, 0.5)
	f.Add("task.<x>&", "\u2028", []byte("[\"\u2029\", \"<\"]"), []byte(` "k" `), int64(-62135596800000000), -3600*5, 0, 0.0)
	f.Add("\xff", "\x00\"\\", []byte(`{"a":`), []byte(nil), int64(253402300800000000), 86400, -1, 1e-7)
	f.Fuzz(func(t *testing.T, node, status string, output, key []byte, nanos int64, offset, attempt int, progress float64) {
		e := Entry{
			Seq: 3, Type: NodeFinished, Time: time.Unix(0, nanos).In(time.FixedZone("z", offset%(30*3600))),
			Node: node, Index: []int{attempt, 1}, Key: key, Attempt: attempt, TaskID: node + ":" + status,
			Status: status, Output: output, Input: key, Selected: status, Progress: progress,
		}
		if attempt%2 == 0 {
			e.Error = &outcome.Error{Kind: outcome.Validation, Message: status}
			e.Deadline = e.Time.Add(time.Minute)
		}
		sameAsEncodingJSON(t, &e)
	})
}

// sameSummaryAsEncodingJSON fails t unless appendSummaryJSON encodes s exactly as encoding/json
// does, and refuses exactly what encoding/json refuses.
func sameSummaryAsEncodingJSON(t *testing.T, s *Summary) {
	t.Helper()
	want, wantErr := json.Marshal(s)
	got, gotErr := appendSummaryJSON(nil, s)
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("summary %+v: error %v; encoding/json's %v", s, gotErr, wantErr)
	}
	if wantErr == nil && !bytes.Equal(got, want) {
		t.Fatalf("summary %+v:\n got %s\nwant %s", s, got, want)
	}
}

func TestSummaryJSONMatchesEncodingJSON(t *testing.T) {
	at := time.Date(2026, 11, 27, 22, 30, 1, 5, time.UTC)
	parent := "01P<&>"
	for name, s := range map[string]Summary{
		"empty":    {},
		"running":  {ID: "01K", Workflow: "hook", Status: StatusRunning, Trigger: TriggerRef{Type: "webhook", Name: "in"}, StartedAt: at},
		"finished": {ID: "01K", Workflow: "wf\u2028", Status: StatusSucceeded, StartedAt: at, FinishedAt: &at, Parent: &parent},
		"year -1":  {StartedAt: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		t.Run(name, func(t *testing.T) { sameSummaryAsEncodingJSON(t, &s) })
	}
}

// FuzzRunJSON: a run's information and summary encode as encoding/json encodes them.
func FuzzRunJSON(f *testing.F) {
	f.Add("hook", "in", []byte(`{"body": {"id": 1}}`), "01P", int64(1764282601120000000), true)
	f.Add("w<\u2028>", "\xff", []byte(`[1, "<&>"]`), "", int64(-62135596800000000), false)
	f.Fuzz(func(t *testing.T, workflow, name string, payload []byte, parent string, nanos int64, finished bool) {
		at := time.Unix(0, nanos).UTC()
		ri := &RunInfo{Workflow: workflow, File: name, Trigger: Trigger{Type: "webhook", Name: name, Payload: payload},
			Vars: payload, Parent: parent, Nodes: []string{workflow, name}, Bodies: map[string][]string{name: {workflow}, parent: nil}}
		sameAsEncodingJSON(t, &Entry{Type: RunStarted, Time: at, Run: ri})
		s := &Summary{ID: parent, Workflow: workflow, Status: name, Trigger: TriggerRef{Type: name, Name: workflow}, StartedAt: at}
		if finished {
			s.FinishedAt, s.Parent = &at, &parent
		}
		sameSummaryAsEncodingJSON(t, s)
	})
}
