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
