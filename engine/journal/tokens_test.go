package journal

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestTokens(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	hashA, hashB := strings.Repeat("a", 64), strings.Repeat("b", 64)
	created := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	exp := created.Add(time.Hour)
	if toks, err := s.Tokens(); err != nil || len(toks) != 0 {
		t.Fatalf("empty store: %v, %v", toks, err)
	}
	if err := s.CreateToken(Token{Name: "zed", Scope: "read", Hash: hashA, CreatedAt: created}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateToken(Token{Name: "ci-bot", Scope: "operate", Hash: hashB, CreatedAt: created, ExpiresAt: &exp}); err != nil {
		t.Fatal(err)
	}
	// A second token with a name or a hash already taken.
	if err := s.CreateToken(Token{Name: "zed", Scope: "admin", Hash: strings.Repeat("c", 64)}); !errors.Is(err, ErrTokenExists) {
		t.Fatalf("a duplicate name: %v, want ErrTokenExists", err)
	}
	if err := s.CreateToken(Token{Name: "other", Scope: "admin", Hash: hashA}); !errors.Is(err, ErrTokenExists) {
		t.Fatalf("a duplicate hash: %v, want ErrTokenExists", err)
	}
	for _, bad := range []Token{{Name: "a/b", Hash: hashA}, {Name: "", Hash: hashA}, {Name: "x", Hash: ""}} {
		if err := s.CreateToken(bad); err == nil {
			t.Errorf("CreateToken(%+v) took it", bad)
		}
	}

	toks, err := s.Tokens()
	if err != nil || len(toks) != 2 || toks[0].Name != "ci-bot" || toks[1].Name != "zed" {
		t.Fatalf("Tokens: %+v, %v; want ci-bot and zed, by name", toks, err)
	}
	if toks[0].ExpiresAt == nil || !toks[0].ExpiresAt.Equal(exp) || toks[1].ExpiresAt != nil {
		t.Errorf("expiry not kept: %+v", toks)
	}

	got, ok, err := s.TokenByHash(hashB)
	if err != nil || !ok || got.Name != "ci-bot" || got.Scope != "operate" {
		t.Fatalf("TokenByHash: %+v, %v, %v", got, ok, err)
	}
	if _, ok, err := s.TokenByHash(strings.Repeat("d", 64)); ok || err != nil {
		t.Fatalf("an unknown hash: %v, %v", ok, err)
	}
	if _, ok, _ := s.TokenByHash("ci-bot"); ok {
		t.Fatal("a name found a token where a hash is wanted")
	}

	used := created.Add(time.Minute)
	if err := s.TouchToken("ci-bot", hashB, used); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchToken("ci-bot", hashA, used); err != nil { // another token's hash: left alone
		t.Fatal(err)
	}
	if got, _, _ := s.TokenByHash(hashB); got.LastUsedAt == nil || !got.LastUsedAt.Equal(used) {
		t.Fatalf("last use not recorded: %+v", got)
	}
	if got, _, _ := s.TokenByHash(hashA); got.LastUsedAt != nil {
		t.Fatalf("a touch with another token's hash changed zed: %+v", got)
	}

	// Durable: a reopened store has them.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir)
	defer closeStore(t, s)
	if got, ok, _ := s.TokenByHash(hashA); !ok || got.Name != "zed" {
		t.Fatalf("after reopen: %+v, %v", got, ok)
	}

	if err := s.RevokeToken("zed"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.TokenByHash(hashA); ok {
		t.Fatal("a revoked token is still found by its hash")
	}
	if err := s.RevokeToken("zed"); !errors.Is(err, ErrTokenNotFound) {
		t.Fatalf("revoking it again: %v, want ErrTokenNotFound", err)
	}
	// A touch of a revoked token does not bring its record back.
	if err := s.TouchToken("zed", hashA, used); err != nil {
		t.Fatal(err)
	}
	if toks, _ := s.Tokens(); len(toks) != 1 || toks[0].Name != "ci-bot" {
		t.Fatalf("after the revocation: %+v", toks)
	}
	// The name is free again, with another hash.
	if err := s.CreateToken(Token{Name: "zed", Scope: "admin", Hash: hashA}); err != nil {
		t.Fatalf("a revoked name cannot be reused: %v", err)
	}
}

// TestCreateTokenRace: of concurrent creations of one name, exactly one wins.
func TestCreateTokenRace(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer closeStore(t, s)
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.CreateToken(Token{Name: "same", Scope: "read", Hash: strings.Repeat(string(rune('a'+i)), 64)})
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrTokenExists):
			t.Errorf("unexpected error: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d creations of one name succeeded, want 1: %v", won, errs)
	}
}
