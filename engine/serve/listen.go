package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"log"
	"net"
	"net/http"
	"time"
)

// serve's TCP listeners (-listen, -metrics-listen): an http.Server whose requests are bounded
// (docs/security.md, "HTTP listener"). A client may hold a connection only so long without
// sending a request, may send only so much header, and only so many connections are open at
// once; the write side is not bounded, because ?wait=true answers and log streams write for
// as long as the run goes on.

// Defaults of ListenConfig.
const (
	DefaultMaxConnections    = 1024
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultHeaderBudget      = 16 << 20
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
)

// ListenConfig is one TCP listener. The zero value of each limit means its default.
type ListenConfig struct {
	// Addr is host:port; port 0 picks a free one.
	Addr string
	// Handler answers the requests: TCPHandler for -listen.
	Handler http.Handler
	// TLS, when set, serves HTTPS with its certificates; nil serves plain HTTP.
	TLS *tls.Config
	// MaxConnections caps the open connections (default 1,024). At the cap new connections
	// wait in the kernel's accept queue, and the one that waited longest for a request is
	// closed to make room (connlimit.go).
	MaxConnections int
	// MaxHeaderBytes bounds a request's line and headers (default 64 KiB); net/http answers
	// 431 over it.
	MaxHeaderBytes int
	// HeaderBudget bounds the unfinished headers of all connections together (default 16
	// MiB): over it, the connection that waited longest for its request is closed.
	HeaderBudget int64
	// ReadHeaderTimeout is how long a request's line and headers may take to arrive (default
	// 10 s); the connection is closed after it.
	ReadHeaderTimeout time.Duration
	// ReadTimeout is how long a whole request, its body included, may take to arrive (default
	// 30 s): a body that stalls fails to read after it. A handler that has read its body is
	// not bounded by it.
	ReadTimeout time.Duration
	// IdleTimeout is how long a keep-alive connection may wait for its next request (default
	// 60 s).
	IdleTimeout time.Duration
	// ErrorLog gets net/http's own errors (failed TLS handshakes, accept errors); nil: the
	// standard logger.
	ErrorLog *log.Logger
}

func (c *ListenConfig) applyDefaults() {
	if c.MaxConnections <= 0 {
		c.MaxConnections = DefaultMaxConnections
	}
	if c.MaxHeaderBytes <= 0 {
		c.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if c.HeaderBudget <= 0 {
		c.HeaderBudget = DefaultHeaderBudget
	}
	if c.ReadHeaderTimeout <= 0 {
		c.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
}

// Listener is a bound TCP listener serving its Handler; Shutdown or Close stops it.
type Listener struct {
	srv    *http.Server
	ln     *capListener
	scheme string
	served chan struct{} // closed when Serve returned
}

// readTimeoutKey carries a connection's ListenConfig.ReadTimeout in its requests' contexts.
type readTimeoutKey struct{}

// readTimeoutOf is the read timeout of the listener r came through, 0 when unknown.
func readTimeoutOf(r *http.Request) time.Duration {
	d, _ := r.Context().Value(readTimeoutKey{}).(time.Duration)
	return d
}

// Listen binds cfg.Addr and serves cfg.Handler on it, in a goroutine that Shutdown and Close
// end.
func Listen(cfg ListenConfig) (*Listener, error) {
	if cfg.Handler == nil {
		return nil, errors.New("serve.Listen: no handler")
	}
	cfg.applyDefaults()
	tcp, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	ln := newCapListener(tcp, cfg.MaxConnections, cfg.HeaderBudget)
	srv := &http.Server{
		Handler:           cfg.Handler,
		TLSConfig:         cfg.TLS,
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		// net/http sets this deadline when the header has arrived and clears it when the
		// handler has read the body to its end (or at once for a request without one): it
		// bounds the body's arrival, never how long a handler answers.
		ReadTimeout: cfg.ReadTimeout,
		IdleTimeout: cfg.IdleTimeout,
		ConnState:   ln.connState,
		ErrorLog:    cfg.ErrorLog,
		// A webhook shortens its body's deadline for a short body, never past this one.
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
			return context.WithValue(ctx, readTimeoutKey{}, cfg.ReadTimeout)
		},
	}
	l := &Listener{srv: srv, ln: ln, scheme: "http", served: make(chan struct{})}
	if cfg.TLS != nil {
		l.scheme = "https"
	}
	go func() {
		defer close(l.served)
		if cfg.TLS != nil {
			_ = srv.ServeTLS(ln, "", "")
			return
		}
		_ = srv.Serve(ln)
	}()
	return l, nil
}

// Addr is the address bound (with the port picked for port 0).
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// URL is http://ADDR, or https://ADDR with TLS.
func (l *Listener) URL() string { return l.scheme + "://" + l.Addr().String() }

// Shutdown stops accepting, closes the idle connections and waits for the requests under way
// until ctx ends, then closes what is left.
func (l *Listener) Shutdown(ctx context.Context) error {
	err := l.srv.Shutdown(ctx)
	if err != nil {
		_ = l.srv.Close()
	}
	<-l.served
	return err
}

// Close closes the listener and every connection at once.
func (l *Listener) Close() error {
	err := l.srv.Close()
	<-l.served
	return err
}
