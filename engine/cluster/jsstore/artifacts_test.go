package jsstore

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/cluster/clusterkey"
)

func putArtifact(t *testing.T, s artifact.Store, execution, data string) artifact.Ref {
	t.Helper()
	r, err := s.Put(context.Background(), execution, "text/plain", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func getArtifact(s artifact.Store, execution string, r artifact.Ref) (string, error) {
	b, err := s.Get(context.Background(), execution, r.ID)
	return string(b), err
}

func tombstoneIDs(ts []artifact.Tombstone) []string {
	var out []string
	for _, x := range ts {
		out = append(out, x.ID)
	}
	return out
}

// TestArtifactsLikeDir: the same writes give the same Refs and listings as artifact.Dir, and
// the bytes come back.
func TestArtifactsLikeDir(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	a := f.artifacts(t, f.key)
	d := artifact.NewDir(t.TempDir())
	big := strings.Repeat("0123456789abcdef", 40_000) // several object-store chunks
	for _, data := range []string{"one", "two", "", big} {
		got, want := putArtifact(t, a, "X", data), putArtifact(t, d, "X", data)
		if got != want {
			t.Errorf("Put(%.10q) = %+v; artifact.Dir's Ref is %+v", data, got, want)
		}
		if b, err := getArtifact(a, "X", got); err != nil || b != data {
			t.Errorf("Get(%s) = %.10q, %v; want %.10q", got.ID, b, err, data)
		}
	}
	// The same bytes with another content type: the Ref says the new one, as in artifact.Dir.
	r, err := a.Put(ctx, "X", "application/json", []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Put(ctx, "X", "application/json", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if r.ContentType != "application/json" {
		t.Errorf("Put again with another content type = %+v", r)
	}
	got, err := a.List(ctx, "X")
	if err != nil {
		t.Fatal(err)
	}
	wantList, err := d.List(ctx, "X")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, wantList) {
		t.Errorf("List = %+v\nartifact.Dir's = %+v", got, wantList)
	}
	if l, err := a.List(ctx, "X/"); err != nil || len(l) != 0 {
		t.Errorf("List of another execution = %v, %v", l, err)
	}
	if _, err := a.Get(ctx, "X", "sha256:nothex"); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("Get of a bad id: %v, want ErrNotFound", err)
	}
	if _, err := getArtifact(a, "Y", got[0]); !errors.Is(err, artifact.ErrNotFound) || errors.Is(err, artifact.ErrDeleted) {
		t.Errorf("Get from an execution without it: %v, want ErrNotFound only", err)
	}
}

// TestArtifactsDeleteExecution: deletion keeps tombstones (Get says deleted), frees what it
// removed, leaves other executions' artifacts (also of the same bytes), and a write again
// brings an artifact back.
func TestArtifactsDeleteExecution(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	a := f.artifacts(t, f.key)
	before := time.Now().Add(-time.Minute) // generous: clocks of NATS and the test are one here
	same := putArtifact(t, a, "A", "same bytes")
	own := putArtifact(t, a, "A", "only A's")
	putArtifact(t, a, "B", "same bytes")

	fr, err := a.DeleteExecution(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	if want := (artifact.Freed{Artifacts: 2, Bytes: same.Size + own.Size}); fr != want {
		t.Errorf("DeleteExecution = %+v, want %+v", fr, want)
	}
	_, err = getArtifact(a, "A", own)
	if !errors.Is(err, artifact.ErrDeleted) || !errors.Is(err, artifact.ErrNotFound) || !strings.Contains(err.Error(), "was deleted") {
		t.Errorf("a deleted artifact: %v, want ErrDeleted and ErrNotFound", err)
	}
	if got, err := getArtifact(a, "B", same); err != nil || got != "same bytes" {
		t.Errorf("B's artifact after A's deletion = %q, %v", got, err)
	}
	if l, err := a.List(ctx, "A"); err != nil || len(l) != 0 {
		t.Errorf("List(A) after deletion = %v, %v", l, err)
	}
	dead, err := a.ListDeleted(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := []string{same.ID, own.ID}
	slices.Sort(wantIDs)
	if !slices.Equal(tombstoneIDs(dead), wantIDs) {
		t.Errorf("ListDeleted(A) = %v, want %v", tombstoneIDs(dead), wantIDs)
	}
	for _, x := range dead {
		if x.DeletedAt.Before(before) || x.Size == 0 || x.ContentType != "text/plain" {
			t.Errorf("tombstone %+v", x)
		}
	}
	if fr, err := a.DeleteExecution(ctx, "A"); err != nil || fr != (artifact.Freed{}) {
		t.Errorf("second DeleteExecution(A) = %+v, %v", fr, err)
	}

	putArtifact(t, a, "A", "only A's")
	if got, err := getArtifact(a, "A", own); err != nil || got != "only A's" {
		t.Errorf("an artifact written again after its deletion = %q, %v", got, err)
	}
	if dead, _ := a.ListDeleted(ctx, "A"); len(dead) != 1 || dead[0].ID != same.ID {
		t.Errorf("ListDeleted(A) after writing one again = %v", dead)
	}
}

// TestArtifactsForgetExecutions: pruning removes the executions' artifacts and tombstones,
// leaving nothing of them in the bucket, and only theirs.
func TestArtifactsForgetExecutions(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	a := f.artifacts(t, f.key)
	a1 := putArtifact(t, a, "A", "A's")
	deleted := putArtifact(t, a, "D", "D's, deleted")
	if _, err := a.DeleteExecution(ctx, "D"); err != nil {
		t.Fatal(err)
	}
	kept := putArtifact(t, a, "C", "A's") // the same bytes in a kept execution

	fr, err := a.ForgetExecutions(ctx, "A", "D", "never-existed")
	if err != nil {
		t.Fatal(err)
	}
	if want := (artifact.Freed{Artifacts: 1, Bytes: a1.Size}); fr != want {
		t.Errorf("ForgetExecutions = %+v, want %+v", fr, want)
	}
	for _, x := range []struct {
		execution string
		ref       artifact.Ref
	}{{"A", a1}, {"D", deleted}} {
		if _, err := getArtifact(a, x.execution, x.ref); !errors.Is(err, artifact.ErrNotFound) || errors.Is(err, artifact.ErrDeleted) {
			t.Errorf("a pruned artifact of %s: %v, want ErrNotFound only", x.execution, err)
		}
		if dead, err := a.ListDeleted(ctx, x.execution); err != nil || len(dead) != 0 {
			t.Errorf("ListDeleted(%s) after pruning = %v, %v", x.execution, dead, err)
		}
	}
	if got, err := getArtifact(a, "C", kept); err != nil || got != "A's" {
		t.Errorf("C's artifact = %q, %v", got, err)
	}

	// Only C's object remains in the bucket's stream: its metadata and one chunk.
	st, err := f.js.Stream(ctx, "OBJ_"+artifactsBucket)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 2 {
		t.Errorf("the bucket's stream holds %d messages after pruning, want 2 (C's metadata and chunk)", info.State.Msgs)
	}
	if fr, err := a.ForgetExecutions(ctx); err != nil || fr != (artifact.Freed{}) {
		t.Errorf("ForgetExecutions() = %+v, %v", fr, err)
	}
}

// TestArtifactsOtherKey: a process with another cluster key cannot read artifacts or list
// them, and says why.
func TestArtifactsOtherKey(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	r := putArtifact(t, f.artifacts(t, f.key), "A", "sealed")
	other := f.artifacts(t, newKey(t))
	if _, err := getArtifact(other, "A", r); !errors.Is(err, clusterkey.ErrOtherKey) || !strings.Contains(err.Error(), "same cluster key") {
		t.Errorf("Get with another key: %v, want ErrOtherKey and what to do", err)
	}
	if _, err := other.List(ctx, "A"); !errors.Is(err, clusterkey.ErrOtherKey) {
		t.Errorf("List with another key: %v, want ErrOtherKey", err)
	}
}
