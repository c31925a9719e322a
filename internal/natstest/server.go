package natstest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// readyTimeout bounds how long a server may take to accept clients with JetStream up.
const readyTimeout = 30 * time.Second

// Server is one in-process NATS server with JetStream. Its methods may be called from any
// goroutine.
type Server struct {
	name     string
	storeDir string
	// route is the server's part in a cluster; nil for a lone server. Set before the first
	// start, never changed.
	route *routeConf
	// configure, when set, changes the options of each start (StartWith). Set before the
	// first start, never changed.
	configure func(*server.Options)

	mu   sync.Mutex
	srv  *server.Server // guarded by mu; nil while stopped
	port int            // guarded by mu; the client port, fixed by the first start
	logs []*serverLog   // guarded by mu; one per start, printed when the test fails
}

// routeConf is what a server of a cluster needs to find the others.
type routeConf struct {
	cluster string
	port    int        // this server's route port
	routes  []*url.URL // every server's route URL, this one's included (NATS ignores it)
}

// Start runs a NATS server with JetStream on 127.0.0.1 and a random port, its store in a
// directory of the test's. The server is shut down when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{name: "fuscia-test", storeDir: filepath.Join(t.TempDir(), "jetstream")}
	s.cleanupWith(t)
	if err := s.start(-1); err != nil {
		t.Fatal(err)
	}
	return s
}

// StartWith is Start with configure applied to the server's options before each start
// (Restart included): for a limit the tests need that a default server lacks, such as a
// small MaxPayload. configure must leave the listen address, JetStream and the store alone.
func StartWith(t testing.TB, configure func(*server.Options)) *Server {
	t.Helper()
	s := &Server{name: "fuscia-test", storeDir: filepath.Join(t.TempDir(), "jetstream"), configure: configure}
	s.cleanupWith(t)
	if err := s.start(-1); err != nil {
		t.Fatal(err)
	}
	return s
}

// cleanupWith shuts the server down when the test ends, and prints its logs if it failed.
// Registered after the store's t.TempDir, so it runs before the directory is removed.
func (s *Server) cleanupWith(t testing.TB) {
	t.Cleanup(func() {
		s.Shutdown()
		if t.Failed() {
			s.mu.Lock()
			defer s.mu.Unlock()
			for _, l := range s.logs {
				t.Log(l.dump())
			}
		}
	})
}

// start runs the server on port (-1: any) and waits until it accepts clients with JetStream
// enabled. On failure the server is shut down and the error says why.
func (s *Server) start(port int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return fmt.Errorf("nats-server %s is already running", s.name)
	}
	opts := &server.Options{
		ServerName: s.name,
		Host:       "127.0.0.1",
		Port:       port,
		NoSigs:     true, // the test process's signals are not the server's
		JetStream:  true,
		StoreDir:   s.storeDir,
		// Explicit limits: the defaults are derived from the machine's memory and disk.
		JetStreamMaxMemory: 64 << 20,
		JetStreamMaxStore:  1 << 30,
	}
	if r := s.route; r != nil {
		opts.Cluster = server.ClusterOpts{Name: r.cluster, Host: "127.0.0.1", Port: r.port}
		opts.Routes = r.routes
	}
	if s.configure != nil {
		s.configure(opts)
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return fmt.Errorf("nats-server %s: %w", s.name, err)
	}
	log := &serverLog{name: s.name}
	s.logs = append(s.logs, log)
	srv.SetLogger(log, false, false)
	srv.Start()
	if err := waitStarted(srv, log); err != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
		return fmt.Errorf("nats-server %s: %w", s.name, err)
	}
	s.srv = srv
	s.port = srv.Addr().(*net.TCPAddr).Port
	return nil
}

// errFatal marks a server that reported a fatal error while starting (a port in use, say).
var errFatal = errors.New("the server did not start")

// waitStarted polls until srv accepts clients and JetStream is enabled, or it reported a fatal
// error, or readyTimeout passed.
func waitStarted(srv *server.Server, log *serverLog) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		if msg := log.fatalError(); msg != "" {
			return fmt.Errorf("%w: %s", errFatal, msg)
		}
		// ReadyForConnections polls every 25 ms when given longer than that.
		if srv.ReadyForConnections(100*time.Millisecond) && srv.JetStreamEnabled() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready with JetStream after %s", readyTimeout)
		}
		time.Sleep(10 * time.Millisecond) // a poll's interval, when ready but JetStream is not
	}
}

// Name returns the server's name (its JetStream peer name in a cluster).
func (s *Server) Name() string { return s.name }

// URL returns the server's client URL, nats://127.0.0.1:PORT. It stays the same across
// Restart.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "nats://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
}

// StoreDir returns the directory of the server's JetStream store.
func (s *Server) StoreDir() string { return s.storeDir }

// NATS returns the running nats-server, or nil when it is stopped: for what this package does
// not wrap (JetStreamIsLeader, say).
func (s *Server) NATS() *server.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv
}

// Shutdown stops the server and waits until it has stopped. Calling it again does nothing.
func (s *Server) Shutdown() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
	}
}

// Restart stops the server if it runs, and starts a new one on the same port with the same
// store: what was stored before is there again.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Shutdown()
	s.mu.Lock()
	port := s.port
	s.mu.Unlock()
	if err := s.start(port); err != nil {
		t.Fatalf("restart on port %d: %v", port, err)
	}
}

// Connect connects a client to urls (comma-separated, as URL and Cluster.URLs return them),
// reconnecting quickly and forever, and closes it when the test ends. opts come after these
// defaults and may override them.
func Connect(t testing.TB, urls string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	all := append([]nats.Option{
		nats.Name(t.Name()),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(50 * time.Millisecond),
	}, opts...)
	nc, err := nats.Connect(urls, all...)
	if err != nil {
		t.Fatalf("connect to %s: %v", urls, err)
	}
	t.Cleanup(nc.Close)
	return nc
}
