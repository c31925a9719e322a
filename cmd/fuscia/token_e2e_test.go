package main

// End-to-end tests of API tokens (docs/security.md, "API tokens"): `fuscia token`, and the API
// on serve's -listen asking for them, through the real binary and real HTTP on 127.0.0.1.

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/testcert"
)

// createdToken is `token create -json`.
type createdToken struct {
	Name      string     `json:"name"`
	Token     string     `json:"token"`
	Scope     string     `json:"scope"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// newToken runs `fuscia token create NAME -scope SCOPE -json [args…]` and returns the token.
func newToken(t *testing.T, h *harness, name, scope string, args ...string) createdToken {
	t.Helper()
	r := h.run(append([]string{"token", "create", name, "-scope", scope, "-json"}, args...)...)
	wantCode(t, r, 0)
	var tok createdToken
	if err := json.Unmarshal([]byte(r.stdout), &tok); err != nil || tok.Token == "" {
		t.Fatalf("token create -json: %v\n%s", err, r)
	}
	return tok
}

type tokenList struct {
	Tokens []map[string]any `json:"tokens"`
}

func listTokens(t *testing.T, h *harness) tokenList {
	t.Helper()
	r := h.run("token", "list", "-json")
	wantCode(t, r, 0)
	var l tokenList
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil {
		t.Fatalf("token list -json: %v\n%s", err, r)
	}
	return l
}

// TestTokenCommands: create prints the token once (alone on stdout, or in -json), the store
// keeps no copy of it, list never shows it, and the bad cases exit 2 — all with no serve
// running (the commands open the store, creating it in a new home).
func TestTokenCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.home = filepath.Join(h.home, "fresh") // a home that does not exist yet

	r := h.run("token", "create", "reader")
	wantCode(t, r, 0)
	secret := strings.TrimSpace(r.stdout)
	if !strings.HasPrefix(secret, "fsc_") || len(secret) != 47 || strings.ContainsAny(secret, " \n") {
		t.Fatalf("token create printed %q on stdout, want the token alone (fsc_ and 43 characters)\n%s", r.stdout, r)
	}
	wantContains(t, "token create's stderr", r.stderr, `Created token "reader" with scope read`, "only time it is shown", "Authorization: Bearer")

	ci := newToken(t, h, "ci-bot", "operate", "-expires", "30d")
	if ci.Name != "ci-bot" || ci.Scope != "operate" || ci.ExpiresAt == nil || !strings.HasPrefix(ci.Token, "fsc_") {
		t.Fatalf("token create -json = %+v", ci)
	}
	if d := time.Until(*ci.ExpiresAt); d < 29*24*time.Hour || d > 30*24*time.Hour {
		t.Errorf("-expires 30d: expires_at %v, %s from now", ci.ExpiresAt, d)
	}
	var raw map[string]any
	r = h.run("token", "create", "admin", "-scope", "admin", "-json")
	wantCode(t, r, 0)
	if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(keys(t, json.RawMessage(r.stdout)), ","); got != "expires_at,name,scope,token" || raw["expires_at"] != nil {
		t.Errorf("token create -json keys %s (expires_at %v), want name, token, scope and a null expires_at", got, raw["expires_at"])
	}

	l := listTokens(t, h)
	if len(l.Tokens) != 3 {
		t.Fatalf("token list -json: %+v, want 3 tokens", l)
	}
	names := []string{}
	for _, tok := range l.Tokens {
		names = append(names, tok["name"].(string))
		for k := range tok {
			switch k {
			case "name", "scope", "created_at", "expires_at", "last_used_at":
			default:
				t.Errorf("token list -json shows %q: %v", k, tok)
			}
		}
	}
	if strings.Join(names, ",") != "admin,ci-bot,reader" {
		t.Errorf("token list -json names %v, want them sorted", names)
	}
	r = h.run("token", "list")
	wantCode(t, r, 0)
	wantContains(t, "token list", r.stdout, "NAME", "SCOPE", "ci-bot", "operate", "never")
	// Neither list nor the store holds a token.
	for _, s := range []string{secret, ci.Token} {
		if strings.Contains(r.stdout, s) || strings.Contains(h.run("token", "list", "-json").stdout, s) {
			t.Errorf("token list shows a token")
		}
		if found := grepDir(t, filepath.Join(h.home, "state"), s); found != "" {
			t.Errorf("the token is stored in clear in %s", found)
		}
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"token", "create", "ci-bot"}, "Token already exists"},
		{[]string{"token", "create", "bad name"}, "Invalid token name"},
		{[]string{"token", "create", "local"}, "reserved"},
		{[]string{"token", "create", strings.Repeat("x", 65)}, "1 to 64 characters"},
		{[]string{"token", "create", "x", "-scope", "root"}, "Invalid -scope"},
		{[]string{"token", "create", "x", "-expires", "soon"}, "Invalid -expires"},
		{[]string{"token", "create", "x", "-expires", "0"}, "Invalid -expires"},
		{[]string{"token", "create"}, "Wrong arguments"},
		{[]string{"token", "revoke", "nobody"}, "Unknown token"},
		{[]string{"token", "frob"}, "unknown subcommand"},
	} {
		r := h.run(tc.args...)
		wantCode(t, r, 2)
		wantContains(t, strings.Join(tc.args, " "), r.stderr, tc.want)
	}
	r = h.run("token", "create", "ci-bot", "-json")
	wantCode(t, r, 2)
	wantContains(t, "a duplicate with -json", r.stdout, `"valid": false`, "Token already exists")

	r = h.run("token", "revoke", "ci-bot")
	wantCode(t, r, 0)
	if l := listTokens(t, h); len(l.Tokens) != 2 {
		t.Errorf("after the revocation: %+v", l)
	}
	wantCode(t, h.run("token", "revoke", "ci-bot"), 2)
}

// grepDir returns the first file under dir that contains s.
func grepDir(t *testing.T, dir, s string) string {
	t.Helper()
	found := ""
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || found != "" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), s) {
			found = path
		}
		return nil
	})
	return found
}

// apiCall is one request to serve's API with token (none when empty).
type apiCall struct {
	code       int
	body       string
	authHeader string
	retryAfter string
}

func callAPI(t *testing.T, client *http.Client, base, method, path, token, body string) apiCall {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return apiCall{code: resp.StatusCode, body: string(b), authHeader: resp.Header.Get("WWW-Authenticate"), retryAfter: resp.Header.Get("Retry-After")}
}

const gateWorkflow = `workflow "gate" {}

trigger "manual" "go" {}

wait "approve" {
  approval { message = "ship?" }
}
`

// TestServeTokenScopes: on serve's -listen, /v1/ asks for a token whose scope covers the
// request; the health check and the webhooks do not; tokens made or revoked while serve runs
// count at once; an approval records the token's name, or "local" through the socket.
func TestServeTokenScopes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("gate.fsc.hcl", gateWorkflow)
	read := newToken(t, h, "reader", "read").Token // before serve: the store opened directly
	sp := startServe(t, h, nil, "gate.fsc.hcl")
	operate := newToken(t, h, "ci-bot", "operate").Token // while serve runs: through its socket
	admin := newToken(t, h, "root", "admin").Token
	call := func(method, path, token, body string) apiCall {
		t.Helper()
		return callAPI(t, serveClient, sp.base, method, path, token, body)
	}

	if a := call("GET", "/v1/health", "", ""); a.code != http.StatusOK {
		t.Errorf("GET /v1/health without a token: %d %s, want 200", a.code, a.body)
	}
	none := call("GET", "/v1/executions", "", "")
	bad := call("GET", "/v1/executions", "fsc_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "")
	for what, a := range map[string]apiCall{"no token": none, "a bad token": bad} {
		if a.code != http.StatusUnauthorized || !strings.HasPrefix(a.authHeader, "Bearer") {
			t.Errorf("%s: %d (WWW-Authenticate %q) %s, want 401 with WWW-Authenticate: Bearer", what, a.code, a.authHeader, a.body)
		}
	}
	if none.body != bad.body {
		t.Errorf("the 401 bodies differ: %s vs %s", none.body, bad.body)
	}
	var eb map[string]any
	if err := json.Unmarshal([]byte(none.body), &eb); err != nil || eb["error"] == "" {
		t.Errorf("401 body %s is not {\"error\": …}", none.body)
	}
	if a := call("POST", "/v1/prune", "", `{"completed_before": "2000-01-01T00:00:00Z"}`); a.code != http.StatusUnauthorized {
		t.Errorf("POST /v1/prune without a token: %d %s, want 401", a.code, a.body)
	}

	// read: GET only.
	if a := call("GET", "/v1/executions", read, ""); a.code != http.StatusOK {
		t.Errorf("read token, GET /v1/executions: %d %s", a.code, a.body)
	}
	if a := call("GET", "/v1/workflows", read, ""); a.code != http.StatusOK {
		t.Errorf("read token, GET /v1/workflows: %d %s", a.code, a.body)
	}
	if a := call("POST", "/v1/workflows/gate/runs", read, `{}`); a.code != http.StatusForbidden {
		t.Errorf("read token, start a run: %d %s, want 403", a.code, a.body)
	}
	if runs := runsInHome(t, h); len(runs) != 0 {
		t.Fatalf("runs started by refused requests: %+v", runs)
	}

	// operate: start, signal, cancel; not prune.
	a := call("POST", "/v1/workflows/gate/runs", operate, `{}`)
	if a.code != http.StatusAccepted {
		t.Fatalf("operate token, start a run: %d %s, want 202", a.code, a.body)
	}
	approved := executionID(t, []byte(a.body))
	sp.waitStatus(approved, "waiting")
	if a := call("POST", "/v1/executions/"+approved+"/signal", read, `{"node": "wait.approve"}`); a.code != http.StatusForbidden {
		t.Errorf("read token, signal: %d %s, want 403", a.code, a.body)
	}
	if a := call("POST", "/v1/executions/"+approved+"/signal", operate, `{"node": "wait.approve", "data": {"ok": true}}`); a.code != http.StatusOK {
		t.Fatalf("operate token, signal: %d %s, want 200", a.code, a.body)
	}
	ex := sp.waitStatus(approved, "succeeded")
	if n := nodeOf(t, ex, "wait.approve"); n.AnsweredBy != "ci-bot" {
		t.Errorf("the API shows the approval answered by %q, want ci-bot", n.AnsweredBy)
	}
	if n := nodeOf(t, showJSON(t, h, approved), "wait.approve"); n.AnsweredBy != "ci-bot" {
		t.Errorf("show -json shows the approval answered by %q, want ci-bot", n.AnsweredBy)
	}
	r := h.run("show", approved)
	wantCode(t, r, 0)
	wantContains(t, "show", r.stdout, "answered by ci-bot")

	cancelled := executionID(t, []byte(call("POST", "/v1/workflows/gate/runs", operate, `{}`).body))
	sp.waitStatus(cancelled, "waiting")
	if a := call("POST", "/v1/executions/"+cancelled+"/cancel", operate, ""); a.code != http.StatusAccepted {
		t.Errorf("operate token, cancel: %d %s, want 202", a.code, a.body)
	}
	sp.waitStatus(cancelled, "cancelled")
	prune := `{"completed_before": "3000-01-01T00:00:00Z"}`
	if a := call("POST", "/v1/prune", operate, prune); a.code != http.StatusForbidden {
		t.Errorf("operate token, prune: %d %s, want 403", a.code, a.body)
	}
	if a := call("GET", "/v1/tokens", operate, ""); a.code != http.StatusForbidden {
		t.Errorf("operate token, list tokens: %d %s, want 403", a.code, a.body)
	}

	// The socket needs no token, and answers as "local".
	local := executionID(t, []byte(call("POST", "/v1/workflows/gate/runs", admin, `{}`).body))
	sp.waitStatus(local, "waiting")
	wantCode(t, h.run("signal", local, "approve", "-reject"), 0)
	sp.waitStatus(local, "failed")
	if n := nodeOf(t, showJSON(t, h, local), "wait.approve"); n.AnsweredBy != "local" || n.Error == nil || n.Error.Kind != "rejected" {
		t.Errorf("a rejection through the socket: %+v, want rejected, answered by local", n)
	}

	// admin: everything.
	if a := call("GET", "/v1/tokens", admin, ""); a.code != http.StatusOK || strings.Contains(a.body, operate) {
		t.Errorf("admin token, list tokens: %d %s", a.code, a.body)
	}
	if a := call("POST", "/v1/prune", admin, prune); a.code != http.StatusOK || !strings.Contains(a.body, approved) {
		t.Errorf("admin token, prune: %d %s, want 200 with %s deleted", a.code, a.body, approved)
	}

	// Revoked: refused at once, with the same 401.
	wantCode(t, h.run("token", "revoke", "ci-bot"), 0)
	if a := call("GET", "/v1/executions", operate, ""); a.code != http.StatusUnauthorized || a.body != none.body {
		t.Errorf("a revoked token: %d %s, want the same 401", a.code, a.body)
	}
	// Expired: refused once its time is up.
	short := newToken(t, h, "short", "read", "-expires", "1s").Token
	deadline := time.Now().Add(30 * time.Second)
	for {
		a := call("GET", "/v1/health", "", "")
		if a.code != http.StatusOK {
			t.Fatalf("health: %d", a.code)
		}
		a = call("GET", "/v1/executions", short, "")
		if a.code == http.StatusUnauthorized && a.body == none.body {
			break
		}
		if a.code != http.StatusOK || time.Now().After(deadline) {
			t.Fatalf("a token past its expiry: %d %s", a.code, a.body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The list shows each token's last use (recorded when used), never a token.
	for _, tok := range listTokens(t, h).Tokens {
		if tok["name"] == "root" && tok["last_used_at"] == nil {
			t.Errorf("the admin token's last use is not recorded: %v", tok)
		}
	}
	sp.stopOK()
}

// runsInHome lists the runs through the CLI (the socket while serve runs).
func runsInHome(t *testing.T, h *harness) []journal.Summary {
	t.Helper()
	r := h.run("executions", "list", "-json")
	wantCode(t, r, 0)
	var v struct {
		Executions []journal.Summary `json:"executions"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("executions list -json: %v\n%s", err, r)
	}
	return v.Executions
}

