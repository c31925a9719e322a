package serve

import (
	"net/netip"
	"sync"
	"time"
)

// Failed authentications are rate-limited per client address (docs/security.md, "API
// tokens"): a token bucket of authFailBurst failures per address, refilled by one every
// authFailEvery. An address whose bucket is empty is answered 429 with Retry-After, whatever
// it presents, until the bucket has refilled by one: checking its tokens meanwhile would let it
// go on guessing. Tokens are 256 random bits, so this is not what makes them unguessable; it
// keeps a guessing client from costing serve a store read per try, and makes it visible.
const (
	authFailBurst = 10
	authFailEvery = 6 * time.Second // 10 a minute
	// authMaxClients bounds the addresses tracked; past it, the buckets that have refilled
	// (they hold nothing a fresh one does not) and then the oldest go first.
	authMaxClients = 4096
)

// failureLimiter counts failed authentications per client. It is safe for concurrent use.
type failureLimiter struct {
	burst float64
	every time.Duration
	max   int

	mu      sync.Mutex
	clients map[string]*bucket // guarded by mu
}

// bucket is what a client may still fail (tokens) as of at; last is its last failure.
type bucket struct {
	tokens   float64
	at, last time.Time
}

func newFailureLimiter(burst int, every time.Duration, maxClients int) *failureLimiter {
	return &failureLimiter{burst: float64(burst), every: every, max: maxClients, clients: map[string]*bucket{}}
}

// refill brings b up to now.
func (l *failureLimiter) refill(b *bucket, now time.Time) {
	if now.After(b.at) {
		b.tokens += float64(now.Sub(b.at)) / float64(l.every)
		b.at = now
	}
	if b.tokens > l.burst {
		b.tokens = l.burst
	}
}

// blocked reports whether client has used up its failures, and how long until it may try
// again.
func (l *failureLimiter) blocked(client string, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.clients[client]
	if b == nil {
		return 0, false
	}
	l.refill(b, now)
	if b.tokens >= 1 {
		return 0, false
	}
	return time.Duration((1 - b.tokens) * float64(l.every)), true
}

// fail records a failed authentication of client.
func (l *failureLimiter) fail(client string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.clients[client]
	if b == nil {
		if len(l.clients) >= l.max {
			l.evict(now)
		}
		b = &bucket{tokens: l.burst, at: now}
		l.clients[client] = b
	}
	l.refill(b, now)
	b.tokens--
	b.last = now
}

// evict makes room for one more client: it drops the buckets that have refilled, or else the
// one that failed longest ago. Called with mu held.
func (l *failureLimiter) evict(now time.Time) {
	var oldest string
	for c, b := range l.clients {
		l.refill(b, now)
		if b.tokens >= l.burst {
			delete(l.clients, c)
			continue
		}
		if oldest == "" || b.last.Before(l.clients[oldest].last) {
			oldest = c
		}
	}
	if len(l.clients) >= l.max && oldest != "" {
		delete(l.clients, oldest)
	}
}

// len is the number of clients tracked (tests).
func (l *failureLimiter) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.clients)
}

// clientKey is the address failures are counted against: the IP of remoteAddr (an
// http.Request's RemoteAddr), its /64 for IPv6, where one host commonly holds the whole
// prefix, and all of 127.0.0.0/8 as one, which one machine holds whole (a local client binding
// 127.0.0.2, .3, … would otherwise guess without limit). Behind a reverse proxy every client
// is the proxy.
func clientKey(remoteAddr string) string {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return remoteAddr
	}
	ip := ap.Addr().Unmap()
	if ip.Is4() && ip.IsLoopback() {
		return "127.0.0.0/8"
	}
	if ip.Is6() {
		if p, err := ip.Prefix(64); err == nil {
			return p.String()
		}
	}
	return ip.String()
}
