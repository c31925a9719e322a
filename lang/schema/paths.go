package schema

import (
	"iter"

	"github.com/zclconf/go-cty/cty"
)

// Paths is a set of paths into a value's objects by attribute name: the parts of a document
// that something reads. A node that is Whole is read entirely (everything below it); one that
// is not is read only through the attributes it lists. The zero value reads nothing.
type Paths struct {
	Whole bool
	attrs map[string]*Paths
}

// Add adds the path names to p: the value at its end is read whole. An empty path is the whole
// value. Names are compared as cty compares attribute names (NFC).
func (p *Paths) Add(names ...string) {
	for _, name := range names {
		if p.Whole {
			return
		}
		name = cty.NormalizeString(name)
		child := p.attrs[name]
		if child == nil {
			if p.attrs == nil {
				p.attrs = map[string]*Paths{}
			}
			child = &Paths{}
			p.attrs[name] = child
		}
		p = child
	}
	p.Whole, p.attrs = true, nil
}

// Covers reports whether p holds the value at the end of the path names: whether it or a
// value above it is read whole.
func (p *Paths) Covers(names iter.Seq[string]) bool {
	for name := range names {
		if p.Whole {
			return true
		}
		if p = p.attrs[cty.NormalizeString(name)]; p == nil {
			return false
		}
	}
	return p.Whole
}

// Child is what p reads of the value of attribute name: p itself when p is read whole, nil
// when p does not read that attribute.
func (p *Paths) Child(name string) *Paths {
	if p.Whole {
		return p
	}
	return p.attrs[cty.NormalizeString(name)]
}

// Prune is v with only the parts p reads: an object keeps only the attributes p lists (those it
// has), each pruned in turn; anything else (a value read whole, a list, a primitive, null) is
// kept as it is. Reading a path p holds gives the same value, or the same error, from either.
func (p *Paths) Prune(v cty.Value) cty.Value {
	if p.Whole || !v.IsKnown() || v.IsNull() || v.IsMarked() || !v.Type().IsObjectType() {
		return v
	}
	attrs := make(map[string]cty.Value, len(p.attrs))
	for name, child := range p.attrs {
		if v.Type().HasAttribute(name) {
			attrs[name] = child.Prune(v.GetAttr(name))
		}
	}
	return cty.ObjectVal(attrs)
}

// ParseJSONPaths is p.Prune(ParseJSON(data)), without building the parts p does not read: a
// webhook's payload holds the request's method, path, query and headers as well as its body,
// and a workflow usually reads a field or two (docs/performance.md, issue 20 item 4, session 24).
// The parts left out are still checked to be JSON, so that a document is refused exactly when
// ParseJSON refuses it, with its error; anything the direct parser does not take goes through
// ParseJSON and Prune. A nil p reads everything.
func ParseJSONPaths(data []byte, p *Paths) (cty.Value, error) {
	if p == nil || p.Whole {
		return ParseJSON(data)
	}
	q := parser{data: data}
	q.space()
	if v, ok := q.prunedValue(0, p); ok {
		if q.space(); q.i == len(q.data) {
			return v, nil
		}
	}
	v, err := ParseJSON(data)
	if err != nil {
		return cty.NilVal, err
	}
	return p.Prune(v), nil
}

// prunedValue is value with only the parts keep reads.
func (p *parser) prunedValue(depth int, keep *Paths) (cty.Value, bool) {
	if keep.Whole || p.i >= len(p.data) || p.data[p.i] != '{' || depth > maxParseDepth {
		return p.value(depth)
	}
	p.i++ // {
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return cty.EmptyObjectVal, true
	}
	var attrs map[string]cty.Value
	for {
		k, ok := p.name()
		if !ok {
			return cty.NilVal, false
		}
		if child := keep.Child(k); child == nil {
			if !p.skip(depth + 1) {
				return cty.NilVal, false
			}
		} else {
			v, ok := p.prunedValue(depth+1, child)
			if !ok {
				return cty.NilVal, false
			}
			if attrs == nil {
				attrs = map[string]cty.Value{}
			}
			attrs[k] = v // a repeated name: the last one, as ParseJSON has it
		}
		if more, ok := p.after('}'); !ok {
			return cty.NilVal, false
		} else if !more {
			if attrs == nil {
				return cty.EmptyObjectVal, true
			}
			return cty.ObjectVal(attrs), true
		}
	}
}

// skip reads over one value without building it. It takes only what value (or, for what value
// leaves to encoding/json, ParseJSON) takes; it may refuse more, which sends the document the
// long way.
func (p *parser) skip(depth int) bool {
	if p.i >= len(p.data) || depth > maxParseDepth {
		return false
	}
	switch c := p.data[p.i]; {
	case c == '{', c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		p.i++
		p.space()
		if p.i < len(p.data) && p.data[p.i] == end {
			p.i++
			return true
		}
		for {
			p.space()
			if c == '{' {
				if p.i >= len(p.data) || p.data[p.i] != '"' || !p.skipString() {
					return false
				}
				p.space()
				if p.i >= len(p.data) || p.data[p.i] != ':' {
					return false
				}
				p.i++
				p.space()
			}
			if !p.skip(depth + 1) {
				return false
			}
			if more, ok := p.after(end); !ok {
				return false
			} else if !more {
				return true
			}
		}
	case c == '"':
		return p.skipString()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return p.skipNumber()
	}
	return false
}

// skipString reads over a string token by JSON's grammar. Bytes that are not UTF-8 are taken:
// encoding/json takes them too (it replaces them).
func (p *parser) skipString() bool {
	p.i++ // "
	for p.i < len(p.data) {
		switch c := p.data[p.i]; {
		case c == '"':
			p.i++
			return true
		case c == '\\':
			if p.i+1 >= len(p.data) {
				return false
			}
			switch p.data[p.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i += 2
			case 'u':
				if p.i+6 > len(p.data) {
					return false
				}
				for _, h := range p.data[p.i+2 : p.i+6] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				p.i += 6
			default:
				return false
			}
		case c < 0x20:
			return false
		default:
			p.i++
		}
	}
	return false
}

// skipNumber reads over a number token by JSON's grammar. An exponent of more than six digits
// is refused (the long way decides what it makes of it).
func (p *parser) skipNumber() bool {
	exponent, ok := p.scanNumber()
	return ok && exponent <= 6
}
