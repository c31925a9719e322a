package query

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/golden")

// fixture reads a file of testdata and takes out its cursor markers «NAME»: it returns the
// text without them and each marker's byte offset in that text.
func fixture(t *testing.T, name string) ([]byte, map[string]int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	marks := map[string]int{}
	var out []byte
	s := string(raw)
	for {
		i := strings.Index(s, "«")
		if i < 0 {
			out = append(out, s...)
			break
		}
		j := strings.Index(s[i:], "»")
		if j < 0 {
			t.Fatalf("%s: marker without its end", name)
		}
		out = append(out, s[:i]...)
		marks[s[i+len("«"):i+j]] = len(out)
		s = s[i+j+len("»"):]
	}
	return out, marks
}

// typeAt returns the text with typed inserted at a marker, and the offset after it.
func typeAt(t *testing.T, src []byte, marks map[string]int, mark, typed string) ([]byte, int) {
	t.Helper()
	off, ok := marks[mark]
	if !ok {
		t.Fatalf("no marker %q", mark)
	}
	text := append(append(append([]byte(nil), src[:off]...), typed...), src[off:]...)
	return text, off + len(typed)
}

// testEnv is what the tests have installed: the component acme/stripe and the plugin shell.
var testEnv = EnvFuncs{
	ComponentFunc: func(source, version string) (*Package, bool) {
		if source != "acme/stripe" {
			return nil, false
		}
		return &Package{Source: "acme/stripe", Version: "1.2.3", Description: "Payments with Stripe.",
			Tasks: []TaskInfo{
				{Name: "charge", Description: "Charges a card.",
					InputSchema:  json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number","description":"In cents."},"currency":{"type":"string"}}}`),
					OutputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"The charge's id."},"amount":{"type":"integer"}}}`)},
				{Name: "refund", Description: "Refunds a charge."},
			},
			Triggers: []TaskInfo{{Name: "events", Description: "Stripe's webhook events."}},
		}, true
	},
	PluginFunc: func(source, version string) (*Package, bool) {
		if source != "shell" {
			return nil, false
		}
		return &Package{Source: "shell", Version: "0.3.0",
			Tasks: []TaskInfo{{Name: "exec", Description: "Runs a command.",
				OutputSchema: json.RawMessage(`{"type":"object","properties":{"exit_code":{"type":"integer"},"stdout":{"type":"string"},"stderr":{"type":"string"}}}`)}},
		}, true
	},
}

// golden compares got with testdata/golden/NAME, or writes it there with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from what the code gives (-update rewrites it):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// at returns the offset marked by "|" in needle, which must occur once in src (without the |).
func at(t *testing.T, src []byte, needle string) int {
	t.Helper()
	i := strings.Index(needle, "|")
	if i < 0 {
		t.Fatalf("needle %q has no |", needle)
	}
	plain := needle[:i] + needle[i+1:]
	if n := strings.Count(string(src), plain); n != 1 {
		t.Fatalf("%q occurs %d times in the fixture; make it unique", plain, n)
	}
	return strings.Index(string(src), plain) + i
}

// describe writes a range as its line and the text it covers.
func describe(src []byte, r hcl.Range) string {
	return fmt.Sprintf("L%d %s", r.Start.Line, src[r.Start.Byte:r.End.Byte])
}
