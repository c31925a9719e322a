package testfile

import "testing"

func TestDecodeSmoke(t *testing.T) {
	f, diags := Load("testdata/valid/orders.fsctest.hcl")
	if diags.HasErrors() {
		t.Fatalf("diagnostics: %v", diags)
	}
	if len(f.Runs) != 3 {
		t.Fatalf("want 3 runs, got %d", len(f.Runs))
	}
}
