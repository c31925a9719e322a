package local

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/journal"
)

// API tokens (docs/security.md, "API tokens") authenticate the requests serve's TCP listener
// takes on /v1/. The owner's socket needs none: only its owner can connect to it.
//
// A token is TokenPrefix and 256 random bits, base64url: a secret no one guesses, so the store
// keeps its SHA-256 only (a slow password hash protects low-entropy secrets; it would add
// nothing here but the cost of every request). The token itself is shown once, when created.

// TokenPrefix starts every token, so that a secret scanner (or a person) recognises one.
const TokenPrefix = "fsc_"

// tokenBytes is the random part of a token: 256 bits.
const tokenBytes = 32

// LocalCaller is who a request on the owner's socket, or a command on a store it opened
// itself, acts as: it answers waits as "local".
const LocalCaller = "local"

// Scope is what a token may do on the TCP API. Each scope includes the ones before it.
type Scope string

const (
	// ScopeRead may read: every GET.
	ScopeRead Scope = "read"
	// ScopeOperate may also start, cancel, resume and signal runs.
	ScopeOperate Scope = "operate"
	// ScopeAdmin may do everything: also prune, delete artifacts and manage tokens.
	ScopeAdmin Scope = "admin"
)

// Scopes lists the scopes from the least to the most powerful.
func Scopes() []Scope { return []Scope{ScopeRead, ScopeOperate, ScopeAdmin} }

// rank orders the scopes; an unknown scope (a newer writer's) is 0 and may do nothing.
func (s Scope) rank() int {
	for i, known := range Scopes() {
		if s == known {
			return i + 1
		}
	}
	return 0
}

// Allows reports whether a token of scope s may do what needs scope need.
func (s Scope) Allows(need Scope) bool {
	return s.rank() > 0 && s.rank() >= need.rank()
}

// ParseScope reads a scope name.
func ParseScope(v string) (Scope, error) {
	if s := Scope(v); s.rank() > 0 {
		return s, nil
	}
	return "", fmt.Errorf("%w: unknown scope %q: use read, operate or admin", ErrInvalidToken, v)
}

var (
	// ErrTokenExists is returned by CreateToken for a name a token already has.
	ErrTokenExists = journal.ErrTokenExists
	// ErrNoToken is returned by RevokeToken for a name no token has.
	ErrNoToken = journal.ErrTokenNotFound
	// ErrInvalidToken is returned for a token name, scope or lifetime that is not valid.
	ErrInvalidToken = errors.New("invalid token request")
	// ErrUnauthenticated is returned by TokenChecker.Check for a token that is not (or no
	// longer) valid, whatever the reason: unknown, revoked or expired.
	ErrUnauthenticated = errors.New("missing or invalid API token")
)

// maxTokenName bounds a token's name: it is shown in lists and journaled with each answer.
const maxTokenName = 64

// CheckTokenName reports whether name may name a token: 1 to 64 letters, digits, '.', '_' or
// '-', starting with a letter or a digit, and not "local" (which names the socket in
// answered_by).
func CheckTokenName(name string) error {
	if name == "" || len(name) > maxTokenName {
		return fmt.Errorf("%w: a token name has 1 to %d characters, not %d", ErrInvalidToken, maxTokenName, len(name))
	}
	for i, r := range name {
		letterOrDigit := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if letterOrDigit || i > 0 && (r == '.' || r == '_' || r == '-') {
			continue
		}
		return fmt.Errorf("%w: token name %q: use letters, digits, '.', '_' and '-', starting with a letter or a digit", ErrInvalidToken, name)
	}
	if strings.EqualFold(name, LocalCaller) {
		return fmt.Errorf("%w: %q is reserved: it names the owner's socket as who answered a wait", ErrInvalidToken, name)
	}
	return nil
}

