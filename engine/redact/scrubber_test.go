package redact

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
)

const secret = "p@ss w/rd+x=y&z<1>\"q\"\\é"

func jsonForm(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

func TestScrubberForms(t *testing.T) {
	sc := New(secret)
	b64 := func(enc *base64.Encoding, s string) string { return enc.EncodeToString([]byte(s)) }
	cases := []struct {
		name, text string
	}{
		{"literal", "token " + secret + " end"},
		{"json escaped", `{"v":"` + jsonForm(secret) + `"}`},
		{"json without html escaping", `{"v":"` + strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(jsonForm(secret)) + `"}`},
		{"query escaped", "GET /x?q=" + url.QueryEscape(secret) + "&n=1"},
		{"path escaped", "GET /x/" + url.PathEscape(secret) + "/y"},
		{"lower-case percent escapes", "/x/" + strings.ToLower(url.PathEscape(secret))},
		{"every byte percent escaped", "q=" + percentAll(secret)},
		{"space as plus", "q=" + strings.ReplaceAll(secret, " ", "+")},
		{"base64 std padded", "b " + b64(base64.StdEncoding, secret)},
		{"base64 std unpadded", "b " + b64(base64.RawStdEncoding, secret) + " e"},
		{"base64 url padded", "b " + b64(base64.URLEncoding, secret)},
		{"base64 url unpadded", "b " + b64(base64.RawURLEncoding, secret)},
		{"basic auth header", "Authorization: Basic " + b64(base64.StdEncoding, "user:"+secret)},
		{"base64 offset 1", b64(base64.StdEncoding, "a"+secret+"tail")},
		{"base64 offset 2", b64(base64.StdEncoding, "ab"+secret+"t")},
		{"base64 url offset 1", b64(base64.RawURLEncoding, "x"+secret)},
		{"base64 query escaped", "q=" + url.QueryEscape(b64(base64.StdEncoding, "user:"+secret))},
		{"hex lower", "h=" + hex.EncodeToString([]byte(secret))},
		{"hex upper", "h=" + strings.ToUpper(hex.EncodeToString([]byte(secret)))},
		{"hex inside", hex.EncodeToString([]byte("user:" + secret + ":x"))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := sc.String(tc.text)
			if !strings.Contains(got, Marker) {
				t.Fatalf("nothing scrubbed in %q: %q", tc.text, got)
			}
			leaks(t, got, secret)
			if b := sc.Bytes([]byte(tc.text)); string(b) != got {
				t.Fatalf("Bytes %q != String %q", b, got)
			}
		})
	}
}

// percentAll escapes every byte, as some encoders do.
func percentAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteString("%" + strings.ToUpper(hex.EncodeToString([]byte{s[i]})))
	}
	return b.String()
}

// leaks fails when text holds s in a form that reveals it: literal, JSON, URL-decoded, or any
// base64 or hex encoding of a text containing it (decoded back and searched).
func leaks(t *testing.T, text, s string) {
	t.Helper()
	views := []string{text}
	if u, err := url.PathUnescape(text); err == nil {
		views = append(views, u)
	}
	if u, err := url.QueryUnescape(text); err == nil {
		views = append(views, u)
	}
	for _, v := range views {
		if strings.Contains(v, s) || strings.Contains(v, jsonForm(s)) {
			t.Fatalf("the secret is readable in %q", text)
		}
		for _, tok := range strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune(" :=&?\"/", r) }) {
			for _, dec := range decodings(tok) {
				if strings.Contains(dec, s) {
					t.Fatalf("the secret is readable, encoded, in %q (token %q)", text, tok)
				}
			}
		}
	}
}

func decodings(tok string) []string {
	var out []string
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(tok); err == nil {
			out = append(out, string(b))
		}
	}
	if b, err := hex.DecodeString(tok); err == nil {
		out = append(out, string(b))
	}
	return out
}

func TestScrubberLeavesOtherText(t *testing.T) {
	sc := New(secret)
	for _, text := range []string{
		"",
		"nothing to see here",
		"p@ss w/r", // a prefix of the secret is not the secret
		"%zz%4",    // malformed escapes
		base64.StdEncoding.EncodeToString([]byte("user:password")),
		strings.Repeat("x", 10000),
	} {
		if got := sc.String(text); got != text {
			t.Errorf("String(%q) = %q, want it unchanged", text, got)
		}
	}
	var nilScrubber *Scrubber
	if got := nilScrubber.String(secret); got != secret {
		t.Errorf("a nil Scrubber changed %q to %q", secret, got)
	}
}

