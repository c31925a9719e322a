package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// MinLength is the shortest secret value, in bytes, that is scrubbed. Shorter values would
// match all over ordinary text (and their hex or base64 forms even more so); the sensitive
// mark still keeps them out of the journal when they flow through expressions.
const MinLength = 4

// forms returns the strings that betray v in text: v itself and its encodings (doc.go lists
// them). Percent-encoded forms are not listed: the scrubber searches percent-decoded text.
// A value shorter than MinLength has none.
func forms(v string) []string {
	if len(v) < MinLength {
		return nil
	}
	out := []string{v}
	add := func(f string) {
		if len(f) >= MinLength && !contains(out, f) {
			out = append(out, f)
		}
	}
	// JSON, as encoding/json writes it by default (<, > and & as \u003c…) and without the
	// HTML escaping (Encoder.SetEscapeHTML(false), and most other languages' encoders).
	if b, err := json.Marshal(v); err == nil {
		add(string(b[1 : len(b)-1]))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) == nil {
		b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		add(string(b[1 : len(b)-1]))
	}
	// A query string's space: url.QueryEscape and HTML forms write "+".
	if strings.Contains(v, " ") {
		add(strings.ReplaceAll(v, " ", "+"))
	}
	h := hex.EncodeToString([]byte(v))
	add(h)
	add(strings.ToUpper(h))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		add(enc.EncodeToString([]byte(v)))
		add(enc.WithPadding(base64.NoPadding).EncodeToString([]byte(v)))
		for align := 0; align < 3; align++ {
			add(base64Core(enc, v, align))
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// base64Core is the part of the base64 of any text that holds v at byte offset align (mod 3)
// which depends on v's bytes alone: the characters whose 6 bits all fall inside v.
func base64Core(enc *base64.Encoding, v string, align int) string {
	buf := make([]byte, align+len(v))
	copy(buf[align:], v)
	s := enc.WithPadding(base64.NoPadding).EncodeToString(buf)
	first := (8*align + 5) / 6         // the first character that starts at or after v's first bit
	last := (8 * (align + len(v))) / 6 // the characters before this one end at or before v's last bit
	if last > len(s) {
		last = len(s)
	}
	if first >= last {
		return ""
	}
	return s[first:last]
}

// unhex is the value of a hexadecimal digit, or -1.
func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// percentDecoded returns text with its %XX escapes decoded (a malformed escape is kept as it
// is) and, for each byte of the result, the offset in text where it starts; the offsets have
// one more element, len(text), so that a decoded range [i, j) is text[starts[i]:starts[j]].
// ok is false when text has no escape.
func percentDecoded[T ~string | ~[]byte](text T) (decoded []byte, starts []int, ok bool) {
	for i := 0; i+2 < len(text); i++ {
		if text[i] == '%' && unhex(text[i+1]) >= 0 && unhex(text[i+2]) >= 0 {
			ok = true
			break
		}
	}
	if !ok {
		return nil, nil, false
	}
	decoded = make([]byte, 0, len(text))
	starts = make([]int, 0, len(text)+1)
	for i := 0; i < len(text); {
		if text[i] == '%' && i+2 < len(text) && unhex(text[i+1]) >= 0 && unhex(text[i+2]) >= 0 {
			decoded = append(decoded, byte(unhex(text[i+1])<<4|unhex(text[i+2])))
			starts = append(starts, i)
			i += 3
			continue
		}
		decoded = append(decoded, text[i])
		starts = append(starts, i)
		i++
	}
	starts = append(starts, len(text))
	return decoded, starts, true
}
