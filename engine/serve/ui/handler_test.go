package ui

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/local"
)

// countingLimiter is a Limiter that blocks after max failures (serve's real limiter, with its
// per-address buckets, is tested in engine/serve).
type countingLimiter struct {
	mu    sync.Mutex
	fails int
	max   int
}

func (l *countingLimiter) Blocked(*http.Request, time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return 3 * time.Second, l.fails >= l.max
}

func (l *countingLimiter) Failed(*http.Request, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fails++
}

func (l *countingLimiter) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fails
}

// uiServer is the UI's handler on a real HTTP server, checking tokens in a real store with the
// API's checker, on a clock the test moves.
type uiServer struct {
	t        *testing.T
	store    *journal.Store
	url      string
	client   *http.Client
	limiter  *countingLimiter
	sessions *Sessions
	now      atomic.Pointer[time.Time]
}

func newUIServer(t *testing.T, tlsOn bool, assets fs.FS) *uiServer {
	t.Helper()
	st, err := journal.Open(filepath.Join(t.TempDir(), "state"), journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	us := &uiServer{t: t, store: st, limiter: &countingLimiter{max: 1000}, sessions: NewSessions(SessionsConfig{})}
	start := time.Now()
	us.now.Store(&start)
	checker := local.TokenChecker{Store: st}
	h, err := New(Config{Check: checker.Check, Limiter: us.limiter, Sessions: us.sessions, Assets: assets,
		Now: func() time.Time { return *us.now.Load() }})
	if err != nil {
		t.Fatal(err)
	}
	var hs *httptest.Server
	if tlsOn {
		hs = httptest.NewTLSServer(h)
	} else {
		hs = httptest.NewServer(h)
	}
	us.url, us.client = hs.URL, hs.Client()
	t.Cleanup(func() {
		hs.Close()
		if err := st.Close(); err != nil {
			t.Errorf("close the store: %v", err)
		}
	})
	return us
}

func (us *uiServer) advance(d time.Duration) {
	next := us.now.Load().Add(d)
	us.now.Store(&next)
}

// token stores a token as `fuscia token create` does (its SHA-256 only) and returns it.
func (us *uiServer) token(name string, scope local.Scope, expires *time.Time) string {
	us.t.Helper()
	secret := local.TokenPrefix + "test-" + name + "-0123456789abcdefghijklmnopqrstuvwxyz"
	sum := sha256.Sum256([]byte(secret))
	if err := us.store.CreateToken(journal.Token{Name: name, Scope: string(scope), Hash: hex.EncodeToString(sum[:]),
		CreatedAt: time.Now().UTC(), ExpiresAt: expires}); err != nil {
		us.t.Fatal(err)
	}
	return secret
}

type answer struct {
	code   int
	header http.Header
	body   string
	resp   *http.Response
}

func (a answer) json(t *testing.T) map[string]string {
	t.Helper()
	var m map[string]string
	if err := json.Unmarshal([]byte(a.body), &m); err != nil {
		t.Fatalf("answer %d %q is not a JSON object of strings: %v", a.code, a.body, err)
	}
	return m
}

func (a answer) cookie() *http.Cookie {
	for _, c := range a.resp.Cookies() {
		if c.Name == CookieName {
			return c
		}
	}
	return nil
}

func (us *uiServer) do(method, path, body string, header map[string]string) answer {
	us.t.Helper()
	req, err := http.NewRequest(method, us.url+path, strings.NewReader(body))
	if err != nil {
		us.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := us.client.Do(req)
	if err != nil {
		us.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{code: resp.StatusCode, header: resp.Header, body: string(b), resp: resp}
}

func (us *uiServer) login(token string) answer {
	us.t.Helper()
	b, _ := json.Marshal(map[string]string{"token": token})
	return us.do("POST", "/ui/login", string(b), nil)
}

func withCookie(id string, more ...string) map[string]string {
	h := map[string]string{"Cookie": CookieName + "=" + id}
	for i := 0; i+1 < len(more); i += 2 {
		h[more[i]] = more[i+1]
	}
	return h
}

// checkHeaders fails unless a carries the UI's security headers.
func checkHeaders(t *testing.T, what string, a answer) {
	t.Helper()
	for k, want := range map[string]string{
		"Content-Security-Policy": ContentSecurityPolicy,
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"X-Frame-Options":         "DENY",
	} {
		if got := a.header.Get(k); got != want {
			t.Errorf("%s: %s is %q, want %q", what, k, got, want)
		}
	}
}

func TestLoginSessionLogout(t *testing.T) {
	us := newUIServer(t, false, nil)
	good := us.token("alice", local.ScopeOperate, nil)

	a := us.login(good)
	checkHeaders(t, "login", a)
	if a.code != http.StatusOK {
		t.Fatalf("login with a good token: %d %s", a.code, a.body)
	}
	info := a.json(t)
	if info["name"] != "alice" || info["scope"] != "operate" || len(info["csrf"]) != 43 {
		t.Fatalf("login answered %v, want name alice, scope operate and a CSRF value", info)
	}
	if strings.Contains(a.body, good) {
		t.Fatal("the login's answer holds the token")
	}
	if cc := a.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("login's Cache-Control %q, want no-store", cc)
	}
	c := a.cookie()
	if c == nil {
		t.Fatalf("no %s cookie set: %v", CookieName, a.header["Set-Cookie"])
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure || c.Domain != "" || c.MaxAge != 0 || !c.Expires.IsZero() {
		t.Fatalf("cookie %q: want HttpOnly, SameSite=Strict, Path=/, no Domain or expiry, not Secure without TLS", a.header.Get("Set-Cookie"))
	}
	if strings.Contains(c.Value, good) || len(c.Value) != 43 {
		t.Fatalf("cookie value %q: want a 43-character random id, not the token", c.Value)
	}

	s := us.do("GET", "/ui/session", "", withCookie(c.Value))
	checkHeaders(t, "session", s)
	if s.code != http.StatusOK || s.json(t)["csrf"] != info["csrf"] || s.json(t)["name"] != "alice" {
		t.Fatalf("GET /ui/session: %d %s, want the login's name and csrf", s.code, s.body)
	}
	if s := us.do("GET", "/ui/session", "", nil); s.code != http.StatusUnauthorized || s.json(t)["code"] != "unauthorized" {
		t.Fatalf("GET /ui/session without a cookie: %d %s, want 401", s.code, s.body)
	}
	if s := us.do("GET", "/ui/session", "", withCookie("nosuchsession")); s.code != http.StatusUnauthorized || s.cookie() == nil || s.cookie().MaxAge >= 0 {
		t.Fatalf("GET /ui/session with an unknown cookie: %d %s %v, want 401 clearing the cookie", s.code, s.body, s.header["Set-Cookie"])
	}
	if n := us.limiter.count(); n != 0 {
		t.Fatalf("%d failures counted for session look-ups, want 0: a page asks at each load", n)
	}

	// Logout needs the CSRF value.
	for _, h := range []map[string]string{withCookie(c.Value), withCookie(c.Value, CSRFHeader, "wrong")} {
		l := us.do("POST", "/ui/logout", "", h)
		if l.code != http.StatusForbidden || l.json(t)["code"] != "csrf" {
			t.Fatalf("logout without the CSRF value: %d %s, want 403 csrf", l.code, l.body)
		}
	}
	if s := us.do("GET", "/ui/session", "", withCookie(c.Value)); s.code != http.StatusOK {
		t.Fatalf("a refused logout ended the session: %d", s.code)
	}
	l := us.do("POST", "/ui/logout", "", withCookie(c.Value, CSRFHeader, info["csrf"]))
	checkHeaders(t, "logout", l)
	if l.code != http.StatusNoContent || l.cookie() == nil || l.cookie().MaxAge >= 0 || !l.cookie().HttpOnly {
		t.Fatalf("logout: %d %v, want 204 clearing the cookie", l.code, l.header["Set-Cookie"])
	}
	if s := us.do("GET", "/ui/session", "", withCookie(c.Value)); s.code != http.StatusUnauthorized {
		t.Fatalf("session after logout: %d %s, want 401", s.code, s.body)
	}
	if n := us.sessions.Len(); n != 0 {
		t.Fatalf("%d sessions held after logout, want 0", n)
	}
	if l := us.do("POST", "/ui/logout", "", withCookie(c.Value)); l.code != http.StatusNoContent {
		t.Fatalf("logout without a session: %d, want 204", l.code)
	}

	// A second login from the same browser replaces its session.
	first := us.login(good).cookie().Value
	second := us.do("POST", "/ui/login", `{"token": "`+good+`"}`, withCookie(first))
	if second.code != http.StatusOK || us.sessions.Len() != 1 {
		t.Fatalf("second login: %d, %d sessions; want 200 and one session", second.code, us.sessions.Len())
	}
	if s := us.do("GET", "/ui/session", "", withCookie(first)); s.code != http.StatusUnauthorized {
		t.Fatal("the replaced session still opens")
	}
}

func TestLoginRefused(t *testing.T) {
	us := newUIServer(t, false, nil)
	good := us.token("bob", local.ScopeRead, nil)
	soon := *us.now.Load()
	soon = soon.Add(time.Hour)
	expiring := us.token("brief", local.ScopeRead, &soon)
	revoked := us.token("gone", local.ScopeAdmin, nil)
	if err := us.store.RevokeToken("gone"); err != nil {
		t.Fatal(err)
	}

	var first string
	for i, tok := range []string{"fsc_nosuchtoken", good + "x", revoked} {
		a := us.login(tok)
		checkHeaders(t, "bad login", a)
		if a.code != http.StatusUnauthorized || a.json(t)["code"] != "unauthorized" || a.cookie() != nil {
			t.Fatalf("login %d with a bad token: %d %s %v, want 401 without a cookie", i, a.code, a.body, a.header["Set-Cookie"])
		}
		if i == 0 {
			first = a.body
		} else if a.body != first {
			t.Errorf("login %d: 401 %s differs from %s: the reasons must not be told apart", i, a.body, first)
		}
	}
	if n := us.limiter.count(); n != 3 {
		t.Fatalf("%d failures counted, want the 3 bad logins", n)
	}

	// Malformed bodies are not guesses: 400 or 413, not counted.
	for body, want := range map[string]int{
		`{"token": ""}`: http.StatusBadRequest,
		`{}`:            http.StatusBadRequest,
		`not json`:      http.StatusBadRequest,
		`{"token": "` + strings.Repeat("x", 5000) + `"}`: http.StatusRequestEntityTooLarge,
	} {
		if a := us.do("POST", "/ui/login", body, nil); a.code != want || a.json(t)["code"] != "invalid" {
			t.Errorf("login with body %.40q: %d %s, want %d invalid", body, a.code, a.body, want)
		}
	}
	if n := us.limiter.count(); n != 3 {
		t.Fatalf("%d failures counted after malformed bodies, want still 3", n)
	}

	// An expiring token logs in; once expired, its login and its session are refused.
	a := us.login(expiring)
	if a.code != http.StatusOK {
		t.Fatalf("login with a token not yet expired: %d %s", a.code, a.body)
	}
	id := a.cookie().Value
	us.advance(2 * time.Hour)
	if a := us.login(expiring); a.code != http.StatusUnauthorized {
		t.Fatalf("login with an expired token: %d %s, want 401", a.code, a.body)
	}
	if s := us.do("GET", "/ui/session", "", withCookie(id)); s.code != http.StatusUnauthorized {
		t.Fatalf("the session of an expired token: %d %s, want 401", s.code, s.body)
	}
	if n := us.sessions.Len(); n != 0 {
		t.Fatalf("%d sessions held, want the expired token's ended", n)
	}

	// A revoked token ends its session at the next request.
	id = us.login(good).cookie().Value
	if err := us.store.RevokeToken("bob"); err != nil {
		t.Fatal(err)
	}
	if s := us.do("GET", "/ui/session", "", withCookie(id)); s.code != http.StatusUnauthorized {
		t.Fatalf("the session of a revoked token: %d %s, want 401", s.code, s.body)
	}

	// Past the limit, a login is refused before its token is looked at, a good one included.
	other := us.token("carol", local.ScopeRead, nil)
	us.limiter.mu.Lock()
	us.limiter.max = us.limiter.fails
	us.limiter.mu.Unlock()
	if a := us.login(other); a.code != http.StatusTooManyRequests || a.header.Get("Retry-After") != "3" || a.json(t)["code"] != "rate_limited" {
		t.Fatalf("login from a blocked client: %d %s Retry-After %q, want 429 with Retry-After 3", a.code, a.body, a.header.Get("Retry-After"))
	}
}

func TestLoginSecureCookieWithTLS(t *testing.T) {
	us := newUIServer(t, true, nil)
	a := us.login(us.token("tls", local.ScopeRead, nil))
	if a.code != http.StatusOK {
		t.Fatalf("login over TLS: %d %s", a.code, a.body)
	}
	c := a.cookie()
	if c == nil || !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie over TLS %v: want Secure, HttpOnly, SameSite=Strict", a.header["Set-Cookie"])
	}
	if !strings.HasPrefix(us.url, "https://") {
		t.Fatal("not a TLS server")
	}
}

// TestLoginUnavailable: before serve's store is open, a login answers 503 with Retry-After.
func TestLoginUnavailable(t *testing.T) {
	h, err := New(Config{Limiter: &countingLimiter{max: 10}, Sessions: NewSessions(SessionsConfig{}),
		Check: func(string, time.Time) (local.TokenInfo, error) { return local.TokenInfo{}, ErrUnavailable }})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer hs.Close()
	resp, err := http.Post(hs.URL+"/ui/login", "application/json", strings.NewReader(`{"token": "fsc_x"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("login while starting: %d Retry-After %q, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

var testAssets = fstest.MapFS{
	"assets/index.html":     {Data: []byte("<!doctype html><title>t</title><script type=module src=/ui/assets/app.js></script>")},
	"assets/app.js":         {Data: []byte("import './lib/graph.js';\n")},
	"assets/lib/graph.js":   {Data: []byte("export const x = 1;\n")},
	"assets/style.css":      {Data: []byte("body{}\n")},
	"assets/icon.svg":       {Data: []byte("<svg xmlns='http://www.w3.org/2000/svg'/>")},
	"assets/data.unknownxx": {Data: []byte{0, 1, 2}},
}

func TestAssetsAndPages(t *testing.T) {
	us := newUIServer(t, false, testAssets)
	for path, want := range map[string]string{
		"/ui/assets/app.js":         "text/javascript; charset=utf-8",
		"/ui/assets/lib/graph.js":   "text/javascript; charset=utf-8",
		"/ui/assets/style.css":      "text/css; charset=utf-8",
		"/ui/assets/icon.svg":       "image/svg+xml",
		"/ui/assets/data.unknownxx": "application/octet-stream",
	} {
		a := us.do("GET", path, "", nil)
		checkHeaders(t, path, a)
		name := strings.TrimPrefix(path, "/ui/")
		if a.code != http.StatusOK || a.body != string(testAssets[name].Data) {
			t.Errorf("GET %s: %d %q, want the file", path, a.code, a.body)
			continue
		}
		if ct := a.header.Get("Content-Type"); ct != want {
			t.Errorf("GET %s: Content-Type %q, want %q", path, ct, want)
		}
		sum := sha256.Sum256(testAssets[name].Data)
		etag := `"` + hex.EncodeToString(sum[:]) + `"`
		if a.header.Get("ETag") != etag || a.header.Get("Cache-Control") != "no-cache" {
			t.Errorf("GET %s: ETag %q, Cache-Control %q; want %s and no-cache", path, a.header.Get("ETag"), a.header.Get("Cache-Control"), etag)
		}
		again := us.do("GET", path, "", map[string]string{"If-None-Match": etag})
		if again.code != http.StatusNotModified || again.body != "" {
			t.Errorf("GET %s with its ETag: %d, want 304", path, again.code)
		}
		if stale := us.do("GET", path, "", map[string]string{"If-None-Match": `"old"`}); stale.code != http.StatusOK {
			t.Errorf("GET %s with another ETag: %d, want 200", path, stale.code)
		}
	}
	for _, path := range []string{"/ui/assets/nope.js", "/ui/assets/", "/ui/assets/lib", "/ui/assets/lib/"} {
		a := us.do("GET", path, "", nil)
		checkHeaders(t, path, a)
		if a.code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404 (not index.html: a missing script must show)", path, a.code)
		}
	}
	// Every page of the UI is index.html, its script draws it from the path.
	index := string(testAssets["assets/index.html"].Data)
	for _, path := range []string{"/ui/", "/ui/runs", "/ui/runs/01JC0000000000000000000000", "/ui/workflows/orders",
		"/ui/cluster", "/ui/login", "/ui/no/such/page?x=1"} {
		a := us.do("GET", path, "", nil)
		checkHeaders(t, path, a)
		if a.code != http.StatusOK || a.body != index {
			t.Errorf("GET %s: %d %q, want index.html", path, a.code, a.body)
		}
		if a.header.Get("Cache-Control") != "no-store" || a.header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Errorf("GET %s: Cache-Control %q, Content-Type %q; want no-store, text/html", path, a.header.Get("Cache-Control"), a.header.Get("Content-Type"))
		}
	}
	if a := us.do("HEAD", "/ui/runs", "", nil); a.code != http.StatusOK {
		t.Errorf("HEAD /ui/runs: %d", a.code)
	}
	for _, m := range []string{"POST", "PUT", "DELETE"} {
		a := us.do(m, "/ui/runs", "", nil)
		checkHeaders(t, m+" /ui/runs", a)
		if a.code != http.StatusMethodNotAllowed {
			t.Errorf("%s /ui/runs: %d, want 405", m, a.code)
		}
	}
	if a := us.do("GET", "/ui/login", "", nil); a.code != http.StatusOK || a.body != index {
		t.Errorf("GET /ui/login (the login page): %d, want index.html", a.code)
	}
	if a := us.do("POST", "/ui/session", "", nil); a.code != http.StatusMethodNotAllowed {
		t.Errorf("POST /ui/session: %d, want 405", a.code)
	}

	if _, err := New(Config{Check: func(string, time.Time) (local.TokenInfo, error) { return local.TokenInfo{}, nil },
		Limiter: &countingLimiter{}, Sessions: NewSessions(SessionsConfig{}), Assets: fstest.MapFS{"assets/app.js": {}}}); err == nil {
		t.Error("New took assets without index.html")
	}
}

// TestEmbeddedAssets: every embedded file is served, with a known type.
func TestEmbeddedAssets(t *testing.T) {
	us := newUIServer(t, false, nil)
	n := 0
	err := fs.WalkDir(Assets, assetsDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		a := us.do("GET", "/ui/"+p, "", nil)
		if a.code != http.StatusOK || a.header.Get("Content-Type") == "application/octet-stream" {
			t.Errorf("GET /ui/%s: %d %s, want 200 with a known type", p, a.code, a.header.Get("Content-Type"))
		}
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("walking the embedded assets: %d files, %v", n, err)
	}
}
