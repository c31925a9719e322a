package diagrender

import "github.com/hashicorp/hcl/v2"

// Pos, Range and Diag are the JSON shape of a diagnostic in `validate -json` and every other
// machine-readable output that carries diagnostics (docs/reference/cli.md, "Diagnostics").
type Pos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

// Range is a source range: the file as given, and its start and end.
type Range struct {
	Filename string `json:"filename"`
	Start    Pos    `json:"start"`
	End      Pos    `json:"end"`
}

// Diag is one diagnostic; Range is nil for one without a source location.
type Diag struct {
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	Detail   string `json:"detail"`
	Range    *Range `json:"range,omitempty"`
}

// JSON converts diags, in order; never nil, so that an empty list encodes as [].
func JSON(diags hcl.Diagnostics) []Diag {
	out := make([]Diag, 0, len(diags))
	for _, d := range diags {
		jd := Diag{Severity: "error", Summary: d.Summary, Detail: d.Detail}
		if d.Severity == hcl.DiagWarning {
			jd.Severity = "warning"
		}
		if r := d.Subject; r != nil {
			jr := RangeOf(*r)
			jd.Range = &jr
		}
		out = append(out, jd)
	}
	return out
}

// RangeOf is r in its JSON shape.
func RangeOf(r hcl.Range) Range {
	return Range{
		Filename: r.Filename,
		Start:    Pos{r.Start.Line, r.Start.Column, r.Start.Byte},
		End:      Pos{r.End.Line, r.End.Column, r.End.Byte},
	}
}
