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

// Dedupe returns diags without the repeats of a diagnostic (same severity, summary, detail and
// subject), in their order: a nested expression that fails the same way for every element of
// an enclosing for (the bound on iterations, say) is reported once, not once per element.
func Dedupe(diags hcl.Diagnostics) hcl.Diagnostics {
	if len(diags) < 2 {
		return diags
	}
	type key struct {
		severity        hcl.DiagnosticSeverity
		summary, detail string
		subject         hcl.Range
	}
	seen := make(map[key]bool, len(diags))
	out := diags[:0:0]
	for _, d := range diags {
		k := key{severity: d.Severity, summary: d.Summary, detail: d.Detail}
		if d.Subject != nil {
			k.subject = *d.Subject
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, d)
		}
	}
	return out
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

// SortDiagnostics orders diagnostics as Load does: by file (in the order files are first
// mentioned) and position, those without a position first, so users read them top to bottom.
func SortDiagnostics(diags hcl.Diagnostics) { sortDiags(diags) }

// AppendLater appends the diagnostics of a later check to those of earlier ones, leaving out
// each later one whose subject lies within the subject of an earlier error: a later check that
// evaluates an expression an earlier one rejected would only report that error again in other
// words (an undeclared variable in a plugin's config is also an unsupported attribute when the
// config is evaluated).
func AppendLater(earlier, later hcl.Diagnostics) hcl.Diagnostics {
	out := earlier
	for _, d := range later {
		if d == nil || coveredByError(earlier, d.Subject) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// coveredByError reports whether rng lies within the subject of one of diags' errors.
func coveredByError(diags hcl.Diagnostics, rng *hcl.Range) bool {
	if rng == nil {
		return false
	}
	for _, d := range diags {
		if d == nil || d.Severity != hcl.DiagError || d.Subject == nil {
			continue
		}
		s := d.Subject
		if s.Filename == rng.Filename && s.Start.Byte <= rng.Start.Byte && rng.End.Byte <= s.End.Byte {
			return true
		}
	}
	return false
}
