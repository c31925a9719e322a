package serve

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// LoadError is what Config.Load returns for a file that does not make a plan: its diagnostics,
// kept as values with their ranges, so that GET /v1/workflows shows each with its line. Load
// may return any other error too: it is shown as one diagnostic without a line.
type LoadError struct {
	Diagnostics hcl.Diagnostics
	// Called are the files the workflow's calls name, with the sha256 of what was read of
	// them (zero for a file that could not be read), as engine.Program.Called: the file is
	// loaded again when one of them changes, a missing one that appears included.
	Called map[string][sha256.Size]byte
}

// Error is the first error's summary and where it is, in a line, for the log.
func (e *LoadError) Error() string {
	for _, d := range e.Diagnostics {
		if d.Severity == hcl.DiagError {
			if d.Subject != nil {
				return fmt.Sprintf("%s (%s line %d)", d.Summary, d.Subject.Filename, d.Subject.Start.Line)
			}
			return d.Summary
		}
	}
	return "invalid workflow"
}

// Diagnostic is one problem of a served file that does not load, as GET /v1/workflows shows
// it. Line and Column are 1-based; 0 when the problem has no place in a file (Filename is then
// the file that does not load).
type Diagnostic struct {
	Severity string `json:"severity"` // "error" or "warning"
	Summary  string `json:"summary"`
	Detail   string `json:"detail"`
	Filename string `json:"filename"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
}

// fileErrors are the diagnostics of one served file that does not load (GET /v1/workflows's
// "errors").
type fileErrors struct {
	File        string       `json:"file"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// diagnosticsOf turns what Load (or the server's own checks) said about file into the API's
// diagnostics: a LoadError's with their places, any other error as one without a line.
func diagnosticsOf(file string, err error) []Diagnostic {
	var le *LoadError
	if !errors.As(err, &le) {
		return []Diagnostic{{Severity: "error", Summary: err.Error(), Filename: file}}
	}
	out := make([]Diagnostic, 0, len(le.Diagnostics))
	for _, d := range le.Diagnostics {
		dg := Diagnostic{Severity: "error", Summary: d.Summary, Detail: d.Detail, Filename: file}
		if d.Severity == hcl.DiagWarning {
			dg.Severity = "warning"
		}
		if d.Subject != nil {
			dg.Filename, dg.Line, dg.Column = d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column
		}
		out = append(out, dg)
	}
	if len(out) == 0 {
		out = append(out, Diagnostic{Severity: "error", Summary: le.Error(), Filename: file})
	}
	return out
}

// noteLoadError remembers that file does not load, and why, until it loads or is gone.
func (s *Server) noteLoadError(file string, err error) {
	d := diagnosticsOf(file, err)
	s.mu.Lock()
	s.loadErrors[file] = d
	s.mu.Unlock()
}

// clearLoadErrorLocked forgets file's load error: it loaded, or it is gone. s.mu is held.
func (s *Server) clearLoadErrorLocked(file string) {
	delete(s.loadErrors, file)
}

// forgetLoadErrorsExcept forgets the load errors of the files not in present: they are gone.
func (s *Server) forgetLoadErrorsExcept(present map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for f := range s.loadErrors {
		if !present[f] {
			delete(s.loadErrors, f)
		}
	}
}

// loadErrorList is the files that do not load, by file name.
func (s *Server) loadErrorList() []fileErrors {
	s.mu.Lock()
	out := make([]fileErrors, 0, len(s.loadErrors))
	for f, d := range s.loadErrors {
		out = append(out, fileErrors{File: f, Diagnostics: d})
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b fileErrors) int { return strings.Compare(a.File, b.File) })
	return out
}
