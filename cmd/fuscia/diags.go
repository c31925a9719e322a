package main

import (
	"encoding/json"
	"io"

	"github.com/hashicorp/hcl/v2"
)

// writeDiags renders diagnostics the way HCL (and Terraform) do: summary, file and line, the
// source line with the range underlined, and the detail.
func writeDiags(w io.Writer, files map[string]*hcl.File, diags hcl.Diagnostics) {
	if len(diags) == 0 {
		return
	}
	wr := hcl.NewDiagnosticTextWriter(w, files, 100, false)
	_ = wr.WriteDiagnostics(diags)
}

// jsonPos and friends are the `-json` shape of diagnostics in cli.md.
type jsonPos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

type jsonRange struct {
	Filename string  `json:"filename"`
	Start    jsonPos `json:"start"`
	End      jsonPos `json:"end"`
}

type jsonDiag struct {
	Severity string     `json:"severity"`
	Summary  string     `json:"summary"`
	Detail   string     `json:"detail"`
	Range    *jsonRange `json:"range,omitempty"`
}

func toJSONDiags(diags hcl.Diagnostics) []jsonDiag {
	out := make([]jsonDiag, 0, len(diags))
	for _, d := range diags {
		jd := jsonDiag{Severity: "error", Summary: d.Summary, Detail: d.Detail}
		if d.Severity == hcl.DiagWarning {
			jd.Severity = "warning"
		}
		if r := d.Subject; r != nil {
			jd.Range = &jsonRange{
				Filename: r.Filename,
				Start:    jsonPos{r.Start.Line, r.Start.Column, r.Start.Byte},
				End:      jsonPos{r.End.Line, r.End.Column, r.End.Byte},
			}
		}
		out = append(out, jd)
	}
	return out
}

func countDiags(diags hcl.Diagnostics) (errs, warns int) {
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			errs++
		} else {
			warns++
		}
	}
	return errs, warns
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
