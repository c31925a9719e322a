package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/fuscia/fuscia/engine/artifact"
)

// The artifacts endpoints of the API (docs/reference/api.md), server and client side.

func (s *server) artifacts(w http.ResponseWriter, r *http.Request) {
	a, err := s.ops.Artifacts(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

func (s *server) deleteArtifacts(w http.ResponseWriter, r *http.Request) {
	// A deletion must not stop half-way because the client went away.
	d, err := s.ops.DeleteArtifacts(context.WithoutCancel(r.Context()), r.PathValue("id"))
	if errors.Is(err, ErrNotFinished) {
		writeError(w, http.StatusConflict, codeNotFinished, err.Error())
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// artifact answers the artifact's bytes, with its content type.
func (s *server) artifact(w http.ResponseWriter, r *http.Request) {
	b, ref, err := s.ops.Artifact(r.Context(), r.PathValue("id"), r.PathValue("artifact"))
	switch {
	case errors.Is(err, artifact.ErrDeleted):
		writeError(w, http.StatusGone, codeArtifactDeleted, err.Error())
		return
	case errors.Is(err, artifact.ErrNotFound):
		writeError(w, http.StatusNotFound, codeNoArtifact, err.Error())
		return
	case err != nil:
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", ref.ContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

func (c *client) Artifacts(ctx context.Context, id string) (*Artifacts, error) {
	var out Artifacts
	if err := c.getJSON(ctx, executionPath(id, "artifacts", nil), &out); err != nil {
		return nil, err
	}
	if out.Artifacts == nil {
		out.Artifacts = []Artifact{}
	}
	if out.Deleted == nil {
		out.Deleted = []Artifact{}
	}
	return &out, nil
}

func (c *client) DeleteArtifacts(ctx context.Context, id string) (*ArtifactsDeleted, error) {
	var out ArtifactsDeleted
	if err := c.doJSON(ctx, http.MethodDelete, executionPath(id, "artifacts", nil), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func (c *client) Artifact(ctx context.Context, id, artifactID string) ([]byte, artifact.Ref, error) {
	path := executionPath(id, "artifacts/"+url.PathEscape(artifactID), nil)
	resp, err := c.request(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, artifact.Ref{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, artifact.Ref{}, c.gone(fmt.Errorf("read artifact %s: %w", artifactID, err))
	}
	return b, artifact.Ref{ID: artifactID, ContentType: resp.Header.Get("Content-Type"), Size: int64(len(b))}, nil
}
