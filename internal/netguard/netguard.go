// Package netguard says which network destinations no workflow may reach unless told to:
// link-local addresses and cloud metadata services, where a task could read the host's cloud
// credentials. builtin.http and the Wasm host's http_request both dial through it.
package netguard

import (
	"net/netip"
	"strings"
)

// metadataNames are host names of cloud metadata services, refused before any DNS lookup
// because they may resolve to addresses that do not look like metadata addresses.
var metadataNames = map[string]bool{
	"metadata.google.internal": true,
	"metadata":                 true,
}

// metadataAddrs are cloud metadata addresses outside the link-local ranges, and the AWS
// one inside them, named for a clearer message.
var metadataAddrs = map[netip.Addr]bool{
	netip.MustParseAddr("169.254.169.254"): true, // AWS, GCP, Azure, OpenStack, …
	netip.MustParseAddr("fd00:ec2::254"):   true, // AWS over IPv6
	netip.MustParseAddr("100.100.100.200"): true, // Alibaba Cloud
}

// nat64 is the well-known NAT64 prefix: an address in it reaches the IPv4 address in its
// last four bytes.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Blocked says what kind of refused address a is, or "" when a may be reached.
func Blocked(a netip.Addr) string {
	a = a.WithZone("").Unmap()
	if nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte(b[12:]))
	}
	switch {
	case metadataAddrs[a]:
		return "a cloud metadata address"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "a link-local address"
	case a.IsUnspecified():
		// 0.0.0.0 and :: name no host, and a connection to them reaches this machine: a
		// grant of one would be a grant of every local service, whatever its port.
		return "an unspecified address (0.0.0.0 or ::)"
	}
	return ""
}

// MetadataName reports whether host is the name of a cloud metadata service.
func MetadataName(host string) bool { return metadataNames[NormHost(host)] }

// NormHost puts a host name or address in the form hosts are compared in.
func NormHost(h string) string {
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.ToLower(strings.TrimSuffix(h, "."))
}
