package execcore

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/lang"
)

func TestJSONLenMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"", "plain text", `quote " and \ backslash`, "new\nline\r\ttab", "\x00\x01\x1f control",
		"<html> & co", "é and 日本 and 🎉", "bad \xff\xfe utf-8", "cut \xe6\x97", "line\u2028para\u2029",
	} {
		b, _ := json.Marshal(s)
		if got, want := JSONLen(s), len(b)-2; got != want {
			t.Errorf("JSONLen(%q) = %d; encoding/json writes %d", s, got, want)
		}
	}
	// \b and \f: newer encoding/json writes 2 bytes, older 6; JSONLen counts the larger.
	b, _ := json.Marshal("\b\f")
	if JSONLen("\b\f") < len(b)-2 {
		t.Errorf("JSONLen(\\b\\f) = %d < %d", JSONLen("\b\f"), len(b)-2)
	}
}

func TestFitStreams(t *testing.T) {
	tests := []struct {
		name             string
		stdout, stderr   string
		room             int
		wantOut, wantErr string
		cut              bool
	}{
		{"fits", "abc", "de", 5, "abc", "de", false},
		{"stdout cut, stderr small", "abcdefgh", "de", 6, "abcd", "de", true},
		{"stderr cut, stdout small", "ab", "abcdefgh", 6, "ab", "abcd", true},
		{"both halved", "abcdefgh", "ABCDEFGH", 7, "abc", "ABCD", true},
		{"escapes count", "\x01\x01\x01", "", 13, "\x01\x01", "", true},
		{"a rune is not split", "日本", "", 5, "日", "", true},
		{"an escape is not split", "a\n", "", 2, "a", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, cut := FitStreams(tc.stdout, tc.stderr, tc.room)
			if out != tc.wantOut || errs != tc.wantErr || cut != tc.cut {
				t.Errorf("FitStreams = %q, %q, %v; want %q, %q, %v", out, errs, cut, tc.wantOut, tc.wantErr, tc.cut)
			}
		})
	}
}

// TestCollectFitsTheEngineLimit: 12 MB of the output of `yes`, or of control bytes that JSON
// writes as \u00XX, make an output whose JSON is under MaxDocument (and so under the engine's
// default max_node_output), nearly full, and marked truncated.
func TestCollectFitsTheEngineLimit(t *testing.T) {
	const n = 12_000_000
	tests := []struct {
		name           string
		stdout, stderr string
	}{
		{"yes", strings.Repeat("y\n", n/2), ""},
		{"control bytes", strings.Repeat("\x01", n), ""},
		{"both streams", strings.Repeat("y\n", n/2), strings.Repeat("\x01", n)},
		{"quotes on stderr", "ok\n", strings.Repeat(`"`, n)},
		{"invalid utf-8", strings.Repeat("\xff", n), "tail"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, e := NewCapture(MaxOutput), NewCapture(MaxOutput)
			o.Write([]byte(tc.stdout))
			e.Write([]byte(tc.stderr))
			out := Collect(0, o, e)
			doc, err := json.Marshal(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(doc) > MaxDocument {
				t.Fatalf("the output is %d bytes of JSON; the limit is %d", len(doc), MaxDocument)
			}
			if len(doc) < MaxDocument-documentOverhead-12 {
				t.Errorf("the output is %d bytes of JSON; it should keep nearly %d", len(doc), MaxDocument)
			}
			if !out.Truncated {
				t.Error("truncated = false")
			}
			if !strings.HasPrefix(tc.stdout, out.Stdout) || !strings.HasPrefix(tc.stderr, out.Stderr) {
				t.Error("a stream was not cut to its beginning")
			}
		})
	}
	// The two limits live apart; this fails when they drift.
	if MaxDocument >= lang.DefaultMaxNodeOutput {
		t.Fatalf("MaxDocument %d is not under the engine's default max_node_output %d", MaxDocument, lang.DefaultMaxNodeOutput)
	}
}