// TestServeTokenRateLimit: after 10 failed authentications from one address in a minute, its
// requests are answered 429 with Retry-After, a valid token's too; the failures are logged with
// the remote address, never with the token presented.
func TestServeTokenRateLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("gate.fsc.hcl", gateWorkflow)
	good := newToken(t, h, "good", "read").Token
	sp := startServe(t, h, nil, "gate.fsc.hcl", "-log-format", "json")
	limitedAt := -1
	for i := range 30 {
		guess := "fsc_guess" + strconv.Itoa(i)
		if i%2 == 0 {
			// No token is refused but not counted: any web page can make the browser send
			// such requests, and must not lock the operator out.
			guess = ""
		}
		a := callAPI(t, serveClient, sp.base, "GET", "/v1/executions", guess, "")
		if a.code == http.StatusTooManyRequests {
			if secs, err := strconv.Atoi(a.retryAfter); err != nil || secs < 1 || secs > 60 {
				t.Errorf("429 with Retry-After %q, want seconds", a.retryAfter)
			}
			limitedAt = i
			break
		}
		if a.code != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d %s, want 401", i, a.code, a.body)
		}
	}
	if limitedAt != 20 {
		t.Fatalf("the first 429 came at request %d, want at request 20 (after 10 tokens refused, and 10 requests without one)\n%s", limitedAt, sp)
	}
	if a := callAPI(t, serveClient, sp.base, "GET", "/v1/executions", good, ""); a.code != http.StatusTooManyRequests {
		t.Errorf("a valid token from the limited address: %d %s, want 429", a.code, a.body)
	}
	if a := callAPI(t, serveClient, sp.base, "GET", "/v1/health", "", ""); a.code != http.StatusOK {
		t.Errorf("the health check from the limited address: %d, want 200", a.code)
	}
	sp.stopOK()
	logs := sp.stderr.String()
	if !strings.Contains(logs, "missing or invalid token") || !strings.Contains(logs, `"remote_addr":"127.0.0.1:`) {
		t.Errorf("the refusals are not logged with the remote address:\n%s", logs)
	}
	if strings.Contains(logs, "fsc_guess") || strings.Contains(logs, good) {
		t.Errorf("a token presented was logged:\n%s", logs)
	}
}

