package lsp

import (
	"sort"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	protocol "github.com/tliron/glsp/protocol_3_16"
)

// text is a document's content with the index that converts between the byte offsets the
// language works in (hcl.Pos.Byte, lang/query's offsets) and LSP positions, whose character is
// counted in UTF-16 code units (the protocol's default encoding, and the only one 3.16 has).
//
// Lines end at "\n"; a "\r" before it belongs to the line ending, so a position past the end of a
// CRLF line stops before the "\r". A lone "\r" is not a line break: HCL does not treat it as one,
// and the ranges of diagnostics come from HCL.
//
// A text is immutable once made, so it may be read from any goroutine.
type text struct {
	src []byte
	// lines are the byte offsets at which each line starts; lines[0] is 0.
	lines []int
}

func newText(src []byte) *text {
	lines := make([]int, 1, 1+len(src)/32)
	for i, b := range src {
		if b == '\n' {
			lines = append(lines, i+1)
		}
	}
	return &text{src: src, lines: lines}
}

// lineEnd is the byte offset where the content of line i ends, before its line ending.
func (t *text) lineEnd(i int) int {
	end := len(t.src)
	if i+1 < len(t.lines) {
		end = t.lines[i+1] - 1 // the '\n'
		if end > t.lines[i] && t.src[end-1] == '\r' {
			end--
		}
	}
	return end
}

// offset is the byte offset of p. As the protocol asks, a character past the end of its line
// means the end of the line, and a line past the last means the end of the text. A character
// in the middle of a surrogate pair means the start of that character.
func (t *text) offset(p protocol.Position) int {
	line := int(p.Line)
	if line >= len(t.lines) {
		return len(t.src)
	}
	off, end := t.lines[line], t.lineEnd(line)
	for units := int(p.Character); off < end; {
		r, size := utf8.DecodeRune(t.src[off:end])
		w := utf16Len(r)
		if units < w {
			break
		}
		units -= w
		off += size
	}
	return off
}

// position is the LSP position of byte offset off, clamped to the text. An offset inside a
// UTF-8 sequence means the start of that character.
func (t *text) position(off int) protocol.Position {
	off = max(0, min(off, len(t.src)))
	line := sort.Search(len(t.lines), func(i int) bool { return t.lines[i] > off }) - 1
	units := 0
	for i := t.lines[line]; i < off; {
		r, size := utf8.DecodeRune(t.src[i:])
		if i+size > off {
			break
		}
		units += utf16Len(r)
		i += size
	}
	return protocol.Position{Line: protocol.UInteger(line), Character: protocol.UInteger(units)}
}

// rangeOf converts an HCL range of this text to an LSP range, by its byte offsets.
func (t *text) rangeOf(r hcl.Range) protocol.Range {
	start, end := r.Start.Byte, r.End.Byte
	if start == 0 && r.Start.Line > 1 {
		// A range built by hand with a line and column but no byte offset: find the offset
		// from the line (Column counts characters from 1).
		start = t.offsetOfColumn(r.Start)
		end = max(start, t.offsetOfColumn(r.End))
	}
	return protocol.Range{Start: t.position(start), End: t.position(max(start, end))}
}

// offsetOfColumn is the byte offset of a position given as a line and a character column (both
// from 1), clamped to the line.
func (t *text) offsetOfColumn(p hcl.Pos) int {
	line := p.Line - 1
	if line < 0 {
		return 0
	}
	if line >= len(t.lines) {
		return len(t.src)
	}
	off, end := t.lines[line], t.lineEnd(line)
	for col := 1; col < p.Column && off < end; col++ {
		_, size := utf8.DecodeRune(t.src[off:end])
		off += size
	}
	return off
}

// whole is the range of the whole text.
func (t *text) whole() protocol.Range {
	return protocol.Range{Start: protocol.Position{}, End: t.position(len(t.src))}
}

// utf16Len is the number of UTF-16 code units of r; an invalid byte (utf8.RuneError) counts
// as one, as editors show it as one replacement character.
func utf16Len(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}
