package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/journal"
)

func refJSON(r artifact.Ref) string {
	b, _ := json.Marshal(r)
	return string(b)
}

func putArtifact(t *testing.T, arts artifact.Store, execution, data string) artifact.Ref {
	t.Helper()
	r, err := arts.Put(context.Background(), execution, "text/plain", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// artifactRun journals a finished run whose outputs reference artifacts: task.big's output is
// spilled (a), task.use hands a on inside its own output and finishes later, an iteration of
// loop.l writes b from its body's task.w, an item of for_each task.items writes c, and d is
// referenced by no output. It returns the run's id, its finish time and the refs.
func artifactRun(t *testing.T, st *journal.Store, arts artifact.Store) (id string, finished time.Time, a, b, c, d artifact.Ref) {
	t.Helper()
	id = newID()
	a = putArtifact(t, arts, id, "spilled output of task.big")
	b = putArtifact(t, arts, id, "written in loop.l")
	c = putArtifact(t, arts, id, "written by an item")
	d = putArtifact(t, arts, id, "kept to itself")
	t0 := time.Now().UTC().Add(-time.Minute)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	finished = at(100)
	err := st.Append(context.Background(), id, true,
		journal.Entry{Type: journal.RunStarted, Time: at(0), Run: &journal.RunInfo{
			Workflow: "arts", Trigger: journal.Trigger{Type: "manual", Name: "start"}, Durability: "strict",
			Nodes: []string{"task.big", "task.use", "loop.l", "task.items"}, Bodies: map[string][]string{"loop.l": {"task.w"}}}},
		// task.use is listed first, but finishes after task.big.
		journal.Entry{Type: journal.AttemptStarted, Time: at(1), Node: "task.use", Attempt: 1},
		journal.Entry{Type: journal.AttemptStarted, Time: at(1), Node: "task.big", Attempt: 1},
		journal.Entry{Type: journal.NodeFinished, Time: at(2), Node: "task.big", Status: journal.StatusSucceeded, Output: json.RawMessage(refJSON(a))},
		journal.Entry{Type: journal.NodeFinished, Time: at(9), Node: "task.use", Status: journal.StatusSucceeded,
			Output: json.RawMessage(`{"report": {"file": ` + refJSON(a) + `}}`)},
		journal.Entry{Type: journal.NodeStarted, Time: at(10), Node: "loop.l", Total: 1},
		journal.Entry{Type: journal.NodeStarted, Time: at(10), Node: "loop.l", Index: []int{0}, Key: json.RawMessage("0")},
		journal.Entry{Type: journal.AttemptStarted, Time: at(11), Node: "loop.l/task.w", Index: []int{0}, Attempt: 1},
		journal.Entry{Type: journal.NodeFinished, Time: at(12), Node: "loop.l/task.w", Index: []int{0}, Status: journal.StatusSucceeded, Output: json.RawMessage(refJSON(b))},
		journal.Entry{Type: journal.NodeFinished, Time: at(13), Node: "loop.l", Index: []int{0}, Status: journal.StatusSucceeded},
		journal.Entry{Type: journal.NodeFinished, Time: at(14), Node: "loop.l", Status: journal.StatusSucceeded},
		journal.Entry{Type: journal.NodeStarted, Time: at(20), Node: "task.items", Total: 2},
		journal.Entry{Type: journal.AttemptStarted, Time: at(21), Node: "task.items", Index: []int{1}, Key: json.RawMessage("1"), Attempt: 1},
		journal.Entry{Type: journal.NodeFinished, Time: at(22), Node: "task.items", Index: []int{1}, Key: json.RawMessage("1"), Status: journal.StatusSucceeded, Output: json.RawMessage(refJSON(c))},
		journal.Entry{Type: journal.AttemptStarted, Time: at(21), Node: "task.items", Index: []int{0}, Key: json.RawMessage("0"), Attempt: 1},
		journal.Entry{Type: journal.NodeFinished, Time: at(23), Node: "task.items", Index: []int{0}, Key: json.RawMessage("0"), Status: journal.StatusSucceeded, Output: json.RawMessage(`{}`)},
		journal.Entry{Type: journal.NodeFinished, Time: at(24), Node: "task.items", Status: journal.StatusSucceeded},
		journal.Entry{Type: journal.RunFinished, Time: finished, Status: journal.StatusSucceeded, Outputs: json.RawMessage(`{"file": ` + refJSON(a) + `}`)},
	)
	if err != nil {
		t.Fatal(err)
	}
	return id, finished, a, b, c, d
}

// checkArtifacts runs the artifact checks shared by both backends; arts is the store's
// artifact directory.
func checkArtifacts(t *testing.T, b Backend, st *journal.Store, arts artifact.Store) {
	ctx := context.Background()
	x, xFinished, a, bRef, c, d := artifactRun(t, st, arts)
	// y finishes after x and shares a's content.
	y := startRun(t, st, "arts")
	putArtifact(t, arts, y, "spilled output of task.big")
	finishRun(t, st, y, journal.StatusSucceeded, xFinished.Add(time.Second))
	running := startRun(t, st, "arts")
	putArtifact(t, arts, running, "still in use")

	list, err := b.Artifacts(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	if list.ExecutionID != x {
		t.Errorf("execution_id = %s, want %s", list.ExecutionID, x)
	}
	want := map[string]Artifact{
		a.ID:    {ID: a.ID, ContentType: "text/plain", Size: a.Size, Node: "task.big"},
		bRef.ID: {ID: bRef.ID, ContentType: "text/plain", Size: bRef.Size, Node: "loop.l/task.w"},
		c.ID:    {ID: c.ID, ContentType: "text/plain", Size: c.Size, Node: "task.items"},
		d.ID:    {ID: d.ID, ContentType: "text/plain", Size: d.Size, Node: ""},
	}
	var gotIDs []string
	for _, got := range list.Artifacts {
		gotIDs = append(gotIDs, got.ID)
		if got != want[got.ID] {
			t.Errorf("artifact %+v, want %+v", got, want[got.ID])
		}
	}
	if len(list.Artifacts) != len(want) || !slices.IsSorted(gotIDs) {
		t.Errorf("artifacts = %v, want the 4 of the run sorted by id", gotIDs)
	}
	if list.Deleted == nil || len(list.Deleted) != 0 {
		t.Errorf("deleted = %#v, want []", list.Deleted)
	}

	if _, err := b.Artifacts(ctx, "01NOSUCHRUN"); !errors.Is(err, journal.ErrNotFound) {
		t.Errorf("Artifacts of an unknown run: %v, want journal.ErrNotFound", err)
	}
	if _, err := b.DeleteArtifacts(ctx, "01NOSUCHRUN"); !errors.Is(err, journal.ErrNotFound) {
		t.Errorf("DeleteArtifacts of an unknown run: %v, want journal.ErrNotFound", err)
	}
	if _, err := b.DeleteArtifacts(ctx, running); !errors.Is(err, ErrNotFinished) {
		t.Errorf("DeleteArtifacts of a running run: %v, want ErrNotFinished", err)
	}
	if data, _, err := b.Artifact(ctx, running, "sha256:"+strings.Repeat("0", 64)); !errors.Is(err, artifact.ErrNotFound) || errors.Is(err, artifact.ErrDeleted) {
		t.Errorf("an artifact the run never had: %q, %v", data, err)
	}

	data, ref, err := b.Artifact(ctx, x, bRef.ID)
	if err != nil || string(data) != "written in loop.l" || ref.ContentType != "text/plain" {
		t.Errorf("Artifact(x, b) = %q, %+v, %v", data, ref, err)
	}

	del, err := b.DeleteArtifacts(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	if wantDel := (ArtifactsDeleted{ExecutionID: x, Deleted: 4, BytesFreed: bRef.Size + c.Size + d.Size, Shared: 1}); *del != wantDel {
		t.Errorf("DeleteArtifacts = %+v, want %+v", *del, wantDel)
	}
	if _, _, err := b.Artifact(ctx, x, a.ID); !errors.Is(err, artifact.ErrDeleted) || !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("a deleted artifact: %v, want artifact.ErrDeleted", err)
	}
	if data, _, err := b.Artifact(ctx, y, a.ID); err != nil || string(data) != "spilled output of task.big" {
		t.Errorf("y's artifact sharing x's content, after x's deletion: %q, %v", data, err)
	}
	list, err = b.Artifacts(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Artifacts) != 0 || len(list.Deleted) != 4 {
		t.Errorf("after the deletion: artifacts %v, deleted %v", list.Artifacts, list.Deleted)
	}
	for _, dd := range list.Deleted {
		if dd.DeletedAt == nil || dd.Node != want[dd.ID].Node {
			t.Errorf("deleted artifact %+v", dd)
		}
	}
	ex, err := b.Execution(ctx, x)
	if err != nil {
		t.Fatalf("the run's record went with its artifacts: %v", err)
	}
	if !strings.Contains(string(ex.Outputs), a.ID) || !strings.Contains(string(ex.Nodes["task.big"].Output), a.ID) {
		t.Errorf("the outputs lost the artifact's reference: %s, %s", ex.Outputs, ex.Nodes["task.big"].Output)
	}

	// Pruning x (not y) keeps the blob y shares; pruning y then removes it.
	ids, err := b.Prune(ctx, xFinished.Add(time.Millisecond))
	if err != nil || !slices.Equal(ids, []string{x}) {
		t.Fatalf("Prune = %v, %v; want [%s]", ids, err, x)
	}
	if data, _, err := b.Artifact(ctx, y, a.ID); err != nil || string(data) != "spilled output of task.big" {
		t.Errorf("y's artifact after x was pruned: %q, %v", data, err)
	}
	if ids, err := b.Prune(ctx, time.Now().Add(time.Hour)); err != nil || !slices.Equal(ids, []string{y}) {
		t.Fatalf("second Prune = %v, %v; want [%s]", ids, err, y)
	}
	if _, _, err := b.Artifact(ctx, y, a.ID); !errors.Is(err, journal.ErrNotFound) {
		t.Errorf("a pruned run's artifact: %v, want journal.ErrNotFound (the run is gone)", err)
	}
	if left, err := arts.List(ctx, running); err != nil || len(left) != 1 {
		t.Errorf("the running run's artifacts after the prunes: %v, %v", left, err)
	}
}

func TestArtifactsOwner(t *testing.T) {
	home := shortHome(t)
	o := ownHome(t, home)
	checkArtifacts(t, openBackend(t, home), o.Store, o.Artifacts)
}

func TestArtifactsDirect(t *testing.T) {
	home := shortHome(t)
	openStore(t, home).Close()
	b := openBackend(t, home)
	checkArtifacts(t, b, b.(*direct).ops.st, b.(*direct).ops.artifacts)
}

// TestOwnerPrune: the owner's Prune (serve's retention) deletes in steps, reports what it
// freed, and stops between steps when its context ends.
func TestOwnerPrune(t *testing.T) {
	home := shortHome(t)
	o := ownHome(t, home)
	old := time.Now().Add(-48 * time.Hour)
	var want []string
	for i := range pruneBatch + 3 {
		id := startRun(t, o.Store, "a")
		finishRun(t, o.Store, id, journal.StatusSucceeded, old.Add(time.Duration(i)*time.Millisecond))
		want = append(want, id)
	}
	putArtifact(t, o.Artifacts, want[0], "one")
	putArtifact(t, o.Artifacts, want[pruneBatch+1], "two")
	kept := startRun(t, o.Store, "a")
	finishRun(t, o.Store, kept, journal.StatusSucceeded, time.Time{})

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if p, err := o.Prune(ctx, time.Now().Add(-time.Hour)); !errors.Is(err, context.Canceled) || len(p.ExecutionIDs) != 0 {
		t.Errorf("Prune with an ended context = %d runs, %v", len(p.ExecutionIDs), err)
	}

	p, err := o.Prune(context.Background(), time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(p.ExecutionIDs)
	if !slices.Equal(p.ExecutionIDs, want) {
		t.Errorf("pruned %d runs, want the %d old ones", len(p.ExecutionIDs), len(want))
	}
	if wantFreed := (artifact.Freed{Artifacts: 2, Bytes: int64(len("one") + len("two"))}); p.Artifacts != wantFreed {
		t.Errorf("freed %+v, want %+v", p.Artifacts, wantFreed)
	}
	runs, err := o.Store.List(journal.Filter{})
	if err != nil || len(runs) != 1 || runs[0].ID != kept {
		t.Errorf("left: %v, %v; want only %s", runs, err, kept)
	}
	if _, err := o.Prune(context.Background(), time.Time{}); err == nil {
		t.Error("Prune without a time did not fail")
	}
}

func TestArtifactNodes(t *testing.T) {
	id := func(n int) string { return "sha256:" + strings.Repeat(fmt.Sprint(n), 64) }
	ref := func(n int) json.RawMessage { return json.RawMessage(`{"artifact_id": "` + id(n) + `"}`) }
	at := func(s int) *time.Time { t := time.Unix(int64(s), 0); return &t }
	x := &journal.Execution{Nodes: map[string]*journal.NodeView{
		"task.b":    {Output: ref(1), FinishedAt: at(2)},
		"task.a":    {Output: json.RawMessage(`[` + string(ref(1)) + `, ` + string(ref(2)) + `]`), FinishedAt: at(2)},
		"task.late": {Output: ref(3), FinishedAt: at(9)},
		"task.now":  {Output: ref(4)}, // not finished: sorts last
		"task.each": {Instances: []*journal.InstanceView{{Output: json.RawMessage(`{}`)}, {Output: ref(5)}}, FinishedAt: at(5)},
		"loop.l": {Iterations: []*journal.IterationView{
			{Nodes: map[string]*journal.NodeView{"task.w": {Output: ref(3), FinishedAt: at(3)}}},
			{Nodes: map[string]*journal.NodeView{"task.w": {Output: ref(6), FinishedAt: at(4)}, "task.v": {Output: ref(4), FinishedAt: at(4)}}},
		}, FinishedAt: at(6)},
	}}
	got := artifactNodes(x)
	want := map[string]string{
		id(1): "task.a", // finished with task.b: the first by address
		id(2): "task.a",
		id(3): "loop.l/task.w", // before task.late
		id(4): "loop.l/task.v", // task.now has not finished
		id(5): "task.each",
		id(6): "loop.l/task.w",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("node of %s… = %q, want %q", k[:9], got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("artifactNodes = %v", got)
	}
}
