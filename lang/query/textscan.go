package query

// Completion runs on every keystroke, on a text that usually does not parse, and parsing a
// file of 1,000 nodes costs more than a keystroke may. So completion reads the file's block
// structure from its bytes (scanBlocks: one pass, strings, comments and heredocs skipped) and
// parses only the blocks it needs, each on its own (span.parse). A block header in column 1
// always starts a top-level block, as fuscia fmt writes them, so a brace left open while
// typing does not hide the blocks after it.

import (
	"bytes"
	"sort"
	"sync"

	"github.com/fuscia/fuscia/lang"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// textBlock is a block found in the text: its header and where it ends.
type textBlock struct {
	typ    string
	labels []textLabel
	start  int // the header's first byte
	end    int // after the closing brace; the next top-level block's start if unclosed
	body   []textBlock
}

// textLabel is a label's text and the offsets of the text inside its quotes.
type textLabel struct {
	text       string
	start, end int
}

// maxScanDepth bounds the nesting of strings in interpolations the scanner follows.
const maxScanDepth = 64

// scanBlocks returns the top-level blocks of src, each with the blocks directly inside it.
func scanBlocks(src []byte) []textBlock {
	var tops []textBlock
	depth := 0
	lineStart := true
	closeAll := func(at int) {
		if depth > 0 && len(tops) > 0 {
			top := &tops[len(tops)-1]
			if top.end == 0 {
				top.end = at
			}
			for i := range top.body {
				if top.body[i].end == 0 {
					top.body[i].end = at
				}
			}
		}
		depth = 0
	}
	for i := 0; i < len(src); {
		c := src[i]
		if c == '\n' {
			lineStart = true
			i++
			continue
		}
		if c == ' ' || c == '\t' || c == '\r' {
			i++
			continue
		}
		if lineStart {
			lineStart = false
			if typ, labels, n, ok := headerAt(src, i); ok {
				if i == 0 || src[i-1] == '\n' {
					closeAll(i)
				}
				switch depth {
				case 0:
					tops = append(tops, textBlock{typ: typ, labels: labels, start: i})
				case 1:
					if len(tops) > 0 {
						top := &tops[len(tops)-1]
						top.body = append(top.body, textBlock{typ: typ, labels: labels, start: i})
					}
				}
				depth++
				i += n
				continue
			}
		}
		switch c {
		case '{':
			depth++
		case '}':
			depth--
			switch {
			case depth < 0:
				depth = 0
			case depth == 0 && len(tops) > 0 && tops[len(tops)-1].end == 0:
				tops[len(tops)-1].end = i + 1
			case depth == 1 && len(tops) > 0:
				top := &tops[len(tops)-1]
				if n := len(top.body); n > 0 && top.body[n-1].end == 0 {
					top.body[n-1].end = i + 1
				}
			}
		case '"':
			i = skipString(src, i, 0)
			continue
		case '#':
			i = skipLine(src, i)
			continue
		case '/':
			if i+1 < len(src) && src[i+1] == '/' {
				i = skipLine(src, i)
				continue
			}
			if i+1 < len(src) && src[i+1] == '*' {
				i = skipBlockComment(src, i)
				continue
			}
		case '<':
			if i+1 < len(src) && src[i+1] == '<' {
				i = skipHeredoc(src, i)
				continue
			}
		}
		i++
	}
	closeAll(len(src))
	return tops
}

// headerAt reads a block header `TYPE LABEL… {` at i; n is its length, brace included.
func headerAt(src []byte, i int) (typ string, labels []textLabel, n int, ok bool) {
	j := i
	for j < len(src) && (src[j] >= 'a' && src[j] <= 'z' || src[j] == '_' || j > i && src[j] >= '0' && src[j] <= '9') {
		j++
	}
	if j == i {
		return "", nil, 0, false
	}
	typ = string(src[i:j])
	for {
		for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
			j++
		}
		if j >= len(src) {
			return "", nil, 0, false
		}
		switch c := src[j]; {
		case c == '{':
			return typ, labels, j + 1 - i, true
		case c == '"':
			k := j + 1
			for k < len(src) && src[k] != '"' && src[k] != '\n' && src[k] != '\\' && src[k] != '$' {
				k++
			}
			if k >= len(src) || src[k] != '"' {
				return "", nil, 0, false
			}
			labels = append(labels, textLabel{string(src[j+1 : k]), j + 1, k})
			j = k + 1
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_':
			k := j
			for k < len(src) && isIdentByte(src[k]) {
				k++
			}
			labels = append(labels, textLabel{string(src[j:k]), j, k})
			j = k
		default:
			return "", nil, 0, false
		}
	}
}

// skipString returns the offset after the quoted string starting at i (or the end of its line
// when it is not closed there), following interpolations.
func skipString(src []byte, i, depth int) int {
	i++
	for i < len(src) {
		switch src[i] {
		case '\\':
			i += 2
			continue
		case '"':
			return i + 1
		case '\n':
			return i
		case '$', '%':
			if i+1 < len(src) && src[i+1] == '{' {
				if depth >= maxScanDepth {
					return skipLine(src, i)
				}
				i = skipInterp(src, i+2, depth+1)
				continue
			}
		}
		i++
	}
	return i
}

// skipInterp returns the offset after the brace that closes an interpolation whose content
// starts at i.
func skipInterp(src []byte, i, depth int) int {
	braces := 0
	for i < len(src) {
		switch src[i] {
		case '"':
			i = skipString(src, i, depth)
			continue
		case '{':
			braces++
		case '}':
			if braces == 0 {
				return i + 1
			}
			braces--
		case '\n':
			return i
		}
		i++
	}
	return i
}

