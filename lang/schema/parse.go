package schema

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/internal/bounds"
)

// ParseJSON decodes JSON into a cty value: the value FromJSON makes of what encoding/json's
// Decoder (with UseNumber) decodes from data, its first JSON value. It parses the usual
// document straight into cty, without the map[string]any in between: for a webhook's payload
// that step was a third of a run's cost to decode it (docs/performance.md, item 4, session 17).
// Anything the direct parser does not take (a string with escapes is still taken) goes the
// long way, so that values, and errors, are encoding/json's. TestParseJSONMatches and
// FuzzParseJSON hold it to that.
func ParseJSON(data []byte) (cty.Value, error) {
	p := parser{data: data}
	p.space()
	if v, ok := p.value(0); ok {
		if p.space(); p.i == len(p.data) {
			return v, nil
		}
	}
	return decodeDocument(data)
}

// decodeDocument is the long way: encoding/json's Decoder into any, then FromJSON.
func decodeDocument(data []byte) (cty.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return cty.NilVal, err
	}
	return FromJSON(x)
}

// maxParseDepth is where the direct parser gives up on nesting (encoding/json refuses 10,000).
const maxParseDepth = 1000

// parser reads one JSON document; a method returns ok false for anything it does not take,
// and ParseJSON then leaves the document to decodeDocument.
type parser struct {
	data []byte
	i    int
}

func (p *parser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (cty.Value, bool) {
	if p.i >= len(p.data) || depth > maxParseDepth {
		return cty.NilVal, false
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, ok := p.string()
		if !ok {
			return cty.NilVal, false
		}
		return cty.StringVal(s), true
	case c == 't':
		return cty.True, p.literal("true")
	case c == 'f':
		return cty.False, p.literal("false")
	case c == 'n':
		return cty.NullVal(cty.DynamicPseudoType), p.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return p.number()
	}
	return cty.NilVal, false
}

func (p *parser) literal(word string) bool {
	if !bytes.HasPrefix(p.data[p.i:], []byte(word)) {
		return false
	}
	p.i += len(word)
	return true
}

func (p *parser) object(depth int) (cty.Value, bool) {
	p.i++ // {
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return cty.EmptyObjectVal, true
	}
	attrs := map[string]cty.Value{}
	for {
		k, ok := p.name()
		if !ok {
			return cty.NilVal, false
		}
		v, ok := p.value(depth + 1)
		if !ok {
			return cty.NilVal, false
		}
		attrs[k] = v // a repeated name: the last one, as decoding into a map has it
		if more, ok := p.after('}'); !ok {
			return cty.NilVal, false
		} else if !more {
			return cty.ObjectVal(attrs), true
		}
	}
}

// name reads an object member's name and the colon after it.
func (p *parser) name() (string, bool) {
	p.space()
	if p.i >= len(p.data) || p.data[p.i] != '"' {
		return "", false
	}
	k, ok := p.string()
	if !ok {
		return "", false
	}
	p.space()
	if p.i >= len(p.data) || p.data[p.i] != ':' {
		return "", false
	}
	p.i++
	p.space()
	return k, true
}

func (p *parser) array(depth int) (cty.Value, bool) {
	p.i++ // [
	p.space()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return cty.EmptyTupleVal, true
	}
	var elems []cty.Value
	for {
		p.space()
		v, ok := p.value(depth + 1)
		if !ok {
			return cty.NilVal, false
		}
		elems = append(elems, v)
		if more, ok := p.after(']'); !ok {
			return cty.NilVal, false
		} else if !more {
			return cty.TupleVal(elems), true
		}
	}
}

// after reads what follows a member or an element: a comma (more follow) or end, which closes
// the object or array.
func (p *parser) after(end byte) (more, ok bool) {
	p.space()
	if p.i >= len(p.data) {
		return false, false
	}
	switch p.data[p.i] {
	case ',':
		p.i++
		return true, true
	case end:
		p.i++
		return false, true
	}
	return false, false
}

// string reads a string token. One without escapes, in valid UTF-8, is taken as it is; one
// with escapes is unquoted by encoding/json (which also decides what an escape means).
func (p *parser) string() (string, bool) {
	start := p.i
	p.i++ // "
	escaped := false
	for p.i < len(p.data) {
		switch c := p.data[p.i]; {
		case c == '"':
			p.i++
			tok := p.data[start:p.i]
			if escaped {
				var s string
				if json.Unmarshal(tok, &s) != nil {
					return "", false
				}
				return s, true
			}
			body := tok[1 : len(tok)-1]
			if !utf8.Valid(body) {
				return "", false // encoding/json replaces what is not UTF-8: the long way
			}
			return string(body), true
		case c == '\\':
			escaped = true
			p.i += 2
		case c < 0x20:
			return "", false
		default:
			p.i++
		}
	}
	return "", false
}

// number reads a number token by JSON's grammar and makes it exactly as FromJSON makes a
// json.Number.
func (p *parser) number() (cty.Value, bool) {
	start := p.i
	if _, ok := p.scanNumber(); !ok {
		return cty.NilVal, false
	}
	n, err := bounds.ParseNumber(string(p.data[start:p.i]))
	if err != nil {
		return cty.NilVal, false // the long way says what is wrong with it
	}
	return n, true
}

// scanNumber reads over a number token by JSON's grammar; exponent is how many digits its
// exponent has.
func (p *parser) scanNumber() (exponent int, ok bool) {
	if p.data[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.data) && p.data[p.i] == '0':
		p.i++
	case p.digits() == 0:
		return 0, false
	}
	if p.i < len(p.data) && p.data[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return 0, false
		}
	}
	if p.i < len(p.data) && (p.data[p.i] == 'e' || p.data[p.i] == 'E') {
		p.i++
		if p.i < len(p.data) && (p.data[p.i] == '+' || p.data[p.i] == '-') {
			p.i++
		}
		if exponent = p.digits(); exponent == 0 {
			return 0, false
		}
	}
	return exponent, true
}

func (p *parser) digits() int {
	n := 0
	for p.i < len(p.data) && '0' <= p.data[p.i] && p.data[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}
