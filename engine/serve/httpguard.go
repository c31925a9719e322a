package serve

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"path"
	"strings"
)

// The browser protections of serve's TCP listener (docs/security.md, "HTTP listener").
//
// A web page the operator opens can send requests to 127.0.0.1: simple cross-origin POSTs
// (text/plain, forms) go out without a preflight, and a page whose name the attacker
// re-binds to 127.0.0.1 (DNS rebinding) is, to the browser, the same origin as the API and may
// read its answers. On the API (/v1/…) the guard therefore refuses, in this order:
//
//  1. a Host that is not one of ours (421): a re-bound page sends its own name as Host;
//  2. a cross-origin state change (403): net/http's CrossOriginProtection, from
//     Sec-Fetch-Site or, in older browsers, Origin against Host;
//  3. a body that is not application/json (415): what a page can send without a preflight is
//     never JSON.
//
// The web UI (/ui/…) is refused the same way: its login is a state change a page of another
// site must not make (login CSRF), and a re-bound page must not read its pages.
//
// Webhooks are exempt: their senders reach serve through proxies and tunnels under their own
// public names, browsers do not send them, and they authenticate with their HMAC.

// AllowedHost is a name the API answers to (-allowed-host): a host name or IP address, with a
// port or not (then any port), or "*" for any Host.
type AllowedHost struct {
	Host string // lower case, without brackets or a final dot
	Port string // "" for any port
}

// AnyHost is the AllowedHost that allows every Host (no DNS-rebinding defence).
var AnyHost = AllowedHost{Host: "*"}

// ParseAllowedHost reads an -allowed-host value: NAME, NAME:PORT, [IPv6]:PORT, or *.
func ParseAllowedHost(s string) (AllowedHost, error) {
	if s == "*" {
		return AnyHost, nil
	}
	if s == "" || strings.ContainsAny(s, "/@?#* \t") {
		return AllowedHost{}, fmt.Errorf("%q is not a host: give a name such as fuscia.example.com, a name with a port (fuscia.example.com:8443), an IP address, or * for any; no scheme or path", s)
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		host, port = s, ""
		if strings.Count(s, ":") > 1 && !strings.HasPrefix(s, "[") {
			// A bare IPv6 address: SplitHostPort wants it bracketed with a port.
			if net.ParseIP(s) == nil {
				return AllowedHost{}, fmt.Errorf("%q is not a host: write an IPv6 address as [::1] or [::1]:8080", s)
			}
		}
	} else if port == "" || strings.Trim(port, "0123456789") != "" {
		return AllowedHost{}, fmt.Errorf("%q has a bad port: write NAME:PORT with a number, or NAME alone for any port", s)
	}
	h := normalHost(host)
	if h == "" {
		return AllowedHost{}, fmt.Errorf("%q has no host name", s)
	}
	return AllowedHost{Host: h, Port: port}, nil
}

func (a AllowedHost) String() string {
	switch {
	case a.Port == "":
		return a.Host
	case strings.Contains(a.Host, ":"):
		return "[" + a.Host + "]:" + a.Port
	}
	return a.Host + ":" + a.Port
}

// matches reports whether a request's host and port (port "" when the Host header had none)
// are this one.
func (a AllowedHost) matches(host, port string) bool {
	return a.Host == "*" || (a.Host == host && (a.Port == "" || a.Port == port))
}

// normalHost is host without IPv6 brackets or a final dot, in lower case.
func normalHost(host string) string {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// GuardConfig configures the guard.
type GuardConfig struct {
	// ListenAddr is the -listen address: its host, when it names one (not 0.0.0.0 or ::), is
	// allowed with any port.
	ListenAddr string
	// AllowedHosts are the other names the API answers to (-allowed-host).
	AllowedHosts []AllowedHost
}

// hostPolicy says which Host headers the API answers. Besides the configured names it always
// allows localhost, a loopback address, and the address the connection came to: none of
// them is a name an attacker's page can be re-bound from.
type hostPolicy struct {
	allowed []AllowedHost
}

func newHostPolicy(cfg GuardConfig) hostPolicy {
	p := hostPolicy{allowed: append([]AllowedHost{{Host: "localhost"}}, cfg.AllowedHosts...)}
	if host, _, err := net.SplitHostPort(cfg.ListenAddr); err == nil && host != "" {
		if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
			p.allowed = append(p.allowed, AllowedHost{Host: normalHost(host)})
		}
	}
	return p
}

// allows reports whether r's Host names this server. An empty Host (HTTP/1.0 without one) is
// allowed: every browser sends one.
func (p hostPolicy) allows(r *http.Request) bool {
	if r.Host == "" {
		return true
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = r.Host, ""
	}
	host = normalHost(host)
	for _, a := range p.allowed {
		if a.matches(host, port) {
			return true
		}
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	return ok && local.IP.Equal(ip)
}

// guard is the handler of GuardConfig around the listener's handler.
type guard struct {
	hosts hostPolicy
	cross *http.CrossOriginProtection
	next  http.Handler
}

// Guard wraps next with the browser protections of the API (/v1/…) and the web UI (/ui/…);
// other paths (the webhooks) pass through.
func Guard(cfg GuardConfig, next http.Handler) http.Handler {
	return &guard{hosts: newHostPolicy(cfg), cross: http.NewCrossOriginProtection(), next: next}
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	api := requestUnder(r, isAPIPath)
	if !api && !requestUnder(r, isUIPath) {
		g.next.ServeHTTP(w, r)
		return
	}
	if api {
		h := w.Header()
		// The API's answers are data, never pages: a browser must not sniff them into HTML,
		// run an artifact's HTML with the API's origin, or let another site embed them. (The
		// UI's pages have their own policy: ui.SetHeaders.)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
	}
	if !g.hosts.allows(r) {
		writeJSON(w, http.StatusMisdirectedRequest, map[string]string{"code": "misdirected",
			"error": fmt.Sprintf("this server does not answer to the Host %q; start serve with -allowed-host NAME to add the name it is reached by", r.Host)})
		return
	}
	if err := g.cross.Check(r); err != nil {
		writeJSON(w, http.StatusForbidden, map[string]string{"code": "cross_origin",
			"error": "cross-origin requests that change state are refused; call the API from the same origin or from a program"})
		return
	}
	if msg := mediaTypeProblem(r); msg != "" {
		writeJSON(w, http.StatusUnsupportedMediaType, map[string]string{"code": "unsupported_media_type", "error": msg})
		return
	}
	g.next.ServeHTTP(w, r)
}

// requestUnder says whether r's path is one that under says is a prefix's, decoded or as sent:
// the mux routes by the escaped path, in which "%2F.." is no step up, so
// "/v1/executions/x%2F..%2F.." is the API's although its decoded path cleans to "/".
func requestUnder(r *http.Request, under func(string) bool) bool {
	return under(r.URL.Path) || under(r.URL.EscapedPath())
}

// isAPIPath reports whether p, cleaned as the mux cleans it, is under /v1.
func isAPIPath(p string) bool {
	c := path.Clean("/" + p)
	return c == "/v1" || strings.HasPrefix(c, "/v1/")
}

// mediaTypeProblem says why a request that changes state does not have a JSON body ("" when
// it does, or has no body and no Content-Type).
func mediaTypeProblem(r *http.Request) string {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return ""
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" && r.ContentLength == 0 {
		return ""
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil && mt == "application/json" {
		return ""
	}
	if ct == "" {
		return "the body has no Content-Type: send it as application/json"
	}
	return fmt.Sprintf("the body is %q: the API takes application/json", ct)
}
