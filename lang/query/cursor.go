package query

import (
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// The cursor's context is read from the tokens before it, not from the syntax tree: while the
// user types (`task.`), the text around the cursor does not parse, and the tree has nothing
// there. The tokens say which blocks enclose the cursor and whether it is where an attribute
// name, an expression, an object key or a block label goes.

type ctxKind int

const (
	ctxNone      ctxKind = iota
	ctxBody              // where an attribute or a nested block starts
	ctxExpr              // in an expression
	ctxObjectKey         // where a key of an object constructor goes
	ctxLabel             // in a block label's quotes
)

// blockFrame is one enclosing block, as the tokens say it.
type blockFrame struct {
	typ    string
	labels []string
}

// cursor is the context at an offset.
type cursor struct {
	kind   ctxKind
	blocks []blockFrame // enclosing blocks, outermost first
	attr   string       // ctxExpr, ctxObjectKey: the attribute of the innermost block whose value holds the cursor
	keys   []string     // the object keys from the attribute's value to the cursor
	// root, path and prefix split the reference being typed: `task.fetch.output.bo` is root
	// "task", path [fetch output], prefix "bo". Without a dot, root is "" and prefix the word.
	root   string
	path   []step
	prefix string
	start  int // byte offset where prefix starts: what a completion replaces
	label  int // ctxLabel: which label (0 for the first)
}

type frameKind int

const (
	fBlock frameKind = iota
	fObject
	fTuple
	fParen
	fQuote
	fHeredoc
	fInterp
)

type frame struct {
	kind   frameKind
	block  blockFrame // fBlock
	attr   string     // other frames: the block attribute the value belongs to
	keys   []string   // fObject: the keys from the attribute to this object
	header bool       // fQuote: a block label on a header line
	// line holds the tokens seen at this level since the last newline (or comma, in an object
	// or a tuple), or since the frame opened.
	line []hclsyntax.Token
}

// maxRelex bounds the strings left open before the cursor in its block (each lexes the rest of
// the block again) past which cursorAt gives up.
const maxRelex = 16

// cursorAt reads the context at off from the tokens of src[from:off]; from is a place where no
// block, bracket or string is open (the start of a top-level block, or 0).
func cursorAt(src []byte, filename string, from, off int, start hcl.Pos) cursor {
	stack := []*frame{{kind: fBlock}}
	top := func() *frame { return stack[len(stack)-1] }
	push := func(f *frame) { stack = append(stack, f) }
	// pop closes the innermost open frame of one of kinds, and any left open inside it (a
	// bracket not closed before its object's brace); it never closes the file, nor crosses a
	// block unless a block is what closes.
	pop := func(kinds ...frameKind) {
		for i := len(stack) - 1; i > 0; i-- {
			if slices.Contains(kinds, stack[i].kind) {
				stack = stack[:i]
				return
			}
			if stack[i].kind == fBlock {
				return
			}
		}
	}
	toks, _ := hclsyntax.LexConfig(src[from:off], filename, start)
	relexed := 0
	for k := 0; k < len(toks); k++ {
		t := toks[k]
		if t.Type == hclsyntax.TokenEOF {
			break
		}
		f := top()
		switch t.Type {
		case hclsyntax.TokenQuotedNewline:
			// A quoted string ends at its line: one left open is an error the parser reports.
			// The lexer reads on as if the string went on; read the next line afresh.
			pop(fQuote)
			top().line = nil
			// Each one lexes the rest again: a block with thousands of them would cost
			// seconds a keystroke. Past a few, the block is too broken to complete in.
			if relexed++; relexed > maxRelex {
				return cursor{}
			}
			next := t.Range.End
			toks, _ = hclsyntax.LexConfig(src[next.Byte:off], filename, next)
			k = -1
			continue
		case hclsyntax.TokenComment:
			text := string(t.Bytes)
			switch {
			case strings.HasSuffix(text, "\n"):
				f.line = nil // a line comment ends its line
			case strings.HasPrefix(text, "/*") && strings.HasSuffix(text, "*/") && len(text) >= 4:
			default:
				return cursor{} // the cursor is in the comment
			}
			continue
		case hclsyntax.TokenNewline:
			if f.kind != fHeredoc {
				f.line = nil
			}
			continue
		case hclsyntax.TokenComma:
			if f.kind == fObject || f.kind == fTuple {
				f.line = nil
				continue
			}
		}
		f.line = append(f.line, t)
		switch t.Type {
		case hclsyntax.TokenOBrace:
			if f.kind == fBlock {
				if typ, labels, ok := headerLine(f.line[:len(f.line)-1]); ok {
					f.line = nil
					push(&frame{kind: fBlock, block: blockFrame{typ: typ, labels: labels}})
					continue
				}
			}
			attr, keys := f.valueOf()
			push(&frame{kind: fObject, attr: attr, keys: keys})
		case hclsyntax.TokenCBrace:
			pop(fObject, fBlock)
		case hclsyntax.TokenOBrack:
			attr, keys := f.valueOf()
			push(&frame{kind: fTuple, attr: attr, keys: keys})
		case hclsyntax.TokenCBrack:
			pop(fTuple)
		case hclsyntax.TokenOParen:
			attr, keys := f.valueOf()
			push(&frame{kind: fParen, attr: attr, keys: keys})
		case hclsyntax.TokenCParen:
			pop(fParen)
		case hclsyntax.TokenOQuote:
			_, _, header := headerLine(f.line[:len(f.line)-1])
			attr, keys := f.valueOf()
			push(&frame{kind: fQuote, attr: attr, keys: keys, header: header && f.kind == fBlock})
		case hclsyntax.TokenCQuote:
			if f.kind == fQuote && len(stack) > 1 {
				pop(fQuote)
				// The parent sees the string whole: a label, or an object key.
				p := top()
				p.line = append(p.line, f.line...)
			}
		case hclsyntax.TokenOHeredoc:
			attr, keys := f.valueOf()
			push(&frame{kind: fHeredoc, attr: attr, keys: keys})
		case hclsyntax.TokenCHeredoc:
			pop(fHeredoc)
		case hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			push(&frame{kind: fInterp, attr: f.attr, keys: f.keys})
		case hclsyntax.TokenTemplateSeqEnd:
			pop(fInterp)
		}
	}

	c := cursor{}
	for _, f := range stack[1:] {
		if f.kind == fBlock {
			c.blocks = append(c.blocks, f.block)
		}
	}
	f := top()
	line := f.line
	// The word being typed is not part of the context.
	word := identBefore(src, off)
	if n := len(line); n > 0 && line[n-1].Type == hclsyntax.TokenIdent && line[n-1].Range.End.Byte == off {
		line = line[:n-1]
	}
	switch f.kind {
	case fQuote:
		if !f.header && f.attr == "uses" && len(f.keys) == 0 {
			// `uses = "component.x.` is an error the decoder explains (a reference is not
			// quoted), but what follows the dot is still worth offering.
			c.kind, c.attr = ctxExpr, f.attr
			break
		}
		if !f.header {
			return cursor{}
		}
		c.kind = ctxLabel
		c.blocks = c.blocks[:len(c.blocks):len(c.blocks)]
		parent := stack[len(stack)-2]
		typ, labels, _ := headerLine(parent.line[:len(parent.line)-1])
		c.blocks = append(c.blocks, blockFrame{typ: typ, labels: labels})
		c.label = len(labels)
		// The label typed so far: from the opening quote to the cursor.
		q := parent.line[len(parent.line)-1].Range.End.Byte
		c.prefix, c.start = string(src[q:off]), q
		return c
	case fHeredoc:
		return cursor{}
	case fBlock:
		switch {
		case len(line) == 0:
			c.kind, c.prefix, c.start = ctxBody, word, off-len(word)
			return c
		case len(line) >= 2 && line[0].Type == hclsyntax.TokenIdent && line[1].Type == hclsyntax.TokenEqual:
			c.kind, c.attr = ctxExpr, string(line[0].Bytes)
		default:
			return cursor{}
		}
	case fObject:
		eq := false
		for _, t := range line {
			if t.Type == hclsyntax.TokenEqual || t.Type == hclsyntax.TokenColon {
				eq = true
			}
		}
		c.attr, c.keys = f.attr, f.keys
		if !eq {
			if len(line) > 0 {
				return cursor{}
			}
			c.kind, c.prefix, c.start = ctxObjectKey, word, off-len(word)
			return c
		}
		c.kind = ctxExpr
	default:
		c.kind, c.attr, c.keys = ctxExpr, f.attr, f.keys
	}
	if !c.splitReference(src, off) {
		return cursor{}
	}
	return c
}

// valueOf returns the attribute (and object keys) whose value the frame's current line is in.
func (f *frame) valueOf() (string, []string) {
	switch f.kind {
	case fBlock:
		if len(f.line) >= 2 && f.line[0].Type == hclsyntax.TokenIdent && f.line[1].Type == hclsyntax.TokenEqual {
			return string(f.line[0].Bytes), nil
		}
		return "", nil
	case fObject:
		if len(f.line) >= 2 && (f.line[1].Type == hclsyntax.TokenEqual || f.line[1].Type == hclsyntax.TokenColon) {
			if k := tokenKey(f.line[0]); k != "" {
				return f.attr, append(f.keys[:len(f.keys):len(f.keys)], k)
			}
		}
		if len(f.line) >= 4 && f.line[0].Type == hclsyntax.TokenOQuote && f.line[2].Type == hclsyntax.TokenCQuote &&
			(f.line[3].Type == hclsyntax.TokenEqual || f.line[3].Type == hclsyntax.TokenColon) {
			return f.attr, append(f.keys[:len(f.keys):len(f.keys)], string(f.line[1].Bytes))
		}
		return f.attr, append(f.keys[:len(f.keys):len(f.keys)], "")
	}
	return f.attr, f.keys
}

func tokenKey(t hclsyntax.Token) string {
	if t.Type == hclsyntax.TokenIdent {
		return string(t.Bytes)
	}
	return ""
}

// headerLine reports whether tokens are a block header before its brace: a type and labels
// (quoted strings or names).
func headerLine(toks []hclsyntax.Token) (typ string, labels []string, ok bool) {
	if len(toks) == 0 || toks[0].Type != hclsyntax.TokenIdent {
		return "", nil, false
	}
	typ = string(toks[0].Bytes)
	for i := 1; i < len(toks); i++ {
		switch toks[i].Type {
		case hclsyntax.TokenIdent:
			labels = append(labels, string(toks[i].Bytes))
		case hclsyntax.TokenOQuote:
			lit := ""
			j := i + 1
			for ; j < len(toks) && toks[j].Type != hclsyntax.TokenCQuote; j++ {
				if toks[j].Type != hclsyntax.TokenQuotedLit {
					return "", nil, false
				}
				lit += string(toks[j].Bytes)
			}
			labels = append(labels, lit)
			i = j
		default:
			return "", nil, false
		}
	}
	return typ, labels, true
}

func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// identBefore returns the name characters just before off.
func identBefore(src []byte, off int) string {
	i := off
	for i > 0 && isIdentByte(src[i-1]) {
		i--
	}
	return string(src[i:off])
}

// splitReference reads the reference being typed before off into root, path and prefix.
func (c *cursor) splitReference(src []byte, off int) bool {
	i := off
scan:
	for i > 0 {
		ch := src[i-1]
		switch {
		case isIdentByte(ch) || ch == '.' || ch == '*':
			i--
		case ch == ']':
			depth := 0
			j := i - 1
			for ; j >= 0; j-- {
				if src[j] == ']' {
					depth++
				} else if src[j] == '[' {
					depth--
					if depth == 0 {
						break
					}
				} else if src[j] == '\n' {
					return false
				}
			}
			if j < 0 {
				return false
			}
			i = j
		default:
			break scan
		}
	}
	text := string(src[i:off])
	if text == "" {
		c.start = off
		return true
	}
	if text[0] >= '0' && text[0] <= '9' || text[0] == '.' || text[0] == '-' || text[0] == '[' {
		return false
	}
	dot := strings.IndexAny(text, ".[")
	if dot < 0 {
		c.prefix, c.start = text, i
		return true
	}
	c.root = text[:dot]
	rest := text[dot:]
	for rest != "" {
		switch rest[0] {
		case '.':
			rest = rest[1:]
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				// the last step: what is being typed
				if rest == "*" {
					return false
				}
				c.prefix, c.start = rest, off-len(rest)
				return true
			}
			if rest[:end] == "*" {
				c.path = append(c.path, step{index: true})
			} else {
				c.path = append(c.path, step{name: rest[:end]})
			}
			rest = rest[end:]
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return false
			}
			key := strings.TrimSpace(rest[1:end])
			st := step{index: true}
			if len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' {
				st.name = key[1 : len(key)-1]
			}
			c.path = append(c.path, st)
			rest = rest[end+1:]
			if rest == "" {
				return false // right after an index: nothing to complete
			}
		default:
			return false
		}
	}
	return false
}
