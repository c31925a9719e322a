package main

import (
	"errors"
	"fmt"

	"golang.org/x/crypto/ssh"
)

// parseKey parses an unencrypted private key. source names where it came from ("private_key",
// or the file's path) for the error. The error never contains key material: the x/crypto
// parsers' messages do not, and nothing here adds any.
//
// Passphrase-protected keys are refused rather than supported: a passphrase would be one more
// secret in the workflow, next to the key, for no gain in protection.
func parseKey(pem []byte, source string) (ssh.Signer, error) {
	signer, err := ssh.ParsePrivateKey(pem)
	var missing *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &missing):
		return nil, fmt.Errorf("the key in %s is protected by a passphrase, which the ssh plugin does not support; use an unencrypted key and keep it secret", source)
	case err != nil:
		return nil, fmt.Errorf("the key in %s cannot be parsed (PEM or OpenSSH private key expected): %w", source, err)
	}
	return signer, nil
}

// fingerprint is the form ssh-keygen -l and sshd's logs print: SHA256:base64.
func fingerprint(k ssh.PublicKey) string {
	return ssh.FingerprintSHA256(k)
}
