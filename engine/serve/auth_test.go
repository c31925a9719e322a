package serve

import (
	"context"
	"encoding/json"
	"github.com/fuscia/fuscia/engine/internal/runtime/builtins"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/lang"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/local"
	"github.com/fuscia/fuscia/internal/syncbuf"
	"github.com/fuscia/fuscia/lang/builtin"
)

// registeredRoutes reads the /v1/ route patterns the API's muxes register — every
// `X.HandleFunc("METHOD /v1/…", …)` and `X.Handle(…)` with a literal pattern in engine/local
// and in this package — from the source, so that a route added anywhere is seen.
func registeredRoutes(t *testing.T) map[string]string {
	t.Helper()
	routes := map[string]string{} // pattern → where
	for _, dir := range []string{".", "../local"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) < 2 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "HandleFunc" && sel.Sel.Name != "Handle") {
					return true
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				pattern, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				method, path, hasMethod := strings.Cut(pattern, " ")
				if !hasMethod {
					path, method = pattern, ""
				}
				if !strings.HasPrefix(path, "/v1/") || pattern == "/v1/" {
					return true
				}
				where := fset.Position(lit.Pos()).String()
				if method == "" {
					t.Errorf("%s: route %q has no method: give it one, so that its scope is one of routeScopes' entries", where, pattern)
				}
				routes[pattern] = where
				return true
			})
		}
	}
	return routes
}

// TestRouteScopesCoverRoutes: every /v1/ route of the API has its scope in routeScopes, and the
// table names no route that does not exist.
func TestRouteScopesCoverRoutes(t *testing.T) {
	routes := registeredRoutes(t)
	if len(routes) < 15 {
		t.Fatalf("found only %d routes in the source (%v): the scan is broken", len(routes), routes)
	}
	for pattern, where := range routes {
		if _, ok := routeScopes[pattern]; !ok {
			t.Errorf("%s: route %q has no scope: add it to routeScopes (scopes.go) with the scope it needs", where, pattern)
		}
	}
	for pattern := range routeScopes {
		if _, ok := routes[pattern]; !ok {
			t.Errorf("routeScopes names %q, which no mux registers: remove it", pattern)
		}
	}
	for pattern, s := range routeScopes {
		if s != public && s != local.ScopeRead && s != local.ScopeOperate && s != local.ScopeAdmin {
			t.Errorf("routeScopes[%q] is %q, not a scope", pattern, s)
		}
		if method, _, _ := strings.Cut(pattern, " "); method != http.MethodGet && (s == local.ScopeRead || s == public) {
			t.Errorf("routeScopes[%q] is %q: only a GET reads", pattern, s)
		}
	}
}

func TestScopeTableNeed(t *testing.T) {
	st := newScopeTable()
	for _, tc := range []struct {
		method, path string
		want         local.Scope
	}{
		{"GET", "/v1/health", public},
		{"HEAD", "/v1/health", public},
		{"POST", "/v1/health", local.ScopeAdmin},
		{"GET", "/v1/executions", local.ScopeRead},
		{"GET", "/v1/executions/01ABC", local.ScopeRead},
		{"HEAD", "/v1/executions/01ABC/logs", local.ScopeRead},
		{"GET", "/v1/executions/01ABC/artifacts/sha256-x", local.ScopeRead},
		{"GET", "/v1/executions/01ABC/timeline", local.ScopeRead},
		{"GET", "/v1/executions/01ABC/nodes/loop.l/task.a[1]", local.ScopeRead},
		{"GET", "/v1/workflows/orders/graph", local.ScopeRead},
		{"POST", "/v1/executions/01ABC/nodes/task.a", local.ScopeAdmin},
		{"POST", "/v1/executions/01ABC/signal", local.ScopeOperate},
		{"POST", "/v1/executions/01ABC/cancel", local.ScopeOperate},
		{"POST", "/v1/executions/01ABC/resume", local.ScopeOperate},
		{"POST", "/v1/workflows/orders/runs", local.ScopeOperate},
		{"DELETE", "/v1/executions/01ABC/artifacts", local.ScopeAdmin},
		{"POST", "/v1/prune", local.ScopeAdmin},
		{"GET", "/v1/tokens", local.ScopeAdmin},
		{"DELETE", "/v1/tokens/ci", local.ScopeAdmin},
		{"POST", "/v1/apply", local.ScopeAdmin},
		{"GET", "/v1/nosuch", local.ScopeAdmin},
		{"PUT", "/v1/executions", local.ScopeAdmin},
	} {
		if got := st.need(httptest.NewRequest(tc.method, tc.path, nil)); got != tc.want {
			t.Errorf("%s %s needs %q, want %q", tc.method, tc.path, got, tc.want)
		}
	}
}

