package query

import (
	"github.com/hashicorp/hcl/v2"
)

// Doc is one workflow or test file as an editor holds it: its name and its current text, saved
// or not. Offsets given to the functions of this package are byte offsets into Src.
//
// A Doc built with [NewDoc] remembers its analysis, so that several questions about the same
// text parse it once; a Doc literal works too and is analysed on each call. A Doc must not be
// changed after it is made: a new text is a new Doc.
type Doc struct {
	Filename string
	Src      []byte

	// cache holds the parsed and decoded file; nil for a Doc literal.
	cache *cache
}

// NewDoc returns a Doc that caches its analysis. It is safe to query it from several
// goroutines.
func NewDoc(filename string, src []byte) Doc {
	return Doc{Filename: filename, Src: src, cache: &cache{}}
}

// CompletionKind says what a completion item is, so that an editor can pick an icon.
type CompletionKind int

// Completion kinds.
const (
	KindBlock     CompletionKind = iota + 1 // a block type: task, loop, …
	KindAttribute                           // an attribute name of the enclosing block
	KindNode                                // a node name after task., loop., …
	KindVariable                            // var.NAME
	KindSecret                              // secret.NAME
	KindField                               // a field of an object: output.body, each.key
	KindFunction                            // a function of the language
	KindModule                              // a component or plugin local name, or one of its tasks
	KindKeyword                             // a root word: task, var, each, …
)

// Completion is one completion item.
type Completion struct {
	// Label is what is shown and, unless InsertText is set, inserted.
	Label string
	Kind  CompletionKind
	// Detail is a one-line type or signature: "string", "upper(str string) → string".
	Detail string
	// Documentation is Markdown.
	Documentation string
	// InsertText, when set, is inserted instead of Label, as plain text (not a snippet). The
	// items of this package insert their labels and leave it empty.
	InsertText string
	// Range is the text the item replaces: the partial word before the cursor.
	Range hcl.Range
}

// HoverResult is the answer to a hover: Markdown for the thing under the cursor, and its range.
type HoverResult struct {
	Markdown string
	Range    hcl.Range
}

// Edit replaces the text of Range with NewText.
type Edit struct {
	Range   hcl.Range
	NewText string
}

// SymbolKind says what a symbol is.
type SymbolKind int

// Symbol kinds.
const (
	SymbolWorkflow SymbolKind = iota + 1
	SymbolVariable
	SymbolSecret
	SymbolTrigger
	SymbolComponent
	SymbolPlugin
	SymbolNode
	SymbolOutput
	SymbolBlock // any other block (a switch case, a test run, a mock, …)
)

// Symbol is one entry of a document outline.
type Symbol struct {
	// Name is the label ("fetch"); Detail says the kind and what it runs ("task · builtin.http").
	Name, Detail string
	Kind         SymbolKind
	// Range covers the whole block; SelectionRange its label (or type when unlabelled).
	Range, SelectionRange hcl.Range
	Children              []Symbol
}
