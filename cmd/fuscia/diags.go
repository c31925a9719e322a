package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mitchellh/go-wordwrap"

	"github.com/hashicorp/hcl/v2"
)

// writeDiags renders diagnostics the way HCL and Terraform do — severity and summary, the file
// and line, the source line with the range underlined, then the detail — except that the
// underline is drawn with carets, so it survives without colour (HCL's writer only highlights
// with VT100 colours).
func writeDiags(w io.Writer, files map[string]*hcl.File, diags hcl.Diagnostics) {
	b := &strings.Builder{}
	for _, d := range diags {
		sev := "Error"
		if d.Severity == hcl.DiagWarning {
			sev = "Warning"
		}
		fmt.Fprintf(b, "%s: %s\n\n", sev, d.Summary)
		if d.Subject != nil {
			writeSnippet(b, files[d.Subject.Filename], *d.Subject)
		}
		if d.Detail != "" {
			b.WriteString(wordwrap.WrapString(d.Detail, 100))
			b.WriteString("\n\n")
		}
	}
	_, _ = io.WriteString(w, b.String())
}

func writeSnippet(b *strings.Builder, file *hcl.File, subject hcl.Range) {
	if file == nil || file.Bytes == nil {
		fmt.Fprintf(b, "  on %s line %d:\n  (source code not available)\n\n", subject.Filename, subject.Start.Line)
		return
	}
	context := ""
	if nav, ok := file.Nav.(interface{ ContextString(int) string }); ok {
		if c := nav.ContextString(subject.Start.Byte); c != "" {
			context = ", in " + c
		}
	}
	fmt.Fprintf(b, "  on %s line %d%s:\n", subject.Filename, subject.Start.Line, context)
	highlight := subject
	if highlight.Empty() {
		highlight.End.Byte++
		highlight.End.Column++
	}
	src := file.Bytes
	sc := hcl.NewRangeScanner(src, subject.Filename, bufio.ScanLines)
	shown := 0
	for sc.Scan() && shown < 5 {
		line := sc.Range()
		if !line.Overlaps(highlight) {
			continue
		}
		shown++
		text := sc.Bytes()
		fmt.Fprintf(b, "%4d: %s\n", line.Start.Line, text)
		before, hl, _ := line.PartitionAround(highlight)
		if hl.Empty() {
			continue
		}
		// Keep tabs in the padding so the carets line up under tab-indented code.
		pad := []byte(strings.Map(func(r rune) rune {
			if r == '\t' {
				return r
			}
			return ' '
		}, string(before.SliceBytes(src))))
		width := utf8.RuneCount(hl.SliceBytes(src))
		fmt.Fprintf(b, "      %s%s\n", pad, strings.Repeat("^", max(width, 1)))
	}
	b.WriteString("\n")
}

// jsonPos and friends are the `-json` shape of diagnostics in docs/reference/cli.md.
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
