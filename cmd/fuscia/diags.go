package main

import (
	"encoding/json"
	"io"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/internal/diagrender"
)

// writeDiags renders diagnostics the way HCL and Terraform do, with the source line of each
// (diagrender.Write: shared with the reports of `fuscia test`).
func writeDiags(w io.Writer, files map[string]*hcl.File, diags hcl.Diagnostics) {
	diagrender.Write(w, files, diags)
}

// jsonPos and friends are the `-json` shape of diagnostics in docs/reference/cli.md.
type (
	jsonPos   = diagrender.Pos
	jsonRange = diagrender.Range
	jsonDiag  = diagrender.Diag
)

func toJSONDiags(diags hcl.Diagnostics) []jsonDiag { return diagrender.JSON(diags) }

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

// reportDiags prints the diagnostics of loading a workflow, whose ranges point into files:
// errors as the JSON of validate -json or as text, warnings as text. stop is true (with exit
// code 2) when there were errors.
func (c *cli) reportDiags(asJSON bool, files map[string]*hcl.File, diags hcl.Diagnostics) (code int, stop bool) {
	if !diags.HasErrors() {
		writeDiags(c.stderr, files, diags) // warnings
		return 0, false
	}
	if asJSON {
		errs, warns := countDiags(diags)
		_ = writeJSON(c.stdout, map[string]any{
			"format_version": "1.0", "valid": false, "error_count": errs, "warning_count": warns,
			"diagnostics": toJSONDiags(diags),
		})
	} else {
		writeDiags(c.stderr, files, diags)
	}
	return exitInvalid, true
}
