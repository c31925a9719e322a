package guest

import (
	"encoding/json"
	"errors"
	"strconv"
)

// Artifacts stores byte blobs with the execution: files a task produces (a report, a download)
// that are too large or too binary for an output. An output holds the ArtifactRef instead.
var Artifacts ArtifactStore

// ArtifactStore is the type of Artifacts.
type ArtifactStore struct{}

// ArtifactRef names a stored artifact. Its JSON form is the host's:
// {"artifact_id", "content_type", "size"}, so it can be returned in an output as it is.
type ArtifactRef struct {
	ID          string `json:"artifact_id"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
}

// ErrArtifactNotFound is returned by Read for an id that names no artifact of this execution.
var ErrArtifactNotFound = errors.New("artifact not found")

// Write stores data as an artifact of this execution, with contentType (a MIME type such as
// "text/csv"), and returns its reference.
func (ArtifactStore) Write(contentType string, data []byte) (ArtifactRef, error) {
	out, ok := hostArtifactWrite(contentType, data)
	if !ok {
		return ArtifactRef{}, errors.New("artifact write: the host stored nothing")
	}
	var r struct {
		ArtifactRef
		Error string `json:"error"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return ArtifactRef{}, errors.New("artifact write: malformed answer from the host: " + err.Error())
	}
	if r.Error != "" {
		return ArtifactRef{}, errors.New("artifact write: " + r.Error)
	}
	if r.ID == "" {
		return ArtifactRef{}, errors.New("artifact write: the host answered without an artifact_id")
	}
	return r.ArtifactRef, nil
}

// Read returns the bytes of the artifact id of this execution, or an error wrapping
// ErrArtifactNotFound.
func (ArtifactStore) Read(id string) ([]byte, error) {
	b, ok := hostArtifactRead(id)
	if !ok {
		return nil, &artifactError{id: id}
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

type artifactError struct{ id string }

func (e *artifactError) Error() string { return "artifact " + strconv.Quote(e.id) + ": not found" }
func (e *artifactError) Unwrap() error { return ErrArtifactNotFound }
