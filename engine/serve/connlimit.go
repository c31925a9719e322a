package serve

import (
	"container/list"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The connection cap of serve's TCP listener (docs/security.md, "HTTP listener").
//
// Every open connection costs a goroutine and its buffers, and a partial request header up to
// MaxHeaderBytes: without a cap, thousands of clients that open connections and send nothing
// (or a header one byte at a time) grow the process without bound. So at most MaxConnections
// are open; at the cap, Accept waits, and new connections wait in the kernel's accept queue.
//
// A cap alone lets whoever holds the slots lock everyone else out until the read-header
// timeout or the idle timeout frees them. So, at the cap, the connection that has waited
// longest for a request — an idle keep-alive connection, or one still sending its request line
// and headers — is closed to make room, once it has waited at least evictAfter. A request
// being handled (a ?wait=true answer, a log stream) is never cut: only connections between or
// before requests are closed, which HTTP allows a server to do at any time.
//
// The cap times MaxHeaderBytes is still a lot of memory (1,024 × 64 KiB, and net/http holds a
// header about twice while it parses it). So the header bytes read by connections that wait
// for a request are counted, and while they are over a budget for all connections together
// the connection that has waited longest among those holding more than bigHeader is closed,
// whatever its age: a client with an ordinary header is not closed for the others' big ones.

// evictAfter is how long a connection must have waited for a request before it may be closed
// to make room at the cap: a client that sends its request at once is never closed for
// another, and a new connection gets its slot within about that long even when slow clients
// hold every slot.
const evictAfter = time.Second

// bigHeader is how much unfinished header makes a connection the first to close when the
// waiting connections hold more than the budget. Below it, the cap's connections together hold
// far less than any sensible budget (1,024 × 4 KiB = 4 MiB).
const bigHeader = 4 << 10

// capListener is a net.Listener with at most cap(slots) connections open.
type capListener struct {
	net.Listener
	slots chan struct{} // a token per open connection

	closeOnce sync.Once
	closed    chan struct{} // closed by Close: Accept stops waiting for a slot

	budget int64 // header bytes the waiting connections may hold together

	// mu guards waiting, pending and the capConns' fields that say so.
	mu sync.Mutex
	// waiting holds the connections that wait for a request (new, or idle between requests),
	// the longest waiting first.
	waiting list.List
	pending int64 // bytes read by the waiting connections: their unfinished headers
}

func newCapListener(l net.Listener, conns int, headerBudget int64) *capListener {
	return &capListener{Listener: l, slots: make(chan struct{}, conns), budget: headerBudget, closed: make(chan struct{})}
}

// Accept waits for a free slot, making room at the cap (evictOldest), then accepts.
func (l *capListener) Accept() (net.Conn, error) {
	if err := l.acquire(); err != nil {
		return nil, err
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &capConn{Conn: c, l: l}, nil
}

func (l *capListener) acquire() error {
	for {
		select {
		case l.slots <- struct{}{}:
			return nil
		default:
		}
		retry := l.evictOldest()
		timer := time.NewTimer(retry)
		select {
		case l.slots <- struct{}{}:
			timer.Stop()
			return nil
		case <-l.closed:
			timer.Stop()
			return net.ErrClosed
		case <-timer.C:
		}
	}
}

// evictOldest closes the connection that has waited longest for a request if it has waited
// evictAfter or more, and returns how long to wait before looking again.
func (l *capListener) evictOldest() time.Duration {
	l.mu.Lock()
	front := l.waiting.Front()
	if front == nil {
		l.mu.Unlock()
		return evictAfter // every slot is busy with a request: one ends or a connection waits
	}
	c := front.Value.(*capConn)
	if wait := evictAfter - time.Since(c.since); wait > 0 {
		l.mu.Unlock()
		return wait
	}
	l.unlistLocked(c)
	l.mu.Unlock()
	_ = c.Close()
	return 0
}

// Close stops the listener; an Accept waiting for a slot returns net.ErrClosed.
func (l *capListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// connState is the http.Server's ConnState hook: it keeps the waiting list. A connection is
// new until its first request header has arrived, active while a request is handled, idle
// between requests.
func (l *capListener) connState(nc net.Conn, state http.ConnState) {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	c, ok := nc.(*capConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unlistLocked(c)
	if state == http.StateNew || state == http.StateIdle {
		c.since = time.Now()
		c.elem = l.waiting.PushBack(c)
		c.waiting.Store(true)
	}
}

func (l *capListener) unlistLocked(c *capConn) {
	if c.elem != nil {
		l.waiting.Remove(c.elem)
		c.elem = nil
		c.waiting.Store(false)
		l.pending -= c.pending
		c.pending = 0
	}
}

// readHeader counts n bytes read by c while it waits for a request, and closes the connections
// waiting longest while the waiting ones hold more than the budget.
func (l *capListener) readHeader(c *capConn, n int) {
	var victims []*capConn
	l.mu.Lock()
	if c.elem != nil { // else its request has begun meanwhile
		c.pending += int64(n)
		l.pending += int64(n)
		for l.pending > l.budget {
			v := l.biggestOldestLocked()
			if v == nil {
				break
			}
			l.unlistLocked(v)
			victims = append(victims, v)
		}
	}
	l.mu.Unlock()
	for _, v := range victims {
		_ = v.Close()
	}
}

// biggestOldestLocked is the connection waiting longest among those holding more than
// bigHeader, else the one waiting longest; nil when none waits.
func (l *capListener) biggestOldestLocked() *capConn {
	for e := l.waiting.Front(); e != nil; e = e.Next() {
		if c := e.Value.(*capConn); c.pending > bigHeader {
			return c
		}
	}
	if front := l.waiting.Front(); front != nil {
		return front.Value.(*capConn)
	}
	return nil
}

// capConn holds a slot until it is closed.
type capConn struct {
	net.Conn
	l         *capListener
	closeOnce sync.Once

	// waiting is set while it waits for a request (elem is set): its reads are header bytes.
	// Its own goroutine reads it without the lock, to count only those.
	waiting atomic.Bool

	// Guarded by l.mu.
	elem    *list.Element // in l.waiting while it waits for a request
	since   time.Time     // since when it waits
	pending int64         // bytes read since then
}

func (c *capConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.waiting.Load() {
		c.l.readHeader(c, n)
	}
	return n, err
}

func (c *capConn) Close() error {
	err := c.Conn.Close()
	c.closeOnce.Do(func() {
		c.l.mu.Lock()
		c.l.unlistLocked(c)
		c.l.mu.Unlock()
		<-c.l.slots
	})
	return err
}
