package serve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/local"
	"github.com/fuscia/fuscia/engine/serve/ui"
)

const uiApprovalWorkflow = `workflow "gate" {}
trigger "manual" "go" {}
wait "approve" {
  approval { message = "ship?" }
}
`

const uiTaskWorkflow = `workflow "w" {}
trigger "manual" "start" {}
task "t" {
  uses   = builtin.transform
  inputs = { x = 1 }
}
`

// newUIServer is an authServer whose listener answers with TCPHandler, the UI on or off.
func newUIServer(t *testing.T, uiOn, tlsOn bool, files map[string]string) *authServer {
	t.Helper()
	if files == nil {
		files = map[string]string{"gate.fsc.hcl": uiApprovalWorkflow, "w.fsc.hcl": uiTaskWorkflow}
	}
	return newAuthServerWith(t, files, func(s *Server) http.Handler {
		h, err := s.TCPHandler(TCPConfig{UI: uiOn})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}, tlsOn)
}

type webAnswer struct {
	code   int
	header http.Header
	body   string
	resp   *http.Response
}

// call sends a request with the given headers (a JSON body's Content-Type added), without
// following redirects.
func (as *authServer) call(method, path, body string, header map[string]string) webAnswer {
	as.t.Helper()
	req, err := http.NewRequest(method, as.url+path, strings.NewReader(body))
	if err != nil {
		as.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v // net/http sends req.Host, never a Host header set by hand
			continue
		}
		req.Header.Set(k, v)
	}
	client := *as.client
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	if err != nil {
		as.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return webAnswer{code: resp.StatusCode, header: resp.Header, body: string(b), resp: resp}
}

func (a webAnswer) field(t *testing.T, name string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(a.body), &m); err != nil {
		t.Fatalf("answer %d %q is not a JSON object: %v", a.code, a.body, err)
	}
	s, _ := m[name].(string)
	return s
}

// uiSession is a browser's login: its cookie and CSRF value.
type uiSession struct {
	cookie, csrf string
}

func (as *authServer) uiLogin(token string) uiSession {
	as.t.Helper()
	a := as.call("POST", "/ui/login", `{"token": "`+token+`"}`, nil)
	if a.code != http.StatusOK {
		as.t.Fatalf("login: %d %s", a.code, a.body)
	}
	for _, c := range a.resp.Cookies() {
		if c.Name == ui.CookieName {
			return uiSession{cookie: c.Value, csrf: a.field(as.t, "csrf")}
		}
	}
	as.t.Fatalf("login set no session cookie: %v", a.header["Set-Cookie"])
	return uiSession{}
}

// with is the headers of a request made with the session: its cookie, and its CSRF value
// unless csrf says another ("-" for none).
func (s uiSession) with(csrf string) map[string]string {
	h := map[string]string{"Cookie": ui.CookieName + "=" + s.cookie}
	switch csrf {
	case "":
		h[ui.CSRFHeader] = s.csrf
	case "-":
	default:
		h[ui.CSRFHeader] = csrf
	}
	return h
}

