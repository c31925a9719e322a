package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/fuscia/fuscia/engine/local"
)

// The session endpoints (docs/reference/api.md, "Web UI sessions"):
//
//	POST /ui/login  {"token": "fsc_…"} → 200 {"name", "scope", "csrf"} and the session cookie
//	GET  /ui/session                   → 200 {"name", "scope", "csrf"}, or 401
//	POST /ui/logout (X-Fuscia-CSRF)    → 204 and the cookie cleared

// maxLoginBody bounds a login's body: a token is 47 characters.
const maxLoginBody = 4 << 10

// retryAfterStarting is the Retry-After, in seconds, of a 503 while serve starts.
const retryAfterStarting = "1"

// SessionInfo is what /ui/login and /ui/session answer: who the session acts as, and the
// value its state-changing requests carry in CSRFHeader.
type SessionInfo struct {
	Name  string      `json:"name"`
	Scope local.Scope `json:"scope"`
	CSRF  string      `json:"csrf"`
}

type loginRequest struct {
	Token string `json:"token"`
}

// login exchanges a token for a session. A bad token counts against the client's failures as
// on the API; a client out of failures is refused (429) before its token is looked at.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	now := h.cfg.Now()
	if wait, blocked := h.cfg.Limiter.Blocked(r, now); blocked {
		secs := int(math.Ceil(wait.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		writeError(w, http.StatusTooManyRequests, "rate_limited", fmt.Sprintf("too many failed authentications from this address: retry in %d s", secs))
		return
	}
	var req loginRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxLoginBody)).Decode(&req); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, "invalid", fmt.Sprintf("the body is over %d bytes: send {\"token\": \"fsc_…\"}", maxLoginBody))
			return
		}
		writeError(w, http.StatusBadRequest, "invalid", `the body is not a JSON object {"token": "fsc_…"}: `+err.Error())
		return
	}
	token := strings.TrimSpace(req.Token)
	if token == "" {
		writeError(w, http.StatusBadRequest, "invalid", `no token: send {"token": "fsc_…"}, a token made by: fuscia token create NAME -scope read|operate|admin`)
		return
	}
	info, err := h.cfg.Check(token, now)
	if err != nil {
		if errors.Is(err, local.ErrUnauthenticated) {
			h.cfg.Limiter.Failed(r, now)
			// Never the token presented: a near miss is still a secret.
			h.cfg.Logger().Warn("UI login refused: invalid token", "remote_addr", r.RemoteAddr)
		}
		h.checkFailed(w, err)
		return
	}
	// A login from a browser that holds a session replaces it.
	if old, ok := h.cfg.Sessions.FromRequest(r, now); ok {
		h.cfg.Sessions.End(old)
	}
	id, s := h.cfg.Sessions.Create(token, now)
	http.SetCookie(w, sessionCookie(r, id))
	h.cfg.Logger().Info("UI login", "token", info.Name, "scope", info.Scope, "remote_addr", r.RemoteAddr)
	writeSession(w, info, s)
}

// session tells the page who it is logged in as, and its CSRF value; 401 without a session
// (the page then shows the login form). It does not count failures: a browser whose session
// ended asks it at each page load.
func (h *Handler) session(w http.ResponseWriter, r *http.Request) {
	now := h.cfg.Now()
	s, ok := h.cfg.Sessions.FromRequest(r, now)
	if !ok {
		h.noSession(w, r)
		return
	}
	info, err := h.cfg.Check(s.Token(), now)
	if errors.Is(err, local.ErrUnauthenticated) {
		// Revoked or expired since the login: the session ends with it.
		h.cfg.Sessions.End(s)
		h.noSession(w, r)
		return
	}
	if err != nil {
		h.checkFailed(w, err)
		return
	}
	writeSession(w, info, s)
}

// logout ends the session. It needs the session's CSRF value, so that another page cannot
// log the user out; without a session there is nothing to end, and it answers 204 as well.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	s, ok := h.cfg.Sessions.FromRequest(r, h.cfg.Now())
	if ok && !s.CheckCSRF(r.Header.Get(CSRFHeader)) {
		WriteCSRFError(w)
		return
	}
	if ok {
		h.cfg.Sessions.End(s)
	}
	if _, err := r.Cookie(CookieName); err == nil {
		http.SetCookie(w, clearedCookie(r))
	}
	w.WriteHeader(http.StatusNoContent)
}

// noSession answers 401 to a request without a live session, clearing a cookie that names none.
func (h *Handler) noSession(w http.ResponseWriter, r *http.Request) {
	if _, err := r.Cookie(CookieName); err == nil {
		http.SetCookie(w, clearedCookie(r))
	}
	writeError(w, http.StatusUnauthorized, "unauthorized", "not logged in: log in with an API token (fuscia token create NAME -scope read|operate|admin)")
}

// checkFailed answers a token check that failed.
func (h *Handler) checkFailed(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, local.ErrUnauthenticated):
		writeError(w, http.StatusUnauthorized, "unauthorized", "invalid API token: it is unknown, revoked or expired; create one with: fuscia token create NAME -scope read|operate|admin")
	case errors.Is(err, ErrUnavailable):
		w.Header().Set("Retry-After", retryAfterStarting)
		writeError(w, http.StatusServiceUnavailable, "starting", err.Error())
	default:
		h.cfg.Logger().Error("UI: cannot check a token", "error", err)
		writeError(w, http.StatusInternalServerError, "internal", "cannot check the API token: "+err.Error())
	}
}

// sessionCookie is the cookie that carries session id: the browser sends it to this server only
// (no Domain), to every path (the API is under /v1/), never to a script (HttpOnly), never on a
// request another site starts (SameSite=Strict), and over HTTPS only when serve answers HTTPS.
// It has no expiry: it ends with the browser, or sooner with the session.
func sessionCookie(r *http.Request, id string) *http.Cookie {
	return &http.Cookie{Name: CookieName, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil}
}

// clearedCookie tells the browser to drop the session cookie.
func clearedCookie(r *http.Request) *http.Cookie {
	c := sessionCookie(r, "")
	c.MaxAge = -1
	return c
}

func writeSession(w http.ResponseWriter, info local.TokenInfo, s *Session) {
	// The CSRF value is the session's: no cache may keep it.
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, SessionInfo{Name: info.Name, Scope: info.Scope, CSRF: s.CSRF()})
}

// WriteCSRFError answers 403 {"code": "csrf"} to a request made with a session cookie that
// changes state without the session's CSRF value.
func WriteCSRFError(w http.ResponseWriter) {
	writeError(w, http.StatusForbidden, "csrf", "a request made with the session cookie that changes state must carry the session's CSRF value in "+CSRFHeader+" (GET /ui/session gives it)")
}

// SafeMethod reports whether method only reads, and so needs no CSRF value.
func SafeMethod(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	return false
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]string{"error": msg, "code": code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
