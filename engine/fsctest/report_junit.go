package fsctest

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
	b := &strings.Builder{}
	all.write(b)
	_, err := io.WriteString(w, b.String())
	return err
}

// The JUnit XML schema as CI systems (Jenkins, GitLab, GitHub actions) read it. The tags are
// what encoding/xml would marshal; the write methods below print the same bytes.
type (
	junitSuites struct {
		XMLName  struct{}     `xml:"testsuites"`
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

// The report is printed by hand, byte for byte what encoding/xml's Encoder prints for these
// types with a two-space indent after xml.Header (TestJUnitMatchesEncodingXML compares them).
// Linking encoding/xml ran its package initializer — a map of 250 HTML entities — at every start
// of every fuscia command, ~0.6 ms of a one-shot apply's ~25 (docs/performance.md, issue 20
// item 3, session 10), for a report only `fuscia test -junit` writes.

func (all junitSuites) write(b *strings.Builder) {
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	xmlSuiteStart(b, "<testsuites", all.Name, all.Tests, all.Failures, all.Errors, all.Skipped, all.Time)
	for _, s := range all.Suites {
		xmlSuiteStart(b, "\n  <testsuite", s.Name, s.Tests, s.Failures, s.Errors, s.Skipped, s.Time)
		for _, c := range s.Cases {
			c.write(b)
		}
		xmlClose(b, "  ", "testsuite", len(s.Cases) > 0)
	}
	xmlClose(b, "", "testsuites", len(all.Suites) > 0)
	b.WriteString("\n")
}

func (c junitCase) write(b *strings.Builder) {
	b.WriteString("\n    <testcase")
	xmlAttr(b, "name", c.Name)
	xmlAttr(b, "classname", c.Classname)
	xmlAttr(b, "time", c.Time)
	b.WriteString(">")
	children := false
	for _, t := range []struct {
		tag  string
		text *junitText
	}{{"failure", c.Failure}, {"error", c.Error}, {"skipped", c.Skipped}} {
		if t.text == nil {
			continue
		}
		children = true
		b.WriteString("\n      <" + t.tag)
		xmlAttr(b, "message", t.text.Message)
		if t.text.Type != "" {
			xmlAttr(b, "type", t.text.Type)
		}
		b.WriteString(">")
		xmlCDATA(b, t.text.Text)
		b.WriteString("</" + t.tag + ">")
	}
	if c.SystemOut != nil {
		children = true
		b.WriteString("\n      <system-out>")
		xmlCDATA(b, c.SystemOut.Text)
		b.WriteString("</system-out>")
	}
	xmlClose(b, "    ", "testcase", children)
}

// xmlClose ends an element: on a line of its own, indented, after child elements; right after
// its start tag otherwise.
func xmlClose(b *strings.Builder, indent, tag string, children bool) {
	if children {
		b.WriteString("\n" + indent)
	}
	b.WriteString("</" + tag + ">")
}

// xmlSuiteStart writes the start tag of a <testsuites> or a <testsuite>, open (with what comes
// before it), and its attributes.
func xmlSuiteStart(b *strings.Builder, open, name string, tests, failures, errors, skipped int, time string) {
	b.WriteString(open)
	xmlAttr(b, "name", name)
	xmlAttr(b, "tests", strconv.Itoa(tests))
	xmlAttr(b, "failures", strconv.Itoa(failures))
	xmlAttr(b, "errors", strconv.Itoa(errors))
	xmlAttr(b, "skipped", strconv.Itoa(skipped))
	xmlAttr(b, "time", time)
	b.WriteString(">")
}

// xmlAttr writes ` name="value"` with value escaped as encoding/xml escapes attributes:
// markup characters and whitespace other than a space as references, what XML cannot hold as
// U+FFFD.
func xmlAttr(b *strings.Builder, name, value string) {
	b.WriteString(" " + name + "=\"")
	last := 0
	for i := 0; i < len(value); {
		r, width := utf8.DecodeRuneInString(value[i:])
		i += width
		var esc string
		switch r {
		case '"':
			esc = "&#34;"
		case '\'':
			esc = "&#39;"
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '\t':
			esc = "&#x9;"
		case '\n':
			esc = "&#xA;"
		case '\r':
			esc = "&#xD;"
		default:
			if xmlChar(r) && (r != utf8.RuneError || width > 1) {
				continue
			}
			esc = "\uFFFD"
		}
		b.WriteString(value[last : i-width])
		b.WriteString(esc)
		last = i
	}
	b.WriteString(value[last:] + "\"")
}

// xmlCDATA writes s as CDATA, nothing for an empty s; a "]]>" inside is split across two
// sections. s has been through xmlSafe.
func xmlCDATA(b *strings.Builder, s string) {
	if s == "" {
		return
	}
	b.WriteString("<![CDATA[")
	for {
		before, after, ok := strings.Cut(s, "]]>")
		if !ok {
			break
		}
		b.WriteString(before + "]]]]><![CDATA[>")
		s = after
	}
	b.WriteString(s + "]]>")
}

// xmlChar reports whether XML 1.0 can hold r.
func xmlChar(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' ||
		r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

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
// characters), with U+FFFD; xmlCDATA splits a "]]>" itself.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if xmlChar(r) {
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
