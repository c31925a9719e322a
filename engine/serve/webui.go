package serve

import (
	"log/slog"
	"net/http"
	"path"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fuscia/fuscia/engine/local"
	"github.com/fuscia/fuscia/engine/serve/ui"
)

// The web UI on serve's TCP listener (docs/ui.md, docs/security.md "Web UI sessions"): package
// ui serves it under /ui/ and logs users in; what it shares with the API's token check is here.
// A login checks its token with the API's checker and counts a bad one against the API's
// failure limit; a session's cookie then stands for its token on /v1/ (auth.go).

// webAuth is what the API's token check and the UI share. It is made by New and lives as long
// as the Server.
type webAuth struct {
	sessions *ui.Sessions
	limiter  *failureLimiter
	// auth is the API's token check once ServeAPI made it (the store is open); nil before.
	auth atomic.Pointer[tokenAuth]
}

func newWebAuth() *webAuth {
	return &webAuth{
		sessions: ui.NewSessions(ui.SessionsConfig{}),
		limiter:  newFailureLimiter(authFailBurst, authFailEvery, authMaxClients),
	}
}

// check checks a token as the API does; ui.ErrUnavailable until the store is open.
func (w *webAuth) check(token string, now time.Time) (local.TokenInfo, error) {
	a := w.auth.Load()
	if a == nil {
		return local.TokenInfo{}, ui.ErrUnavailable
	}
	return a.check(token, now)
}

// logger is the API's logger once ServeAPI made its token check (serve's logger is replaced
// when its store is open); before, a discarding one: no login is taken then.
func (w *webAuth) logger() *slog.Logger {
	if a := w.auth.Load(); a != nil {
		return a.logger
	}
	return slog.New(slog.DiscardHandler)
}

// Blocked and Failed make the API's failure limiter the UI's (ui.Limiter).
func (w *webAuth) Blocked(r *http.Request, now time.Time) (time.Duration, bool) {
	return w.limiter.blocked(clientKey(r.RemoteAddr), now)
}

func (w *webAuth) Failed(r *http.Request, now time.Time) {
	w.limiter.fail(clientKey(r.RemoteAddr), now)
}

// TCPConfig is what TCPHandler answers with.
type TCPConfig struct {
	// Guard is the browser guard's configuration (httpguard.go).
	Guard GuardConfig
	// UI serves the web UI under /ui/ and redirects GET / to it (serve -ui, on by default).
	// Without it /ui/ answers 404.
	UI bool
}

// isUIPath reports whether p, cleaned as the mux cleans it, is the UI's: /ui and under it. A
// webhook cannot take such a path (webhook.go), whether the UI is on or not, so that a
// workflow loads the same either way.
func isUIPath(p string) bool {
	c := path.Clean("/" + p)
	return c == "/ui" || strings.HasPrefix(c, "/ui/")
}

// TCPHandler is what -listen answers, outermost first: the UI's security headers on /ui/
// paths, the browser guard (httpguard.go), then the web UI under /ui/ (when cfg.UI) and
// Handler for every other path — readiness, and once the store is open the webhooks and,
// behind the API token check (auth.go, wired in ServeAPI), the API under /v1/. It fails only
// when the UI's embedded assets are broken.
func (s *Server) TCPHandler(cfg TCPConfig) (http.Handler, error) {
	front := s.Handler()
	mux := http.NewServeMux()
	if cfg.UI {
		h, err := ui.New(ui.Config{Check: s.web.check, Limiter: s.web, Sessions: s.web.sessions, Logger: s.web.logger})
		if err != nil {
			return nil, err
		}
		mux.Handle(ui.Prefix, h)
		mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
			if s.redirectsRoot(r) {
				http.Redirect(w, r, ui.Prefix, http.StatusFound)
				return
			}
			front.ServeHTTP(w, r)
		})
	} else {
		mux.HandleFunc(ui.Prefix, func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusNotFound, map[string]string{"code": "not_found",
				"error": "the web UI is off: this serve was started with -ui=false"})
		})
	}
	mux.Handle("/", front)
	guarded := Guard(cfg.Guard, mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requestUnder(r, isUIPath) {
			ui.SetHeaders(w.Header())
		}
		guarded.ServeHTTP(w, r)
	}), nil
}

// redirectsRoot reports whether r, a request for /, goes to the UI: a GET or HEAD once serve
// is ready, when no webhook holds / (a webhook's path is its own; while serve starts, / answers
// 503 as every webhook path does).
func (s *Server) redirectsRoot(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readinessLocked() == "" && s.hooks["/"] == nil
}
