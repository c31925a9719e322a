package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// The token endpoints of the API (docs/reference/api.md), server and client side.

// Error codes of the token endpoints.
const (
	codeTokenExists  = "token_exists"
	codeNoToken      = "no_token"
	codeInvalidToken = "invalid_token"
)

// tokenRequest is the body of POST /v1/tokens. ExpiresIn is a Go duration ("720h"); empty
// means the token lasts until it is revoked.
type tokenRequest struct {
	Name      string `json:"name"`
	Scope     Scope  `json:"scope,omitempty"`
	ExpiresIn string `json:"expires_in,omitempty"`
}

func (s *server) createToken(w http.ResponseWriter, r *http.Request) {
	var req tokenRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalid, `the body is not a JSON object {"name": …, "scope": "read"|"operate"|"admin", "expires_in": "720h"}: `+err.Error())
		return
	}
	if req.Scope == "" {
		req.Scope = ScopeRead
	}
	var ttl time.Duration
	if req.ExpiresIn != "" {
		d, err := time.ParseDuration(req.ExpiresIn)
		if err != nil || d <= 0 {
			writeError(w, http.StatusBadRequest, codeInvalidToken, fmt.Sprintf("expires_in %q is not a positive duration such as 720h", req.ExpiresIn))
			return
		}
		ttl = d
	}
	tok, err := s.ops.CreateToken(r.Context(), req.Name, req.Scope, ttl)
	switch {
	case errors.Is(err, ErrInvalidToken):
		writeError(w, http.StatusBadRequest, codeInvalidToken, err.Error())
	case errors.Is(err, ErrTokenExists):
		writeError(w, http.StatusConflict, codeTokenExists, err.Error())
	case err != nil:
		s.fail(w, r, err)
	default:
		// The answer holds a secret: no cache may keep it.
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, http.StatusCreated, tok)
	}
}

func (s *server) listTokens(w http.ResponseWriter, r *http.Request) {
	toks, err := s.ops.Tokens(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"tokens": toks})
}

func (s *server) revokeToken(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	err := s.ops.RevokeToken(r.Context(), name)
	switch {
	case errors.Is(err, ErrNoToken):
		writeError(w, http.StatusNotFound, codeNoToken, err.Error())
	case err != nil:
		s.fail(w, r, err)
	default:
		writeJSON(w, http.StatusOK, map[string]any{"name": name, "revoked": true})
	}
}

func (c *client) CreateToken(ctx context.Context, name string, scope Scope, ttl time.Duration) (NewToken, error) {
	req := tokenRequest{Name: name, Scope: scope}
	if ttl > 0 {
		req.ExpiresIn = ttl.String()
	}
	var out NewToken
	err := c.doJSON(ctx, http.MethodPost, "/v1/tokens", req, &out)
	return out, err
}

func (c *client) Tokens(ctx context.Context) ([]TokenInfo, error) {
	var out struct {
		Tokens []TokenInfo `json:"tokens"`
	}
	if err := c.getJSON(ctx, "/v1/tokens", &out); err != nil {
		return nil, err
	}
	if out.Tokens == nil {
		out.Tokens = []TokenInfo{}
	}
	return out.Tokens, nil
}

func (c *client) RevokeToken(ctx context.Context, name string) error {
	var out map[string]any
	return c.doJSON(ctx, http.MethodDelete, "/v1/tokens/"+url.PathEscape(name), nil, &out)
}
