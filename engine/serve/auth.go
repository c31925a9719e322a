package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/fuscia/fuscia/engine/local"
	"github.com/fuscia/fuscia/engine/serve/ui"
)

// Authentication of the API on serve's TCP listener (docs/security.md, "API tokens"). Every
// /v1/ request there but the health check carries `Authorization: Bearer TOKEN`, a token made
// by `fuscia token create`, whose scope covers the route (scopes.go) — or, from the web UI, the
// session cookie of a login with such a token (package ui), whose token is checked the same way
// and whose state-changing requests also carry the session's CSRF value. The unix socket is not
// wrapped: only its owner can connect to it. Webhooks are not under /v1/ and authenticate
// themselves (their HMAC).

// unauthorizedMessage is the body of every 401, whatever was wrong — no token, an unknown,
// revoked or expired one — so that an answer tells nothing about which names exist.
const unauthorizedMessage = "missing or invalid API token: send Authorization: Bearer TOKEN (create one with: fuscia token create NAME -scope read|operate|admin)"

// tokenAuth is the middleware requireToken returns.
type tokenAuth struct {
	next    http.Handler
	check   func(token string, now time.Time) (local.TokenInfo, error)
	scopes  scopeTable
	limiter *failureLimiter
	// sessions are the web UI's: a request without a Bearer token may present one's cookie.
	sessions *ui.Sessions
	logger   *slog.Logger
	now      func() time.Time
}

// requireToken wraps api, the owner's API as serve's TCP listener serves it, with the token
// check, which the web UI's login then uses too (webui.go). Tokens are read from the store at
// each request, so one created or revoked (through the socket) counts at once.
func (s *Server) requireToken(api http.Handler) http.Handler {
	checker := local.TokenChecker{Store: s.store, Logger: s.logger}
	a := &tokenAuth{
		next:     api,
		check:    checker.Check,
		scopes:   newScopeTable(),
		limiter:  s.web.limiter,
		sessions: s.web.sessions,
		logger:   s.logger,
		now:      time.Now, // not the schedules' clock: expiry times are real ones
	}
	s.web.auth.Store(a)
	return a
}

func (a *tokenAuth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	need := a.scopes.need(r)
	if need == public {
		// Open to anyone on the listener; what a public answer holds may still depend on
		// whether the caller showed a valid token (health's webhook paths). A wrong one is
		// neither refused nor counted here.
		now := a.now()
		presented, _, _ := a.credential(r, now)
		caller := "" // anonymous
		if presented != "" {
			if tok, err := a.check(presented, now); err == nil {
				caller = tok.Name
			}
		}
		ctx := context.WithValue(r.Context(), viaListenKey{}, caller)
		if caller != "" {
			ctx = local.WithCaller(ctx, caller)
		}
		a.next.ServeHTTP(w, r.WithContext(ctx))
		return
	}
	now := a.now()
	client := clientKey(r.RemoteAddr)
	if wait, blocked := a.limiter.blocked(client, now); blocked {
		secs := int(math.Ceil(wait.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		writeJSON(w, http.StatusTooManyRequests, map[string]string{
			"error": fmt.Sprintf("too many failed authentications from this address: retry in %d s", secs), "code": "rate_limited"})
		return
	}
	presented, bearer, session := a.credential(r, now)
	tok, err := a.check(presented, now)
	switch {
	case errors.Is(err, local.ErrUnauthenticated):
		if session != nil {
			// Revoked or expired since the login: its sessions end with it.
			a.sessions.End(session)
		}
		// Only a credential presented counts as a failed guess: a request without one (a web
		// page's fetch, a CORS preflight) must not let any page the operator opens lock the
		// operator out.
		if bearer || hasCookie(r, ui.CookieName) {
			a.limiter.fail(client, now)
		}
		// Never the token presented: a near miss is still a secret.
		a.logger.Warn("API request refused: missing or invalid token", "remote_addr", r.RemoteAddr, "method", r.Method, "path", r.URL.Path)
		w.Header().Set("WWW-Authenticate", `Bearer realm="fuscia"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": unauthorizedMessage, "code": "unauthorized"})
		return
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": local.InternalError(a.logger, r, "cannot check the API token", err, "remote_addr", r.RemoteAddr), "code": "internal"})
		return
	}
	if session != nil && !ui.SafeMethod(r.Method) && !session.CheckCSRF(r.Header.Get(ui.CSRFHeader)) {
		// A page of another site may get the browser to send the cookie; never this value.
		a.logger.Warn("API request refused: a session's state change without its CSRF value", "remote_addr", r.RemoteAddr, "method", r.Method, "path", r.URL.Path, "token", tok.Name)
		ui.WriteCSRFError(w)
		return
	}
	if !tok.Scope.Allows(need) {
		a.logger.Warn("API request refused: the token's scope does not cover it", "remote_addr", r.RemoteAddr, "method", r.Method, "path", r.URL.Path, "token", tok.Name, "scope", tok.Scope, "needs", need)
		writeJSON(w, http.StatusForbidden, map[string]string{
			"error": fmt.Sprintf("token %q has scope %s; %s %s needs %s", tok.Name, tok.Scope, r.Method, r.URL.Path, need), "code": "forbidden"})
		return
	}
	a.next.ServeHTTP(w, r.WithContext(local.WithCaller(r.Context(), tok.Name)))
}

// credential is the token r presents: its Bearer token, else the token of the UI session its
// cookie names (session then set), else "".
func (a *tokenAuth) credential(r *http.Request, now time.Time) (presented string, bearer bool, session *ui.Session) {
	presented, bearer = bearerToken(r.Header.Get("Authorization"))
	if !bearer {
		if sess, ok := a.sessions.FromRequest(r, now); ok {
			session, presented = sess, sess.Token()
		}
	}
	return presented, bearer, session
}

// viaListenKey marks a public request that came through serve's TCP listener (requireToken),
// as opposed to the owner's unix socket, whose peers are the owner's own user; its value is
// the name of the valid token it showed, "" for none.
type viaListenKey struct{}

// anonymousOnListen says whether r came through the TCP listener without a valid token.
func anonymousOnListen(r *http.Request) bool {
	caller, via := r.Context().Value(viaListenKey{}).(string)
	return via && caller == ""
}

// hasCookie says whether r carries a cookie name, whatever its value.
func hasCookie(r *http.Request, name string) bool {
	_, err := r.Cookie(name)
	return err == nil
}

// bearerToken reads the token of an `Authorization: Bearer TOKEN` header (the scheme is
// case-insensitive, RFC 6750).
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// Loopback reports whether listen (serve's -listen, host:port) only takes connections from
// this machine: its host is localhost or a loopback address (127.0.0.0/8, ::1). An empty host
// (":8080") listens on every interface; any other name may resolve to one that others reach.
// serve refuses to listen elsewhere while no API token exists.
func Loopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
