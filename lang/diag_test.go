package lang_test

import (
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/lang"
)

func TestAppendLater(t *testing.T) {
	at := func(file string, from, to int) *hcl.Range {
		return &hcl.Range{Filename: file, Start: hcl.Pos{Line: 1, Column: from + 1, Byte: from}, End: hcl.Pos{Line: 1, Column: to + 1, Byte: to}}
	}
	diag := func(sev hcl.DiagnosticSeverity, summary string, r *hcl.Range) *hcl.Diagnostic {
		return &hcl.Diagnostic{Severity: sev, Summary: summary, Detail: summary + ".", Subject: r}
	}
	earlier := hcl.Diagnostics{
		diag(hcl.DiagError, "Reference to undeclared variable", at("w.fsc.hcl", 10, 20)),
		diag(hcl.DiagWarning, "Component not installed", at("w.fsc.hcl", 30, 40)),
	}
	cases := []struct {
		name string
		d    *hcl.Diagnostic
		kept bool
	}{
		{"same range as an error", diag(hcl.DiagError, "Unsupported attribute", at("w.fsc.hcl", 10, 20)), false},
		{"within an error", diag(hcl.DiagError, "Unsupported attribute", at("w.fsc.hcl", 14, 20)), false},
		{"warning within an error", diag(hcl.DiagWarning, "Deprecated", at("w.fsc.hcl", 12, 13)), false},
		{"overlapping, not within", diag(hcl.DiagError, "Invalid input", at("w.fsc.hcl", 5, 15)), true},
		{"elsewhere", diag(hcl.DiagError, "Unknown plugin task", at("w.fsc.hcl", 50, 60)), true},
		{"within a warning", diag(hcl.DiagError, "Unknown component task", at("w.fsc.hcl", 32, 35)), true},
		{"same bytes, other file", diag(hcl.DiagError, "Unsupported attribute", at("other.fsc.hcl", 10, 20)), true},
		{"no subject", diag(hcl.DiagError, "Cannot read lock file", nil), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := lang.AppendLater(append(hcl.Diagnostics(nil), earlier...), hcl.Diagnostics{tc.d})
			if kept := len(got) == len(earlier)+1; kept != tc.kept {
				t.Fatalf("kept = %v, want %v", kept, tc.kept)
			}
			for i := range earlier {
				if got[i] != earlier[i] {
					t.Fatalf("earlier diagnostic %d changed", i)
				}
			}
		})
	}
}