func TestScrubberShortSecrets(t *testing.T) {
	sc := New("abc", "1", "")
	if sc != nil {
		t.Fatalf("New of values shorter than %d bytes = %v, want nil", MinLength, sc)
	}
	sc = New("abc", "abcd")
	for text, want := range map[string]string{
		"abc abcd":    "abc " + Marker,
		"YWJjZA==":    Marker, // base64 of a 4-byte secret
		"61626364":    Marker, // hex
		"abc YWJj ab": "abc YWJj ab",
	} {
		if got := sc.String(text); got != want {
			t.Errorf("String(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestScrubberOverlappingSecrets(t *testing.T) {
	sc := New("abcdef", "defghi", "zzzz")
	for text, want := range map[string]string{
		"[abcdefghi]":         "[" + Marker + "]", // overlapping: one marker, nothing of either left
		"[abcdefzzzz]":        "[" + Marker + "]", // adjacent
		"abcdef-zzzz":         Marker + "-" + Marker,
		"xxabcdefghixxabcdef": "xx" + Marker + "xx" + Marker,
	} {
		if got := sc.String(text); got != want {
			t.Errorf("String(%q) = %q, want %q", text, got, want)
		}
	}
	// A secret inside another: the longer one goes whole.
	sc = New("secret-token", "token")
	if got := sc.String("a secret-token b token"); got != "a "+Marker+" b "+Marker {
		t.Errorf("nested secrets: %q", got)
	}
	// The literal next to an encoded form of another part: both go.
	sc = New("hunter22")
	text := "hunter22" + hex.EncodeToString([]byte("hunter22"))
	if got := sc.String(text); got != Marker {
		t.Errorf("String(%q) = %q, want one marker", text, got)
	}
}

func TestScrubberJSON(t *testing.T) {
	const s = `to"k,en`
	sc := New(s, "4242424242")
	doc := map[string]any{
		"plain":  "visible",
		"echo":   "Bearer " + s,
		s:        "the key is the secret",
		"nested": []any{map[string]any{"x": s}},
		"num":    json.Number("4242424242"),
		"b64":    base64.StdEncoding.EncodeToString([]byte("u:" + s)),
	}
	raw, _ := json.Marshal(doc)
	out := sc.JSON(raw)
	var back map[string]any
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("scrubbed JSON is not JSON: %v\n%s", err, out)
	}
	if back["plain"] != "visible" || back["echo"] != "Bearer "+Marker || back[Marker] != "the key is the secret" || back["num"] != Marker {
		t.Fatalf("scrubbed JSON: %s", out)
	}
	if strings.Contains(string(out), "k,en") || strings.Contains(string(out), "4242424242") {
		t.Fatalf("secret left in %s", out)
	}
	leaks(t, back["b64"].(string), s)
	// No secret: the same bytes, not a re-encoding.
	in := []byte(`{"b": 1, "a": "x"}`)
	if got := sc.JSON(in); &got[0] != &in[0] {
		t.Errorf("JSON without a secret was copied: %s", got)
	}
	// Not JSON: scrubbed as text.
	if got := sc.JSON([]byte("oops " + s)); string(got) != "oops "+Marker {
		t.Errorf("JSON of text = %q", got)
	}
}

// TestMatcherAgainstNaive compares the automaton with a search by strings.Index for random
// patterns and texts over a small alphabet, where overlaps are frequent.
func TestMatcherAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "abc"[rng.IntN(3)]
		}
		return string(b)
	}
	for round := 0; round < 2000; round++ {
		patterns := make([]string, 1+rng.IntN(5))
		for i := range patterns {
			patterns[i] = word(1 + rng.IntN(6))
		}
		text := word(rng.IntN(40))
		got := find(newMatcher(patterns), text, nil)
		var want []span
		covered := make([]bool, len(text))
		for _, p := range patterns {
			for i := 0; i+len(p) <= len(text); i++ {
				if text[i:i+len(p)] == p {
					for j := i; j < i+len(p); j++ {
						covered[j] = true
					}
				}
			}
		}
		// Touching ranges merge too: rebuild want from the covered bytes, then join
		// neighbours, which find merges.
		for i := 0; i < len(text); i++ {
			if covered[i] {
				j := i
				for j < len(text) && covered[j] {
					j++
				}
				want = append(want, span{i, j})
				i = j
			}
		}
		if !sameSpans(got, want) {
			t.Fatalf("patterns %q in %q: got %v, want %v", patterns, text, got, want)
		}
	}
}

func sameSpans(a, b []span) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSetGrows(t *testing.T) {
	var nilSet *Set
	nilSet.Add("whatever")
	if nilSet.String("whatever") != "whatever" {
		t.Fatal("a nil Set scrubbed")
	}
	s := NewSet()
	if s.Scrubber() != nil {
		t.Fatal("an empty Set has a scrubber")
	}
	s.Add("first-secret", "ab")
	before := s.Scrubber()
	s.Add("first-secret")
	if s.Scrubber() != before {
		t.Fatal("adding a known value rebuilt the scrubber")
	}
	s.Add("second-secret")
	if got := s.String("first-secret second-secret ab"); got != Marker+" "+Marker+" ab" {
		t.Fatalf("got %q", got)
	}
}

func BenchmarkScrubberNoMatch(b *testing.B) {
	sc := New("tok-9f8e7d6c5b4a-SECRET", "another secret value", "p@ssw0rd!")
	text := strings.Repeat("GET /v1/orders/1234 answered 200 in 3ms; ", 25) // ~1 KB
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if sc.String(text) != text {
			b.Fatal("changed")
		}
	}
}

func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		New("tok-9f8e7d6c5b4a-SECRET", "another secret value", "p@ssw0rd!")
	}
}
