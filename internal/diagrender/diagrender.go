// Package diagrender renders hcl.Diagnostics for people and for programs: as text the way HCL
// and Terraform show them (severity and summary, file and line, the source line with the
// range underlined, the detail), and as the JSON objects of `validate -json`
// (docs/reference/cli.md). The CLI and the test reports of engine/fsctest share it, so a
// diagnostic looks the same wherever it is shown.
package diagrender

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/mitchellh/go-wordwrap"
)

// Write renders diags to w, each with the source line its subject points into when files
// holds that file. The underline is drawn with carets, so it survives without colour (HCL's
// own writer only highlights with VT100 colours).
func Write(w io.Writer, files map[string]*hcl.File, diags hcl.Diagnostics) {
	b := &strings.Builder{}
	for _, d := range diags {
		sev := "Error"
		if d.Severity == hcl.DiagWarning {
			sev = "Warning"
		}
		fmt.Fprintf(b, "%s: %s\n\n", sev, d.Summary)
		if d.Subject != nil {
			Snippet(b, files[d.Subject.Filename], *d.Subject)
		}
		if d.Detail != "" {
			b.WriteString(wordwrap.WrapString(d.Detail, 100))
			b.WriteString("\n\n")
		}
	}
	_, _ = io.WriteString(w, b.String())
}

// Snippet writes where subject is ("  on FILE line N, in BLOCK:"), then up to five source
// lines of file it covers, each followed by carets under the covered part, then a blank line.
// A nil file (or one without bytes) writes the location and says the source is not available.
func Snippet(b *strings.Builder, file *hcl.File, subject hcl.Range) {
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
	// Scan from the line the highlight starts on, not from the file's start: a file with a
	// diagnostic on each of its thousands of lines made the report quadratic (minutes).
	from := min(max(highlight.Start.Byte, 0), len(src))
	from = bytes.LastIndexByte(src[:from], '\n') + 1
	sc := hcl.NewRangeScannerFragment(src, subject.Filename, hcl.Pos{Line: highlight.Start.Line, Column: 1, Byte: from}, bufio.ScanLines)
	shown := 0
	for sc.Scan() && shown < 5 {
		line := sc.Range()
		if line.Start.Byte > highlight.End.Byte {
			break
		}
		if !line.Overlaps(highlight) {
			continue
		}
		shown++
		text := sc.Bytes()
		if !isText(text) {
			// A binary file given as a workflow: its bytes would reach the terminal raw (and a
			// line without a newline could be megabytes). Shown escaped and cut, without carets.
			fmt.Fprintf(b, "%4d: %s (not text; the first bytes, escaped)\n", line.Start.Line, strconv.Quote(string(text[:min(len(text), 60)])))
			continue
		}
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

// isText says whether a source line can be shown as it is: valid UTF-8 without control
// characters other than tab.
func isText(line []byte) bool {
	if !utf8.Valid(line) {
		return false
	}
	for _, r := range string(line) {
		if r != '\t' && unicode.IsControl(r) {
			return false
		}
	}
	return true
}
