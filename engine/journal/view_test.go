package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/internal/outcome"
)

func TestExecutionReplay(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	loopRun := started("wf", "", "loop.notify")
	loopRun.Run.Bodies = map[string][]string{"loop.notify": {"task.send", "wait.ok"}}
	childRun := started("wf", testID(50), "task.a")
	childRun.Run.Trigger.Payload = raw(`{"x":1}`)

	tests := []struct {
		name    string
		entries []Entry // entry i is journaled at t0 + i+1 seconds
		want    string  // the Execution as JSON; "ID" stands for the execution id, ":SS" for t0+SS s
	}{
		{
			name:    "pending prefill",
			entries: []Entry{started("wf", "", "task.a", "switch.b")},
			want: `{"execution_id":"ID","workflow":"wf","status":"running",
				"trigger":{"type":"manual","name":"cli","payload":{}},"started_at":":01",
				"finished_at":null,"parent_execution_id":null,"outputs":{},
				"nodes":{"task.a":{"status":"pending"},"switch.b":{"status":"pending"}}}`,
		},
		{
			name: "for_each instances and retries",
			entries: []Entry{
				started("wf", "", "task.fetch", "task.after"),
				{Type: NodeStarted, Node: "task.fetch", Total: 3},
				{Type: AttemptStarted, Node: "task.fetch", Index: []int{0}, Key: raw(`0`), Attempt: 1},
				{Type: NodeFinished, Node: "task.fetch", Index: []int{0}, Status: StatusSucceeded, Output: raw(`{"v":0}`)},
				{Type: AttemptStarted, Node: "task.fetch", Index: []int{1}, Key: raw(`1`), Attempt: 1},
				{Type: AttemptFailed, Node: "task.fetch", Index: []int{1}, Error: outcome.Errorf(outcome.Retryable, "boom")},
				{Type: AttemptStarted, Node: "task.fetch", Index: []int{1}, Attempt: 2},
			},
			want: `{"execution_id":"ID","workflow":"wf","status":"running",
				"trigger":{"type":"manual","name":"cli","payload":{}},"started_at":":01",
				"finished_at":null,"parent_execution_id":null,"outputs":{},
				"nodes":{
					"task.fetch":{"status":"running","started_at":":02","instances":[
						{"key":0,"status":"succeeded","attempts":1,"output":{"v":0},"started_at":":03","finished_at":":04"},
						{"key":1,"status":"running","attempts":2,"error":{"kind":"retryable","message":"boom"},"started_at":":05"},
						{"key":null,"status":"pending"}]},
					"task.after":{"status":"pending"}}}`,
		},
		{
			name: "for_each without total grows",
			entries: []Entry{
				started("wf", "", "task.fetch"),
				{Type: NodeStarted, Node: "task.fetch"},
				{Type: NodeFinished, Node: "task.fetch", Index: []int{2}, Key: raw(`"k"`), Status: StatusSkipped},
			},
			want: `{"execution_id":"ID","workflow":"wf","status":"running",
				"trigger":{"type":"manual","name":"cli","payload":{}},"started_at":":01",
				"finished_at":null,"parent_execution_id":null,"outputs":{},
				"nodes":{"task.fetch":{"status":"running","started_at":":02","instances":[
					{"key":null,"status":"pending"},{"key":null,"status":"pending"},
					{"key":"k","status":"skipped","finished_at":":03"}]}}}`,
		},
		{
			name: "loop iterations, body nodes, body for_each",
			entries: []Entry{
				loopRun,
				{Type: NodeStarted, Node: "loop.notify", Total: 2},
				{Type: NodeStarted, Node: "loop.notify", Index: []int{0}, Key: raw(`"a"`)},
				{Type: NodeStarted, Node: "loop.notify/task.send", Index: []int{0}, Total: 2},
				{Type: AttemptStarted, Node: "loop.notify/task.send", Index: []int{0, 0}, Key: raw(`0`), Attempt: 1},
				{Type: NodeFinished, Node: "loop.notify/task.send", Index: []int{0, 0}, Status: StatusSucceeded},
				{Type: AttemptStarted, Node: "loop.notify/task.send", Index: []int{0, 1}, Key: raw(`1`), Attempt: 1},
				{Type: NodeFinished, Node: "loop.notify/task.send", Index: []int{0, 1}, Status: StatusFailed, Error: outcome.Errorf(outcome.Fatal, "no")},
				{Type: NodeFinished, Node: "loop.notify/task.send", Index: []int{0}, Status: StatusCompletedWithErrors},
				{Type: NodeFinished, Node: "loop.notify/wait.ok", Index: []int{0}, Status: StatusSkipped, Reason: "branch not taken"},
				{Type: NodeFinished, Node: "loop.notify", Index: []int{0}, Status: StatusSucceeded, Output: raw(`{"n":1}`)},
				{Type: NodeStarted, Node: "loop.notify", Index: []int{1}, Key: raw(`"b"`)},
			},
			want: `{"execution_id":"ID","workflow":"wf","status":"running",
				"trigger":{"type":"manual","name":"cli","payload":{}},"started_at":":01",
				"finished_at":null,"parent_execution_id":null,"outputs":{},
				"nodes":{"loop.notify":{"status":"running","started_at":":02","iterations":[
					{"key":"a","status":"succeeded","output":{"n":1},"started_at":":03","finished_at":":11","nodes":{
						"task.send":{"status":"completed_with_errors","output":[null,null],"started_at":":04","finished_at":":09","instances":[
							{"key":0,"status":"succeeded","attempts":1,"started_at":":05","finished_at":":06"},
							{"key":1,"status":"failed","attempts":1,"error":{"kind":"fatal","message":"no"},"started_at":":07","finished_at":":08"}]},
						"wait.ok":{"status":"skipped","reason":"branch not taken","finished_at":":10"}}},
					{"key":"b","status":"running","started_at":":12","nodes":{
						"task.send":{"status":"pending"},"wait.ok":{"status":"pending"}}}]}}}`,
		},
		{
			name: "waits, calls and run status",
			entries: []Entry{
				started("wf", "", "wait.approve", "wait.cb", "call.child"),
				{Type: NodeStarted, Node: "wait.approve"},
				{Type: NodeWaiting, Node: "wait.approve", WaitKind: "approval", Deadline: t0.Add(time.Hour)},
				{Type: NodeStarted, Node: "wait.cb"},
				{Type: NodeWaiting, Node: "wait.cb", WaitKind: "callback"},
				{Type: RunStatus, Status: StatusWaiting},
				{Type: WaitResolved, Node: "wait.cb", Output: raw(`{"ok":true}`)},
				{Type: NodeFinished, Node: "wait.cb", Status: StatusSucceeded, Output: raw(`{"ok":true}`)},
				{Type: NodeStarted, Node: "call.child", ChildID: "01CHILD"},
				{Type: RunStatus, Status: StatusRunning},
			},
			want: `{"execution_id":"ID","workflow":"wf","status":"running",
				"trigger":{"type":"manual","name":"cli","payload":{}},"started_at":":01",
				"finished_at":null,"parent_execution_id":null,"outputs":{},
				"nodes":{
					"wait.approve":{"status":"waiting","started_at":":02","deadline":"2025-01-01T01:00:00Z"},
					"wait.cb":{"status":"succeeded","output":{"ok":true},"started_at":":04","finished_at":":08"},
					"call.child":{"status":"running","started_at":":09","child_execution_id":"01CHILD"}}}`,
		},
		{
			// The engine journals no start of a wait: it began when it first waited.
			name: "a wait that journals only its waiting",
			entries: []Entry{
				started("wf", "", "wait.approve"),
				{Type: NodeWaiting, Node: "wait.approve", WaitKind: "approval"},
				{Type: NodeWaiting, Node: "wait.approve", WaitKind: "approval"}, // resumed: journaled again
			},
			want: `{"execution_id":"ID","workflow":"wf","status":"running",
				"trigger":{"type":"manual","name":"cli","payload":{}},"started_at":":01",
				"finished_at":null,"parent_execution_id":null,"outputs":{},
				"nodes":{"wait.approve":{"status":"waiting","started_at":":02"}}}`,
		},
		{
			name: "run failed, unknown entry ignored",
			entries: []Entry{
				childRun,
				{Type: AttemptStarted, Node: "task.a", Attempt: 1},
				{Type: AttemptContinued, Node: "task.a", State: raw(`{"page":2}`)},
				{Type: NodeFinished, Node: "task.a", Status: StatusFailed, Error: outcome.Errorf(outcome.Fatal, "bad")},
				{Type: "from_the_future", Node: "task.a", Status: StatusSucceeded},
				{Type: RunFinished, Status: StatusFailed, Error: outcome.Errorf(outcome.Fatal, "task.a failed")},
			},
			want: `{"execution_id":"ID","workflow":"wf","status":"failed",
				"trigger":{"type":"manual","name":"cli","payload":{"x":1}},"started_at":":01",
				"finished_at":":06","parent_execution_id":"` + testID(50) + `",
				"error":{"kind":"fatal","message":"task.a failed"},"outputs":{},
				"nodes":{"task.a":{"status":"failed","attempts":1,"error":{"kind":"fatal","message":"bad"},
					"started_at":":02","finished_at":":04"}}}`,
		},
		{
			name: "entries of no instance address are not shown",
			entries: []Entry{
				started("wf", "", "task.a"),
				{Type: NodeStarted, Node: "x"},
				{Type: NodeStarted, Node: "task.a[1]"},
				{Type: NodeStarted, Node: "trigger.t"},
				{Type: AttemptStarted, Node: "task.a", Index: []int{-1}, Attempt: 1},
				{Type: NodeStarted, Node: "loop.l/task.y"},
				{Type: NodeStarted, Node: "loop.l/task.y", Index: []int{0, 1, 2}},
				{Type: AttemptStarted, Node: "task.a", Attempt: 1},
			},
			want: `{"execution_id":"ID","workflow":"wf","status":"running",
				"trigger":{"type":"manual","name":"cli","payload":{}},"started_at":":01",
				"finished_at":null,"parent_execution_id":null,"outputs":{},
				"nodes":{"task.a":{"status":"running","attempts":1,"started_at":":08"}}}`,
		},
		{
			name: "run succeeded with outputs",
			entries: []Entry{
				started("wf", ""),
				{Type: RunFinished, Status: StatusSucceeded, Outputs: raw(`{"r":1}`)},
			},
			want: `{"execution_id":"ID","workflow":"wf","status":"succeeded",
				"trigger":{"type":"manual","name":"cli","payload":{}},"started_at":":01",
				"finished_at":":02","parent_execution_id":null,"outputs":{"r":1},"nodes":{}}`,
		},
	}
	s := openStore(t, t.TempDir())
	defer closeStore(t, s)
	for n, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := testID(n + 1)
			entries := make([]Entry, len(tt.entries))
			for i, e := range tt.entries {
				e.Time = t0.Add(time.Duration(i+1) * time.Second)
				entries[i] = e
			}
			if err := s.Append(context.Background(), id, true, entries...); err != nil {
				t.Fatal(err)
			}
			x, err := s.Execution(id)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(x)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.ReplaceAll(tt.want, `"ID"`, `"`+id+`"`)
			for sec := 1; sec <= 20; sec++ {
				want = strings.ReplaceAll(want, fmt.Sprintf(`":%02d"`, sec),
					`"`+t0.Add(time.Duration(sec)*time.Second).Format(time.RFC3339Nano)+`"`)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(want), &w); err != nil {
				t.Fatalf("bad want: %v", err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("Execution:\n got %s\nwant %s", got, mustCompact(want))
			}
		})
	}
}

func mustCompact(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
