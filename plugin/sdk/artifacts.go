package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// Artifacts stores byte blobs with the execution (see Call.Artifacts): files a task produces
// (a report, a download) that are too large or too binary for an output. An output holds the
// ArtifactRef instead.
type Artifacts struct {
	host hostRef
}

// ErrArtifactNotFound is returned, wrapped, by Read for an id that names no artifact of this
// execution.
var ErrArtifactNotFound = errors.New("artifact not found")

// ArtifactRef names a stored artifact. Put it in an output as it is to hand the artifact on: its
// JSON form is the host's own reference, with any fields the host adds.
type ArtifactRef struct {
	ArtifactID  string `json:"artifact_id"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`

	// raw is the host's reference as it sent it (or as it was decoded); nil for a ref built
	// by hand, which is encoded from the fields.
	raw json.RawMessage
}

// MarshalJSON returns the host's reference verbatim, or the three fields for a ref built by
// hand.
func (r ArtifactRef) MarshalJSON() ([]byte, error) {
	if r.raw != nil {
		return r.raw, nil
	}
	type plain ArtifactRef // without the methods, so that this does not recurse
	return json.Marshal(plain(r))
}

// UnmarshalJSON reads a reference, keeping the fields it does not know for MarshalJSON.
func (r *ArtifactRef) UnmarshalJSON(b []byte) error {
	type plain ArtifactRef
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		return err
	}
	*r = ArtifactRef(p)
	r.raw = compact.Bytes()
	return nil
}

// Write stores data as an artifact of this execution, with contentType (a MIME type such as
// "text/csv"), and returns its reference.
func (a Artifacts) Write(ctx context.Context, contentType string, data []byte) (ArtifactRef, error) {
	client, err := a.host.get()
	if err != nil {
		return ArtifactRef{}, fmt.Errorf("artifact write: %w", err)
	}
	resp, err := client.ArtifactWrite(ctx, &pluginv1.ArtifactWriteRequest{CallId: a.host.callID, ContentType: contentType, Data: data})
	if err != nil {
		return ArtifactRef{}, fmt.Errorf("artifact write: %w", err)
	}
	var ref ArtifactRef
	if len(resp.Ref) > 0 {
		if err := json.Unmarshal(resp.Ref, &ref); err != nil {
			return ArtifactRef{}, fmt.Errorf("artifact write: the host answered a malformed ref: %w", err)
		}
	} else {
		ref = ArtifactRef{ArtifactID: resp.ArtifactId, ContentType: contentType, Size: int64(len(data))}
	}
	if ref.ArtifactID == "" {
		// A ref without its id is no use verbatim: encode it from the fields.
		ref.ArtifactID, ref.raw = resp.ArtifactId, nil
	}
	if ref.ArtifactID == "" {
		return ArtifactRef{}, errors.New("artifact write: the host answered without an artifact_id")
	}
	return ref, nil
}

// Read returns the bytes of the artifact id of this execution, or an error wrapping
// ErrArtifactNotFound.
func (a Artifacts) Read(ctx context.Context, id string) ([]byte, error) {
	client, err := a.host.get()
	if err != nil {
		return nil, fmt.Errorf("artifact read %s: %w", strconv.Quote(id), err)
	}
	resp, err := client.ArtifactRead(ctx, &pluginv1.ArtifactReadRequest{CallId: a.host.callID, ArtifactId: id})
	if status.Code(err) == codes.NotFound {
		return nil, fmt.Errorf("artifact %s: %w", strconv.Quote(id), ErrArtifactNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("artifact read %s: %w", strconv.Quote(id), err)
	}
	if resp.Data == nil {
		return []byte{}, nil
	}
	return resp.Data, nil
}
