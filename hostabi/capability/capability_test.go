package capability

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseHostPattern(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"api.example.com", "api.example.com"},
		{"HTTPS://API.Example.com.:8443", "https://api.example.com:8443"},
		{"*.example.com", "*.example.com"},
		{"[::1]:80", "[::1]:80"},
	} {
		p, err := ParseHostPattern(tc.in)
		if err != nil || p.String() != tc.want {
			t.Errorf("ParseHostPattern(%q) = %q, %v; want %q", tc.in, p.String(), err, tc.want)
		}
	}
	for _, bad := range []string{"ftp://x", "", "http://", "a b", "x.org:http", "x.org:0", "x.org:70000", "*.*.org"} {
		if _, err := ParseHostPattern(bad); err == nil {
			t.Errorf("ParseHostPattern(%q) accepted", bad)
		}
	}
}

// TestCovers: a workflow may only narrow a manifest's grants.
func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		granted []string
		want    string
		ok      bool
	}{
		{[]string{"api.example.com"}, "api.example.com", true},
		{[]string{"api.example.com"}, "https://api.example.com:443", true},
		{[]string{"https://api.example.com"}, "api.example.com", false}, // would allow http too
		{[]string{"*.example.com"}, "a.example.com", true},
		{[]string{"*.example.com"}, "*.a.example.com", true},
		{[]string{"*.example.com"}, "example.com", false},
		{[]string{"a.example.com"}, "*.example.com", false},
		{[]string{"api.example.com:8080"}, "api.example.com", false},
		{[]string{"not a pattern", "x.org"}, "x.org", true},
		{[]string{"x.org"}, "::bad::", false},
	} {
		if got := AnyHostCovers(tc.granted, tc.want); got != tc.ok {
			t.Errorf("AnyHostCovers(%q, %q) = %v; want %v", tc.granted, tc.want, got, tc.ok)
		}
	}
}

func TestAllows(t *testing.T) {
	p, _ := ParseHostPattern("https://*.example.com")
	for _, tc := range []struct {
		u  string
		ok bool
	}{
		{"https://a.example.com/x", true},
		{"https://a.example.com:443/x", true},
		{"http://a.example.com/x", false},
		{"https://example.com/", false},
		{"https://evil.com/?a.example.com", false},
		{"file:///etc/passwd", false},
	} {
		u, _ := url.Parse(tc.u)
		if got := p.Allows(u); got != tc.ok {
			t.Errorf("Allows(%s) = %v; want %v", tc.u, got, tc.ok)
		}
	}
	ip, _ := ParseHostPattern("127.0.0.1:80")
	if u, _ := url.Parse("http://127.0.0.1/"); !ip.Allows(u) {
		t.Error("127.0.0.1:80 does not allow http://127.0.0.1/ (port 80 implied)")
	}
}

func TestAnyPathCovers(t *testing.T) {
	granted := []string{"/data/in", "/tmp/"}
	for _, tc := range []struct {
		want string
		ok   bool
	}{
		{"/data/in", true}, {"/data/in/x/y", true}, {"/data/inbox", false},
		{"/data/in/../out", false}, {"/tmp/a", true}, {"/", false},
	} {
		if got := AnyPathCovers(granted, tc.want); got != tc.ok {
			t.Errorf("AnyPathCovers(%q) = %v; want %v", tc.want, got, tc.ok)
		}
	}
}

// TestResolveNarrowedPath: a narrowed path is checked where it really is: a real directory
// inside the grant is taken (resolved); a link inside the grant to a directory outside it is
// refused, naming both; a grant that is itself a link covers what it leads to.
func TestResolveNarrowedPath(t *testing.T) {
	root := t.TempDir()
	grant, outside := filepath.Join(root, "grant"), filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(grant, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(grant, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../..", filepath.Join(grant, "sub", "up")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(grant, filepath.Join(root, "grantlink")); err != nil {
		t.Fatal(err)
	}
	if got, err := ResolveNarrowedPath([]string{grant}, filepath.Join(grant, "sub")); err != nil || got != filepath.Join(grant, "sub") {
		t.Errorf("a directory inside: %q, %v", got, err)
	}
	if got, err := ResolveNarrowedPath([]string{filepath.Join(root, "grantlink")}, filepath.Join(root, "grantlink", "sub")); err != nil || got != filepath.Join(grant, "sub") {
		t.Errorf("inside a grant that is a link: %q, %v", got, err)
	}
	for _, p := range []string{filepath.Join(grant, "out"), filepath.Join(grant, "sub", "up")} {
		if got, err := ResolveNarrowedPath([]string{grant}, p); err == nil || !strings.Contains(err.Error(), "outside what the manifest grants") {
			t.Errorf("%s: %q, %v; want refused", p, got, err)
		}
	}
	if _, err := ResolveNarrowedPath([]string{grant}, filepath.Join(grant, "missing")); err == nil {
		t.Error("a path that does not exist was taken")
	}
}
