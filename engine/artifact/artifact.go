// Package artifact stores large blobs by content (sha256) under $FUSCIA_HOME/artifacts. Outputs
// reference them by id and never copy them from node to node. Store is an interface so that an
// S3-compatible store can take its place.
//
// # Model
//
// A blob is stored once, whatever the number of executions that write the same bytes; each
// execution that wrote it holds a reference to it. Deleting an execution's artifacts removes
// its references and then only the blobs no other execution references (delete.go).
// DeleteExecution keeps a tombstone for each reference, so that reading the artifact later says
// it was deleted rather than that it never existed; ForgetExecutions (pruning) leaves nothing.
//
// # Concurrency
//
// A Dir made by NewDir serialises deletions against writes (a writer that finds a blob present
// must not lose it to a deletion that has not seen the writer's reference yet); its copies
// share that lock. Only the process that owns the state store writes or deletes artifacts, so
// the lock is in memory.
package artifact

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Ref is what an output holds instead of a spilled value.
type Ref struct {
	ID          string `json:"artifact_id"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
}

// Store keeps artifacts.
type Store interface {
	Put(ctx context.Context, execution, contentType string, data []byte) (Ref, error)
	// Get returns an artifact of the execution; errors wrap ErrNotFound, and also ErrDeleted
	// when the execution's artifacts were deleted (DeleteExecution).
	Get(ctx context.Context, execution, id string) ([]byte, error)
	// List returns the execution's artifacts, sorted by id.
	List(ctx context.Context, execution string) ([]Ref, error)
	// ListDeleted returns the artifacts DeleteExecution deleted, sorted by id.
	ListDeleted(ctx context.Context, execution string) ([]Tombstone, error)
	// DeleteExecution deletes the execution's artifacts and keeps a tombstone of each: the
	// execution's record still refers to them. Blobs another execution references stay.
	DeleteExecution(ctx context.Context, execution string) (Freed, error)
	// ForgetExecutions deletes the executions' artifacts and tombstones (pruning: the records
	// go too). Blobs another execution references stay.
	ForgetExecutions(ctx context.Context, executions ...string) (Freed, error)
}

// Tombstone is an artifact DeleteExecution deleted.
type Tombstone struct {
	Ref
	DeletedAt time.Time `json:"deleted_at"`
}

// Dir is a Store in a directory: blobs/<hex> holds the bytes, refs/<execution>/<hex> (a JSON
// Ref) says which execution wrote which blob, and refs/<execution>/<hex>.deleted is the
// tombstone of a deleted one. Make it with NewDir; a Dir literal works but does not serialise
// deletions against writes (see the package doc).
type Dir struct {
	Root string
	// mu: Put holds it shared, deletions exclusively (nil in a Dir literal: no locking).
	mu *sync.RWMutex
}

// NewDir returns the Store in directory root.
func NewDir(root string) Dir { return Dir{Root: root, mu: &sync.RWMutex{}} }

var (
	// ErrNotFound is returned for an artifact the execution does not have.
	ErrNotFound = errors.New("no such artifact")
	// ErrDeleted is returned, with ErrNotFound, for an artifact whose execution's artifacts
	// were deleted.
	ErrDeleted = errors.New("artifact deleted")
)

// tempPrefix starts the name of a blob being written; a crash may leave one, which
// ForgetExecutions removes once it is old (delete.go).
const tempPrefix = ".tmp-"

// tombstoneSuffix marks a reference whose artifact was deleted.
const tombstoneSuffix = ".deleted"

func (d Dir) blob(hexID string) string { return filepath.Join(d.Root, "blobs", hexID) }
func (d Dir) refs(execution string) string {
	return filepath.Join(d.Root, "refs", filepath.Base(execution))
}

func (d Dir) rlock() func() {
	if d.mu == nil {
		return func() {}
	}
	d.mu.RLock()
	return d.mu.RUnlock
}

func (d Dir) lock() func() {
	if d.mu == nil {
		return func() {}
	}
	d.mu.Lock()
	return d.mu.Unlock
}

// Put stores data (once per content) and records that execution references it.
func (d Dir) Put(_ context.Context, execution, contentType string, data []byte) (Ref, error) {
	sum := sha256.Sum256(data)
	hexID := hex.EncodeToString(sum[:])
	ref := Ref{ID: "sha256:" + hexID, ContentType: contentType, Size: int64(len(data))}
	// Shared: a deletion must not remove the blob between the look below and the reference.
	defer d.rlock()()
	// Artifacts are run data, private like the home they are in (CreateTemp makes blobs 0600).
	if err := os.MkdirAll(filepath.Join(d.Root, "blobs"), 0o700); err != nil {
		return Ref{}, fmt.Errorf("artifact store: %w", err)
	}
	if _, err := os.Stat(d.blob(hexID)); err != nil {
		tmp, err := os.CreateTemp(filepath.Join(d.Root, "blobs"), tempPrefix+"*")
		if err != nil {
			return Ref{}, fmt.Errorf("artifact store: %w", err)
		}
		_, werr := tmp.Write(data)
		if serr := tmp.Sync(); werr == nil {
			werr = serr
		}
		if cerr := tmp.Close(); werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Rename(tmp.Name(), d.blob(hexID))
		}
		if werr != nil {
			os.Remove(tmp.Name())
			return Ref{}, fmt.Errorf("write artifact: %w", werr)
		}
	}
	if err := os.MkdirAll(d.refs(execution), 0o700); err != nil {
		return Ref{}, fmt.Errorf("artifact store: %w", err)
	}
	meta, _ := json.Marshal(ref)
	if err := os.WriteFile(filepath.Join(d.refs(execution), hexID), meta, 0o600); err != nil {
		return Ref{}, fmt.Errorf("record artifact: %w", err)
	}
	// Written again after a deletion (a run resumed): it is no longer deleted.
	_ = os.Remove(filepath.Join(d.refs(execution), hexID+tombstoneSuffix))
	return ref, nil
}

func hexOf(id string) (string, bool) {
	h := strings.TrimPrefix(id, "sha256:")
	if !isHexID(h) {
		return "", false
	}
	return h, true
}

// isHexID reports whether name is a blob's name: 64 lower-case hex digits.
func isHexID(name string) bool {
	if len(name) != 64 {
		return false
	}
	for _, c := range name {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Get returns the bytes of an artifact the execution references.
func (d Dir) Get(_ context.Context, execution, id string) ([]byte, error) {
	h, ok := hexOf(id)
	if !ok {
		return nil, fmt.Errorf("%w: %q is not an artifact id", ErrNotFound, id)
	}
	if _, err := os.Stat(filepath.Join(d.refs(execution), h)); err != nil {
		if _, terr := os.Stat(filepath.Join(d.refs(execution), h+tombstoneSuffix)); terr == nil {
			return nil, fmt.Errorf("%w: %w: %s of execution %s was deleted (fuscia artifacts delete); the execution keeps only its reference",
				ErrNotFound, ErrDeleted, id, execution)
		}
		return nil, fmt.Errorf("%w: %s in execution %s", ErrNotFound, id, execution)
	}
	b, err := os.ReadFile(d.blob(h))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: the file of %s of execution %s is missing from %s", ErrNotFound, id, execution, filepath.Join(d.Root, "blobs"))
	}
	return b, err
}

// List returns the execution's artifacts, sorted by id.
func (d Dir) List(_ context.Context, execution string) ([]Ref, error) {
	var out []Ref
	err := d.eachRef(execution, func(name string, tombstone bool, info os.FileInfo, r Ref) {
		if !tombstone {
			out = append(out, r)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("list artifacts: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// ListDeleted returns the execution's deleted artifacts, sorted by id.
func (d Dir) ListDeleted(_ context.Context, execution string) ([]Tombstone, error) {
	var out []Tombstone
	err := d.eachRef(execution, func(name string, tombstone bool, info os.FileInfo, r Ref) {
		if tombstone {
			out = append(out, Tombstone{Ref: r, DeletedAt: info.ModTime().UTC()})
		}
	})
	if err != nil {
		return nil, fmt.Errorf("list deleted artifacts: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// eachRef calls fn with each reference and tombstone of the execution that can be read; an
// execution without any is no error.
func (d Dir) eachRef(execution string, fn func(name string, tombstone bool, info os.FileInfo, r Ref)) error {
	ents, err := os.ReadDir(d.refs(execution))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		name, tombstone := strings.CutSuffix(e.Name(), tombstoneSuffix)
		if !isHexID(name) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		b, err := os.ReadFile(filepath.Join(d.refs(execution), e.Name()))
		if err != nil {
			continue
		}
		var r Ref
		if json.Unmarshal(b, &r) == nil {
			fn(name, tombstone, info, r)
		}
	}
	return nil
}
