// Package jsonenc appends JSON values byte for byte as encoding/json encodes them, for the few
// documents written once per run or per entry, where encoding/json's reflection was a
// measurable part of the cost (docs/performance.md, issue 20). It covers strings, raw
// messages and maps of strings; whatever it cannot copy as is it leaves to encoding/json, so
// the bytes, and the errors, stay encoding/json's.
package jsonenc

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// String appends s as a JSON string, as encoding/json encodes it (HTML-safe). A string of
// printable ASCII that needs no escape (an id, a status, a usual header) is copied; any other
// is encoded by encoding/json.
func String(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			data, _ := json.Marshal(s) // a string always encodes
			return append(b, data...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Raw appends raw as encoding/json encodes a json.RawMessage: compacted, with <, >, & and
// U+2028/U+2029 escaped. Like encoding/json, it refuses raw that is not JSON (b is then
// returned unchanged with the error).
func Raw(b []byte, raw []byte) ([]byte, error) {
	n := len(b)
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, raw); err != nil {
		return b[:n], err
	}
	b = buf.Bytes()
	if !needsHTMLEscape(b[n:]) {
		return b, nil
	}
	var esc bytes.Buffer
	json.HTMLEscape(&esc, b[n:])
	return append(b[:n], esc.Bytes()...), nil
}

// needsHTMLEscape reports whether JSON holds what encoding/json escapes for HTML: <, >, & or
// the line and paragraph separators (E2 80 A8, E2 80 A9).
func needsHTMLEscape(b []byte) bool {
	for i, c := range b {
		switch c {
		case '<', '>', '&':
			return true
		case 0xE2:
			if i+2 < len(b) && b[i+1] == 0x80 && b[i+2]&^1 == 0xA8 {
				return true
			}
		}
	}
	return false
}

// StringMap appends m as a JSON object with its keys sorted, as encoding/json encodes a
// map[string]string; a nil map is null.
func StringMap(b []byte, m map[string]string) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	var small [16]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = String(b, k)
		b = append(b, ':')
		b = String(b, m[k])
	}
	return append(b, '}')
}
