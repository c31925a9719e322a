package testfile

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/internal/diagrender"
	"github.com/fuscia/fuscia/lang"
)

// update rewrites the .golden files of testdata/invalid from what Load reports, so that a change
// of wording or position shows up as a diff in git:
//
//	go test ./lang/testfile -run TestInvalid -update
var update = flag.Bool("update", false, "rewrite testdata/invalid/*.golden from the actual diagnostics")

const invalidDir = "testdata/invalid"

// TestInvalidFiles loads every testdata/invalid/*.fsctest.hcl and compares its diagnostics,
// rendered as the CLI renders them (summary, file and line, the source with the range
// underlined, the detail), to the file beside it with the suffix .golden. Every case must have
// an error, and every error a subject in the case file and a detail that is a sentence.
func TestInvalidFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(invalidDir, "*"+Ext))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 16 {
		t.Fatalf("found %d cases in %s; the corpus has at least 16", len(files), invalidDir)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), Ext), func(t *testing.T) {
			p := lang.NewParser()
			_, diags := LoadWith(p, file)
			var buf bytes.Buffer
			diagrender.Write(&buf, p.Files(), diags)
			golden := strings.TrimSuffix(file, Ext) + ".golden"
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got := buf.String(); got != string(want) {
				t.Errorf("diagnostics differ from %s (run with -update and read the diff):\n--- got\n%s\n--- want\n%s", golden, got, want)
			}
			if !diags.HasErrors() {
				t.Errorf("no error: an invalid case must have at least one")
			}
			checkDiagQuality(t, file, diags)
		})
	}
}

// checkDiagQuality checks what every diagnostic must have: a subject in the file at fault and
// a detail that is a sentence.
func checkDiagQuality(t *testing.T, file string, diags hcl.Diagnostics) {
	t.Helper()
	for _, d := range diags {
		if d == nil {
			t.Errorf("nil diagnostic")
			continue
		}
		s := strings.TrimSpace(d.Detail)
		if !strings.HasSuffix(s, ".") && !(strings.Contains(s, "Did you mean") && strings.HasSuffix(s, "?")) {
			t.Errorf("%q: detail is not a sentence: %q", d.Summary, d.Detail)
		}
		if strings.HasSuffix(s, "..") && !strings.HasSuffix(s, "...") {
			t.Errorf("%q: detail ends with a doubled full stop: %q", d.Summary, d.Detail)
		}
		switch {
		case d.Subject == nil:
			t.Errorf("%q has no subject", d.Summary)
		case filepath.Clean(d.Subject.Filename) != filepath.Clean(file):
			t.Errorf("%q: subject names %s, not the case file", d.Summary, d.Subject.Filename)
		case d.Subject.Start.Line < 1:
			t.Errorf("%q: subject has line %d", d.Summary, d.Subject.Start.Line)
		}
	}
}

// describe renders diags on one line each, for failure messages.
func describe(diags hcl.Diagnostics) string {
	var b strings.Builder
	for _, d := range diags {
		where := "<no subject>"
		if d.Subject != nil {
			where = d.Subject.String()
		}
		fmt.Fprintf(&b, "  %s: %s; %s\n", where, d.Summary, d.Detail)
	}
	return b.String()
}
