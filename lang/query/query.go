package query

import (
	"encoding/json"

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

// Env tells the analysis what is installed: the tasks and triggers of components and plugins,
// with their schemas. The language server implements it from the component store and the
// plugin directory; a nil Env knows nothing installed, and completion and hover then say only
// what the file itself says. Methods may be called from several goroutines and should answer
// from memory (they are called while the user types).
type Env interface {
	// Component returns the installed component for a `component` block's source ("org/name")
	// and version constraint ("" for the newest); ok is false when none is installed.
	Component(source, version string) (p *Package, ok bool)
	// Plugin returns the plugin for a `plugin` block's source (the plugin's name) and version
	// constraint; ok is false when none is found.
	Plugin(source, version string) (p *Package, ok bool)
}

// EnvFuncs is an [Env] made of two functions; a nil function finds nothing.
type EnvFuncs struct {
	ComponentFunc func(source, version string) (*Package, bool)
	PluginFunc    func(source, version string) (*Package, bool)
}

// Component calls ComponentFunc.
func (e EnvFuncs) Component(source, version string) (*Package, bool) {
	if e.ComponentFunc == nil {
		return nil, false
	}
	return e.ComponentFunc(source, version)
}

// Plugin calls PluginFunc.
func (e EnvFuncs) Plugin(source, version string) (*Package, bool) {
	if e.PluginFunc == nil {
		return nil, false
	}
	return e.PluginFunc(source, version)
}

// Package is an installed component or plugin as [Env] reports it.
type Package struct {
	// Source and Version name what was found ("acme/stripe", "1.2.0"); shown in hover.
	Source, Version string
	Description     string
	Tasks           []TaskInfo
	Triggers        []TaskInfo
}

// TaskInfo is one task or trigger of a [Package]. The schemas are JSON Schema documents as the
// manifest or the plugin's schema gives them; nil when there is none.
type TaskInfo struct {
	Name         string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
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
	// Detail is a one-line type or signature: "string", "upper(str string) string".
	Detail string
	// Documentation is Markdown.
	Documentation string
	// InsertText, when set, replaces Label on insertion (e.g. `task "" {}` snippets are not
	// used: it is plain text).
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

// Complete returns the completion items at offset, sorted by label.
func Complete(d Doc, offset int, env Env) []Completion { return nil }

// Hover describes the thing at offset, or returns nil when there is nothing to say.
func Hover(d Doc, offset int, env Env) *HoverResult { return nil }

// Definition returns where the thing at offset is declared: a node, variable, secret,
// component, plugin or output.
func Definition(d Doc, offset int) []hcl.Range { return nil }

// References returns every reference to the thing at offset, in file order, with its
// declaration's label first when includeDecl is set.
func References(d Doc, offset int, includeDecl bool) []hcl.Range { return nil }

// PrepareRename reports whether the thing at offset can be renamed, and the range of its name.
func PrepareRename(d Doc, offset int) (hcl.Range, bool) { return hcl.Range{}, false }

// Rename returns the edits that rename the thing at offset to newName: the declaring label and
// every reference. An error says why it cannot (not a renameable name, an invalid identifier,
// a name already taken).
func Rename(d Doc, offset int, newName string) ([]Edit, error) { return nil, nil }

// Symbols returns the document outline.
func Symbols(d Doc) []Symbol { return nil }
