package builtin

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/internal/outcome"
)

func TestSSRFRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		url     string
		hosts   map[string][]string // what the test resolver answers
		wantMsg string
	}{
		{"metadata IP", "http://169.254.169.254/latest/meta-data", nil,
			`169.254.169.254 is a cloud metadata address; add "169.254.169.254" to allow_hosts to allow it`},
		{"link-local IPv6", "http://[fe80::1]/", nil, `fe80::1 is a link-local address; add "fe80::1" to allow_hosts`},
		{"link-local IPv6 with zone", "http://[fe80::1%25eth0]:8080/", nil, `is a link-local address`},
		{"link-local IPv4", "https://169.254.10.20:8443/", nil, "169.254.10.20 is a link-local address"},
		{"IPv4-mapped metadata", "http://[::ffff:169.254.169.254]/", nil, "a cloud metadata address"},
		{"NAT64 metadata", "http://[64:ff9b::a9fe:a9fe]/", nil, "a cloud metadata address"},
		{"AWS IPv6 metadata", "http://[fd00:ec2::254]/", nil, "a cloud metadata address"},
		{"Alibaba metadata", "http://100.100.100.200/latest/meta-data", nil, "100.100.100.200 is a cloud metadata address"},
		{"metadata name", "http://metadata.google.internal/computeMetadata/v1/", nil,
			`metadata.google.internal is a cloud metadata host name; add "metadata.google.internal" to allow_hosts`},
		{"metadata name, odd case and root dot", "http://Metadata.Google.Internal./", nil, "a cloud metadata host name"},
		{"short metadata name", "http://metadata/", nil, "a cloud metadata host name"},
		{"name resolving to metadata", "http://rebind.test/", map[string][]string{"rebind.test": {"169.254.169.254"}},
			`rebind.test resolves to 169.254.169.254, a cloud metadata address; add "rebind.test" to allow_hosts`},
		{"one bad address among good ones", "http://mixed.test/", map[string][]string{"mixed.test": {"127.0.0.1", "169.254.1.1"}},
			"mixed.test resolves to 169.254.1.1, a link-local address"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, log := testRunner(t, nil, tc.hosts)
			res := run(t, context.Background(), r, "http", map[string]any{"url": tc.url, "timeout": "2s"})
			wantFailure(t, res, outcome.SandboxViolation, "builtin.http: GET ", " refused: ", tc.wantMsg)
			if d := log.Dials(); len(d) != 0 {
				t.Errorf("dialled %v; the guard must refuse before any connection", d)
			}
			if l := log.Lookups(); strings.Contains(tc.name, "metadata name") && len(l) != 0 {
				t.Errorf("looked up %v; a metadata name must be refused before resolving", l)
			}
		})
	}
}

func TestSSRFRedirect(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/iam", http.StatusFound)
	})
	r, log := testRunner(t, nil, nil)
	res := run(t, context.Background(), r, "http", map[string]any{"url": s.URL + "/go"})
	wantFailure(t, res, outcome.SandboxViolation, "GET "+s.URL+"/go refused: 169.254.169.254 is a cloud metadata address")
	if d, want := log.Dials(), []string{strings.TrimPrefix(s.URL, "http://")}; !slices.Equal(d, want) {
		t.Errorf("dialled %v; want only the test server %v", d, want)
	}
	if n := s.requests.Load(); n != 1 {
		t.Errorf("%d requests; want 1", n)
	}

	// allow_hosts lists the first host, not the one redirected to.
	res = run(t, context.Background(), r, "http", map[string]any{"url": s.URL + "/go", "allow_hosts": []string{"127.0.0.1"}})
	wantFailure(t, res, outcome.SandboxViolation, "169.254.169.254 is a cloud metadata address")
}

// TestSSRFAllowHosts reaches a metadata address through the real network: with allow_hosts
// the guard lets the dial happen; what the dial then does depends on the machine.
func TestSSRFAllowHosts(t *testing.T) {
	t.Parallel()
	r, log := testRunner(t, nil, nil)
	res := run(t, context.Background(), r, "http", map[string]any{
		"url": "http://169.254.169.254/latest/meta-data", "timeout": "200ms", "allow_hosts": []string{"169.254.169.254"}})
	if res.Type == outcome.Failure && res.Kind == outcome.SandboxViolation {
		t.Fatalf("allow_hosts did not let the request through: %s", res.Message)
	}
	t.Logf("with allow_hosts: %s %s %q", res.Type, res.Kind, res.Message)
	if d := log.Dials(); !slices.Contains(d, "169.254.169.254:80") {
		t.Errorf("dialled %v; want 169.254.169.254:80", d)
	}
}

// TestSSRFAllowHostsNotShared checks that a connection allow_hosts let through is not reused
// by a later request that does not list the host. The test dialer stands a test server in
// for the metadata address.
func TestSSRFAllowHostsNotShared(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("credentials")) })
	r, log := testRunner(t, map[string]string{"169.254.169.254:80": strings.TrimPrefix(s.URL, "http://")}, nil)
	for _, allow := range [][]string{{"169.254.169.254"}, {"[169.254.169.254]"}, {"example.com", "169.254.169.254"}} {
		res := run(t, context.Background(), r, "http", map[string]any{"url": "http://169.254.169.254/", "allow_hosts": allow})
		if res.Type != outcome.Success {
			t.Fatalf("allow_hosts %v: got %+v; want success", allow, res)
		}
	}
	res := run(t, context.Background(), r, "http", map[string]any{"url": "http://169.254.169.254/"})
	wantFailure(t, res, outcome.SandboxViolation, "169.254.169.254")
	if n := len(log.Dials()); n != 3 {
		t.Errorf("%d dials; want 3 (one per allowed request, none for the refused one)", n)
	}
	if n := s.requests.Load(); n != 3 {
		t.Errorf("%d requests reached the server; want 3", n)
	}
}

func TestAllowed(t *testing.T) {
	g := (&guard{}).with([]string{"Metadata.Google.Internal", "[fe80::1]", "169.254.169.254", "fd00:ec2:0::254"})
	for host, want := range map[string]bool{
		"metadata.google.internal":  true,
		"METADATA.google.internal.": true,
		"fe80::1":                   true,
		"fe80:0::1":                 true,
		"169.254.169.254":           true,
		"fd00:ec2::254":             true,
		"metadata":                  false,
		"169.254.169.253":           false,
		"google.internal":           false,
	} {
		if got := g.allowed(host); got != want {
			t.Errorf("allowed(%q) = %v; want %v", host, got, want)
		}
	}
}
