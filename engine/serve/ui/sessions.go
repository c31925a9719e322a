package ui

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"sync"
	"time"
)

// Sessions (docs/security.md, "Web UI sessions"): a login exchanges an API token for a random
// session id, which the browser keeps in an HttpOnly cookie. The session keeps the token in
// memory and nothing else of it: every request made with the session checks the token again, as
// a Bearer request does, so a revoked or expired token ends its sessions at the next request.
// Sessions live in memory only: a restart of serve ends them all (the user logs in again).

// CookieName is the session cookie's name.
const CookieName = "fuscia_session"

// CSRFHeader carries a session's CSRF value on the requests that change state: a page of
// another site can make the browser send the cookie (were SameSite to fail), never this header
// with the right value, which only a page that read /ui/session or /ui/login knows.
const CSRFHeader = "X-Fuscia-CSRF"

// Defaults of SessionsConfig.
const (
	DefaultIdleTTL     = 12 * time.Hour
	DefaultMaxSessions = 10000
)

// secretBytes is the size of a session id and of a CSRF value: 256 random bits.
const secretBytes = 32

// sweepEvery is how often creating a session also drops every expired one, so that sessions no
// one uses again do not keep their tokens in memory until the cap evicts them.
const sweepEvery = time.Minute

// SessionsConfig configures a Sessions. The zero value of each field means its default.
type SessionsConfig struct {
	// IdleTTL ends a session not used for that long (default 12 h).
	IdleTTL time.Duration
	// Max caps the sessions held (default 10,000); a login past it ends the session used
	// longest ago.
	Max int
}

// Sessions is the in-memory store of the UI's sessions. It is safe for concurrent use.
type Sessions struct {
	ttl time.Duration
	max int

	mu        sync.Mutex
	byID      map[[sha256.Size]byte]*Session // by the SHA-256 of the id; guarded by mu
	lastSweep time.Time                      // guarded by mu
}

// Session is one login. Its fields never change once made but lastUsed, which its Sessions
// guards.
type Session struct {
	key   [sha256.Size]byte // the SHA-256 of its id: the map's key
	token string            // the API token logged in with: checked again at each use
	csrf  string
	// lastUsed is when a request last used it; guarded by the Sessions' mu.
	lastUsed time.Time
}

// NewSessions returns an empty store.
func NewSessions(cfg SessionsConfig) *Sessions {
	if cfg.IdleTTL <= 0 {
		cfg.IdleTTL = DefaultIdleTTL
	}
	if cfg.Max <= 0 {
		cfg.Max = DefaultMaxSessions
	}
	return &Sessions{ttl: cfg.IdleTTL, max: cfg.Max, byID: map[[sha256.Size]byte]*Session{}}
}

// Token is the API token the session logged in with.
func (s *Session) Token() string { return s.token }

// CSRF is the value the session's state-changing requests carry in CSRFHeader.
func (s *Session) CSRF() string { return s.csrf }

// CheckCSRF reports whether v, a request's CSRFHeader, is the session's CSRF value (compared
// in constant time).
func (s *Session) CheckCSRF(v string) bool {
	return v != "" && subtle.ConstantTimeCompare([]byte(v), []byte(s.csrf)) == 1
}

// randomSecret is 256 bits from crypto/rand, base64url without padding (43 characters).
func randomSecret() string {
	b := make([]byte, secretBytes)
	// crypto/rand.Read never fails on the systems Go supports (it panics rather than return
	// a short read since Go 1.24).
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Create makes a session for token at now and returns it with its id, the cookie's value.
// At the cap it first drops the expired sessions, then the one used longest ago.
func (ss *Sessions) Create(token string, now time.Time) (id string, s *Session) {
	id = randomSecret()
	s = &Session{key: sha256.Sum256([]byte(id)), token: token, csrf: randomSecret(), lastUsed: now}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if now.Sub(ss.lastSweep) >= sweepEvery {
		ss.sweepLocked(now)
	}
	if len(ss.byID) >= ss.max {
		ss.sweepLocked(now)
		for len(ss.byID) >= ss.max {
			ss.evictOldestLocked()
		}
	}
	ss.byID[s.key] = s
	return id, s
}

// Get returns the session of id when it exists and has been used within the idle TTL, and
// marks it used at now. An expired session is dropped.
func (ss *Sessions) Get(id string, now time.Time) (*Session, bool) {
	if id == "" {
		return nil, false
	}
	key := sha256.Sum256([]byte(id))
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.byID[key]
	if s == nil {
		return nil, false
	}
	if ss.expiredLocked(s, now) {
		delete(ss.byID, key)
		return nil, false
	}
	if now.After(s.lastUsed) {
		s.lastUsed = now
	}
	return s, true
}

// maxSessionCookies bounds how many cookies of CookieName a request's are looked up.
const maxSessionCookies = 4

// FromRequest returns the session r's cookie names (Get). A browser sends every cookie of that
// name its jar holds for the host, and cookies are not kept apart by port: another service on
// 127.0.0.1 may have set one first. So each of the first few is tried, not only the first,
// and a decoy does not log the operator out.
func (ss *Sessions) FromRequest(r *http.Request, now time.Time) (*Session, bool) {
	tried := 0
	for _, c := range r.CookiesNamed(CookieName) {
		if s, ok := ss.Get(c.Value, now); ok {
			return s, true
		}
		if tried++; tried == maxSessionCookies {
			break
		}
	}
	return nil, false
}

// End ends s: its id opens nothing from now on. Ending a session already ended does nothing.
func (ss *Sessions) End(s *Session) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.byID[s.key] == s {
		delete(ss.byID, s.key)
	}
}

// Len is the number of sessions held, expired ones not yet dropped included.
func (ss *Sessions) Len() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.byID)
}

func (ss *Sessions) expiredLocked(s *Session, now time.Time) bool {
	return now.Sub(s.lastUsed) >= ss.ttl
}

// sweepLocked drops the expired sessions. Called with mu held.
func (ss *Sessions) sweepLocked(now time.Time) {
	ss.lastSweep = now
	for k, s := range ss.byID {
		if ss.expiredLocked(s, now) {
			delete(ss.byID, k)
		}
	}
}

// evictOldestLocked drops the session used longest ago. Called with mu held.
func (ss *Sessions) evictOldestLocked() {
	var oldest *Session
	for _, s := range ss.byID {
		if oldest == nil || s.lastUsed.Before(oldest.lastUsed) {
			oldest = s
		}
	}
	if oldest != nil {
		delete(ss.byID, oldest.key)
	}
}
