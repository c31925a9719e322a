package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Conn is a process's connection to the cluster: NATS, its JetStream, the names of one
// prefix and the cluster key. It reconnects by itself forever after a successful Connect,
// logging the loss and the return of the connection.
type Conn struct {
	cfg   Config
	names names
	nc    *nats.Conn
	js    jetstream.JetStream
	log   *slog.Logger
	// down is set while the connection is lost; closing once Close began (the loss is then
	// not worth a warning).
	down, closing atomic.Bool
}

// Connect reaches the cluster. It fails at once, naming each URL and what failed, when no
// server answers: a process that cannot reach NATS at start says so and exits rather than
// wait in silence.
func Connect(ctx context.Context, cfg Config, name string, log *slog.Logger) (*Conn, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Conn{cfg: cfg, names: names{cfg.Prefix}, log: log}
	opts := []nats.Option{
		nats.Name(name),
		nats.Timeout(5 * time.Second),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			c.down.Store(true)
			if c.closing.Load() {
				return
			}
			msg := "lost the connection to NATS; dispatch waits for it to come back, and serve keeps accepting and journaling runs"
			if strings.HasPrefix(name, "fuscia worker") {
				msg = "lost the connection to NATS; the worker takes no attempts until it comes back, and results wait to be stored"
			}
			if err != nil {
				log.Warn(msg, "error", err)
			} else {
				log.Warn(msg)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			c.down.Store(false)
			log.Info("reconnected to NATS; dispatch resumes", "server", nc.ConnectedUrlRedacted())
		}),
	}
	if cfg.Creds != "" {
		opts = append(opts, nats.UserCredentials(cfg.Creds))
	}
	if cfg.TLSCA != "" {
		opts = append(opts, nats.RootCAs(cfg.TLSCA))
	}
	nc, err := nats.Connect(cfg.URLs, opts...)
	if err != nil {
		return nil, connectError(cfg, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("NATS at %s: %w", redactURLs(cfg.URLs), err)
	}
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := js.AccountInfo(actx); err != nil {
		nc.Close()
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
			return nil, fmt.Errorf("NATS at %s does not have JetStream enabled: start the server with -js (or `jetstream {}` in its configuration)", redactURLs(cfg.URLs))
		}
		return nil, fmt.Errorf("NATS at %s: JetStream does not answer: %w", redactURLs(cfg.URLs), err)
	}
	c.nc, c.js = nc, js
	return c, nil
}

// redactURLs hides passwords in URLs for messages.
func redactURLs(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		u, err := url.Parse(strings.TrimSpace(p))
		if err == nil && u.User != nil {
			parts[i] = u.Redacted()
		}
	}
	return strings.Join(parts, ",")
}

// Close closes the connection.
func (c *Conn) Close() {
	if c != nil && c.nc != nil {
		c.closing.Store(true)
		c.nc.Close()
	}
}

// Prefix is the -nats-prefix.
func (c *Conn) Prefix() string { return c.cfg.Prefix }

// replicas is the replication of what the coordinator creates: 3 when the NATS cluster has
// three servers or more, 1 otherwise (docs/cluster.md). A server outside a cluster has no
// cluster name, whatever the number of URLs given for it.
func (c *Conn) replicas() int {
	if c.nc.ConnectedClusterName() == "" {
		return 1
	}
	seen := map[string]bool{}
	for _, s := range c.nc.Servers() {
		if u, err := url.Parse(s); err == nil {
			seen[u.Host] = true
		}
	}
	if len(seen) >= 3 {
		return 3
	}
	return 1
}

// connectError says why no NATS server could be used, with advice that fits: a server that
// refused the credentials or failed TLS answered, so "check that a server listens" would mislead.
func connectError(cfg Config, err error) error {
	urls := redactURLs(cfg.URLs)
	var certErr *tls.CertificateVerificationError
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	switch {
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired),
		errors.Is(err, nats.ErrAuthRevoked), errors.Is(err, nats.ErrAccountAuthExpired):
		how := "the user and password (or token) in the -nats URL"
		if cfg.Creds != "" {
			how = "the -nats-creds file " + cfg.Creds
		}
		return fmt.Errorf("NATS at %s refused this process's credentials: %w; check %s against the server's accounts", urls, err, how)
	case errors.As(err, &certErr), errors.As(err, &unknownAuthority), errors.As(err, &hostname),
		errors.Is(err, nats.ErrSecureConnRequired), errors.Is(err, nats.ErrSecureConnWanted):
		return fmt.Errorf("TLS with NATS at %s failed: %w; use tls:// URLs for a server that requires TLS, and give -nats-tls-ca the CA that signed its certificate", urls, err)
	}
	return fmt.Errorf("cannot reach NATS at %s: %w; check that a server with JetStream (nats-server -js) listens there", urls, err)
}