func TestScopeAllows(t *testing.T) {
	for _, tc := range []struct {
		has, need local.Scope
		want      bool
	}{
		{local.ScopeRead, local.ScopeRead, true},
		{local.ScopeRead, local.ScopeOperate, false},
		{local.ScopeRead, local.ScopeAdmin, false},
		{local.ScopeOperate, local.ScopeRead, true},
		{local.ScopeOperate, local.ScopeOperate, true},
		{local.ScopeOperate, local.ScopeAdmin, false},
		{local.ScopeAdmin, local.ScopeAdmin, true},
		{local.ScopeAdmin, local.ScopeRead, true},
		{"superuser", local.ScopeRead, false}, // an unknown scope may do nothing
		{"", local.ScopeRead, false},
	} {
		if got := tc.has.Allows(tc.need); got != tc.want {
			t.Errorf("%q.Allows(%q) = %v, want %v", tc.has, tc.need, got, tc.want)
		}
	}
}

func TestFailureLimiter(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	l := newFailureLimiter(10, 6*time.Second, 3)
	for i := range 10 {
		if _, blocked := l.blocked("a", now); blocked {
			t.Fatalf("blocked after %d failures, want after 10", i)
		}
		l.fail("a", now)
	}
	wait, blocked := l.blocked("a", now)
	if !blocked || wait != 6*time.Second {
		t.Fatalf("after 10 failures: blocked %v, wait %s; want blocked for 6s", blocked, wait)
	}
	if _, blocked := l.blocked("b", now); blocked {
		t.Fatal("another client is blocked too")
	}
	now = now.Add(3 * time.Second)
	if wait, blocked := l.blocked("a", now); !blocked || wait != 3*time.Second {
		t.Fatalf("3s later: blocked %v, wait %s; want 3s more", blocked, wait)
	}
	now = now.Add(3 * time.Second)
	if _, blocked := l.blocked("a", now); blocked {
		t.Fatal("still blocked once a failure refilled")
	}
	l.fail("a", now)
	if _, blocked := l.blocked("a", now); !blocked {
		t.Fatal("not blocked again after one more failure")
	}

	// Bounded: a fourth client evicts the one that failed longest ago.
	l.fail("b", now.Add(time.Second))
	l.fail("c", now.Add(2*time.Second))
	l.fail("d", now.Add(3*time.Second))
	if n := l.len(); n != 3 {
		t.Fatalf("%d clients tracked, want at most 3", n)
	}
	if _, blocked := l.blocked("a", now.Add(3*time.Second)); blocked {
		t.Fatal("the oldest client was not the one evicted")
	}
	// Refilled buckets go first.
	later := now.Add(time.Hour)
	l.fail("e", later)
	if n := l.len(); n != 1 {
		t.Fatalf("%d clients tracked after the others refilled, want 1", n)
	}

	big := newFailureLimiter(10, 6*time.Second, 100)
	for i := range 5000 {
		big.fail("client-"+strconv.Itoa(i), now)
	}
	if n := big.len(); n > 100 {
		t.Fatalf("%d clients tracked, over the bound of 100", n)
	}
}

func TestClientKey(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:5555":       "127.0.0.0/8", // one machine holds the whole of it
		"127.0.1.7:5555":       "127.0.0.0/8",
		"[::ffff:127.0.0.9]:1": "127.0.0.0/8",
		"10.1.2.3:80":          "10.1.2.3",
		"[::ffff:10.0.0.1]:80": "10.0.0.1",
		"[2001:db8::1]:80":     "2001:db8::/64",
		"[2001:db8::ffff]:81":  "2001:db8::/64",
		"[2001:db8:0:1::1]:81": "2001:db8:0:1::/64",
		"not an address":       "not an address",
	} {
		if got := clientKey(addr); got != want {
			t.Errorf("clientKey(%q) = %q, want %q", addr, got, want)
		}
	}
}