// waitStatusOf polls GET /v1/executions/{id} with the session until the run has status.
func (as *authServer) waitStatusOf(s uiSession, id, status string) map[string]any {
	as.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		a := as.call("GET", "/v1/executions/"+id, "", s.with("-"))
		var ex map[string]any
		if a.code == http.StatusOK && json.Unmarshal([]byte(a.body), &ex) == nil && ex["status"] == status {
			return ex
		}
		if time.Now().After(deadline) {
			as.t.Fatalf("run %s never reached %s: %d %s", id, status, a.code, a.body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestUISessionOnAPI: the session cookie opens the API as its token does — the same scopes, the
// same caller — and a state change made with it needs the session's CSRF value; a revoked token
// ends its session at the next request; Bearer requests are as before.
func TestUISessionOnAPI(t *testing.T) {
	as := newUIServer(t, true, false, nil)
	operator := as.token("ui-operator", local.ScopeOperate, 0)
	reader := as.token("ui-reader", local.ScopeRead, 0)
	s := as.uiLogin(operator)

	if a := as.call("GET", "/v1/executions", "", s.with("-")); a.code != http.StatusOK {
		t.Fatalf("GET /v1/executions with the cookie: %d %s", a.code, a.body)
	}
	if a := as.call("GET", "/v1/workflows", "", s.with("-")); a.code != http.StatusOK || !strings.Contains(a.body, `"gate"`) {
		t.Fatalf("GET /v1/workflows with the cookie: %d %s", a.code, a.body)
	}
	// State changes: without the CSRF value, or a wrong one, 403 csrf and no run.
	for _, csrf := range []string{"-", "wrong", reader} {
		a := as.call("POST", "/v1/workflows/gate/runs", `{}`, s.with(csrf))
		if a.code != http.StatusForbidden || a.field(t, "code") != "csrf" {
			t.Fatalf("start a run with the cookie and CSRF %q: %d %s, want 403 csrf", csrf, a.code, a.body)
		}
	}
	if a := as.call("GET", "/v1/executions", "", s.with("-")); strings.Contains(a.body, "execution_id") {
		t.Fatalf("a refused request started a run: %s", a.body)
	}
	a := as.call("POST", "/v1/workflows/gate/runs", `{}`, s.with(""))
	if a.code != http.StatusAccepted {
		t.Fatalf("start a run with the cookie and its CSRF value: %d %s, want 202", a.code, a.body)
	}
	id := a.field(t, "execution_id")
	as.waitStatusOf(s, id, "waiting")

	// The approval records the token's name, as with Bearer.
	if a := as.call("POST", "/v1/executions/"+id+"/signal", `{"node": "wait.approve", "data": {"ok": true}}`, s.with("-")); a.code != http.StatusForbidden {
		t.Fatalf("signal without the CSRF value: %d %s, want 403", a.code, a.body)
	}
	if a := as.call("POST", "/v1/executions/"+id+"/signal", `{"node": "wait.approve", "data": {"ok": true}}`, s.with("")); a.code != http.StatusOK {
		t.Fatalf("signal with the cookie: %d %s", a.code, a.body)
	}
	ex := as.waitStatusOf(s, id, "succeeded")
	b, _ := json.Marshal(ex)
	if !strings.Contains(string(b), `"answered_by":"ui-operator"`) {
		t.Fatalf("the approval made with the cookie is not answered_by the token's name:\n%s", b)
	}

	// The scope is the token's: a read token's session may read, not start.
	rs := as.uiLogin(reader)
	if a := as.call("GET", "/v1/executions", "", rs.with("-")); a.code != http.StatusOK {
		t.Fatalf("read session, GET: %d %s", a.code, a.body)
	}
	if a := as.call("POST", "/v1/workflows/w/runs", `{}`, rs.with("")); a.code != http.StatusForbidden || a.field(t, "code") != "forbidden" {
		t.Fatalf("read session, start a run: %d %s, want 403 forbidden", a.code, a.body)
	}

	// Bearer needs no CSRF value, and wins over a cookie.
	bearer := map[string]string{"Authorization": "Bearer " + operator}
	if a := as.call("POST", "/v1/workflows/w/runs", `{}`, bearer); a.code != http.StatusAccepted {
		t.Fatalf("Bearer, start a run: %d %s, want 202", a.code, a.body)
	}
	both := rs.with("-")
	both["Authorization"] = "Bearer " + operator
	if a := as.call("POST", "/v1/workflows/w/runs", `{}`, both); a.code != http.StatusAccepted {
		t.Fatalf("Bearer with a read session's cookie: %d %s, want 202 (the Bearer token's scope, no CSRF)", a.code, a.body)
	}

	// Without a token, or with a cookie that names no session: the API's 401.
	none := as.call("GET", "/v1/executions", "", nil)
	stale := as.call("GET", "/v1/executions", "", map[string]string{"Cookie": ui.CookieName + "=nosuchsession"})
	if none.code != http.StatusUnauthorized || stale.code != http.StatusUnauthorized || none.body != stale.body ||
		!strings.HasPrefix(none.header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("no token: %d %s; unknown cookie: %d %s; want the same 401", none.code, none.body, stale.code, stale.body)
	}

	// A revoked token's session is refused at once, and ends.
	as.revoke("ui-operator")
	if a := as.call("GET", "/v1/executions", "", s.with("-")); a.code != http.StatusUnauthorized {
		t.Fatalf("the session of a revoked token on the API: %d %s, want 401", a.code, a.body)
	}
	if a := as.call("GET", "/ui/session", "", s.with("-")); a.code != http.StatusUnauthorized {
		t.Fatalf("the session of a revoked token: %d %s, want 401", a.code, a.body)
	}
	if !strings.Contains(as.logs.String(), "API request refused: a session's state change without its CSRF value") {
		t.Errorf("the CSRF refusals are not logged:\n%s", as.logs)
	}
	if strings.Contains(as.logs.String(), s.cookie) || strings.Contains(as.logs.String(), operator) {
		t.Errorf("a session id or a token was logged:\n%s", as.logs)
	}
}

// TestUILogout: after logout, the cookie opens nothing, on the API either.
func TestUILogout(t *testing.T) {
	as := newUIServer(t, true, false, nil)
	s := as.uiLogin(as.token("bye", local.ScopeRead, 0))
	if a := as.call("POST", "/ui/logout", "", s.with("-")); a.code != http.StatusForbidden {
		t.Fatalf("logout without the CSRF value: %d %s, want 403", a.code, a.body)
	}
	if a := as.call("POST", "/ui/logout", "", s.with("")); a.code != http.StatusNoContent {
		t.Fatalf("logout: %d %s, want 204", a.code, a.body)
	}
	if a := as.call("GET", "/v1/executions", "", s.with("-")); a.code != http.StatusUnauthorized {
		t.Fatalf("the API with a logged-out cookie: %d %s, want 401", a.code, a.body)
	}
}

// TestUILoginRateLimit: bad logins count against the API's limit of failures: past it, the
// API refuses the address a valid token's requests, and a login with a valid token.
func TestUILoginRateLimit(t *testing.T) {
	as := newUIServer(t, true, false, nil)
	good := as.token("good", local.ScopeRead, 0)
	for i := range authFailBurst {
		if a := as.call("POST", "/ui/login", `{"token": "fsc_guess`+strconv.Itoa(i)+`"}`, nil); a.code != http.StatusUnauthorized {
			t.Fatalf("bad login %d: %d %s, want 401", i, a.code, a.body)
		}
	}
	if a := as.do("GET", "/v1/executions", good, ""); a.code != http.StatusTooManyRequests {
		t.Fatalf("the API after %d bad logins: %d %s, want 429", authFailBurst, a.code, a.body)
	}
	a := as.call("POST", "/ui/login", `{"token": "`+good+`"}`, nil)
	if a.code != http.StatusTooManyRequests || a.header.Get("Retry-After") == "" {
		t.Fatalf("a good login from a blocked address: %d %s, want 429 with Retry-After", a.code, a.body)
	}
	if !strings.Contains(as.logs.String(), "UI login refused: invalid token") || strings.Contains(as.logs.String(), "fsc_guess") {
		t.Errorf("bad logins are not logged, or their tokens are:\n%s", as.logs)
	}
}

// TestUIRoutes: what -listen answers under /ui/ and at /, the UI on and off.
func TestUIRoutes(t *testing.T) {
	as := newUIServer(t, true, false, nil)
	a := as.call("GET", "/", "", nil)
	if a.code != http.StatusFound || a.header.Get("Location") != "/ui/" {
		t.Fatalf("GET /: %d Location %q, want a redirect to /ui/", a.code, a.header.Get("Location"))
	}
	if a := as.call("POST", "/", "", nil); a.code != http.StatusNotFound {
		t.Errorf("POST /: %d, want 404 (no webhook there)", a.code)
	}
	for _, path := range []string{"/ui/", "/ui/runs/01JC0000000000000000000000", "/ui/workflows/gate", "/ui/login", "/ui/assets/index.html"} {
		a := as.call("GET", path, "", nil)
		if a.code != http.StatusOK || !strings.Contains(a.body, "<html") {
			t.Errorf("GET %s: %d, want index.html", path, a.code)
		}
		if csp := a.header.Get("Content-Security-Policy"); csp != ui.ContentSecurityPolicy {
			t.Errorf("GET %s: CSP %q, want the UI's", path, csp)
		}
	}
	if a := as.call("GET", "/ui", "", nil); a.code/100 != 3 || a.header.Get("Location") != "/ui/" {
		t.Errorf("GET /ui: %d %q, want a redirect to /ui/", a.code, a.header.Get("Location"))
	}
	if a := as.call("GET", "/ui/assets/app.js", "", nil); a.code != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), "text/javascript") || a.header.Get("ETag") == "" {
		t.Errorf("GET /ui/assets/app.js: %d %q, want the script with an ETag", a.code, a.header.Get("Content-Type"))
	}
	// The browser guard covers the UI: a re-bound name, a cross-site login.
	if a := as.call("GET", "/ui/", "", map[string]string{"Host": "evil.example"}); a.code != http.StatusMisdirectedRequest ||
		a.header.Get("Content-Security-Policy") != ui.ContentSecurityPolicy {
		t.Errorf("GET /ui/ with another Host: %d, CSP %q; want 421 with the UI's headers", a.code, a.header.Get("Content-Security-Policy"))
	}
	tok := as.token("x", local.ScopeRead, 0)
	if a := as.call("POST", "/ui/login", `{"token": "`+tok+`"}`, map[string]string{"Sec-Fetch-Site": "cross-site"}); a.code != http.StatusForbidden || len(a.resp.Cookies()) != 0 {
		t.Errorf("a cross-site login: %d %s, want 403 without a cookie", a.code, a.body)
	}
	if a := as.call("POST", "/ui/login", `{"token": "`+tok+`"}`, map[string]string{"Content-Type": "text/plain"}); a.code != http.StatusUnsupportedMediaType {
		t.Errorf("a text/plain login: %d %s, want 415", a.code, a.body)
	}

	off := newUIServer(t, false, false, nil)
	for _, path := range []string{"/ui/", "/ui/runs", "/ui/assets/app.js", "/ui/session"} {
		if a := off.call("GET", path, "", nil); a.code != http.StatusNotFound {
			t.Errorf("-ui=false: GET %s: %d %s, want 404", path, a.code, a.body)
		}
	}
	if a := off.call("POST", "/ui/login", `{"token": "`+tok+`"}`, nil); a.code != http.StatusNotFound {
		t.Errorf("-ui=false: POST /ui/login: %d, want 404", a.code)
	}
	if a := off.call("GET", "/", "", nil); a.code != http.StatusNotFound || a.header.Get("Location") != "" {
		t.Errorf("-ui=false: GET /: %d Location %q, want 404 without a redirect", a.code, a.header.Get("Location"))
	}
}

// TestUIPathsAndWebhooks: a webhook cannot take the UI's paths; a webhook at / keeps it.
func TestUIPathsAndWebhooks(t *testing.T) {
	as := newUIServer(t, true, false, map[string]string{
		"root.fsc.hcl": hookSource("root", "/", "r1"),
		"ui.fsc.hcl":   hookSource("ui", "/ui/hook", "u1"),
		"bare.fsc.hcl": hookSource("bare", "/ui", "b1"),
	})
	logs := as.logs.String()
	for _, want := range []string{"the path /ui/hook is the web UI's; choose another", "the path /ui is the web UI's; choose another"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log does not say %q:\n%s", want, logs)
		}
	}
	if a := as.call("POST", "/", `{}`, nil); a.code != http.StatusAccepted && a.code != http.StatusOK {
		t.Errorf("POST / with a webhook there: %d %s, want the webhook's answer", a.code, a.body)
	}
	if a := as.call("GET", "/", "", nil); a.code != http.StatusMethodNotAllowed {
		t.Errorf("GET / with a POST webhook there: %d %q, want the webhook's 405, not a redirect", a.code, a.header.Get("Location"))
	}
}

