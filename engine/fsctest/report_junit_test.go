package fsctest

import (
	"encoding/xml"
	"math/rand"
	"strings"
	"testing"
)

// TestJUnitMatchesEncodingXML: the hand-written JUnit printer gives the bytes encoding/xml's
// Encoder gives for the same values with a two-space indent, for reports of every shape — no
// suites, suites without cases, cases without children, each kind of child — and strings that
// need escaping: markup characters, quotes, whitespace, characters XML cannot hold, invalid
// UTF-8, U+FFFD itself and "]]>" in CDATA.
func TestJUnitMatchesEncodingXML(t *testing.T) {
	pieces := []string{"a", "run", " ", "\"", "'", "&", "<", ">", "\t", "\n", "\r", "\x01", "\x7f",
		"\xff", "\uFFFD", "é", "😀", "\uFFFE", "]]>", "]]", "]", "<![CDATA[", "&amp;"}
	rng := rand.New(rand.NewSource(1))
	str := func() string {
		var b strings.Builder
		for n := rng.Intn(6); n > 0; n-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		return b.String()
	}
	text := func() *junitText {
		if rng.Intn(2) == 0 {
			return nil
		}
		return &junitText{Message: str(), Type: str(), Text: xmlSafe(str())}
	}
	for i := 0; i < 2000; i++ {
		all := junitSuites{Name: str(), Tests: rng.Intn(5), Failures: rng.Intn(3), Errors: rng.Intn(3), Skipped: rng.Intn(2), Time: str()}
		for s := rng.Intn(3); s > 0; s-- {
			suite := junitSuite{Name: str(), Tests: rng.Intn(9), Time: "0.001"}
			for c := rng.Intn(3); c > 0; c-- {
				tc := junitCase{Name: str(), Classname: str(), Time: str(), Failure: text(), Error: text(), Skipped: text()}
				if rng.Intn(2) == 0 {
					tc.SystemOut = &junitOut{Text: xmlSafe(str())}
				}
				suite.Cases = append(suite.Cases, tc)
			}
			all.Suites = append(all.Suites, suite)
		}

		var want strings.Builder
		want.WriteString(xml.Header)
		enc := xml.NewEncoder(&want)
		enc.Indent("", "  ")
		if err := enc.Encode(all); err != nil {
			t.Fatal(err)
		}
		want.WriteString("\n")
		var got strings.Builder
		all.write(&got)
		if got.String() != want.String() {
			t.Fatalf("report %d: the printer wrote\n%s\nencoding/xml\n%s", i, got.String(), want.String())
		}
	}
}
