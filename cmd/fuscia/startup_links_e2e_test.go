package main

import (
	"debug/buildinfo"
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
