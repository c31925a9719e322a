package serve

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"strings"
)

// LoadTLS reads the certificate (PEM, the chain after the leaf) and private key serve's
// -listen answers TLS with (-tls-cert, -tls-key). Both or neither: neither is nil, plain HTTP.
// Its errors name the file at fault and say what is wrong with it.
func LoadTLS(certFile, keyFile string) (*tls.Config, error) {
	switch {
	case certFile == "" && keyFile == "":
		return nil, nil
	case certFile == "":
		return nil, errors.New("-tls-key needs -tls-cert: give both the certificate and its private key, or neither")
	case keyFile == "":
		return nil, errors.New("-tls-cert needs -tls-key: give both the certificate and its private key, or neither")
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("cannot read the -tls-cert file: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("cannot read the -tls-key file: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, tlsPairError(certFile, keyFile, err)
	}
	// The protocols (HTTP/2 and HTTP/1.1) are the http.Server's to offer (listen.go).
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// tlsPairError says which of the two files crypto/tls found wrong.
func tlsPairError(certFile, keyFile string, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "certificate input"):
		return fmt.Errorf("%s holds no PEM certificate (-tls-cert wants a file with a \"BEGIN CERTIFICATE\" block): %w", certFile, err)
	case strings.Contains(msg, "key input"), strings.Contains(msg, "private key"):
		if strings.Contains(msg, "does not match") {
			return fmt.Errorf("the private key in %s is not the key of the certificate in %s: give the key the certificate was made for: %w", keyFile, certFile, err)
		}
		return fmt.Errorf("%s holds no usable PEM private key (-tls-key wants a file with a \"PRIVATE KEY\" block): %w", keyFile, err)
	}
	return fmt.Errorf("%s and %s are not a certificate and its private key: %w", certFile, keyFile, err)
}
