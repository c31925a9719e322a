// Package clusterkey is the cluster key of a Fuscia cluster: 32 random bytes that the
// coordinator and every worker share, read from a file in standard base64, and the
// AES-256-GCM sealing of everything a cluster stores in NATS that may carry a secret (attempt
// inputs and results, host KV values, artifacts). A sealed payload names the key it was sealed
// with (its ID, a digest of the key), so that a process holding another key says so instead
// of reporting a corrupt message.
package clusterkey

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
)

// Size is the key's length in bytes.
const Size = 32

// idSize is the length of a key's ID in a sealed payload.
const idSize = 8

// magic starts every sealed payload: the format's version.
var magic = []byte("fsc1")

// Key is a cluster key.
type Key struct {
	aead cipher.AEAD
	id   [idSize]byte
}

// ErrOtherKey is wrapped by Open when a payload was sealed with another key.
var ErrOtherKey = errors.New("sealed with another cluster key")

// Load reads a key file: exactly 32 bytes in standard base64 (with its padding), as
// `head -c 32 /dev/urandom | base64` writes them; surrounding white space is ignored.
func Load(path string) (*Key, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the cluster key file: %w", err)
	}
	k, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("the cluster key file %s: %w", path, err)
	}
	return k, nil
}

// Parse reads a key in standard base64.
func Parse(text []byte) (*Key, error) {
	text = bytes.TrimSpace(text)
	raw, err := base64.StdEncoding.Strict().DecodeString(string(text))
	if err != nil || len(raw) != Size {
		got := "it is not standard base64"
		if err == nil {
			got = fmt.Sprintf("it holds %d bytes", len(raw))
		}
		return nil, fmt.Errorf("a cluster key is 32 random bytes in standard base64 (44 characters); %s; make one with `head -c 32 /dev/urandom | base64 > FILE`", got)
	}
	return New(raw)
}

// New makes a key of 32 bytes.
func New(raw []byte) (*Key, error) {
	if len(raw) != Size {
		return nil, fmt.Errorf("a cluster key is %d bytes, not %d", Size, len(raw))
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	k := &Key{aead: aead}
	// The ID is a digest of the key under a label: it tells keys apart without revealing them.
	sum := sha256.Sum256(append([]byte("fuscia cluster key id\x00"), raw...))
	copy(k.id[:], sum[:idSize])
	return k, nil
}

// ID names the key (16 hex digits) in messages and worker records.
func (k *Key) ID() string { return hex.EncodeToString(k.id[:]) }

// Seal encrypts and authenticates plaintext; aad (the payload's subject or key, say) is
// authenticated but not stored, so a payload cannot be moved to another place unnoticed.
func (k *Key) Seal(plaintext, aad []byte) []byte {
	ns := k.aead.NonceSize()
	out := make([]byte, 0, len(magic)+idSize+ns+len(plaintext)+k.aead.Overhead())
	out = append(out, magic...)
	out = append(out, k.id[:]...)
	nonce := out[len(out) : len(out)+ns]
	if _, err := rand.Read(nonce); err != nil {
		panic("clusterkey: no randomness: " + err.Error()) // crypto/rand never fails on Linux
	}
	out = out[:len(out)+ns]
	return k.aead.Seal(out, nonce, plaintext, aad)
}

// Open decrypts a sealed payload. Its error wraps ErrOtherKey, naming both keys' IDs, when the
// payload was sealed with another key.
func (k *Key) Open(sealed, aad []byte) ([]byte, error) {
	ns := k.aead.NonceSize()
	if len(sealed) < len(magic)+idSize+ns+k.aead.Overhead() || !bytes.Equal(sealed[:len(magic)], magic) {
		return nil, errors.New("not a sealed payload of this version of fuscia")
	}
	id := sealed[len(magic) : len(magic)+idSize]
	if !bytes.Equal(id, k.id[:]) {
		return nil, fmt.Errorf("%w (key id %s; this process has %s)", ErrOtherKey, hex.EncodeToString(id), k.ID())
	}
	body := sealed[len(magic)+idSize:]
	plain, err := k.aead.Open(nil, body[:ns], body[ns:], aad)
	if err != nil {
		return nil, fmt.Errorf("the payload does not authenticate with the cluster key: %w", err)
	}
	return plain, nil
}

// SealedID returns the ID of the key a payload was sealed with, or "" when it is not sealed.
func SealedID(sealed []byte) string {
	if len(sealed) < len(magic)+idSize || !bytes.Equal(sealed[:len(magic)], magic) {
		return ""
	}
	return hex.EncodeToString(sealed[len(magic) : len(magic)+idSize])
}
