package artifact

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func put(t *testing.T, d Dir, execution, data string) Ref {
	t.Helper()
	r, err := d.Put(context.Background(), execution, "text/plain", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func hexID(r Ref) string { return strings.TrimPrefix(r.ID, "sha256:") }

func blobExists(t *testing.T, d Dir, r Ref) bool {
	t.Helper()
	_, err := os.Stat(d.blob(hexID(r)))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

func get(d Dir, execution string, r Ref) (string, error) {
	b, err := d.Get(context.Background(), execution, r.ID)
	return string(b), err
}

// TestDeleteExecutionSharedBlob: deleting one execution's artifacts removes only the blobs no
// other execution references, keeps tombstones (Get says deleted), and frees what it removed.
func TestDeleteExecutionSharedBlob(t *testing.T) {
	ctx := context.Background()
	d := NewDir(t.TempDir())
	shared := put(t, d, "A", "shared bytes")
	own := put(t, d, "A", "only A's")
	put(t, d, "B", "shared bytes")

	f, err := d.DeleteExecution(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Freed{Artifacts: 2, Bytes: own.Size, Shared: 1}); f != want {
		t.Errorf("DeleteExecution = %+v, want %+v", f, want)
	}
	if !blobExists(t, d, shared) {
		t.Error("the blob B still references was deleted")
	}
	if blobExists(t, d, own) {
		t.Error("the blob only A referenced is still there")
	}
	if got, err := get(d, "B", shared); err != nil || got != "shared bytes" {
		t.Errorf("B's artifact after A's deletion = %q, %v", got, err)
	}
	_, err = get(d, "A", shared)
	if !errors.Is(err, ErrDeleted) || !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "was deleted") {
		t.Errorf("A's deleted artifact: %v, want ErrDeleted and ErrNotFound", err)
	}
	if _, err := get(d, "C", shared); !errors.Is(err, ErrNotFound) || errors.Is(err, ErrDeleted) {
		t.Errorf("an artifact C never had: %v, want ErrNotFound only", err)
	}
	if refs, err := d.List(ctx, "A"); err != nil || len(refs) != 0 {
		t.Errorf("List(A) after deletion = %v, %v", refs, err)
	}
	dead, err := d.ListDeleted(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	var deadIDs []string
	for _, x := range dead {
		deadIDs = append(deadIDs, x.ID)
		if x.DeletedAt.IsZero() || x.Size == 0 || x.ContentType != "text/plain" {
			t.Errorf("tombstone %+v", x)
		}
	}
	want := []string{shared.ID, own.ID}
	slices.Sort(want)
	if !slices.Equal(deadIDs, want) {
		t.Errorf("ListDeleted(A) = %v, want %v", deadIDs, want)
	}

	// Deleting again deletes nothing; B's deletion now removes the shared blob.
	if f, err := d.DeleteExecution(ctx, "A"); err != nil || f != (Freed{}) {
		t.Errorf("second DeleteExecution(A) = %+v, %v", f, err)
	}
	// A tombstone is no reference: it does not keep the blob.
	f, err = d.DeleteExecution(ctx, "B")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Freed{Artifacts: 1, Bytes: shared.Size}); f != want {
		t.Errorf("DeleteExecution(B) = %+v, want %+v", f, want)
	}
	if blobExists(t, d, shared) {
		t.Error("the shared blob outlived every reference")
	}

	// Written again (a resumed run): no longer deleted.
	put(t, d, "A", "only A's")
	if got, err := get(d, "A", own); err != nil || got != "only A's" {
		t.Errorf("an artifact written again after its deletion = %q, %v", got, err)
	}
	if dead, _ := d.ListDeleted(ctx, "A"); len(dead) != 1 || dead[0].ID != shared.ID {
		t.Errorf("ListDeleted(A) after writing one again = %v", dead)
	}
}

// TestForgetExecutions: pruning removes references and tombstones, the blobs only the pruned
// executions referenced, and blobs nobody references and temporary files over an hour old
// (a crash's leftovers); blobs a kept execution references, and younger temporary files (a
// write under way in another process), stay.
func TestForgetExecutions(t *testing.T) {
	ctx := context.Background()
	d := NewDir(t.TempDir())
	both := put(t, d, "A", "A and B")
	put(t, d, "B", "A and B")
	keptShared := put(t, d, "B", "B and C")
	put(t, d, "C", "B and C")
	onlyB := put(t, d, "B", "only B")
	deletedD := put(t, d, "D", "D, deleted")
	if _, err := d.DeleteExecution(ctx, "D"); err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(d.Root, "blobs", strings.Repeat("0", 64))
	if err := os.WriteFile(orphan, []byte("left by a crash"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(d.Root, "blobs", ".tmp-123")
	if err := os.WriteFile(tmp, []byte("a write under way"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A write a crash cut short, two hours ago.
	staleTmp := filepath.Join(d.Root, "blobs", ".tmp-456")
	if err := os.WriteFile(staleTmp, []byte("cut short"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(staleTmp, old, old); err != nil {
		t.Fatal(err)
	}

	f, err := d.ForgetExecutions(ctx, "A", "B", "D", "never-existed")
	if err != nil {
		t.Fatal(err)
	}
	// A's and B's shared blob once, B's own, the orphan and the stale temporary file; C keeps
	// "B and C".
	wantBytes := both.Size + onlyB.Size + int64(len("left by a crash")) + int64(len("cut short"))
	if want := (Freed{Artifacts: 4, Bytes: wantBytes, Shared: 1}); f != want {
		t.Errorf("ForgetExecutions = %+v, want %+v", f, want)
	}
	for _, x := range []string{"A", "B", "D"} {
		if _, err := os.Stat(d.refs(x)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the references of %s are still there: %v", x, err)
		}
	}
	if !blobExists(t, d, keptShared) {
		t.Error("the blob C references was deleted")
	}
	for _, r := range []Ref{both, onlyB, deletedD} {
		if blobExists(t, d, r) {
			t.Errorf("blob %s is still there", r.ID)
		}
	}
	if _, err := os.Stat(orphan); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the orphan blob is still there: %v", err)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Errorf("a temporary file was removed: %v", err)
	}
	if _, err := os.Stat(staleTmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a temporary file two hours old is still there: %v", err)
	}
	if got, err := get(d, "C", keptShared); err != nil || got != "B and C" {
		t.Errorf("C's artifact = %q, %v", got, err)
	}
	if _, err := get(d, "A", both); !errors.Is(err, ErrNotFound) || errors.Is(err, ErrDeleted) {
		t.Errorf("a pruned execution's artifact: %v, want ErrNotFound only", err)
	}
}

// TestDeleteUnreadableRefs: when the references of other executions cannot be read, nothing
// is deleted (a blob they reference would go).
func TestDeleteUnreadableRefs(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads directories whatever their mode")
	}
	ctx := context.Background()
	d := NewDir(t.TempDir())
	a := put(t, d, "A", "shared")
	put(t, d, "B", "shared")
	if err := os.Chmod(d.refs("B"), 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(d.refs("B"), 0o755)
	if _, err := d.DeleteExecution(ctx, "A"); err == nil {
		t.Error("DeleteExecution with unreadable references did not fail")
	}
	if _, err := d.ForgetExecutions(ctx, "A"); err == nil {
		t.Error("ForgetExecutions with unreadable references did not fail")
	}
	if !blobExists(t, d, a) {
		t.Error("a blob was deleted although the other references could not be read")
	}
	if got, err := get(d, "A", a); err != nil || got != "shared" {
		t.Errorf("A's artifact after the failed deletions = %q, %v", got, err)
	}
}

// TestPutDuringDelete: a Put of content another execution's deletion is removing never ends up
// with a reference to a missing blob.
func TestPutDuringDelete(t *testing.T) {
	ctx := context.Background()
	d := NewDir(t.TempDir())
	for i := range 200 {
		old, fresh := fmt.Sprintf("old%d", i), fmt.Sprintf("new%d", i)
		put(t, d, old, "same content")
		var wg sync.WaitGroup
		var putErr, delErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, putErr = d.Put(ctx, fresh, "text/plain", []byte("same content"))
		}()
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				_, delErr = d.DeleteExecution(ctx, old)
			} else {
				_, delErr = d.ForgetExecutions(ctx, old)
			}
		}()
		wg.Wait()
		if putErr != nil || delErr != nil {
			t.Fatal(putErr, delErr)
		}
		if _, err := d.Get(ctx, fresh, "sha256:"+hexOfContent("same content")); err != nil {
			t.Fatalf("round %d: the new execution's artifact is gone: %v", i, err)
		}
		if _, err := d.ForgetExecutions(ctx, fresh); err != nil {
			t.Fatal(err)
		}
	}
}

func hexOfContent(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
