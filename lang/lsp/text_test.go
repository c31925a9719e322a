package lsp

import (
	"testing"

	"github.com/hashicorp/hcl/v2"
	protocol "github.com/tliron/glsp/protocol_3_16"
)

func pos(line, char int) protocol.Position {
	return protocol.Position{Line: protocol.UInteger(line), Character: protocol.UInteger(char)}
}

// TestTextOffsetAndPosition: LSP characters are UTF-16 code units, offsets are bytes. "é" is
// two bytes and one unit, "😀" four bytes and two units (a surrogate pair), "\r\n" ends a line.
func TestTextOffsetAndPosition(t *testing.T) {
	src := "ab\n" + // line 0: bytes 0-1, '\n' at 2
		"é😀x\r\n" + // line 1: é 3-4, 😀 5-8, x 9, \r 10, \n 11
		"" // line 2: empty, at 12
	tx := newText([]byte(src))
	cases := []struct {
		name string
		pos  protocol.Position
		off  int
		// back is the position offset() maps back to, when it differs (clamping, rounding).
		back *protocol.Position
	}{
		{"start", pos(0, 0), 0, nil},
		{"ascii", pos(0, 1), 1, nil},
		{"end of ascii line", pos(0, 2), 2, nil},
		{"past end of line clamps", pos(0, 9), 2, ptr(pos(0, 2))},
		{"before é", pos(1, 0), 3, nil},
		{"after é: one unit, two bytes", pos(1, 1), 5, nil},
		{"inside the surrogate pair: start of 😀", pos(1, 2), 5, ptr(pos(1, 1))},
		{"after 😀: two units, four bytes", pos(1, 3), 9, nil},
		{"after x, before CR", pos(1, 4), 10, nil},
		{"past end of CRLF line stops before CR", pos(1, 40), 10, ptr(pos(1, 4))},
		{"empty last line", pos(2, 0), 12, nil},
		{"past the last line: end of text", pos(7, 3), 12, ptr(pos(2, 0))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tx.offset(tc.pos); got != tc.off {
				t.Fatalf("offset(%v) = %d; want %d", tc.pos, got, tc.off)
			}
			want := tc.pos
			if tc.back != nil {
				want = *tc.back
			}
			if got := tx.position(tc.off); got != want {
				t.Fatalf("position(%d) = %v; want %v", tc.off, got, want)
			}
		})
	}
}

// TestTextPositionInsideRune: a byte offset inside a UTF-8 sequence is the character's start;
// offsets out of the text are clamped.
func TestTextPositionInsideRune(t *testing.T) {
	tx := newText([]byte("x😀y"))
	for off, want := range map[int]protocol.Position{-4: pos(0, 0), 2: pos(0, 1), 4: pos(0, 1), 5: pos(0, 3), 6: pos(0, 4), 99: pos(0, 4)} {
		if got := tx.position(off); got != want {
			t.Errorf("position(%d) = %v; want %v", off, got, want)
		}
	}
}

// TestTextRangeOf converts HCL ranges by their byte offsets, and falls back to line and column
// for a range built without them.
func TestTextRangeOf(t *testing.T) {
	tx := newText([]byte("a = 1\nnamé = \"😀\"\n"))
	// 😀 is the 9th character of line 2, bytes 15-18, UTF-16 units 8-9.
	byBytes := hcl.Range{Start: hcl.Pos{Line: 2, Column: 9, Byte: 15}, End: hcl.Pos{Line: 2, Column: 10, Byte: 19}}
	want := protocol.Range{Start: pos(1, 8), End: pos(1, 10)}
	if got := tx.rangeOf(byBytes); got != want {
		t.Errorf("rangeOf(%v) = %v; want %v", byBytes, got, want)
	}
	noBytes := hcl.Range{Start: hcl.Pos{Line: 2, Column: 9}, End: hcl.Pos{Line: 2, Column: 10}}
	if got := tx.rangeOf(noBytes); got != want {
		t.Errorf("rangeOf(%v) = %v; want %v", noBytes, got, want)
	}
	if got, want := tx.whole(), (protocol.Range{End: pos(2, 0)}); got != want {
		t.Errorf("whole() = %v; want %v", got, want)
	}
}

func ptr[T any](v T) *T { return &v }
