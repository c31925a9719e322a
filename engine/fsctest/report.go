package fsctest

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/fuscia/fuscia/internal/diagrender"
	"github.com/fuscia/fuscia/lang"
)

// A Renderer shows a test to its reader as it goes: File with each test file's report and Run
// with each run block's report, in the order Options.OnFile and Options.OnRun deliver them,
// then Finish once with the whole Report. None is called concurrently. A renderer writes; it
// reports no error, as a terminal that went away cannot be told anything either.
type Renderer interface {
	File(f *FileReport)
	Run(r *RunReport)
	Finish(rep *Report)
}

// Human renders a test as text for people, like `go test -v` and `terraform test`:
//
//	orders.fsctest.hcl...
//	  run "pays_enterprise_orders"... pass
//	  run "retries_declined_cards"... fail
//
//	    Assertion failed
//	    …the condition's source line, underlined, and the values of its references…
//
//	Failure! 1 passed, 1 failed.
//
// Runs, their failures and the reasons a run errored go to Out; the diagnostics of test files
// that do not load go to Err, as `fuscia validate` writes them. The last line on Out is the
// summary (HumanSummary).
type Human struct {
	Out, Err io.Writer
	// Verbose adds each run's time, its virtual clock's advance and one line per node.
	Verbose bool

	// Owned by the caller of File, Run and Finish (one goroutine at a time).
	file    string               // the test file whose header was written last
	blank   bool                 // the last thing written to Out ended with a blank line
	shown   map[*FileReport]bool // files whose diagnostics were written
	sources map[string]*hcl.File // source files read for snippets, by name
}

// NewHuman returns a Human writing to out and err.
func NewHuman(out, err io.Writer, verbose bool) *Human {
	return &Human{Out: out, Err: err, Verbose: verbose}
}

// File writes the test file's header line, and its diagnostics (to Err) if it has any. A
// file with errors runs nothing: its header says "invalid".
func (h *Human) File(f *FileReport) {
	h.file, h.blank = f.Path, false
	if f.Diags.HasErrors() {
		_, _ = fmt.Fprintf(h.Out, "%s... invalid\n", f.Path)
	} else {
		_, _ = fmt.Fprintf(h.Out, "%s...\n", f.Path)
	}
	h.fileDiags(f)
}

// fileDiags writes f's diagnostics to Err, once.
func (h *Human) fileDiags(f *FileReport) {
	if h.shown == nil {
		h.shown = map[*FileReport]bool{}
	}
	if len(f.Diags) == 0 || h.shown[f] {
		return
	}
	h.shown[f] = true
	diagrender.Write(h.Err, h.files(f.Diags), f.Diags)
}

// Run writes the run's line, and under it its failures or the reasons it could not be carried
// out, and with Verbose its nodes.
func (h *Human) Run(r *RunReport) {
	b := &strings.Builder{}
	if r.File != h.file {
		h.file = r.File
		fmt.Fprintf(b, "%s...\n", r.File)
	}
	fmt.Fprintf(b, "  run %q... %s", r.Name, r.Status)
	if h.Verbose && r.Status != Skip {
		fmt.Fprintf(b, " (%s", seconds(r.Elapsed))
		if r.Virtual > 0 {
			fmt.Fprintf(b, "; virtual clock +%s", r.Virtual.Round(time.Millisecond))
		}
		b.WriteString(")")
	}
	b.WriteString("\n")
	if h.Verbose {
		writeNodes(b, "      ", r.Nodes)
	}
	if len(r.Failures) > 0 || len(r.Diags) > 0 {
		detail := &strings.Builder{}
		b.WriteString("\n")
		for _, f := range r.Failures {
			writeFailure(detail, h.source, f)
		}
		diagrender.Write(detail, h.files(r.Diags), r.Diags)
		indent(b, "    ", detail.String())
	}
	h.blank = strings.HasSuffix(b.String(), "\n\n")
	_, _ = io.WriteString(h.Out, b.String())
}

// Finish writes the diagnostics of the test files File did not get (to Err), then the
// summary line (to Out).
func (h *Human) Finish(rep *Report) {
	h.addSources(rep.Sources)
	for _, f := range rep.Files {
		h.fileDiags(f)
	}
	if !h.blank {
		_, _ = fmt.Fprintln(h.Out)
	}
	_, _ = fmt.Fprintln(h.Out, HumanSummary(rep))
}

