package redact

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Marker is what a secret becomes in scrubbed text, the same word `show` prints for a
// sensitive value.
const Marker = "(sensitive)"

// Scrubber replaces every form of a fixed set of secret values by Marker. It is immutable and
// safe for concurrent use. A nil *Scrubber scrubs nothing.
type Scrubber struct {
	m *matcher
}

// New returns the Scrubber of values. Values shorter than MinLength are ignored; New of no
// value that long returns nil, which scrubs nothing.
func New(values ...string) *Scrubber {
	var patterns []string
	for _, v := range values {
		patterns = append(patterns, forms(v)...)
	}
	if len(patterns) == 0 {
		return nil
	}
	return &Scrubber{m: newMatcher(patterns)}
}

// spans returns the merged ranges of text to replace; nil when none.
func spans[T ~string | ~[]byte](s *Scrubber, text T) []span {
	if s == nil || len(text) < MinLength {
		return nil
	}
	found := find(s.m, text, nil)
	if decoded, starts, ok := percentDecoded(text); ok {
		var inDecoded []span
		inDecoded = find(s.m, decoded, inDecoded)
		for i := range inDecoded {
			inDecoded[i] = span{starts[inDecoded[i].start], starts[inDecoded[i].end]}
		}
		found = mergeSpans(found, inDecoded)
	}
	return found
}

// String returns str with every secret replaced by Marker; str itself when it holds none.
func (s *Scrubber) String(str string) string {
	sp := spans(s, str)
	if sp == nil {
		return str
	}
	var b strings.Builder
	b.Grow(len(str))
	at := 0
	for _, r := range sp {
		b.WriteString(str[at:r.start])
		b.WriteString(Marker)
		at = r.end
	}
	b.WriteString(str[at:])
	return b.String()
}

// Bytes returns b with every secret replaced by Marker: b itself when it holds none, else a
// new slice (b is never modified).
func (s *Scrubber) Bytes(b []byte) []byte {
	sp := spans(s, b)
	if sp == nil {
		return b
	}
	out := make([]byte, 0, len(b))
	at := 0
	for _, r := range sp {
		out = append(out, b[at:r.start]...)
		out = append(out, Marker...)
		at = r.end
	}
	return append(out, b[at:]...)
}

// Contains reports whether str holds a secret.
func (s *Scrubber) Contains(str string) bool { return spans(s, str) != nil }

// JSON scrubs a JSON document and keeps it valid JSON: strings (object keys included) are
// scrubbed where they are, and a number that is a secret becomes the string Marker. Replacing
// bytes in the encoded text could cut through the document's structure when a secret holds a
// quote. raw itself is returned when it holds no secret; text that is not JSON is scrubbed as
// bytes.
func (s *Scrubber) JSON(raw []byte) []byte {
	if spans(s, raw) == nil {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil || dec.More() {
		return s.Bytes(raw)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s.value(x)); err != nil {
		return s.Bytes(raw)
	}
	// What matched may have been only the document's punctuation around two harmless strings
	// (a secret `a","b`): that is no occurrence of the secret, and the re-encoding keeps it.
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// value scrubs a decoded JSON value.
func (s *Scrubber) value(x any) any {
	switch v := x.(type) {
	case string:
		return s.String(v)
	case json.Number:
		if s.Contains(v.String()) {
			return Marker
		}
		return v
	case []any:
		for i := range v {
			v[i] = s.value(v[i])
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[s.String(k)] = s.value(e)
		}
		return out
	}
	return x
}
