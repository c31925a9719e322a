package jsstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/cluster/clusterkey"
	"github.com/nats-io/nats.go/jetstream"
)

// Artifacts is an artifact.Store on a JetStream object store, bytes and Refs sealed with the
// cluster key. See the package doc for the layout and how it differs from artifact.Dir.
type Artifacts struct {
	bucket  string
	objects jetstream.ObjectStore
	// stream is the object store's stream: ForgetExecutions purges the delete markers of
	// objects from it, which the object store API keeps.
	stream jetstream.Stream
	key    *clusterkey.Key
}

var _ artifact.Store = (*Artifacts)(nil)

// refMetaKey is the object metadata entry that holds the sealed Ref, in standard base64.
const refMetaKey = "fuscia-ref"

// OpenArtifacts opens the existing object store name; the coordinator creates it
// (ArtifactsConfig).
func OpenArtifacts(ctx context.Context, js jetstream.JetStream, name string, key *clusterkey.Key) (*Artifacts, error) {
	objects, err := js.ObjectStore(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("open the artifacts bucket %s: %w", name, err)
	}
	// The object store's stream is named OBJ_<bucket> (NATS ADR-20).
	stream, err := js.Stream(ctx, "OBJ_"+name)
	if err != nil {
		return nil, fmt.Errorf("open the stream of the artifacts bucket %s: %w", name, err)
	}
	return &Artifacts{bucket: name, objects: objects, stream: stream, key: key}, nil
}

// objectName is the object of an execution's artifact.
func objectName(execution, hexID string) string { return execution + "/" + hexID }

// splitName returns the execution and the hex id of an object's name.
func splitName(name string) (execution, hexID string, ok bool) {
	i := strings.LastIndexByte(name, '/')
	if i <= 0 || !isHexID(name[i+1:]) {
		return "", "", false
	}
	return name[:i], name[i+1:], true
}

// The authenticated data of an object's sealed bytes and of its sealed Ref: their place, and
// which of the two they are.
func dataAAD(name string) []byte { return []byte("artifact data\x00" + name) }
func refAAD(name string) []byte  { return []byte("artifact ref\x00" + name) }

// metaSubject is the subject of an object's metadata in the object store's stream (ADR-20:
// $O.<bucket>.M.<name in base64url with padding>).
func (a *Artifacts) metaSubject(name string) string {
	return "$O." + a.bucket + ".M." + base64.URLEncoding.EncodeToString([]byte(name))
}

func checkExecution(execution string) error {
	if execution == "" {
		return errors.New("artifact store: an empty execution id")
	}
	return nil
}

// Put stores data as an artifact of execution.
func (a *Artifacts) Put(ctx context.Context, execution, contentType string, data []byte) (artifact.Ref, error) {
	if err := checkExecution(execution); err != nil {
		return artifact.Ref{}, err
	}
	sum := sha256.Sum256(data)
	hexID := hex.EncodeToString(sum[:])
	ref := artifact.Ref{ID: "sha256:" + hexID, ContentType: contentType, Size: int64(len(data))}
	name := objectName(execution, hexID)
	// The same bytes again in the same execution (a retried attempt): already there, unless
	// deleted (then written again: it is no longer deleted, as in artifact.Dir).
	if info, err := a.objects.GetInfo(ctx, name); err == nil {
		if old, err := a.ref(info); err == nil && old == ref {
			return ref, nil
		}
	}
	plainRef, err := json.Marshal(ref)
	if err != nil {
		return artifact.Ref{}, err
	}
	meta := jetstream.ObjectMeta{
		Name:     name,
		Metadata: map[string]string{refMetaKey: base64.StdEncoding.EncodeToString(a.key.Seal(plainRef, refAAD(name)))},
	}
	if _, err := a.objects.Put(ctx, meta, bytes.NewReader(a.key.Seal(data, dataAAD(name)))); err != nil {
		return artifact.Ref{}, fmt.Errorf("write artifact %s of execution %s to bucket %s: %w", ref.ID, execution, a.bucket, err)
	}
	return ref, nil
}

// ref opens the Ref sealed in an object's metadata.
func (a *Artifacts) ref(info *jetstream.ObjectInfo) (artifact.Ref, error) {
	sealed, err := base64.StdEncoding.DecodeString(info.Metadata[refMetaKey])
	if err != nil || len(sealed) == 0 {
		return artifact.Ref{}, fmt.Errorf("object %s of bucket %s is not a fuscia artifact (no sealed ref)", info.Name, a.bucket)
	}
	plain, err := a.key.Open(sealed, refAAD(info.Name))
	if err != nil {
		return artifact.Ref{}, fmt.Errorf("the ref of artifact object %s: %w%s", info.Name, err, otherKeyHint(err))
	}
	var r artifact.Ref
	if err := json.Unmarshal(plain, &r); err != nil {
		return artifact.Ref{}, fmt.Errorf("the ref of artifact object %s: %w", info.Name, err)
	}
	return r, nil
}

