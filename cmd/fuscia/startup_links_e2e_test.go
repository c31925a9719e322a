package main

import (
	"debug/buildinfo"
	"debug/elf"
	"strings"
	"testing"
)

// TestBinaryDoesNotLinkGoCmp: go-cmp's package initializers (regexps over Unicode classes,
// ~180 KB of heap) ran at every start of fuscia, linked only by hclwrite's unused node.Equal,
// which the repository's copy of HCL leaves out (internal/third_party/hcl/README.md). Every
// linked package's init runs before main whatever the command, so a new import of go-cmp by
// anything in the binary would bring that cost back to `fuscia apply`'s start.
func TestBinaryDoesNotLinkGoCmp(t *testing.T) {
	info, err := buildinfo.ReadFile(fusciaBin)
	if err != nil {
		t.Fatalf("read the build info of %s: %v", fusciaBin, err)
	}
	for _, m := range info.Deps {
		if m.Path == "github.com/google/go-cmp" {
			t.Errorf("fuscia links %s %s; find the import with `go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./cmd/fuscia`", m.Path, m.Version)
		}
	}
}

// TestBinaryDoesNotLinkGRPCReflection: gRPC's reflection service, which upstream go-plugin
// registers on every plugin's server, linked protodesc and descriptorpb, whose package
// initializers (all of descriptor.proto's editions defaults built) cost ~0.6 ms at every start of
// fuscia. The repository's copy of go-plugin leaves the registration out
// (internal/third_party/go-plugin/README.md). A module check cannot see this: the grpc and
// protobuf modules stay linked, so the test looks for the packages' symbols.
func TestBinaryDoesNotLinkGRPCReflection(t *testing.T) {
	f, err := elf.Open(fusciaBin)
	if err != nil {
		t.Fatalf("open %s: %v", fusciaBin, err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatalf("read the symbols of %s: %v", fusciaBin, err)
	}
	unwanted := []string{
		"google.golang.org/grpc/reflection.",
		"google.golang.org/protobuf/reflect/protodesc.",
		"google.golang.org/protobuf/types/descriptorpb.",
	}
	found := map[string]string{}
	for _, s := range syms {
		for _, prefix := range unwanted {
			if _, seen := found[prefix]; !seen && strings.HasPrefix(s.Name, prefix) {
				found[prefix] = s.Name
			}
		}
	}
	for prefix, sym := range found {
		t.Errorf("fuscia links %s (symbol %s); find the import with `go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./cmd/fuscia`", strings.TrimSuffix(prefix, "."), sym)
	}
	if len(syms) < 1000 {
		t.Fatalf("%s has %d symbols: a stripped binary cannot show what it links", fusciaBin, len(syms))
	}
}

// TestStartSkipsThirdPartyInitializers: every linked package's initializer runs before main,
// whatever the command. Several did work no one-shot command needed, ~3 ms of every start
// together: procfs compiled ~20 regular expressions (linked for serve's process metrics),
// nuid seeded its global generator from crypto/rand (the cluster's NATS client), and expvar
// published memstats and registered /debug/vars (imported by Badger's metrics, which the store
// disables, and by Prometheus's expvar collector, which nothing uses). The repository's copies
// of procfs and nuid make that work at first use, and its copies of Badger and client_golang
// no longer import expvar (internal/third_party/*/README.md). encoding/xml built its map of 250
// HTML entities (~0.6 ms), for the JUnit report of `fuscia test`, which engine/fsctest now
// prints itself; zstd's snapref and cpuinfo, for a compression the store never uses, which the
// copy of Badger leaves out; encoding/gob (~0.5-1 ms), linked by go-plugin's net/rpc protocol and
// NATS's deprecated encoded connections, which the copies of both leave out. GODEBUG=inittrace=1 makes the runtime print one line per package
// whose initializer runs; none of these may appear, whether brought back by an upgrade or by a
// new import.
func TestStartSkipsThirdPartyInitializers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.env = append(h.env, "GODEBUG=inittrace=1")
	r := h.run("version", "-json=true") // reaches Go (TestVersionFastPathTaken)
	wantCode(t, r, exitOK)
	traced := 0
	for _, line := range strings.Split(r.stderr, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != "init" {
			continue
		}
		traced++
		switch pkg := fields[1]; {
		case pkg == "expvar", pkg == "encoding/xml", pkg == "encoding/gob", pkg == "net/rpc", pkg == "github.com/nats-io/nuid",
			strings.HasPrefix(pkg, "github.com/prometheus/procfs"),
			strings.HasPrefix(pkg, "github.com/klauspost/compress/zstd"), pkg == "github.com/klauspost/compress/internal/snapref":
			t.Errorf("fuscia's start ran the initializer of %s: %s\nfind the import with `go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./cmd/fuscia`", pkg, line)
		}
	}
	if traced < 50 {
		t.Fatalf("only %d package initializers traced; is GODEBUG=inittrace=1 still honoured?\n%s", traced, r)
	}
}
