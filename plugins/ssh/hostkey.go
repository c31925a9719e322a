package main

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strconv"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fuscia/fuscia/plugins/internal/execcore"
)

// hostKeys checks servers' host keys against one known_hosts file. It is loaded for each new
// connection, so that a key added to the file is seen without restarting the plugin.
type hostKeys struct {
	file  string
	check ssh.HostKeyCallback
}

// loadHostKeys reads the known_hosts file. A missing file is a fatal error that says how to
// create it: without it no host can be trusted.
func loadHostKeys(file string) (*hostKeys, error) {
	check, err := knownhosts.New(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, execcore.Fatalf("known_hosts file %s does not exist; create it with the servers' keys, e.g. ssh-keyscan HOST >> %s (after checking the fingerprints)", file, file)
	case err != nil:
		return nil, execcore.Fatalf("known_hosts file %s cannot be used: %w", file, err)
	}
	return &hostKeys{file: file, check: check}, nil
}

// callback is the ssh.HostKeyCallback: it turns knownhosts' terse errors into ones that say
// which host, which key, which file, and what to do.
func (h *hostKeys) callback(hostport string, remote net.Addr, key ssh.PublicKey) error {
	err := h.check(hostport, remote, key)
	var keyErr *knownhosts.KeyError
	var revoked *knownhosts.RevokedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &revoked):
		return execcore.Fatalf("host key of %s (%s %s) is marked @revoked in %s line %d; refusing to connect",
			hostport, key.Type(), fingerprint(key), revoked.Revoked.Filename, revoked.Revoked.Line)
	case errors.As(err, &keyErr) && len(keyErr.Want) == 0:
		return execcore.Fatalf("host key of %s (%s %s) is not in known_hosts file %s; after checking that fingerprint with the server's administrator, add it with: %s >> %s",
			hostport, key.Type(), fingerprint(key), h.file, keyscan(hostport, key.Type()), h.file)
	case errors.As(err, &keyErr):
		want := keyErr.Want[0]
		return execcore.Fatalf("host key of %s has CHANGED: the server presented %s %s, but %s line %d holds %s %s for it. "+
			"This may be a man-in-the-middle attack. If the key was changed on purpose, remove the old entry (ssh-keygen -R '%s' -f %s) and add the new one (%s >> %s)",
			hostport, key.Type(), fingerprint(key), want.Filename, want.Line, want.Key.Type(), fingerprint(want.Key),
			knownhosts.Normalize(hostport), h.file, keyscan(hostport, key.Type()), h.file)
	}
	return execcore.Fatalf("host key of %s cannot be checked against %s: %w", hostport, h.file, err)
}

// keyscan is the ssh-keyscan command that prints the host's key of type keyType.
func keyscan(hostport, keyType string) string {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return "ssh-keyscan " + hostport
	}
	if port == strconv.Itoa(defaultPort) {
		return fmt.Sprintf("ssh-keyscan -t %s %s", keyType, host)
	}
	return fmt.Sprintf("ssh-keyscan -p %s -t %s %s", port, keyType, host)
}

// probeKey is a key no known_hosts file holds (its private half is derived from a zero seed and
// used nowhere): checking it makes knownhosts list every key known for a host.
var probeKey = func() ssh.PublicKey {
	k, err := ssh.NewPublicKey(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)).Public())
	if err != nil {
		panic(err) // a fixed, valid ed25519 key: cannot happen
	}
	return k
}()

// algorithms returns the host key algorithms to offer the server: those of the keys the file
// holds for hostport, or nil (the library's defaults) when it holds none. Without this, a
// server with several host keys may present one of another type than the file's, and a
// perfectly known host would look like one whose key changed.
func (h *hostKeys) algorithms(hostport string) []string {
	var keyErr *knownhosts.KeyError
	if err := h.check(hostport, &net.TCPAddr{IP: net.IPv4zero}, probeKey); !errors.As(err, &keyErr) {
		return nil
	}
	var algos []string
	seen := map[string]bool{}
	add := func(a string) {
		if !seen[a] {
			seen[a] = true
			algos = append(algos, a)
		}
	}
	for _, k := range keyErr.Want {
		if k.Key.Type() == ssh.KeyAlgoRSA {
			// An RSA key signs with SHA-2 for modern servers and SHA-1 for old ones.
			add(ssh.KeyAlgoRSASHA512)
			add(ssh.KeyAlgoRSASHA256)
		}
		add(k.Key.Type())
	}
	return algos
}