func TestBearerToken(t *testing.T) {
	for header, want := range map[string]string{
		"Bearer fsc_abc":     "fsc_abc",
		"bearer fsc_abc":     "fsc_abc",
		"BEARER  fsc_abc ":   "fsc_abc",
		"Basic dXNlcjpwdw==": "",
		"Bearer":             "",
		"Bearer ":            "",
		"":                   "",
		"fsc_abc":            "",
	} {
		if got, _ := bearerToken(header); got != want {
			t.Errorf("bearerToken(%q) = %q, want %q", header, got, want)
		}
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080":       true,
		"127.5.6.7:0":          true,
		"localhost:8080":       true,
		"LocalHost:1":          true,
		"[::1]:8080":           true,
		"[::ffff:127.0.0.1]:1": true,
		"0.0.0.0:0":            false,
		":8080":                false,
		"[::]:8080":            false,
		"10.0.0.1:80":          false,
		"example.com:80":       false,
		"127.0.0.1":            false, // no port: not an address serve can listen on
	} {
		if got := Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// authServer is a Server with the owner's whole API (engine/local's routes and serve's) on a
// real store, its TCP Handler on a real HTTP listener, as `fuscia serve` composes them.
type authServer struct {
	t      *testing.T
	home   string
	url    string
	client *http.Client
	logs   *syncbuf.Buffer
}

func newAuthServer(t *testing.T) *authServer {
	t.Helper()
	return newAuthServerWith(t, map[string]string{"w.fsc.hcl": `workflow "w" {}
trigger "manual" "start" {}
task "t" {
  uses   = builtin.transform
  inputs = { x = 1 }
}
`}, func(s *Server) http.Handler { return s.Handler() }, false)
}

// newAuthServerWith serves the workflow files (name → source) with the listener's handler
// that handler makes of the Server, over TLS when tlsOn.
func newAuthServerWith(t *testing.T, files map[string]string, handler func(*Server) http.Handler, tlsOn bool) *authServer {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	home, err := os.MkdirTemp("", "fsc-auth")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(home) })
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	srv := New(Config{Paths: []string{dir}, ReloadInterval: time.Hour,
		Load: func(_ context.Context, file string, _ []byte) (*engine.Program, error) { return loadProgram(file) }})
	runner := builtin.New(builtin.Options{})
	owner, err := local.Own(context.Background(), local.OwnerConfig{
		Home: home, Extend: srv.RegisterAPI, Signaled: srv.Signaled,
		NewEngine: func(st *journal.Store, arts artifact.Store) *engine.Engine {
			return engine.New(engine.Config{Store: st, Tasks: task.ByKind{lang.UsesBuiltin: builtins.New(runner)}, Artifacts: arts,
				ParkWaits: true, OnRunEnd: srv.RunEnded})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.Attach(owner.Engine, owner.Store)
	srv.SetLogger(logger)
	srv.ServeAPI(owner.Handler())
	if _, err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(handler(srv))
	if tlsOn {
		hs.StartTLS()
	} else {
		hs.Start()
	}
	t.Cleanup(func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Stop(ctx)
		owner.Engine.Wait()
		runner.Close()
		if err := owner.Close(); err != nil {
			t.Errorf("close the owner: %v", err)
		}
	})
	return &authServer{t: t, home: home, url: hs.URL, client: hs.Client(), logs: logs}
}

// token creates a token through the owner's socket, as `fuscia token create` does.
func (as *authServer) token(name string, scope local.Scope, ttl time.Duration) string {
	as.t.Helper()
	b, err := local.OpenBackend(context.Background(), as.home, nil)
	if err != nil {
		as.t.Fatal(err)
	}
	defer b.Close()
	tok, err := b.CreateToken(context.Background(), name, scope, ttl)
	if err != nil {
		as.t.Fatal(err)
	}
	return tok.Token
}

func (as *authServer) revoke(name string) {
	as.t.Helper()
	b, err := local.OpenBackend(context.Background(), as.home, nil)
	if err != nil {
		as.t.Fatal(err)
	}
	defer b.Close()
	if err := b.RevokeToken(context.Background(), name); err != nil {
		as.t.Fatal(err)
	}
}

type authAnswer struct {
	code       int
	body       string
	authHeader string
	retryAfter string
}

func (as *authServer) do(method, path, token, body string) authAnswer {
	as.t.Helper()
	req, err := http.NewRequest(method, as.url+path, strings.NewReader(body))
	if err != nil {
		as.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := as.client.Do(req)
	if err != nil {
		as.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return authAnswer{code: resp.StatusCode, body: string(b), authHeader: resp.Header.Get("WWW-Authenticate"), retryAfter: resp.Header.Get("Retry-After")}
}

func TestTokenAuthOverHTTP(t *testing.T) {
	as := newAuthServer(t)
	read := as.token("reader", local.ScopeRead, 0)
	operate := as.token("operator", local.ScopeOperate, 0)
	admin := as.token("root", local.ScopeAdmin, 0)

	if a := as.do("GET", "/v1/health", "", ""); a.code != http.StatusOK {
		t.Errorf("GET /v1/health without a token: %d %s, want 200", a.code, a.body)
	}
	// No token, a made-up one, and a real one's near miss: the same 401.
	var first string
	for i, tok := range []string{"", "fsc_nosuchtoken", read + "x"} {
		a := as.do("GET", "/v1/executions", tok, "")
		if a.code != http.StatusUnauthorized || a.authHeader == "" || !strings.HasPrefix(a.authHeader, "Bearer") {
			t.Errorf("token %d: %d %q %s, want 401 with WWW-Authenticate: Bearer", i, a.code, a.authHeader, a.body)
		}
		if i == 0 {
			first = a.body
		} else if a.body != first {
			t.Errorf("token %d: 401 body %s differs from the one without a token %s", i, a.body, first)
		}
	}
	var eb map[string]string
	if err := json.Unmarshal([]byte(first), &eb); err != nil || eb["error"] == "" {
		t.Errorf("401 body %s is not {\"error\": …}", first)
	}

	if a := as.do("GET", "/v1/executions", read, ""); a.code != http.StatusOK {
		t.Errorf("read token, GET: %d %s", a.code, a.body)
	}
	if a := as.do("POST", "/v1/workflows/w/runs", read, "{}"); a.code != http.StatusForbidden {
		t.Errorf("read token, start a run: %d %s, want 403", a.code, a.body)
	}
	a := as.do("POST", "/v1/workflows/w/runs", operate, "{}")
	if a.code != http.StatusAccepted {
		t.Fatalf("operate token, start a run: %d %s, want 202", a.code, a.body)
	}
	// A payload no run could keep is refused before one starts (bounds.CheckJSON).
	for _, payload := range []string{`{"id": 1e10000000}`, strings.Repeat("[", 9990) + strings.Repeat("]", 9990)} {
		if a := as.do("POST", "/v1/workflows/w/runs", operate, `{"payload": `+payload+`}`); a.code != http.StatusBadRequest || !strings.Contains(a.body, "does not take") {
			t.Errorf("start a run with the payload %.30s…: %d %.200s, want 400", payload, a.code, a.body)
		}
		// And a signal's data, which the journal keeps as it keeps a payload.
		var started struct {
			ID string `json:"execution_id"`
		}
		_ = json.Unmarshal([]byte(a.body), &started)
		if a := as.do("POST", "/v1/executions/"+started.ID+"/signal", operate, `{"node": "wait.w", "data": `+payload+`}`); a.code != http.StatusBadRequest || !strings.Contains(a.body, "does not take") {
			t.Errorf("a signal with the data %.30s…: %d %.200s, want 400", payload, a.code, a.body)
		}
	}
	if a := as.do("POST", "/v1/prune", operate, `{"completed_before": "2000-01-01T00:00:00Z"}`); a.code != http.StatusForbidden {
		t.Errorf("operate token, prune: %d %s, want 403", a.code, a.body)
	}
	if a := as.do("POST", "/v1/prune", admin, `{"completed_before": "2000-01-01T00:00:00Z"}`); a.code != http.StatusOK {
		t.Errorf("admin token, prune: %d %s, want 200", a.code, a.body)
	}
	if a := as.do("GET", "/v1/tokens", admin, ""); a.code != http.StatusOK || strings.Contains(a.body, read) || strings.Contains(a.body, "sha256") {
		t.Errorf("admin token, list tokens: %d %s, want 200 without secrets or hashes", a.code, a.body)
	}

	// A revocation counts at once.
	as.revoke("reader")
	if a := as.do("GET", "/v1/executions", read, ""); a.code != http.StatusUnauthorized || a.body != first {
		t.Errorf("revoked token: %d %s, want the same 401", a.code, a.body)
	}
	// An expired token.
	short := as.token("short", local.ScopeRead, time.Millisecond)
	deadline := time.Now().Add(30 * time.Second)
	for {
		a := as.do("GET", "/v1/executions", short, "")
		if a.code == http.StatusUnauthorized && a.body == first {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a token past its expiry still answers %d %s", a.code, a.body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	logs := as.logs.String()
	if !strings.Contains(logs, `"remote_addr":"127.0.0.1:`) || !strings.Contains(logs, "missing or invalid token") {
		t.Errorf("the refusals are not logged with the remote address:\n%s", logs)
	}
	if strings.Contains(logs, "fsc_nosuchtoken") || strings.Contains(logs, read) {
		t.Errorf("a presented token was logged:\n%s", logs)
	}
}

// TestTokenAuthRateLimit: after 10 failures from one address, its requests are answered 429
// with Retry-After, even with a valid token, until the bucket refills.
func TestTokenAuthRateLimit(t *testing.T) {
	as := newAuthServer(t)
	good := as.token("good", local.ScopeRead, 0)
	// Requests without a credential (what any web page can make the browser send) are refused
	// without counting as guesses: they must not lock the operator out.
	for range 3 * authFailBurst {
		if a := as.do("GET", "/v1/executions", "", ""); a.code != http.StatusUnauthorized {
			t.Fatalf("a request without a token: %d %s, want 401", a.code, a.body)
		}
	}
	if a := as.do("GET", "/v1/executions", good, ""); a.code != http.StatusOK {
		t.Fatalf("a valid token after requests without one: %d %s, want 200", a.code, a.body)
	}
	limited := -1
	for i := range 20 {
		a := as.do("GET", "/v1/executions", "fsc_guess"+strconv.Itoa(i), "")
		if a.code == http.StatusTooManyRequests {
			if secs, err := strconv.Atoi(a.retryAfter); err != nil || secs < 1 {
				t.Errorf("429 with Retry-After %q, want a number of seconds", a.retryAfter)
			}
			limited = i
			break
		}
		if a.code != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d %s", i, a.code, a.body)
		}
	}
	if limited != authFailBurst {
		t.Fatalf("the first 429 came at guess %d, want %d", limited, authFailBurst)
	}
	if a := as.do("GET", "/v1/executions", good, ""); a.code != http.StatusTooManyRequests {
		t.Errorf("a valid token from a blocked address: %d %s, want 429", a.code, a.body)
	}
	if a := as.do("GET", "/v1/health", "", ""); a.code != http.StatusOK {
		t.Errorf("the health check from a blocked address: %d, want 200", a.code)
	}
}

// TestLoadTLS: both files or neither, and each wrong file named.
func TestLoadTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeSelfSigned(t, dir, "a")
	cert2, key2 := writeSelfSigned(t, dir, "b")
	if c, err := LoadTLS("", ""); c != nil || err != nil {
		t.Fatalf("neither: %v, %v", c, err)
	}
	if c, err := LoadTLS(cert, key); err != nil || c == nil || len(c.Certificates) != 1 {
		t.Fatalf("a good pair: %v", err)
	}
	for _, tc := range []struct {
		cert, key string
		want      []string
	}{
		{cert, "", []string{"-tls-cert needs -tls-key"}},
		{"", key, []string{"-tls-key needs -tls-cert"}},
		{filepath.Join(dir, "nope.pem"), key, []string{"-tls-cert", "nope.pem"}},
		{cert, filepath.Join(dir, "nope.key"), []string{"-tls-key", "nope.key"}},
		{key, key, []string{key, "no PEM certificate"}},
		{cert, cert, []string{cert, "no usable PEM private key"}},
		{cert, key2, []string{key2, "is not the key of the certificate in", cert}},
		{cert2, key, []string{key, cert2}},
	} {
		_, err := LoadTLS(tc.cert, tc.key)
		if err == nil {
			t.Errorf("LoadTLS(%q, %q) took them", tc.cert, tc.key)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("LoadTLS(%q, %q): %v; want it to say %q", tc.cert, tc.key, err, w)
			}
		}
	}
}