// TestUISecureCookie: over TLS, the session cookie is Secure.
func TestUISecureCookie(t *testing.T) {
	as := newUIServer(t, true, true, nil)
	a := as.call("POST", "/ui/login", `{"token": "`+as.token("tls", local.ScopeRead, 0)+`"}`, nil)
	if a.code != http.StatusOK {
		t.Fatalf("login over TLS: %d %s", a.code, a.body)
	}
	cs := a.resp.Cookies()
	if len(cs) != 1 || !cs[0].Secure || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode || cs[0].Path != "/" {
		t.Fatalf("cookie over TLS %v: want Secure, HttpOnly, SameSite=Strict, Path=/", a.header["Set-Cookie"])
	}
}

func TestIsUIPath(t *testing.T) {
	for p, want := range map[string]bool{
		"/ui":              true,
		"/ui/":             true,
		"/ui/runs/01ABC":   true,
		"//ui/login":       true,
		"/ui/../ui/x":      true,
		"/uix":             false,
		"/ui-hook":         false,
		"/hooks/ui":        false,
		"/ui/../v1/health": false,
		"/":                false,
		"/v1/executions":   false,
	} {
		if got := isUIPath(p); got != want {
			t.Errorf("isUIPath(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestUIBeforeStart: until the store is open (ServeAPI), the UI's pages are served but a login
// answers 503 with Retry-After, and / answers 503 as every webhook path does, not a redirect.
func TestUIBeforeStart(t *testing.T) {
	srv := New(Config{Load: func(_ context.Context, file string, _ []byte) (*engine.Program, error) { return loadProgram(file) }})
	h, err := srv.TCPHandler(TCPConfig{UI: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer hs.Close()
	as := &authServer{t: t, url: hs.URL, client: hs.Client()}
	if a := as.call("GET", "/ui/runs", "", nil); a.code != http.StatusOK || !strings.Contains(a.body, "<html") {
		t.Errorf("GET /ui/runs while starting: %d, want index.html", a.code)
	}
	if a := as.call("POST", "/ui/login", `{"token": "fsc_x"}`, nil); a.code != http.StatusServiceUnavailable || a.header.Get("Retry-After") == "" || a.field(t, "code") != "starting" {
		t.Errorf("login while starting: %d %s, want 503 starting with Retry-After", a.code, a.body)
	}
	if a := as.call("GET", "/", "", nil); a.code != http.StatusServiceUnavailable {
		t.Errorf("GET / while starting: %d %q, want 503", a.code, a.header.Get("Location"))
	}
}