// TokenInfo is what is shown of a token: never the token or its hash.
type TokenInfo struct {
	Name       string     `json:"name"`
	Scope      Scope      `json:"scope"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
}

// NewToken is a token just created: the only time its secret is shown.
type NewToken struct {
	Name      string     `json:"name"`
	Token     string     `json:"token"`
	Scope     Scope      `json:"scope"`
	ExpiresAt *time.Time `json:"expires_at"`
}

func tokenInfo(t journal.Token) TokenInfo {
	return TokenInfo{Name: t.Name, Scope: Scope(t.Scope), CreatedAt: t.CreatedAt, ExpiresAt: t.ExpiresAt, LastUsedAt: t.LastUsedAt}
}

// hashToken is the hex SHA-256 the store keeps of a token.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// CreateToken makes a token named name with scope scope, valid for ttl (0: until revoked),
// stores its hash and returns it. Errors wrap ErrInvalidToken or ErrTokenExists.
func (o *ops) CreateToken(_ context.Context, name string, scope Scope, ttl time.Duration) (NewToken, error) {
	if err := CheckTokenName(name); err != nil {
		return NewToken{}, err
	}
	if _, err := ParseScope(string(scope)); err != nil {
		return NewToken{}, err
	}
	if ttl < 0 {
		return NewToken{}, fmt.Errorf("%w: a token's lifetime cannot be negative", ErrInvalidToken)
	}
	raw := make([]byte, tokenBytes)
	if _, err := rand.Read(raw); err != nil {
		return NewToken{}, fmt.Errorf("create token %q: %w", name, err)
	}
	secret := TokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
	now := time.Now().UTC()
	rec := journal.Token{Name: name, Scope: string(scope), Hash: hashToken(secret), CreatedAt: now}
	if ttl > 0 {
		exp := now.Add(ttl)
		rec.ExpiresAt = &exp
	}
	if err := o.st.CreateToken(rec); err != nil {
		return NewToken{}, err
	}
	return NewToken{Name: name, Token: secret, Scope: scope, ExpiresAt: rec.ExpiresAt}, nil
}

// Tokens lists the tokens, by name.
func (o *ops) Tokens(_ context.Context) ([]TokenInfo, error) {
	out := []TokenInfo{}
	if o.st == nil {
		return out, nil
	}
	toks, err := o.st.Tokens()
	if err != nil {
		return nil, err
	}
	for _, t := range toks {
		out = append(out, tokenInfo(t))
	}
	return out, nil
}

// RevokeToken deletes the token named name: from its return on, it opens nothing. Errors wrap
// ErrNoToken.
func (o *ops) RevokeToken(_ context.Context, name string) error {
	if o.st == nil {
		return fmt.Errorf("token %q: %w", name, ErrNoToken)
	}
	return o.st.RevokeToken(name)
}

// touchEvery is how stale a token's last_used_at may get: recording every use would cost a
// durable write per request.
const touchEvery = time.Minute

// TokenChecker checks the tokens presented to serve's TCP API against the store.
type TokenChecker struct {
	Store *journal.Store
	// Logger receives the failures to record a token's last use (the request goes on).
	Logger *slog.Logger
}

// Check returns the token presented, or an error wrapping ErrUnauthenticated when it is not a
// valid token now (unknown, revoked, or expired at now) — the reasons are not told apart, so
// that a caller learns nothing about which names exist. Any other error is the store's.
//
// The token is found by its hash, never by a name the client gives, and the stored hash is
// compared with the presented one's in constant time: a timing difference could only tell the
// client about the hash of a secret it chose, which does not help it find another's.
func (c TokenChecker) Check(presented string, now time.Time) (TokenInfo, error) {
	if presented == "" {
		return TokenInfo{}, ErrUnauthenticated
	}
	h := hashToken(presented)
	t, ok, err := c.Store.TokenByHash(h)
	if err != nil {
		return TokenInfo{}, err
	}
	if !ok || subtle.ConstantTimeCompare([]byte(t.Hash), []byte(h)) != 1 {
		return TokenInfo{}, ErrUnauthenticated
	}
	if t.ExpiresAt != nil && !now.Before(*t.ExpiresAt) {
		return TokenInfo{}, ErrUnauthenticated
	}
	info := tokenInfo(t)
	if info.Scope.rank() == 0 {
		return TokenInfo{}, ErrUnauthenticated
	}
	if t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) >= touchEvery {
		if err := c.Store.TouchToken(t.Name, h, now); err != nil && c.Logger != nil {
			c.Logger.Warn("cannot record a token's last use", "token", t.Name, "error", err)
		}
	}
	return info, nil
}

type callerKey struct{}

// WithCaller returns ctx for a request made with the API token named name (serve's TCP
// listener sets it once the token is checked).
func WithCaller(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, callerKey{}, name)
}

// Caller is who a request acts as: the name of its API token, or LocalCaller when it came
// without one (the owner's socket, or a command on a store it opened itself).
func Caller(ctx context.Context) string {
	if name, ok := ctx.Value(callerKey{}).(string); ok && name != "" {
		return name
	}
	return LocalCaller
}

// createStore creates the home (private to its user) and its store for a command that must
// write to it when nobody had: a token created before serve's first start.
func (d *direct) createStore() error {
	if err := os.MkdirAll(d.home, 0o700); err != nil {
		return fmt.Errorf("create the fuscia home: %w", err)
	}
	st, err := openJournal(filepath.Join(d.home, stateDirName), journal.Options{Logger: d.logger})
	if err != nil {
		if errors.Is(err, journal.ErrLocked) {
			return busyError(d.home, err)
		}
		return err
	}
	d.ops = &ops{st: st, artifacts: artifact.NewDir(filepath.Join(d.home, artifactsName))}
	return nil
}

func (d *direct) CreateToken(ctx context.Context, name string, scope Scope, ttl time.Duration) (NewToken, error) {
	if err := d.acquire(ctx); err != nil {
		return NewToken{}, err
	}
	if d.remote != nil {
		return d.remote.CreateToken(ctx, name, scope, ttl)
	}
	if d.ops.st == nil {
		if err := d.createStore(); err != nil {
			return NewToken{}, err
		}
	}
	return d.ops.CreateToken(ctx, name, scope, ttl)
}

func (d *direct) Tokens(ctx context.Context) ([]TokenInfo, error) {
	if err := d.acquire(ctx); err != nil {
		return nil, err
	}
	if d.remote != nil {
		return d.remote.Tokens(ctx)
	}
	return d.ops.Tokens(ctx)
}

func (d *direct) RevokeToken(ctx context.Context, name string) error {
	if err := d.acquire(ctx); err != nil {
		return err
	}
	if d.remote != nil {
		return d.remote.RevokeToken(ctx, name)
	}
	return d.ops.RevokeToken(ctx, name)
}
