// Package capability matches what a component asks to reach (allowed_hosts, allowed_paths)
// against what it was granted. It is pure, so the planner checks grants without a Wasm host.
package capability

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/fuscia/fuscia/internal/netguard"
)

// HostPattern is one allowed_hosts entry: [scheme://]host[:port], where host may start with
// "*." to match every subdomain (not the domain itself). Without a scheme, http and https are
// both allowed; without a port, any port is.
type HostPattern struct {
	Scheme string // "", "http" or "https"
	Host   string // lower case, no trailing dot, IPv6 without brackets
	Port   string // "" for any
}

// ParseHostPattern parses an allowed_hosts entry.
func ParseHostPattern(s string) (HostPattern, error) {
	var p HostPattern
	rest := strings.TrimSpace(s)
	if scheme, r, ok := strings.Cut(rest, "://"); ok {
		p.Scheme, rest = strings.ToLower(scheme), r
		if p.Scheme != "http" && p.Scheme != "https" {
			return p, fmt.Errorf("allowed host %q: scheme %q is not http or https", s, scheme)
		}
	}
	if strings.ContainsAny(rest, "/?#@") {
		return p, fmt.Errorf("allowed host %q: a pattern is [scheme://]host[:port], without a path or user", s)
	}
	host, port, err := net.SplitHostPort(rest)
	if err != nil {
		host, port = rest, ""
	}
	if port == "*" {
		port = ""
	}
	if n, err := strconv.Atoi(port); port != "" && (err != nil || n < 1 || n > 65535) {
		return p, fmt.Errorf("allowed host %q: the port must be a number from 1 to 65535, or *", s)
	}
	if strings.ContainsFunc(host, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return p, fmt.Errorf("allowed host %q: a host has no spaces", s)
	}
	p.Host, p.Port = netguard.NormHost(host), port
	if p.Host == "" || strings.Contains(strings.TrimPrefix(p.Host, "*."), "*") {
		return p, fmt.Errorf("allowed host %q: the host must be a name, an address or *.domain", s)
	}
	return p, nil
}

func (p HostPattern) String() string {
	s := p.Host
	if strings.Contains(s, ":") {
		s = "[" + s + "]"
	}
	if p.Port != "" {
		s += ":" + p.Port
	}
	if p.Scheme != "" {
		s = p.Scheme + "://" + s
	}
	return s
}

// hostMatches reports whether host (normalised) is p's host or, for *.domain, below it.
func (p HostPattern) hostMatches(host string) bool {
	if p.Host == host {
		return true
	}
	if a, err := netip.ParseAddr(p.Host); err == nil {
		b, err := netip.ParseAddr(host)
		return err == nil && a.Unmap() == b.Unmap()
	}
	if domain, ok := strings.CutPrefix(p.Host, "*."); ok {
		return strings.HasSuffix(host, "."+domain)
	}
	return false
}

// Covers reports whether everything q allows, p allows too: the test that a workflow's
// component block only narrows what the manifest grants.
func (p HostPattern) Covers(q HostPattern) bool {
	if p.Scheme != "" && p.Scheme != q.Scheme {
		return false
	}
	if p.Port != "" && p.Port != q.Port {
		return false
	}
	if p.Host == q.Host {
		return true
	}
	if strings.HasPrefix(q.Host, "*.") {
		// *.a.b is covered by *.b, never by a plain name.
		d, ok := strings.CutPrefix(p.Host, "*.")
		return ok && strings.HasSuffix(q.Host, "."+d)
	}
	return p.hostMatches(q.Host)
}

// Allows reports whether a request to u is allowed by p.
func (p HostPattern) Allows(u *url.URL) bool {
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return false
	}
	if p.Scheme != "" && p.Scheme != scheme {
		return false
	}
	if p.Port != "" && p.Port != effectivePort(u) {
		return false
	}
	return p.hostMatches(netguard.NormHost(u.Hostname()))
}

func effectivePort(u *url.URL) string {
	if port := u.Port(); port != "" {
		return port
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// AnyHostCovers reports whether one of granted covers want; a pattern that does not parse
// covers nothing.
func AnyHostCovers(granted []string, want string) bool {
	w, err := ParseHostPattern(want)
	if err != nil {
		return false
	}
	for _, g := range granted {
		if p, err := ParseHostPattern(g); err == nil && p.Covers(w) {
			return true
		}
	}
	return false
}

// ResolveNarrowedPath returns the directory a path a workflow narrowed a grant to really is,
// symbolic links followed, and an error unless that directory is one of granted (resolved the
// same way) or inside one. AnyPathCovers compares the names only: a link inside a granted
// directory (one the component itself may have made: it can write there) names a directory
// inside the grant and leads anywhere. The caller opens the returned directory, not want, so
// that a link changed after this check is not followed either.
func ResolveNarrowedPath(granted []string, want string) (string, error) {
	real, err := filepath.EvalSymlinks(want)
	if err != nil {
		return "", fmt.Errorf("allowed path %s: %w", want, err)
	}
	real, err = filepath.Abs(real)
	if err != nil {
		return "", fmt.Errorf("allowed path %s: %w", want, err)
	}
	var roots []string
	for _, g := range granted {
		if r, err := filepath.EvalSymlinks(g); err == nil {
			roots = append(roots, r)
		}
	}
	if !AnyPathCovers(roots, real) {
		return "", fmt.Errorf("allowed path %s is %s once its symbolic links are followed, outside what the manifest grants (%s)", want, real, strings.Join(granted, ", "))
	}
	return real, nil
}

// AnyPathCovers reports whether want is one of granted or inside one.
func AnyPathCovers(granted []string, want string) bool {
	w := filepath.Clean(want)
	for _, g := range granted {
		g = filepath.Clean(g)
		if w == g || strings.HasPrefix(w, strings.TrimSuffix(g, "/")+"/") {
			return true
		}
	}
	return false
}