func skipLine(src []byte, i int) int {
	for i < len(src) && src[i] != '\n' {
		i++
	}
	return i
}

func skipBlockComment(src []byte, i int) int {
	for i += 2; i+1 < len(src); i++ {
		if src[i] == '*' && src[i+1] == '/' {
			return i + 2
		}
	}
	return len(src)
}

// skipHeredoc returns the offset after a heredoc `<<EOT … EOT` (or `<<-EOT`) starting at i.
func skipHeredoc(src []byte, i int) int {
	j := i + 2
	if j < len(src) && src[j] == '-' {
		j++
	}
	k := j
	for k < len(src) && isIdentByte(src[k]) {
		k++
	}
	if k == j {
		return i + 2
	}
	marker := string(src[j:k])
	for line := skipLine(src, k); line < len(src); {
		start := line + 1
		end := skipLine(src, start)
		s, e := start, end
		for s < e && (src[s] == ' ' || src[s] == '\t') {
			s++
		}
		for e > s && (src[e-1] == ' ' || src[e-1] == '\t' || src[e-1] == '\r') {
			e--
		}
		if string(src[s:e]) == marker {
			return end
		}
		line = end
	}
	return len(src)
}

// span is a top-level block's text, parsed on its own when first needed.
type span struct {
	start, end int
	once       sync.Once
	block      *hclsyntax.Block // nil when the text does not hold one block of the header's type
}

// parse returns the block the span holds.
func (s *span) parse(a *analysis, typ string) *hclsyntax.Block {
	s.once.Do(func() {
		if lang.CheckNesting(a.filename, a.src[s.start:s.end]) != nil {
			return // the file's diagnostics say so; parsing it would overflow the stack
		}
		f, _ := hclsyntax.ParseConfig(a.src[s.start:s.end], a.filename, a.pos(s.start))
		if f == nil {
			return
		}
		body, ok := f.Body.(*hclsyntax.Body)
		if !ok || len(body.Blocks) == 0 || body.Blocks[0].Type != typ {
			return
		}
		s.block = body.Blocks[0]
	})
	return s.block
}

// declsFromText declares the blocks scanBlocks finds; with spans set, each declaration gets
// its span, to be parsed when needed.
func (a *analysis) declsFromText(tops []textBlock, withSpans bool) {
	for _, tb := range tops {
		var sp *span
		if withSpans {
			sp = &span{start: tb.start, end: tb.end}
		}
		top := a.declareText(tb, nil, sp)
		if tb.typ != "loop" || top == nil {
			continue
		}
		for _, bb := range tb.body {
			if isNodeKind(bb.typ) {
				a.declareText(bb, top, sp)
			}
		}
	}
	sort.SliceStable(a.decls, func(i, j int) bool { return a.decls[i].nameRange.Start.Byte < a.decls[j].nameRange.Start.Byte })
}

// declareText declares one block found in the text, unless its name is declared already.
func (a *analysis) declareText(tb textBlock, loop *decl, sp *span) *decl {
	s, ok := spaceOfBlock(tb.typ)
	n := 0
	if tb.typ == "trigger" {
		n = 1
	}
	if !ok || len(tb.labels) <= n {
		return nil
	}
	lb := tb.labels[n]
	if prev := a.byName[s][lb.text]; prev != nil {
		return prev
	}
	d := &decl{space: s, name: lb.text, nameRange: a.rng(lb.start, lb.end), loop: loop, span: sp, spanType: tb.typ, text: [2]int{tb.start, tb.end}}
	if s == spaceNode {
		d.kind = nodeKind(tb.typ)
	}
	if loop != nil && sp != nil {
		d.spanType = loop.spanType
	}
	if a.byName[s] == nil {
		a.byName[s] = map[string]*decl{}
	}
	a.byName[s][d.name] = d
	a.decls = append(a.decls, d)
	return d
}

// blockOf returns a declaration's block: the one the syntax tree has, or, for a declaration
// found in the text, the block its span parses to; nil when there is none.
func (a *analysis) blockOf(d *decl) *hclsyntax.Block {
	if d.block != nil || d.span == nil {
		return d.block
	}
	top := d.span.parse(a, d.spanType)
	if top == nil || d.loop == nil {
		if top != nil && (len(top.Labels) == 0 || top.Labels[len(top.Labels)-1] != d.name) {
			return nil
		}
		return top
	}
	for _, b := range top.Body.Blocks {
		if string(d.kind) == b.Type && len(b.Labels) > 0 && b.Labels[0] == d.name {
			return b
		}
	}
	return nil
}

// bodyOf returns the body of a declaration's block, or nil.
func (a *analysis) bodyOf(d *decl) *hclsyntax.Body {
	if b := a.blockOf(d); b != nil {
		return b.Body
	}
	return nil
}

// usesText reads a task's `uses` reference from its text ("builtin.http"), for a declaration
// found in the text: listing every node of a large file must not parse every block.
func (a *analysis) usesText(d *decl) string {
	if d.text[1] <= d.text[0] || d.text[1] > len(a.src) {
		return ""
	}
	src := a.src[d.text[0]:d.text[1]]
	for i := 0; i < len(src); i = skipLine(src, i) + 1 {
		j := i
		for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
			j++
		}
		if !bytes.HasPrefix(src[j:], []byte("uses")) {
			continue
		}
		j += len("uses")
		for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
			j++
		}
		if j >= len(src) || src[j] != '=' {
			continue
		}
		j++
		for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
			j++
		}
		k := j
		for k < len(src) && (isIdentByte(src[k]) || src[k] == '.') {
			k++
		}
		return string(src[j:k])
	}
	return ""
}
