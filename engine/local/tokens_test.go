package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
)

func TestCheckTokenName(t *testing.T) {
	for name, ok := range map[string]bool{
		"ci-bot":                true,
		"CI_bot.2":              true,
		"a":                     true,
		strings.Repeat("x", 64): true,
		strings.Repeat("x", 65): false,
		"":                      false,
		"-dash":                 false,
		".dot":                  false,
		"has space":             false,
		"slash/name":            false,
		"é":                     false,
		"local":                 false, // answered_by's name for the socket
		"LOCAL":                 false,
		"localhost":             true,
		"name\x00":              false,
	} {
		err := CheckTokenName(name)
		if (err == nil) != ok {
			t.Errorf("CheckTokenName(%q) = %v, want ok %v", name, err, ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidToken) {
			t.Errorf("CheckTokenName(%q) = %v, not ErrInvalidToken", name, err)
		}
	}
}

func TestParseScope(t *testing.T) {
	for _, s := range []string{"read", "operate", "admin"} {
		if got, err := ParseScope(s); err != nil || string(got) != s {
			t.Errorf("ParseScope(%q) = %q, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "Admin", "write", "root"} {
		if _, err := ParseScope(s); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("ParseScope(%q) = %v, want ErrInvalidToken", s, err)
		}
	}
}

// TestTokensDirect: without an owner, token create opens (and, in a new home, creates) the
// store; the secret has its format and is kept only as a hash; the checker finds it, counts
// its expiry, records its use at most once a minute and forgets it once revoked.
func TestTokensDirect(t *testing.T) {
	home := filepath.Join(shortHome(t), "new-home")
	ctx := context.Background()
	b, err := OpenBackend(ctx, home, nil)
	if err != nil {
		t.Fatal(err)
	}
	if toks, err := b.Tokens(ctx); err != nil || len(toks) != 0 {
		t.Fatalf("a home without a store: %v, %v", toks, err)
	}
	tok, err := b.CreateToken(ctx, "ci", ScopeOperate, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok.Token, TokenPrefix) || len(tok.Token) != len(TokenPrefix)+43 || tok.Scope != ScopeOperate || tok.ExpiresAt != nil {
		t.Fatalf("created %+v: want fsc_ and 43 base64url characters, scope operate, no expiry", tok)
	}
	if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the home a token creation made: %v %v, want mode 0700", fi, err)
	}
	if _, err := b.CreateToken(ctx, "ci", ScopeRead, 0); !errors.Is(err, ErrTokenExists) {
		t.Fatalf("a second token named ci: %v, want ErrTokenExists", err)
	}
	if _, err := b.CreateToken(ctx, "local", ScopeRead, 0); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("a token named local: %v, want ErrInvalidToken", err)
	}
	short, err := b.CreateToken(ctx, "short", ScopeRead, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if short.ExpiresAt == nil || time.Until(*short.ExpiresAt) > time.Hour || time.Until(*short.ExpiresAt) < 59*time.Minute {
		t.Fatalf("expires_at %v, want an hour from now", short.ExpiresAt)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	st, err := journal.Open(filepath.Join(home, stateDirName), journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stored, _ := st.Tokens()
	for _, s := range stored {
		if s.Hash == "" || strings.Contains(s.Hash, tok.Token) || strings.Contains(s.Hash, short.Token) {
			t.Fatalf("stored %+v: want the hash, never the token", s)
		}
	}
	check := TokenChecker{Store: st}
	now := time.Now()
	info, err := check.Check(tok.Token, now)
	if err != nil || info.Name != "ci" || info.Scope != ScopeOperate {
		t.Fatalf("Check: %+v, %v", info, err)
	}
	toks, _ := st.Tokens()
	if toks[0].Name != "ci" || toks[0].LastUsedAt == nil {
		t.Fatalf("the use was not recorded: %+v", toks[0])
	}
	firstUse := *toks[0].LastUsedAt
	if _, err := check.Check(tok.Token, now.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if toks, _ := st.Tokens(); !toks[0].LastUsedAt.Equal(firstUse) {
		t.Fatalf("a use 10s later was recorded (%v): at most one a minute", toks[0].LastUsedAt)
	}
	if _, err := check.Check(tok.Token, now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if toks, _ := st.Tokens(); !toks[0].LastUsedAt.After(firstUse) {
		t.Fatalf("a use 2 minutes later was not recorded: %v", toks[0].LastUsedAt)
	}
	for what, presented := range map[string]string{"empty": "", "unknown": TokenPrefix + "nope", "a near miss": tok.Token[:len(tok.Token)-1]} {
		if _, err := check.Check(presented, now); !errors.Is(err, ErrUnauthenticated) {
			t.Errorf("%s: %v, want ErrUnauthenticated", what, err)
		}
	}
	if _, err := check.Check(short.Token, now.Add(59*time.Minute)); err != nil {
		t.Errorf("before its expiry: %v", err)
	}
	if _, err := check.Check(short.Token, now.Add(61*time.Minute)); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("after its expiry: %v, want ErrUnauthenticated", err)
	}
	if err := st.RevokeToken("ci"); err != nil {
		t.Fatal(err)
	}
	if _, err := check.Check(tok.Token, now); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("revoked: %v, want ErrUnauthenticated", err)
	}
}

// TestTokensThroughOwner: with an owner, the token operations go through its socket, with
// their errors intact.
func TestTokensThroughOwner(t *testing.T) {
	home := shortHome(t)
	ctx := context.Background()
	o, err := Own(ctx, OwnerConfig{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	b, err := OpenBackend(ctx, home, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, ok := b.(*client); !ok {
		t.Fatalf("backend %T, want the owner's API", b)
	}
	tok, err := b.CreateToken(ctx, "ops", ScopeAdmin, 30*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if tok.ExpiresAt == nil || tok.Scope != ScopeAdmin || !strings.HasPrefix(tok.Token, TokenPrefix) {
		t.Fatalf("created %+v", tok)
	}
	if _, err := b.CreateToken(ctx, "ops", ScopeRead, 0); !errors.Is(err, ErrTokenExists) {
		t.Fatalf("duplicate through the socket: %v, want ErrTokenExists", err)
	}
	if _, err := b.CreateToken(ctx, "bad name", ScopeRead, 0); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("bad name through the socket: %v, want ErrInvalidToken", err)
	}
	toks, err := b.Tokens(ctx)
	if err != nil || len(toks) != 1 || toks[0].Name != "ops" || toks[0].Scope != ScopeAdmin {
		t.Fatalf("Tokens: %+v, %v", toks, err)
	}
	// The owner's checker sees it at once, and no longer once revoked.
	check := TokenChecker{Store: o.Store}
	if _, err := check.Check(tok.Token, time.Now()); err != nil {
		t.Fatalf("the owner does not see the new token: %v", err)
	}
	if err := b.RevokeToken(ctx, "ops"); err != nil {
		t.Fatal(err)
	}
	if _, err := check.Check(tok.Token, time.Now()); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("the owner still takes a revoked token: %v", err)
	}
	if err := b.RevokeToken(ctx, "ops"); !errors.Is(err, ErrNoToken) {
		t.Fatalf("revoking an unknown name: %v, want ErrNoToken", err)
	}
}

func TestCaller(t *testing.T) {
	ctx := context.Background()
	if got := Caller(ctx); got != LocalCaller {
		t.Errorf("Caller without a token: %q, want local", got)
	}
	if got := Caller(WithCaller(ctx, "ci-bot")); got != "ci-bot" {
		t.Errorf("Caller with a token: %q, want ci-bot", got)
	}
}