// TestServeRefusesOpenListen: serve on an address other machines reach needs a token to exist:
// without one it exits 2 saying how to make one; with one it serves.
func TestServeRefusesOpenListen(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("gate.fsc.hcl", gateWorkflow)
	sp := launchServe(t, h, nil, "gate.fsc.hcl", "-listen", "0.0.0.0:0")
	select {
	case <-sp.exited:
	case <-time.After(serveDeadline):
		t.Fatalf("serve -listen 0.0.0.0:0 without a token did not exit:\n%s", sp)
	}
	if sp.code != 2 {
		t.Fatalf("serve -listen 0.0.0.0:0 without a token exited %d, want 2:\n%s", sp.code, sp)
	}
	wantContains(t, "serve's refusal", sp.stderr.String(), "0.0.0.0:0", "no API token exists", "fuscia token create NAME -scope admin")
	if servingLineRE.MatchString(sp.stdout.String()) || strings.Contains(sp.stdout.String(), "API and webhooks on") {
		t.Errorf("serve said it serves before refusing:\n%s", sp)
	}

	admin := newToken(t, h, "admin", "admin").Token
	sp = startServe(t, h, nil, "gate.fsc.hcl", "-listen", "0.0.0.0:0")
	_, port, err := net.SplitHostPort(strings.TrimPrefix(sp.base, "http://"))
	if err != nil {
		t.Fatalf("API address %q: %v", sp.base, err)
	}
	base := "http://127.0.0.1:" + port
	if a := callAPI(t, serveClient, base, "GET", "/v1/executions", admin, ""); a.code != http.StatusOK {
		t.Errorf("GET /v1/executions on 0.0.0.0 with a token: %d %s", a.code, a.body)
	}
	if a := callAPI(t, serveClient, base, "GET", "/v1/executions", "", ""); a.code != http.StatusUnauthorized {
		t.Errorf("GET /v1/executions on 0.0.0.0 without a token: %d %s, want 401", a.code, a.body)
	}
	sp.stopOK()
}

