package lang

import (
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"
)

// errorf returns an error diagnostic about subject.
func errorf(subject hcl.Range, summary, detailFormat string, args ...any) *hcl.Diagnostic {
	r := subject
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(detailFormat, args...),
		Subject:  &r,
	}
}

// fileStart is the range of line 1 of a file, where diagnostics about the whole file point.
func fileStart(filename string) hcl.Range {
	return hcl.Range{
		Filename: filename,
		Start:    hcl.Pos{Line: 1, Column: 1, Byte: 0},
		End:      hcl.Pos{Line: 1, Column: 1, Byte: 0},
	}
}

// appendDiags appends the non-nil diagnostics of ds: helpers such as checkName return nil when
// all is well, and a nil entry would crash HCL's Diagnostics methods.
func appendDiags(to hcl.Diagnostics, ds ...*hcl.Diagnostic) hcl.Diagnostics {
	for _, d := range ds {
		if d != nil {
			to = append(to, d)
		}
	}
	return to
}

// splitRoots splits the references of expr into those whose root is one of allowed and the rest,
// for expressions that may only read some roots (settings, config, dedup_key).
func splitRoots(expr hcl.Expression, allowed ...string) (ok, foreign []hcl.Traversal) {
	for _, tr := range expr.Variables() {
		if slices.Contains(allowed, tr.RootName()) {
			ok = append(ok, tr)
		} else {
			foreign = append(foreign, tr)
		}
	}
	return ok, foreign
}
