package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// API tokens (docs/security.md, "API tokens") are kept in the store of the home whose API they
// open, so that the process owning the store sees a token the moment it is created or revoked.
// The store keeps what the engine/local package gives it: a name, a scope and the SHA-256 of the
// token, never the token. Two keys per token, written and deleted together:
//
//	tok/n/<name>          the Token record, JSON
//	tok/h/<sha256 hex>    the name: the record is found by the hash of what a client presents
const (
	tokenNamePrefix = "tok/n/"
	tokenHashPrefix = "tok/h/"
)

var (
	// ErrTokenExists is returned by CreateToken for a name a token already has.
	ErrTokenExists = errors.New("a token with this name already exists")
	// ErrTokenNotFound is returned by RevokeToken for a name no token has.
	ErrTokenNotFound = errors.New("no token with this name")
)

// Token is the stored record of an API token.
type Token struct {
	Name  string `json:"name"`
	Scope string `json:"scope"`
	// Hash is the hex SHA-256 of the token.
	Hash      string     `json:"sha256"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// LastUsedAt is updated by TouchToken (at most about once a minute: see engine/local).
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
}

// checkTokenKey rejects what would make the token keys ambiguous; the rules a user sees
// (characters, length) are engine/local's.
func checkTokenKey(what, v string) error {
	if v == "" || strings.ContainsAny(v, "/\x00") {
		return fmt.Errorf("invalid token %s %q", what, v)
	}
	return nil
}

// CreateToken stores t under its name and hash, durably. It fails with ErrTokenExists when a
// token already has t's name (or, which 256 random bits make impossible, its hash).
func (s *Store) CreateToken(t Token) error {
	if err := errors.Join(checkTokenKey("name", t.Name), checkTokenKey("hash", t.Hash)); err != nil {
		return err
	}
	rec, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("encode token %q: %w", t.Name, err)
	}
	// tokMu makes the look and the write one step against other creations and revocations.
	s.tokMu.Lock()
	defer s.tokMu.Unlock()
	exists := false
	err = s.view(func(txn *badger.Txn) error {
		for _, k := range []string{tokenNamePrefix + t.Name, tokenHashPrefix + t.Hash} {
			_, err := txn.Get([]byte(k))
			if err == nil {
				exists = true
				return nil
			}
			if !errors.Is(err, badger.ErrKeyNotFound) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("create token %q: %w", t.Name, err)
	}
	if exists {
		return fmt.Errorf("token %q: %w", t.Name, ErrTokenExists)
	}
	return s.tokenWrite("create", t.Name,
		op{key: []byte(tokenNamePrefix + t.Name), value: rec},
		op{key: []byte(tokenHashPrefix + t.Hash), value: []byte(t.Name)})
}

// Tokens returns every token, sorted by name.
func (s *Store) Tokens() ([]Token, error) {
	out := []Token{}
	err := s.view(func(txn *badger.Txn) error {
		prefix := []byte(tokenNamePrefix)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			v, err := s.valueCopy(it.Item())
			if err != nil {
				return err
			}
			var t Token
			if err := json.Unmarshal(v, &t); err != nil {
				return fmt.Errorf("decode token %s: %w", it.Item().Key(), err)
			}
			out = append(out, t)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// TokenByHash returns the token whose hash is hash (hex SHA-256), and whether there is one. A
// hash index entry whose record is gone or names another hash (a write cut short) is no token.
func (s *Store) TokenByHash(hash string) (Token, bool, error) {
	if checkTokenKey("hash", hash) != nil {
		return Token{}, false, nil
	}
	var t Token
	found := false
	err := s.view(func(txn *badger.Txn) error {
		var err error
		t, found, err = s.tokenByHash(txn, hash)
		return err
	})
	if err != nil {
		return Token{}, false, fmt.Errorf("look up a token: %w", err)
	}
	return t, found, nil
}

func (s *Store) tokenByHash(txn *badger.Txn, hash string) (Token, bool, error) {
	name, ok, err := s.getValue(txn, tokenHashPrefix+hash)
	if err != nil || !ok {
		return Token{}, false, err
	}
	rec, ok, err := s.getValue(txn, tokenNamePrefix+string(name))
	if err != nil || !ok {
		return Token{}, false, err
	}
	var t Token
	if err := json.Unmarshal(rec, &t); err != nil {
		return Token{}, false, fmt.Errorf("decode token %q: %w", name, err)
	}
	// The caller compares the hashes again in constant time; this only checks the keys agree.
	if t.Hash != hash {
		return Token{}, false, nil
	}
	return t, true, nil
}

// getValue reads key's value, reporting whether the key exists.
func (s *Store) getValue(txn *badger.Txn, key string) ([]byte, bool, error) {
	item, err := txn.Get([]byte(key))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	v, err := s.valueCopy(item)
	return v, err == nil, err
}

// RevokeToken deletes the token named name, durably: once it returns, TokenByHash no longer
// finds it. It fails with ErrTokenNotFound when no token has that name.
func (s *Store) RevokeToken(name string) error {
	if checkTokenKey("name", name) != nil {
		return fmt.Errorf("token %q: %w", name, ErrTokenNotFound)
	}
	s.tokMu.Lock()
	defer s.tokMu.Unlock()
	var t Token
	found := false
	err := s.view(func(txn *badger.Txn) error {
		rec, ok, err := s.getValue(txn, tokenNamePrefix+name)
		if err != nil || !ok {
			return err
		}
		found = true
		return json.Unmarshal(rec, &t)
	})
	if err != nil {
		return fmt.Errorf("revoke token %q: %w", name, err)
	}
	if !found {
		return fmt.Errorf("token %q: %w", name, ErrTokenNotFound)
	}
	ops := []op{{key: []byte(tokenNamePrefix + name), del: true}}
	if checkTokenKey("hash", t.Hash) == nil {
		ops = append(ops, op{key: []byte(tokenHashPrefix + t.Hash), del: true})
	}
	return s.tokenWrite("revoke", name, ops...)
}

// TouchToken records at as the last use of the token named name, if it still exists with hash
// hash (a token revoked, or revoked and created again, meanwhile is left alone).
func (s *Store) TouchToken(name, hash string, at time.Time) error {
	s.tokMu.Lock()
	defer s.tokMu.Unlock()
	var t Token
	found := false
	err := s.view(func(txn *badger.Txn) error {
		var err error
		t, found, err = s.tokenByHash(txn, hash)
		return err
	})
	if err != nil {
		return fmt.Errorf("record the use of token %q: %w", name, err)
	}
	if !found || t.Name != name {
		return nil
	}
	at = at.UTC()
	t.LastUsedAt = &at
	rec, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("encode token %q: %w", name, err)
	}
	return s.tokenWrite("record the use of", name, op{key: []byte(tokenNamePrefix + name), value: rec})
}

// tokenWrite writes ops as one durable request (one WAL record, one Badger transaction).
func (s *Store) tokenWrite(what, name string, ops ...op) error {
	req := &request{durable: true, done: make(chan error, 1)}
	for _, o := range ops {
		req.add(o)
	}
	if err := checkOps(req.ops, s.maxValue); err != nil {
		return fmt.Errorf("%s token %q: %w", what, name, err)
	}
	if err := s.submit(req); err != nil {
		return fmt.Errorf("%s token %q: %w", what, name, err)
	}
	if err := <-req.done; err != nil {
		return fmt.Errorf("%s token %q: %w", what, name, err)
	}
	return nil
}
