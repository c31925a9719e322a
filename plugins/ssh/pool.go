package main

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/crypto/ssh"
)

// maxConnsPerHost bounds the open connections to one destination (docs/reference/plugin-protocol.md: max 4). A
// connection runs one command at a time, so this is also the most commands run at once there;
// more wait for a connection to come free.
const maxConnsPerHost = 4

// poolKey identifies connections that may be shared: same user, server and key, and host key
// checked against the same known_hosts file.
type poolKey struct {
	user, hostport, keyFingerprint, knownHosts string
}

func (k poolKey) String() string { return k.user + "@" + k.hostport }

// dialFunc opens a new connection.
type dialFunc func(ctx context.Context) (*ssh.Client, error)

// Pools holds the connections of the plugin process, which lives as long as the run, so that
// the tasks of a run share connections. The zero value is not usable; use NewPools.
type Pools struct {
	mu    sync.Mutex
	hosts map[poolKey]*hostPool // guarded by mu; entries are never removed
}

// NewPools returns empty pools.
func NewPools() *Pools {
	return &Pools{hosts: map[poolKey]*hostPool{}}
}

func (p *Pools) host(k poolKey) *hostPool {
	p.mu.Lock()
	defer p.mu.Unlock()
	hp, ok := p.hosts[k]
	if !ok {
		hp = &hostPool{slots: make(chan struct{}, maxConnsPerHost)}
		p.hosts[k] = hp
	}
	return hp
}

// Close closes the idle connections. Connections in use are closed when they are put back.
// It is for tests: the plugin's connections end with its process.
func (p *Pools) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, hp := range p.hosts {
		hp.closeIdle()
	}
}

// hostPool is the pool of one poolKey.
//
// Invariant: open connections = those checked out (each holding a slot) + idle ones. A
// connection is dialled only by a holder of a slot who found no idle one, so the open
// connections never exceed cap(slots).
type hostPool struct {
	slots chan struct{} // a token per checked-out connection

	mu   sync.Mutex
	idle []*conn // guarded by mu; most recently used last
}

// conn is a pooled connection.
type conn struct {
	client *ssh.Client
	// dead is closed when the connection has ended (the server closed it, the network broke,
	// or we closed it), noticed by a goroutine that lives exactly as long as the connection.
	dead chan struct{}
}

func newConn(c *ssh.Client) *conn {
	cn := &conn{client: c, dead: make(chan struct{})}
	go func() {
		c.Wait() // returns when the connection closes, which every path eventually does
		close(cn.dead)
	}()
	return cn
}

func (c *conn) alive() bool {
	select {
	case <-c.dead:
		return false
	default:
		return true
	}
}

// get checks out a connection: an idle one if there is a live one (reused = true), otherwise a
// new one from dial. It waits for a slot while maxConnsPerHost are checked out. Every
// successful get must be followed by exactly one put.
func (hp *hostPool) get(ctx context.Context, dial dialFunc) (c *conn, reused bool, err error) {
	select {
	case hp.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, false, fmt.Errorf("waiting for one of the %d connections: %w", maxConnsPerHost, ctx.Err())
	}
	if c := hp.takeIdle(); c != nil {
		return c, true, nil
	}
	client, err := dial(ctx)
	if err != nil {
		<-hp.slots
		return nil, false, err
	}
	return newConn(client), false, nil
}

// takeIdle pops the most recently used live idle connection, closing dead ones on the way.
func (hp *hostPool) takeIdle() *conn {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	for len(hp.idle) > 0 {
		c := hp.idle[len(hp.idle)-1]
		hp.idle = hp.idle[:len(hp.idle)-1]
		if c.alive() {
			return c
		}
		c.client.Close()
	}
	return nil
}

// redial replaces a checked-out connection that turned out broken with a new one, keeping the
// slot. On error the slot is released: the caller must not put.
func (hp *hostPool) redial(ctx context.Context, old *conn, dial dialFunc) (*conn, error) {
	old.client.Close()
	client, err := dial(ctx)
	if err != nil {
		<-hp.slots
		return nil, err
	}
	return newConn(client), nil
}

// put returns a checked-out connection: to the idle list when keep is true and it is still
// alive, otherwise it is closed (after a timeout, or an error that leaves its state unknown).
func (hp *hostPool) put(c *conn, keep bool) {
	if keep && c.alive() {
		hp.mu.Lock()
		hp.idle = append(hp.idle, c)
		hp.mu.Unlock()
	} else {
		c.client.Close()
	}
	<-hp.slots
}

func (hp *hostPool) closeIdle() {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	for _, c := range hp.idle {
		c.client.Close()
	}
	hp.idle = nil
}
