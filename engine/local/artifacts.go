package local

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/lang"
)

// ErrNotFinished is returned by DeleteArtifacts for a run that has not finished: its nodes may
// still read its artifacts.
var ErrNotFinished = errors.New("execution has not finished")

// Artifact is one artifact of an execution, as `fuscia artifacts list -json` prints it.
type Artifact struct {
	ID          string `json:"artifact_id"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	// Node is the address of the node whose output references the artifact (the first to
	// finish, when several do), or "" when no node output does (a component wrote it and did
	// not return its reference).
	Node string `json:"node"`
	// DeletedAt is when `fuscia artifacts delete` deleted it (deleted artifacts only).
	DeletedAt *time.Time `json:"deleted_at,omitempty"`
}

// Artifacts are the artifacts of an execution: those it has, and those deleted from it.
type Artifacts struct {
	ExecutionID string     `json:"execution_id"`
	Artifacts   []Artifact `json:"artifacts"`
	Deleted     []Artifact `json:"deleted"`
}

// ArtifactsDeleted is what DeleteArtifacts deleted.
type ArtifactsDeleted struct {
	ExecutionID string `json:"execution_id"`
	// Deleted is the number of the execution's artifacts deleted.
	Deleted int `json:"deleted"`
	// BytesFreed is the size of the files removed.
	BytesFreed int64 `json:"bytes_freed"`
	// Shared is the number of deleted artifacts whose file stays: another execution has the
	// same content.
	Shared int `json:"shared"`
}

func (o *ops) Artifacts(ctx context.Context, ref string) (*Artifacts, error) {
	id, err := o.resolve(ref)
	if err != nil {
		return nil, err
	}
	x, err := o.st.Execution(id)
	if err != nil {
		return nil, err
	}
	live, err := o.artifacts.List(ctx, id)
	if err != nil {
		return nil, err
	}
	dead, err := o.artifacts.ListDeleted(ctx, id)
	if err != nil {
		return nil, err
	}
	nodes := artifactNodes(x)
	out := &Artifacts{ExecutionID: id, Artifacts: []Artifact{}, Deleted: []Artifact{}}
	for _, r := range live {
		out.Artifacts = append(out.Artifacts, Artifact{ID: r.ID, ContentType: r.ContentType, Size: r.Size, Node: nodes[r.ID]})
	}
	for _, t := range dead {
		at := t.DeletedAt
		out.Deleted = append(out.Deleted, Artifact{ID: t.ID, ContentType: t.ContentType, Size: t.Size, Node: nodes[t.ID], DeletedAt: &at})
	}
	return out, nil
}

func (o *ops) DeleteArtifacts(ctx context.Context, ref string) (*ArtifactsDeleted, error) {
	id, err := o.resolve(ref)
	if err != nil {
		return nil, err
	}
	sum, err := o.st.Summary(id)
	if err != nil {
		return nil, err
	}
	if !journal.Finished(sum.Status) {
		return nil, fmt.Errorf("execution %s is %s: %w; delete its artifacts once it has ended (or cancel it first)", id, sum.Status, ErrNotFinished)
	}
	f, err := o.artifacts.DeleteExecution(ctx, id)
	if err != nil {
		return nil, err
	}
	return &ArtifactsDeleted{ExecutionID: id, Deleted: f.Artifacts, BytesFreed: f.Bytes, Shared: f.Shared}, nil
}

// Artifact returns one artifact of run ref, with its reference.
func (o *ops) Artifact(ctx context.Context, ref, artifactID string) ([]byte, artifact.Ref, error) {
	id, err := o.resolve(ref)
	if err != nil {
		return nil, artifact.Ref{}, err
	}
	b, err := o.artifacts.Get(ctx, id, artifactID)
	if err != nil {
		return nil, artifact.Ref{}, err
	}
	refs, err := o.artifacts.List(ctx, id)
	if err != nil {
		return nil, artifact.Ref{}, err
	}
	for _, r := range refs {
		if r.ID == artifactID || r.ID == "sha256:"+artifactID {
			return b, r, nil
		}
	}
	// Deleted meanwhile, between the read and the list: the bytes were read all the same.
	return b, artifact.Ref{ID: artifactID, ContentType: "application/octet-stream", Size: int64(len(b))}, nil
}

// artifactNodes maps each artifact id the run's node outputs reference to the address of the
// node that references it: the first to finish (the one that wrote it, normally; the nodes
// after it only hand the reference on), then the first by address.
func artifactNodes(x *journal.Execution) map[string]string {
	type holder struct {
		addr string
		at   time.Time
	}
	var holders []holder
	refs := map[string][]string{} // by holder address
	note := func(addr string, at *time.Time, outputs ...[]byte) {
		var ids []string
		for _, o := range outputs {
			ids = append(ids, artifact.IDsIn(o)...)
		}
		if len(ids) == 0 {
			return
		}
		if _, ok := refs[addr]; !ok {
			h := holder{addr: addr}
			if at != nil {
				h.at = *at
			}
			holders = append(holders, h)
		}
		refs[addr] = append(refs[addr], ids...)
	}
	var visit func(loop string, nodes map[string]*journal.NodeView)
	visit = func(loop string, nodes map[string]*journal.NodeView) {
		for local, n := range nodes {
			addr := local
			if loop != "" {
				if a, ok := lang.ParseAddr(local); ok {
					a.Loop = loop
					addr = a.String()
				}
			}
			outs := [][]byte{n.Output}
			for _, in := range n.Instances {
				outs = append(outs, in.Output)
			}
			note(addr, n.FinishedAt, outs...)
			for _, it := range n.Iterations {
				if a, ok := lang.ParseAddr(local); ok && a.Kind == lang.KindLoop {
					visit(a.Name, it.Nodes)
				}
			}
		}
	}
	visit("", x.Nodes)
	// A node that has not finished sorts last.
	slices.SortFunc(holders, func(a, b holder) int {
		switch {
		case a.at.IsZero() != b.at.IsZero():
			if a.at.IsZero() {
				return 1
			}
			return -1
		case !a.at.Equal(b.at):
			return a.at.Compare(b.at)
		}
		return strings.Compare(a.addr, b.addr)
	})
	out := map[string]string{}
	for _, h := range holders {
		for _, id := range refs[h.addr] {
			if _, ok := out[id]; !ok {
				out[id] = h.addr
			}
		}
	}
	return out
}
