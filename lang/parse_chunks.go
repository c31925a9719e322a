package lang

import (
	"bytes"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// chunkBytes is about how much source parseChunked gives the HCL parser at a time. HCL's lexer
// appends every token of what it parses (96 bytes each) to one slice, which grows by a quarter
// once it holds 256 tokens: a file of 100 nodes had its tokens copied about five times over,
// ~14 KB allocated and cleared per node, in fresh memory for a one-shot command. About 600 bytes
// of workflow are fewer than 256 tokens, whose slice grows by doubling.
const chunkBytes = 600

// parseChunked is hclsyntax.ParseConfig(src, filename, hcl.InitialPos) done a few top-level
// blocks at a time: each chunk ends after a line that is a lone "}" (how fuscia fmt closes a
// top-level block) and is parsed at its own position, and the blocks are put together in one
// body. The result is the whole file's parse: tokens and ranges are the same, since a chunk
// that parsed without any diagnostic and holds only blocks ends at a block boundary in the
// lexer's ordinary state, where the file's own parse would start its next body item afresh.
// Anything else (a diagnostic, a top-level attribute, whose duplicates only the whole body's
// parse reports) makes it parse the whole file instead, so diagnostics never differ.
func parseChunked(src []byte, filename string) (*hcl.File, hcl.Diagnostics) {
	whole := func() (*hcl.File, hcl.Diagnostics) { return hclsyntax.ParseConfig(src, filename, hcl.InitialPos) }
	if len(src) < 2*chunkBytes {
		return whole()
	}
	var blocks hclsyntax.Blocks
	var first hcl.Range
	pos := hcl.InitialPos
	for start := 0; ; {
		end := chunkEnd(src, start)
		f, diags := hclsyntax.ParseConfig(src[start:end], filename, pos)
		body, ok := f.Body.(*hclsyntax.Body)
		if len(diags) > 0 || !ok || len(body.Attributes) > 0 {
			return whole()
		}
		if start == 0 {
			first = body.SrcRange
		}
		if end == len(src) {
			if start == 0 {
				return f, nil
			}
			// The last chunk's body becomes the file's: its navigation (block context in
			// diagnostics) refers to this body, and its end is the file's end.
			body.Blocks = append(blocks, body.Blocks...)
			body.SrcRange = hcl.RangeBetween(first, body.SrcRange)
			f.Bytes = src
			return f, nil
		}
		blocks = append(blocks, body.Blocks...)
		pos = hcl.Pos{Line: pos.Line + bytes.Count(src[start:end], []byte{'\n'}), Column: 1, Byte: end}
		start = end
	}
}

// chunkEnd is where the chunk that starts at start ends: after the first line that is a lone
// "}" at least chunkBytes further on, or at the end of src.
func chunkEnd(src []byte, start int) int {
	from := start + chunkBytes - 1
	if from >= len(src) {
		return len(src)
	}
	if j := bytes.Index(src[from:], []byte("\n}\n")); j >= 0 {
		return from + j + 3
	}
	return len(src)
}
