package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
)

// The API on serve's -listen asks for a token (docs/security.md, "API tokens"); the webhooks,
// the health check and /metrics do not.

// createToken makes a read token in home with the fuscia binary bin (through the socket of the
// serve that owns the store).
func createToken(ctx context.Context, bin, home string) (string, error) {
	out, err := exec.CommandContext(ctx, bin, "token", "create", "fuscia-load", "-scope", "read", "-json", "-home", home).Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = strings.TrimSpace(string(ee.Stderr))
		}
		return "", fmt.Errorf("cannot create an API token: %v %s", err, stderr)
	}
	var v struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(out, &v); err != nil || v.Token == "" {
		return "", fmt.Errorf("token create -json printed %q: %v", out, err)
	}
	return v.Token, nil
}

// withToken makes c send token with each request.
func withToken(c *http.Client, token string) *http.Client {
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = bearerTransport{next: next, token: token}
	return c
}

type bearerTransport struct {
	next  http.RoundTripper
	token string
}

func (t bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(r)
}
