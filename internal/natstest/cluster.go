package natstest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ClusterName is the NATS cluster name of StartCluster's servers.
const ClusterName = "fuscia-test"

// clusterReadyTimeout bounds how long a cluster may take to elect a JetStream meta leader that
// sees every server: elections wait randomised timeouts of 4 to 9 s.
const clusterReadyTimeout = 45 * time.Second

// Cluster is a NATS cluster of in-process servers with JetStream.
type Cluster struct {
	servers []*Server // fixed by StartCluster
}

// StartCluster runs n servers (n >= 1) in one NATS cluster named ClusterName, routed on
// loopback, each with JetStream, its own store and a name (S-1 … S-n), and returns once
// JetStream has a meta leader that sees all n servers and every server is current. The
// servers are shut down when the test ends.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("natstest.StartCluster: %d servers; a cluster needs at least one", n)
	}
	// Route ports must be known before the servers start (each lists all of them), so they are
	// reserved and released first; another process may take one in between, which a retry with
	// new ports gets around.
	var err error
	for try := 0; try < 3; try++ {
		var c *Cluster
		if c, err = startCluster(t, n); err == nil {
			if err = c.waitReady(); err == nil {
				return c
			}
			t.Fatal(err)
		}
		if !errors.Is(err, errFatal) {
			break
		}
	}
	t.Fatal(err)
	return nil
}

// startCluster starts n servers of a cluster on fresh route ports, with fresh stores. On
// failure the servers it started are shut down (their logs are printed if the test fails).
func startCluster(t testing.TB, n int) (*Cluster, error) {
	ports, err := freePorts(n)
	if err != nil {
		return nil, err
	}
	routes := make([]*url.URL, len(ports))
	for i, p := range ports {
		routes[i] = &url.URL{Scheme: "nats-route", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(p))}
	}
	c := &Cluster{}
	for i := range n {
		s := &Server{
			name:     fmt.Sprintf("S-%d", i+1),
			storeDir: filepath.Join(t.TempDir(), "jetstream"),
			route:    &routeConf{cluster: ClusterName, port: ports[i], routes: routes},
		}
		s.cleanupWith(t)
		if err := s.start(-1); err != nil {
			for _, started := range c.servers {
				started.Shutdown()
			}
			return nil, err
		}
		c.servers = append(c.servers, s)
	}
	return c, nil
}

// freePorts reserves n loopback ports and releases them.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("reserve a route port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitReady polls until JetStream has a meta leader that sees every server and every server
// is current.
func (c *Cluster) waitReady() error {
	deadline := time.Now().Add(clusterReadyTimeout)
	for {
		why := c.notReady()
		if why == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the NATS cluster was not ready after %s: %s", clusterReadyTimeout, why)
		}
		time.Sleep(25 * time.Millisecond) // a poll's interval
	}
}

// notReady says what the cluster still lacks, or "" when it is ready.
func (c *Cluster) notReady() string {
	var leader string
	peers := 0
	for _, s := range c.servers {
		srv := s.NATS()
		if srv == nil {
			return s.name + " is stopped"
		}
		if srv.JetStreamIsLeader() {
			leader = s.name
			peers = len(srv.JetStreamClusterPeers())
		}
	}
	if leader == "" {
		return "JetStream has no meta leader yet"
	}
	if peers != len(c.servers) {
		return fmt.Sprintf("the meta leader %s sees %d of %d servers", leader, peers, len(c.servers))
	}
	for _, s := range c.servers {
		if srv := s.NATS(); srv == nil || !srv.JetStreamIsCurrent() {
			return s.name + " is not current with the meta leader"
		}
	}
	return ""
}

// URLs returns the client URLs of all the servers, comma-separated (what nats.Connect takes).
func (c *Cluster) URLs() string {
	urls := make([]string, len(c.servers))
	for i, s := range c.servers {
		urls[i] = s.URL()
	}
	return strings.Join(urls, ",")
}

// Servers returns the cluster's servers, S-1 first.
func (c *Cluster) Servers() []*Server { return append([]*Server(nil), c.servers...) }

// Stop shuts server i (from 0) down, as a machine that went away.
func (c *Cluster) Stop(i int) { c.servers[i].Shutdown() }
