// Package artifact stores large blobs by content (sha256) under $FUSCIA_HOME/artifacts. Outputs
// reference them by id and never copy them from node to node. Store is an interface so that an
// S3-compatible store can take its place.
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
	Get(ctx context.Context, execution, id string) ([]byte, error)
	List(ctx context.Context, execution string) ([]Ref, error)
	// DeleteExecution removes the execution's references; blobs nobody references are removed.
	DeleteExecution(ctx context.Context, execution string) error
}

// Dir is a Store in a directory: blobs/<hex> holds the bytes, refs/<execution>/<hex> (a JSON
// Ref) says which execution wrote which blob.
type Dir struct{ Root string }

// ErrNotFound is returned for an artifact the execution does not have.
var ErrNotFound = errors.New("no such artifact")

func (d Dir) blob(hexID string) string { return filepath.Join(d.Root, "blobs", hexID) }
func (d Dir) refs(execution string) string {
	return filepath.Join(d.Root, "refs", filepath.Base(execution))
}

// Put stores data (once per content) and records that execution references it.
func (d Dir) Put(_ context.Context, execution, contentType string, data []byte) (Ref, error) {
	sum := sha256.Sum256(data)
	hexID := hex.EncodeToString(sum[:])
	ref := Ref{ID: "sha256:" + hexID, ContentType: contentType, Size: int64(len(data))}
	if err := os.MkdirAll(filepath.Join(d.Root, "blobs"), 0o755); err != nil {
		return Ref{}, fmt.Errorf("artifact store: %w", err)
	}
	if _, err := os.Stat(d.blob(hexID)); err != nil {
		tmp, err := os.CreateTemp(filepath.Join(d.Root, "blobs"), ".tmp-*")
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
	if err := os.MkdirAll(d.refs(execution), 0o755); err != nil {
		return Ref{}, fmt.Errorf("artifact store: %w", err)
	}
	meta, _ := json.Marshal(ref)
	if err := os.WriteFile(filepath.Join(d.refs(execution), hexID), meta, 0o644); err != nil {
		return Ref{}, fmt.Errorf("record artifact: %w", err)
	}
	return ref, nil
}

func hexOf(id string) (string, bool) {
	h := strings.TrimPrefix(id, "sha256:")
	if len(h) != 64 {
		return "", false
	}
	if _, err := hex.DecodeString(h); err != nil {
		return "", false
	}
	return h, true
}

// Get returns the bytes of an artifact the execution references.
func (d Dir) Get(_ context.Context, execution, id string) ([]byte, error) {
	h, ok := hexOf(id)
	if !ok {
		return nil, fmt.Errorf("%w: %q is not an artifact id", ErrNotFound, id)
	}
	if _, err := os.Stat(filepath.Join(d.refs(execution), h)); err != nil {
		return nil, fmt.Errorf("%w: %s in execution %s", ErrNotFound, id, execution)
	}
	return os.ReadFile(d.blob(h))
}

// List returns the execution's artifacts, sorted by id.
func (d Dir) List(_ context.Context, execution string) ([]Ref, error) {
	ents, err := os.ReadDir(d.refs(execution))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list artifacts: %w", err)
	}
	var out []Ref
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(d.refs(execution), e.Name()))
		if err != nil {
			continue
		}
		var r Ref
		if json.Unmarshal(b, &r) == nil {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// DeleteExecution removes the execution's references and the blobs no other execution uses.
func (d Dir) DeleteExecution(_ context.Context, execution string) error {
	ents, err := os.ReadDir(d.refs(execution))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete artifacts: %w", err)
	}
	if err := os.RemoveAll(d.refs(execution)); err != nil {
		return fmt.Errorf("delete artifacts: %w", err)
	}
	used := map[string]bool{}
	others, _ := os.ReadDir(filepath.Join(d.Root, "refs"))
	for _, o := range others {
		refs, _ := os.ReadDir(filepath.Join(d.Root, "refs", o.Name()))
		for _, r := range refs {
			used[r.Name()] = true
		}
	}
	for _, e := range ents {
		if !used[e.Name()] {
			os.Remove(d.blob(e.Name()))
		}
	}
	return nil
}