// TestServeTLS: with -tls-cert and -tls-key, -listen answers HTTPS with that certificate; the
// flags come in pairs and bad files are named.
func TestServeTLS(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("gate.fsc.hcl", gateWorkflow)
	certFile, keyFile, pool := testcert.SelfSigned(t, h.dir, "server")
	_, otherKey, _ := testcert.SelfSigned(t, h.dir, "other")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-tls-cert", certFile}, []string{"-tls-cert needs -tls-key"}},
		{[]string{"-tls-key", keyFile}, []string{"-tls-key needs -tls-cert"}},
		{[]string{"-tls-cert", filepath.Join(h.dir, "missing.pem"), "-tls-key", keyFile}, []string{"missing.pem"}},
		{[]string{"-tls-cert", certFile, "-tls-key", otherKey}, []string{otherKey, "is not the key of the certificate in", certFile}},
		{[]string{"-tls-cert", keyFile, "-tls-key", keyFile}, []string{keyFile, "no PEM certificate"}},
	} {
		r := h.run(append([]string{"serve", "gate.fsc.hcl", "-listen", "127.0.0.1:0"}, tc.args...)...)
		wantCode(t, r, 2)
		wantContains(t, strings.Join(tc.args, " "), r.stderr, append([]string{"Invalid TLS certificate or key"}, tc.want...)...)
	}

	admin := newToken(t, h, "admin", "admin").Token
	sp := startServe(t, h, nil, "gate.fsc.hcl", "-tls-cert", certFile, "-tls-key", keyFile)
	if !strings.HasPrefix(sp.base, "https://") {
		t.Fatalf("serve with TLS prints %q, want an https:// address:\n%s", sp.base, sp)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if a := callAPI(t, client, sp.base, "GET", "/v1/health", "", ""); a.code != http.StatusOK {
		t.Errorf("GET /v1/health over TLS: %d %s", a.code, a.body)
	}
	a := callAPI(t, client, sp.base, "POST", "/v1/workflows/gate/runs", admin, `{}`)
	if a.code != http.StatusAccepted {
		t.Fatalf("start a run over TLS: %d %s", a.code, a.body)
	}
	id := executionID(t, []byte(a.body))
	if a := callAPI(t, client, sp.base, "GET", "/v1/executions/"+id, admin, ""); a.code != http.StatusOK || !strings.Contains(a.body, id) {
		t.Errorf("GET the run over TLS: %d %s", a.code, a.body)
	}
	// Plain HTTP to the TLS port gets no API answer.
	plain := "http://" + strings.TrimPrefix(sp.base, "https://")
	if resp, err := serveClient.Get(plain + "/v1/health"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP on the TLS listener answered 200 %s", b)
		}
	}
	sp.stopOK()
}
