package diagrender

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestSnippet: the lines of the subject, with carets under it, from the line it starts on; a
// subject on two lines shows both.
func TestSnippet(t *testing.T) {
	src := []byte("a = 1\nb = two\nc = [\n  3,\n]\nd = 4\n")
	file := &hcl.File{Bytes: src}
	at := func(from, to string) hcl.Range {
		i := strings.Index(string(src), from)
		j := strings.Index(string(src), to) + len(to)
		r := hcl.Range{Filename: "f.hcl"}
		r.Start.Byte, r.End.Byte = i, j
		r.Start.Line = 1 + strings.Count(string(src[:i]), "\n")
		r.End.Line = 1 + strings.Count(string(src[:j]), "\n")
		return r
	}
	var b strings.Builder
	Snippet(&b, file, at("two", "two"))
	if want := "  on f.hcl line 2:\n   2: b = two\n          ^^^\n\n"; b.String() != want {
		t.Errorf("one line:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	Snippet(&b, file, at("[", "3,"))
	if got := b.String(); !strings.Contains(got, "   3: c = [\n") || !strings.Contains(got, "   4:   3,\n") || strings.Contains(got, "   5:") || strings.Contains(got, "   2:") {
		t.Errorf("two lines:\n%s", got)
	}
}

// BenchmarkSnippetEachLine renders a snippet for each line of a 5,000-line file, as a report of
// a file with a diagnostic on every line does: linear in the lines, not quadratic.
func BenchmarkSnippetEachLine(b *testing.B) {
	var src strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&src, "x%d = \"\n", i)
	}
	file := &hcl.File{Bytes: []byte(src.String())}
	for range b.N {
		var out strings.Builder
		off := 0
		for line := 1; line <= 5000; line++ {
			r := hcl.Range{Filename: "f.hcl", Start: hcl.Pos{Line: line, Column: 1, Byte: off}, End: hcl.Pos{Line: line, Column: 3, Byte: off + 2}}
			Snippet(&out, file, r)
			off = strings.Index(src.String()[off:], "\n") + off + 1
		}
	}
}

// TestSnippetOfBinary: a line that is not text (a binary file given as a workflow) is shown
// escaped and cut to its first bytes, without carets, never raw.
func TestSnippetOfBinary(t *testing.T) {
	src := append([]byte("PK\x03\x04\x1b[2J\xff\xfe"), []byte(strings.Repeat("x", 10_000))...)
	var b strings.Builder
	Snippet(&b, &hcl.File{Bytes: src}, hcl.Range{Filename: "plan.bin", Start: hcl.Pos{Line: 1, Column: 1, Byte: 0}, End: hcl.Pos{Line: 1, Column: 2, Byte: 1}})
	got := b.String()
	if strings.ContainsAny(got, "\x1b\x03") || !strings.Contains(got, `"PK\x03\x04\x1b[2J\xff\xfe`) || !strings.Contains(got, "(not text") || len(got) > 300 || strings.Contains(got, "^") {
		t.Errorf("snippet of a binary line:\n%s", got)
	}
}
