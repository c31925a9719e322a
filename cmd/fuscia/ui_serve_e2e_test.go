package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// cookieClient is an HTTP client that keeps cookies as a browser does and does not follow
// redirects, with the CSRF value of its login.
type cookieClient struct {
	t      *testing.T
	base   string
	client *http.Client
	csrf   string
}

func newCookieClient(t *testing.T, base string) *cookieClient {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &cookieClient{t: t, base: base, client: &http.Client{Jar: jar, Timeout: serveClient.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// do sends a request with the browser's cookies, and its CSRF value when csrf is set.
func (b *cookieClient) do(method, path, body string, csrf bool) (*http.Response, string) {
	b.t.Helper()
	req, err := http.NewRequest(method, b.base+path, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if csrf {
		req.Header.Set("X-Fuscia-CSRF", b.csrf)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, string(out)
}

// TestServeUILogin drives the real binary as the web UI does: log in with a token made by
// `fuscia token create`, start a run and approve its wait with the session cookie and its CSRF
// value; the journal records the token's name as who answered. A revoked token's session is
// refused at once; -ui=false serves no UI.
func TestServeUILogin(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("gate.fsc.hcl", gateWorkflow)
	sp := startServe(t, h, nil, "gate.fsc.hcl")
	if !regexp.MustCompile(`(?m)^Web UI on http://127\.0\.0\.1:\d+/ui/$`).MatchString(sp.stdout.String()) {
		t.Errorf("serve does not print where the UI is:\n%s", sp.stdout)
	}
	tok := newToken(t, h, "ui-person", "operate").Token
	b := newCookieClient(t, sp.base)

	if resp, _ := b.do("GET", "/", "", false); resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/ui/" {
		t.Errorf("GET /: %d Location %q, want a redirect to /ui/", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, page := b.do("GET", "/ui/runs", "", false)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "<html") || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Fatalf("GET /ui/runs: %d, CSP %q, want index.html under the UI's CSP", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
	if resp, body := b.do("GET", "/v1/executions", "", false); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the API before the login: %d %s, want 401", resp.StatusCode, body)
	}

	resp, body := b.do("POST", "/ui/login", `{"token": "`+tok+`"}`, false)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login: %d %s", resp.StatusCode, body)
	}
	var who struct{ Name, Scope, CSRF string }
	if err := json.Unmarshal([]byte(body), &who); err != nil || who.Name != "ui-person" || who.Scope != "operate" || who.CSRF == "" {
		t.Fatalf("login answered %s (%v), want the token's name and scope and a CSRF value", body, err)
	}
	b.csrf = who.CSRF
	setCookie := resp.Header.Get("Set-Cookie")
	for _, attr := range []string{"fuscia_session=", "Path=/", "HttpOnly", "SameSite=Strict"} {
		if !strings.Contains(setCookie, attr) {
			t.Errorf("Set-Cookie %q lacks %s", setCookie, attr)
		}
	}
	if strings.Contains(setCookie, "Secure") || strings.Contains(setCookie, tok) {
		t.Errorf("Set-Cookie %q: no Secure without TLS, and never the token", setCookie)
	}

	if resp, body := b.do("POST", "/v1/workflows/gate/runs", `{}`, false); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, `"csrf"`) {
		t.Fatalf("start a run with the cookie, without the CSRF value: %d %s, want 403 csrf", resp.StatusCode, body)
	}
	resp, body = b.do("POST", "/v1/workflows/gate/runs", `{}`, true)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("start a run with the cookie and the CSRF value: %d %s, want 202", resp.StatusCode, body)
	}
	id := executionID(t, []byte(body))
	sp.waitStatus(id, "waiting")
	signal := `{"node": "wait.approve", "data": {"ok": true}}`
	if resp, body := b.do("POST", "/v1/executions/"+url.PathEscape(id)+"/signal", signal, false); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("approve without the CSRF value: %d %s, want 403", resp.StatusCode, body)
	}
	if resp, body := b.do("POST", "/v1/executions/"+url.PathEscape(id)+"/signal", signal, true); resp.StatusCode != http.StatusOK {
		t.Fatalf("approve with the cookie: %d %s, want 200", resp.StatusCode, body)
	}
	sp.waitStatus(id, "succeeded")
	if by := nodeOf(t, showJSON(t, h, id), "wait.approve").AnsweredBy; by != "ui-person" {
		t.Errorf("show -json: wait.approve answered_by %q, want the token's name ui-person", by)
	}

	// Revoked: the session is refused at once, on the API and by the UI.
	wantCode(t, h.run("token", "revoke", "ui-person"), 0)
	if resp, body := b.do("GET", "/v1/executions", "", false); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the API with a revoked token's session: %d %s, want 401", resp.StatusCode, body)
	}
	if resp, body := b.do("GET", "/ui/session", "", false); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the session of a revoked token: %d %s, want 401", resp.StatusCode, body)
	}
	sp.stopOK()

	// -ui=false: no UI, no redirect.
	off := startServe(t, h, nil, "-ui=false", "gate.fsc.hcl")
	if strings.Contains(off.stdout.String(), "Web UI on") {
		t.Errorf("serve -ui=false prints a UI address:\n%s", off.stdout)
	}
	ob := newCookieClient(t, off.base)
	for _, path := range []string{"/ui/", "/ui/runs", "/ui/assets/app.js"} {
		if resp, body := ob.do("GET", path, "", false); resp.StatusCode != http.StatusNotFound {
			t.Errorf("-ui=false: GET %s: %d %s, want 404", path, resp.StatusCode, body)
		}
	}
	if resp, _ := ob.do("GET", "/", "", false); resp.StatusCode != http.StatusNotFound || resp.Header.Get("Location") != "" {
		t.Errorf("-ui=false: GET /: %d Location %q, want 404 without a redirect", resp.StatusCode, resp.Header.Get("Location"))
	}
	off.stopOK()
}
