package fsctest

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/internal/diagrender"
)

// WriteJUnit writes rep as JUnit XML, the report format CI systems read
// (docs/testing.md, "Continuous integration"): a <testsuites> with one <testsuite> per test
// file and one <testcase> per run block, classname being the test file. A failed run has a
// <failure>, an errored one an <error>, a skipped one <skipped/>; the text of failures and
// errors is what the human report shows under the run, and <system-out> holds the run's nodes.
// A test file that does not load is a suite with one errored case named "(test file)", so
// that CI shows it as red.
func WriteJUnit(w io.Writer, rep *Report) error {
	h := &Human{} // for its sources and its failure text
	h.addSources(rep.Sources)
	all := junitSuites{Name: "fuscia test", Time: junitSeconds(rep.Elapsed)}
	for _, f := range rep.Files {
		s := junitSuite{Name: f.Path}
		var elapsed time.Duration
		if f.Diags.HasErrors() {
			b := &strings.Builder{}
			diagrender.Write(b, h.files(f.Diags), f.Diags)
			s.Cases = append(s.Cases, junitCase{Name: "(test file)", Classname: f.Path, Time: junitSeconds(0),
				Error: &junitText{Message: "the test file has errors: " + firstError(f.Diags), Type: "invalid", Text: xmlSafe(b.String())}})
			s.Errors++
		}
		for _, r := range f.Runs {
			elapsed += r.Elapsed
			c := junitCase{Name: r.Name, Classname: f.Path, Time: junitSeconds(r.Elapsed)}
			switch r.Status {
			case Fail:
				b := &strings.Builder{}
				for _, fl := range r.Failures {
					writeFailure(b, h.source, fl)
				}
				c.Failure = &junitText{Message: failureMessage(r), Type: "failure", Text: xmlSafe(b.String())}
				s.Failures++
			case Error:
				b := &strings.Builder{}
				diagrender.Write(b, h.files(r.Diags), r.Diags)
				c.Error = &junitText{Message: firstError(r.Diags), Type: "error", Text: xmlSafe(b.String())}
				s.Errors++
			case Skip:
				c.Skipped = &junitText{Message: "excluded by -run"}
				s.Skipped++
			}
			if len(r.Nodes) > 0 {
				b := &strings.Builder{}
				writeNodes(b, "", r.Nodes)
				c.SystemOut = &junitOut{Text: xmlSafe(b.String())}
			}
			s.Cases = append(s.Cases, c)
		}
		s.Tests = len(s.Cases)
		s.Time = junitSeconds(elapsed)
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Errors += s.Errors
		all.Skipped += s.Skipped
		all.Suites = append(all.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// The JUnit XML schema as CI systems (Jenkins, GitLab, GitHub actions) read it.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Errors   int         `xml:"errors,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Time     string      `xml:"time,attr"`
		Cases    []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string     `xml:"name,attr"`
		Classname string     `xml:"classname,attr"`
		Time      string     `xml:"time,attr"`
		Failure   *junitText `xml:"failure,omitempty"`
		Error     *junitText `xml:"error,omitempty"`
		Skipped   *junitText `xml:"skipped,omitempty"`
		SystemOut *junitOut  `xml:"system-out,omitempty"`
	}
	junitOut struct {
		Text string `xml:",cdata"`
	}
	junitText struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		// Text is CDATA, so that the rendered source lines keep their newlines and quotes
		// readable in the file.
		Text string `xml:",cdata"`
	}
)

// failureMessage is the one-line message of a failed run: its first failure, and how many
// more there are.
func failureMessage(r *RunReport) string {
	if len(r.Failures) == 0 {
		return "failed"
	}
	f := r.Failures[0]
	msg := f.Summary
	if f.Detail != "" {
		msg += ": " + firstLine(f.Detail)
	}
	if n := len(r.Failures) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more)", n)
	}
	return msg
}

// firstError is the summary of the first error in diags.
func firstError(diags hcl.Diagnostics) string {
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			return d.Summary
		}
	}
	return "error"
}

// xmlSafe replaces the characters XML 1.0 cannot hold, even in CDATA (most control
// characters), with U+FFFD; encoding/xml splits a "]]>" in CDATA itself.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r',
			r >= 0x20 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
			return r
		}
		return '\uFFFD'
	}, s)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// junitSeconds is d in seconds with millisecond precision, as JUnit's time attributes are.
func junitSeconds(d time.Duration) string {
	return fmt.Sprintf("%.3f", d.Seconds())
}
