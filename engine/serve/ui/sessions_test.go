package ui

import (
	"net/http/httptest"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func TestSessionsCreateGetEnd(t *testing.T) {
	ss := NewSessions(SessionsConfig{})
	id, s := ss.Create("fsc_tok", t0)
	if len(id) != 43 || len(s.CSRF()) != 43 || id == s.CSRF() {
		t.Fatalf("id %q and csrf %q: want two different 43-character base64url secrets", id, s.CSRF())
	}
	id2, s2 := ss.Create("fsc_tok", t0)
	if id2 == id || s2.CSRF() == s.CSRF() {
		t.Fatal("two sessions share an id or a CSRF value")
	}
	got, ok := ss.Get(id, t0.Add(time.Hour))
	if !ok || got != s || got.Token() != "fsc_tok" {
		t.Fatalf("Get(id) = %v, %v; want the session", got, ok)
	}
	for _, bad := range []string{"", id + "x", id[:42], s.CSRF()} {
		if _, ok := ss.Get(bad, t0); ok {
			t.Errorf("Get(%q) found a session", bad)
		}
	}
	if !s.CheckCSRF(s.CSRF()) || s.CheckCSRF("") || s.CheckCSRF(s2.CSRF()) || s.CheckCSRF(s.CSRF()+"x") {
		t.Error("CheckCSRF accepts another value or refuses the session's")
	}
	ss.End(s)
	ss.End(s) // twice: nothing
	if _, ok := ss.Get(id, t0); ok {
		t.Fatal("an ended session is still found")
	}
	if _, ok := ss.Get(id2, t0); !ok {
		t.Fatal("ending one session ended another")
	}

	r := httptest.NewRequest("GET", "/v1/executions", nil)
	r.Header.Set("Cookie", CookieName+"="+id2)
	if got, ok := ss.FromRequest(r, t0); !ok || got != s2 {
		t.Fatal("FromRequest does not find the cookie's session")
	}
	if _, ok := ss.FromRequest(httptest.NewRequest("GET", "/", nil), t0); ok {
		t.Fatal("FromRequest found a session without a cookie")
	}
	// Another service on the host set a cookie of the same name first (cookies are not kept
	// apart by port): the browser sends both, and the decoy does not hide the session.
	r = httptest.NewRequest("GET", "/v1/executions", nil)
	r.Header.Set("Cookie", CookieName+"=decoy; "+CookieName+"="+id2)
	if got, ok := ss.FromRequest(r, t0); !ok || got != s2 {
		t.Fatal("FromRequest does not find the session behind a decoy cookie")
	}
}

// TestSessionsIdleTTL: a session ends once unused for the TTL; each use starts it again.
func TestSessionsIdleTTL(t *testing.T) {
	ss := NewSessions(SessionsConfig{IdleTTL: time.Hour})
	id, _ := ss.Create("fsc_tok", t0)
	if _, ok := ss.Get(id, t0.Add(59*time.Minute)); !ok {
		t.Fatal("a session used within its TTL has ended")
	}
	// Used at 0:59, so alive until 1:59.
	if _, ok := ss.Get(id, t0.Add(118*time.Minute)); !ok {
		t.Fatal("a use did not extend the session")
	}
	if _, ok := ss.Get(id, t0.Add(178*time.Minute)); ok {
		t.Fatal("a session unused for its TTL is still found")
	}
	if n := ss.Len(); n != 0 {
		t.Fatalf("%d sessions held after the expired one was looked up, want 0", n)
	}
	// Default: 12 hours.
	def := NewSessions(SessionsConfig{})
	id, _ = def.Create("fsc_tok", t0)
	if _, ok := def.Get(id, t0.Add(DefaultIdleTTL-time.Second)); !ok {
		t.Fatal("default TTL: ended before 12 h")
	}
	if _, ok := def.Get(id, t0.Add(2*DefaultIdleTTL)); ok {
		t.Fatal("default TTL: alive after 12 h unused")
	}
}

// TestSessionsCap: at the cap, a login first drops the expired sessions, then the one used
// longest ago; expired sessions are also swept once a minute on a login.
func TestSessionsCap(t *testing.T) {
	ss := NewSessions(SessionsConfig{IdleTTL: time.Hour, Max: 3})
	a, _ := ss.Create("a", t0)
	b, _ := ss.Create("b", t0.Add(time.Second))
	c, _ := ss.Create("c", t0.Add(2*time.Second))
	ss.Get(a, t0.Add(3*time.Second)) // a is now the most recently used; b the least
	d, _ := ss.Create("d", t0.Add(4*time.Second))
	if n := ss.Len(); n != 3 {
		t.Fatalf("%d sessions held, want the cap of 3", n)
	}
	if _, ok := ss.Get(b, t0.Add(5*time.Second)); ok {
		t.Fatal("the session used longest ago survived the cap")
	}
	for _, id := range []string{a, c, d} {
		if _, ok := ss.Get(id, t0.Add(5*time.Second)); !ok {
			t.Fatal("a session used more recently was evicted")
		}
	}

	// Many logins stay within the cap.
	big := NewSessions(SessionsConfig{Max: 100})
	for i := range 1000 {
		big.Create("t", t0.Add(time.Duration(i)*time.Millisecond))
	}
	if n := big.Len(); n != 100 {
		t.Fatalf("%d sessions held, want 100", n)
	}

	// Expired sessions are swept by a later login, cap or not.
	sw := NewSessions(SessionsConfig{IdleTTL: time.Hour, Max: 100})
	for range 10 {
		sw.Create("t", t0)
	}
	sw.Create("t", t0.Add(2*time.Hour))
	if n := sw.Len(); n != 1 {
		t.Fatalf("%d sessions held after a login two hours later, want 1 (the expired ones swept)", n)
	}
}