// HumanSummary is the last line of a human report: "Success! 12 passed, 0 failed." when the
// test passed as a whole (Report.OK), "Failure! 10 passed, 2 failed, 1 errored." otherwise.
// Passed and failed are always given; errored and skipped run blocks and test files with errors
// only when there are any.
func HumanSummary(rep *Report) string {
	word := "Success!"
	if !rep.OK() {
		word = "Failure!"
	}
	parts := []string{fmt.Sprintf("%d passed", rep.Passed), fmt.Sprintf("%d failed", rep.Failed)}
	if rep.Errored > 0 {
		parts = append(parts, fmt.Sprintf("%d errored", rep.Errored))
	}
	if rep.Skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped", rep.Skipped))
	}
	if n := invalidFiles(rep); n > 0 {
		parts = append(parts, plural(n, "invalid test file", "invalid test files"))
	}
	return word + " " + strings.Join(parts, ", ") + "."
}

// invalidFiles counts the test files whose diagnostics include an error: they ran nothing.
func invalidFiles(rep *Report) int {
	n := 0
	for _, f := range rep.Files {
		if f.Diags.HasErrors() {
			n++
		}
	}
	return n
}

// writeFailure writes one failure as a diagnostic reads: its summary, where it is (the source
// line with the condition underlined), the values the condition's references had, and the
// detail (the assert's error_message).
func writeFailure(b *strings.Builder, source func(string) *hcl.File, f Failure) {
	fmt.Fprintf(b, "%s\n\n", f.Summary)
	if f.Range.Filename != "" {
		snippet := &strings.Builder{}
		diagrender.Snippet(snippet, source(f.Range.Filename), f.Range)
		b.WriteString(strings.TrimSuffix(snippet.String(), "\n"))
	} else if f.Expr != "" {
		fmt.Fprintf(b, "  %s\n", f.Expr)
	}
	for _, v := range f.Values {
		// A value rendered over several lines (an object) keeps its shape under its name.
		fmt.Fprintf(b, "    %s = %s\n", v.Expr, strings.ReplaceAll(v.Value, "\n", "\n    "))
	}
	if f.Range.Filename != "" || f.Expr != "" || len(f.Values) > 0 {
		b.WriteString("\n")
	}
	if f.Detail != "" {
		fmt.Fprintf(b, "%s\n\n", f.Detail)
	}
}

// writeNodes writes one line per node: address, status, attempts and error, in columns.
func writeNodes(b *strings.Builder, prefix string, nodes []NodeLine) {
	addrW, statusW := 0, 0
	for _, n := range nodes {
		addrW, statusW = max(addrW, len(n.Addr)), max(statusW, len(n.Status))
	}
	for _, n := range nodes {
		line := fmt.Sprintf("%s%-*s  %-*s", prefix, addrW, n.Addr, statusW, n.Status)
		if n.Attempts > 0 {
			line += "  " + plural(n.Attempts, "attempt", "attempts")
		}
		if n.Error != "" {
			line += "  " + n.Error
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
}

// source is the parsed file name, for snippets: from the Report once Finish gave it, else
// read from disk as the runner read it (runs are rendered before the Report exists). A file
// that cannot be read renders as "source code not available".
func (h *Human) source(name string) *hcl.File {
	if f, ok := h.sources[name]; ok {
		return f
	}
	if h.sources == nil {
		h.sources = map[string]*hcl.File{}
	}
	var f *hcl.File
	if src, err := os.ReadFile(name); err == nil {
		// A file that does not parse still shows its lines; only the block context is lost.
		if lang.CheckNesting(name, src) == nil {
			f, _ = hclsyntax.ParseConfig(src, name, hcl.InitialPos)
		}
		if f == nil {
			f = &hcl.File{Bytes: src}
		}
	}
	h.sources[name] = f
	return f
}

// addSources makes the parsed files of a Report the ones snippets show.
func (h *Human) addSources(files map[string]*hcl.File) {
	if h.sources == nil {
		h.sources = map[string]*hcl.File{}
	}
	for name, f := range files {
		h.sources[name] = f
	}
}

// files are the sources diags point into, for diagrender.Write.
func (h *Human) files(diags hcl.Diagnostics) map[string]*hcl.File {
	files := map[string]*hcl.File{}
	for _, d := range diags {
		if d.Subject != nil {
			if f := h.source(d.Subject.Filename); f != nil {
				files[d.Subject.Filename] = f
			}
		}
	}
	return files
}

// indent writes text with prefix before every line that is not empty.
func indent(b *strings.Builder, prefix, text string) {
	for line := range strings.Lines(text) {
		if strings.TrimSpace(line) != "" {
			b.WriteString(prefix)
		}
		b.WriteString(line)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// seconds is d as go test shows it: "0.25s".
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.2fs", d.Seconds())
}
