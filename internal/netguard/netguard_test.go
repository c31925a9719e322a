package netguard

import (
	"net/netip"
	"testing"
)

func TestBlocked(t *testing.T) {
	tests := map[string]string{
		"169.254.169.254":      "a cloud metadata address",
		"169.254.0.1":          "a link-local address",
		"fe80::1":              "a link-local address",
		"fe80::1%eth0":         "a link-local address",
		"fd00:ec2::254":        "a cloud metadata address",
		"100.100.100.200":      "a cloud metadata address",
		"::ffff:169.254.1.1":   "a link-local address",
		"64:ff9b::a9fe:101":    "a link-local address",
		"224.0.0.1":            "a link-local address",
		"0.0.0.0":              "an unspecified address (0.0.0.0 or ::)",
		"::":                   "an unspecified address (0.0.0.0 or ::)",
		"::ffff:0.0.0.0":       "an unspecified address (0.0.0.0 or ::)",
		"127.0.0.1":            "",
		"::1":                  "",
		"10.1.2.3":             "",
		"192.168.1.1":          "",
		"100.100.100.201":      "",
		"fd00::1":              "",
		"8.8.8.8":              "",
		"2001:4860:4860::8888": "",
	}
	for s, want := range tests {
		if got := Blocked(netip.MustParseAddr(s)); got != want {
			t.Errorf("Blocked(%s) = %q; want %q", s, got, want)
		}
	}
}