// Get returns the bytes of an artifact of the execution; errors wrap artifact.ErrNotFound, and
// also artifact.ErrDeleted when the execution's artifacts were deleted.
func (a *Artifacts) Get(ctx context.Context, execution, id string) ([]byte, error) {
	hexID, ok := strings.CutPrefix(id, "sha256:")
	if !ok || !isHexID(hexID) {
		return nil, fmt.Errorf("%w: %q is not an artifact id", artifact.ErrNotFound, id)
	}
	name := objectName(execution, hexID)
	sealed, err := a.objects.GetBytes(ctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		if info, ierr := a.objects.GetInfo(ctx, name, jetstream.GetObjectInfoShowDeleted()); ierr == nil && info.Deleted {
			return nil, fmt.Errorf("%w: %w: %s of execution %s was deleted (fuscia artifacts delete); the execution keeps only its reference",
				artifact.ErrNotFound, artifact.ErrDeleted, id, execution)
		}
		return nil, fmt.Errorf("%w: %s in execution %s", artifact.ErrNotFound, id, execution)
	}
	if err != nil {
		return nil, fmt.Errorf("read artifact %s of execution %s from bucket %s: %w", id, execution, a.bucket, err)
	}
	data, err := a.key.Open(sealed, dataAAD(name))
	if err != nil {
		return nil, fmt.Errorf("read artifact %s of execution %s: %w%s", id, execution, err, otherKeyHint(err))
	}
	return data, nil
}

// List returns the execution's artifacts, sorted by id.
func (a *Artifacts) List(ctx context.Context, execution string) ([]artifact.Ref, error) {
	infos, err := a.objectsOf(ctx, map[string]bool{execution: true})
	if err != nil {
		return nil, fmt.Errorf("list artifacts: %w", err)
	}
	var out []artifact.Ref
	for _, info := range infos {
		if info.Deleted {
			continue
		}
		r, err := a.ref(info)
		if err != nil {
			return nil, fmt.Errorf("list artifacts: %w", err)
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// ListDeleted returns the execution's deleted artifacts, sorted by id.
func (a *Artifacts) ListDeleted(ctx context.Context, execution string) ([]artifact.Tombstone, error) {
	infos, err := a.objectsOf(ctx, map[string]bool{execution: true})
	if err != nil {
		return nil, fmt.Errorf("list deleted artifacts: %w", err)
	}
	var out []artifact.Tombstone
	for _, info := range infos {
		if !info.Deleted {
			continue
		}
		r, err := a.ref(info)
		if err != nil {
			return nil, fmt.Errorf("list deleted artifacts: %w", err)
		}
		// The delete marker's time is the deletion's.
		out = append(out, artifact.Tombstone{Ref: r, DeletedAt: info.ModTime.UTC()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// objectsOf returns the objects (deleted ones too) of the executions.
func (a *Artifacts) objectsOf(ctx context.Context, executions map[string]bool) ([]*jetstream.ObjectInfo, error) {
	all, err := a.objects.List(ctx, jetstream.ListObjectsShowDeleted())
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*jetstream.ObjectInfo
	for _, info := range all {
		if x, _, ok := splitName(info.Name); ok && executions[x] {
			out = append(out, info)
		}
	}
	return out, nil
}

// DeleteExecution deletes the execution's artifacts and keeps a tombstone of each.
func (a *Artifacts) DeleteExecution(ctx context.Context, execution string) (artifact.Freed, error) {
	f, err := a.remove(ctx, map[string]bool{execution: true}, true)
	if err != nil {
		return f, fmt.Errorf("delete the artifacts of execution %s: %w", execution, err)
	}
	return f, nil
}

// ForgetExecutions deletes the executions' artifacts and tombstones.
func (a *Artifacts) ForgetExecutions(ctx context.Context, executions ...string) (artifact.Freed, error) {
	if len(executions) == 0 {
		return artifact.Freed{}, nil
	}
	set := make(map[string]bool, len(executions))
	for _, x := range executions {
		set[x] = true
	}
	f, err := a.remove(ctx, set, false)
	if err != nil {
		return f, fmt.Errorf("delete artifacts: %w", err)
	}
	return f, nil
}

// remove deletes the objects of the executions, leaving their delete markers (the tombstones)
// when keep, purging them otherwise. Deleting the object before purging its marker means an
// interrupted removal leaves at worst a tombstone, which the next one removes, and never
// chunks that no object names.
func (a *Artifacts) remove(ctx context.Context, executions map[string]bool, keep bool) (artifact.Freed, error) {
	infos, err := a.objectsOf(ctx, executions)
	if err != nil {
		return artifact.Freed{}, err
	}
	var f artifact.Freed
	for _, info := range infos {
		if !info.Deleted {
			size := int64(info.Size) // the sealed size, when the Ref cannot be read
			if r, err := a.ref(info); err == nil {
				size = r.Size
			}
			if err := a.objects.Delete(ctx, info.Name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
				return f, err
			}
			f.Artifacts++
			f.Bytes += size
		}
		if !keep {
			if err := a.stream.Purge(ctx, jetstream.WithPurgeSubject(a.metaSubject(info.Name))); err != nil {
				return f, err
			}
		}
	}
	return f, nil
}

// isHexID reports whether s is an artifact's hex id: 64 lower-case hex digits (as
// artifact.Dir names its blobs).
func isHexID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
