package clusterkey

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeKey(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadAcceptsWhatBase64Writes(t *testing.T) {
	raw := bytes.Repeat([]byte{7}, 32)
	k, err := Load(writeKey(t, base64.StdEncoding.EncodeToString(raw)+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(k.ID()) != 16 {
		t.Errorf("ID %q", k.ID())
	}
}

func TestLoadRefusesOtherKeys(t *testing.T) {
	cases := map[string]string{
		"short":    base64.StdEncoding.EncodeToString(make([]byte, 16)),
		"long":     base64.StdEncoding.EncodeToString(make([]byte, 33)),
		"not b64":  "this is not base64 at all!!",
		"url b64":  strings.Repeat("-_", 22),
		"empty":    "",
		"unpadded": strings.TrimRight(base64.StdEncoding.EncodeToString(make([]byte, 32)), "="),
	}
	for name, content := range cases {
		_, err := Load(writeKey(t, content))
		if err == nil || !strings.Contains(err.Error(), "32 random bytes in standard base64") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "absent")); err == nil || !strings.Contains(err.Error(), "read the cluster key file") {
		t.Errorf("absent file: %v", err)
	}
}

func TestSealOpen(t *testing.T) {
	a, _ := New(bytes.Repeat([]byte{1}, 32))
	b, _ := New(bytes.Repeat([]byte{2}, 32))
	secret := []byte("hunter2-the-secret")
	sealed := a.Seal(secret, []byte("subject"))
	if bytes.Contains(sealed, secret) {
		t.Fatal("the sealed payload holds the plaintext")
	}
	if SealedID(sealed) != a.ID() {
		t.Errorf("SealedID %q, want %q", SealedID(sealed), a.ID())
	}
	got, err := a.Open(sealed, []byte("subject"))
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Open: %q %v", got, err)
	}
	if _, err := a.Open(sealed, []byte("another subject")); err == nil {
		t.Error("a payload opened under another subject")
	}
	_, err = b.Open(sealed, []byte("subject"))
	if !errors.Is(err, ErrOtherKey) || !strings.Contains(err.Error(), a.ID()) || !strings.Contains(err.Error(), b.ID()) {
		t.Errorf("another key: %v", err)
	}
	tampered := append([]byte(nil), sealed...)
	tampered[len(tampered)-1] ^= 1
	if _, err := a.Open(tampered, []byte("subject")); err == nil {
		t.Error("a tampered payload opened")
	}
	if _, err := a.Open([]byte("plain"), nil); err == nil {
		t.Error("a plain payload opened")
	}
	if bytes.Equal(a.Seal(secret, nil), a.Seal(secret, nil)) {
		t.Error("two seals of one plaintext are equal: the nonce is not random")
	}
}
