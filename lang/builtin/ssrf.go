package builtin

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	"github.com/fuscia/fuscia/internal/netguard"
)

// The SSRF guard refuses connections to link-local and cloud metadata addresses, where a
// workflow could read the host's cloud credentials, unless the request's allow_hosts lists
// the host. It runs in the transport's dialer, on every connection, so that redirects and
// DNS answers that change between a check and the connection (DNS rebinding) cannot get
// around it: the dialer resolves the name itself, checks every address and connects to the
// checked address.

// refusal is the guard's error: the connection to host was refused before any traffic.
type refusal struct {
	host     string
	resolved netip.Addr // the refused address a name resolved to; invalid otherwise
	reason   string     // what the address or name is
}

func (e *refusal) Error() string {
	what := e.host + " is " + e.reason
	if e.resolved.IsValid() {
		what = fmt.Sprintf("%s resolves to %s, %s", e.host, e.resolved, e.reason)
	}
	return fmt.Sprintf("%s; add %q to allow_hosts to allow it", what, e.host)
}

// guard dials for the HTTP transport. One guard serves every request without allow_hosts;
// a request with allow_hosts gets its own guard and transport, so that a connection made
// under its permission never returns to the shared pool.
type guard struct {
	allow  []string // normalised by normHost
	dial   func(ctx context.Context, network, address string) (net.Conn, error)
	lookup func(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// with returns a guard like g that lets the hosts through.
func (g *guard) with(hosts []string) *guard {
	h := &guard{dial: g.dial, lookup: g.lookup}
	for _, s := range hosts {
		h.allow = append(h.allow, netguard.NormHost(s))
	}
	return h
}

// allowed reports whether host is listed in allow_hosts: the same name ignoring case, or
// the same address however it is written.
func (g *guard) allowed(host string) bool {
	host = netguard.NormHost(host)
	a, aErr := netip.ParseAddr(host)
	for _, s := range g.allow {
		if s == host {
			return true
		}
		if b, err := netip.ParseAddr(s); err == nil && aErr == nil && a == b {
			return true
		}
	}
	return false
}

// dialContext is the transport's DialContext. address is the URL's "host:port": the
// transport has no proxy, so it is the real destination.
func (g *guard) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	allowed := g.allowed(host)
	if !allowed && netguard.MetadataName(host) {
		return nil, &refusal{host: host, reason: "a cloud metadata host name"}
	}
	var addrs []netip.Addr
	a, err := netip.ParseAddr(host)
	literal := err == nil
	if literal {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = g.lookup(ctx, ipNetwork(network), host)
		if err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("lookup %s: no addresses", host)
		}
	}
	if !allowed {
		// Every address, not only the one dialled first: a name with one bad address is
		// refused as a whole, whatever order the resolver returns.
		for _, a := range addrs {
			if reason := netguard.Blocked(a); reason != "" {
				r := &refusal{host: host, reason: reason}
				if !literal {
					r.resolved = a
				}
				return nil, r
			}
		}
	}
	// Dial the checked addresses themselves, never the name, so that no second lookup can
	// answer differently. Tried in the resolver's order, like net.Dialer does.
	var firstErr error
	for _, a := range addrs {
		c, err := g.dial(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// ipNetwork is the lookup network for a dial network: "tcp4" looks up "ip4".
func ipNetwork(network string) string {
	switch network {
	case "tcp4", "udp4":
		return "ip4"
	case "tcp6", "udp6":
		return "ip6"
	}
	return "ip"
}
