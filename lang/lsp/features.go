package lsp

import (
	"errors"
	"fmt"
	"os"

	"github.com/hashicorp/hcl/v2"
	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/query"
)

// The language features: each converts the request's position to a byte offset, asks
// lang/query and converts the answer back. They run on the handler goroutine, in the order the
// client sent its messages, so they see the text of every change sent before them.

// at returns the open document and the byte offset of a request's position.
func (s *Server) at(p protocol.TextDocumentPositionParams) (*document, int, error) {
	d, err := s.docs.get(p.TextDocument.URI)
	if err != nil {
		return nil, 0, err
	}
	return d, d.text.offset(p.Position), nil
}

// env is what is installed, as lang/query sees it from d's file.
func (s *Server) env(d *document) query.Env {
	return installed{env: s.planEnv(), plugins: s.plugins, file: d.path}
}

func (s *Server) completion(_ *glsp.Context, p *protocol.CompletionParams) (any, error) {
	d, off, err := s.at(p.TextDocumentPositionParams)
	if err != nil {
		return nil, err
	}
	items := query.Complete(d.q, off, s.env(d))
	out := make([]protocol.CompletionItem, 0, len(items))
	for _, c := range items {
		kind := completionKinds[c.Kind]
		item := protocol.CompletionItem{Label: c.Label, Kind: &kind}
		if c.Detail != "" {
			item.Detail = &c.Detail
		}
		if c.Documentation != "" {
			item.Documentation = protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: c.Documentation}
		}
		insert := c.Label
		if c.InsertText != "" {
			insert = c.InsertText
		}
		if c.Range.Filename != "" || c.Range.End.Byte > 0 {
			item.TextEdit = protocol.TextEdit{Range: d.text.rangeOf(c.Range), NewText: insert}
		} else {
			item.InsertText = &insert
		}
		out = append(out, item)
	}
	return out, nil
}

// completionKinds map lang/query's kinds to the protocol's, for the editor's icons.
var completionKinds = map[query.CompletionKind]protocol.CompletionItemKind{
	query.KindBlock:     protocol.CompletionItemKindClass,
	query.KindAttribute: protocol.CompletionItemKindProperty,
	query.KindNode:      protocol.CompletionItemKindReference,
	query.KindVariable:  protocol.CompletionItemKindVariable,
	query.KindSecret:    protocol.CompletionItemKindConstant,
	query.KindField:     protocol.CompletionItemKindField,
	query.KindFunction:  protocol.CompletionItemKindFunction,
	query.KindModule:    protocol.CompletionItemKindModule,
	query.KindKeyword:   protocol.CompletionItemKindKeyword,
}

func (s *Server) hover(_ *glsp.Context, p *protocol.HoverParams) (*protocol.Hover, error) {
	d, off, err := s.at(p.TextDocumentPositionParams)
	if err != nil {
		return nil, err
	}
	h := query.Hover(d.q, off, s.env(d))
	if h == nil {
		return nil, nil
	}
	hover := &protocol.Hover{Contents: protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: h.Markdown}}
	if h.Range != (hcl.Range{}) {
		rng := d.text.rangeOf(h.Range)
		hover.Range = &rng
	}
	return hover, nil
}

func (s *Server) definition(_ *glsp.Context, p *protocol.DefinitionParams) (any, error) {
	d, off, err := s.at(p.TextDocumentPositionParams)
	if err != nil {
		return nil, err
	}
	return s.locations(d, query.Definition(d.q, off)), nil
}

func (s *Server) references(_ *glsp.Context, p *protocol.ReferenceParams) ([]protocol.Location, error) {
	d, off, err := s.at(p.TextDocumentPositionParams)
	if err != nil {
		return nil, err
	}
	return s.locations(d, query.References(d.q, off, p.Context.IncludeDeclaration)), nil
}

func (s *Server) prepareRename(_ *glsp.Context, p *protocol.PrepareRenameParams) (any, error) {
	d, off, err := s.at(p.TextDocumentPositionParams)
	if err != nil {
		return nil, err
	}
	r, ok := query.PrepareRename(d.q, off)
	if !ok {
		return nil, nil // null: nothing here can be renamed
	}
	return d.text.rangeOf(r), nil
}

func (s *Server) rename(_ *glsp.Context, p *protocol.RenameParams) (*protocol.WorkspaceEdit, error) {
	d, off, err := s.at(p.TextDocumentPositionParams)
	if err != nil {
		return nil, err
	}
	edits, err := query.Rename(d.q, off, p.NewName)
	if err != nil {
		return nil, err
	}
	changes := map[protocol.DocumentUri][]protocol.TextEdit{}
	for _, e := range edits {
		loc, ok := s.location(d, e.Range)
		if !ok {
			return nil, fmt.Errorf("cannot rename: the file %s cannot be read", e.Range.Filename)
		}
		changes[loc.URI] = append(changes[loc.URI], protocol.TextEdit{Range: loc.Range, NewText: e.NewText})
	}
	return &protocol.WorkspaceEdit{Changes: changes}, nil
}

func (s *Server) documentSymbol(_ *glsp.Context, p *protocol.DocumentSymbolParams) (any, error) {
	d, err := s.docs.get(p.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	return symbols(d.text, query.Symbols(d.q)), nil
}

func symbols(t *text, syms []query.Symbol) []protocol.DocumentSymbol {
	out := make([]protocol.DocumentSymbol, 0, len(syms))
	for _, s := range syms {
		ds := protocol.DocumentSymbol{
			Name: s.Name, Kind: symbolKinds[s.Kind],
			Range: t.rangeOf(s.Range), SelectionRange: t.rangeOf(s.SelectionRange),
		}
		if ds.Kind == 0 {
			ds.Kind = protocol.SymbolKindObject
		}
		if s.Detail != "" {
			ds.Detail = &s.Detail
		}
		if len(s.Children) > 0 {
			ds.Children = symbols(t, s.Children)
		}
		out = append(out, ds)
	}
	return out
}

// symbolKinds map lang/query's symbol kinds to the protocol's, for the outline's icons.
var symbolKinds = map[query.SymbolKind]protocol.SymbolKind{
	query.SymbolWorkflow:  protocol.SymbolKindModule,
	query.SymbolVariable:  protocol.SymbolKindVariable,
	query.SymbolSecret:    protocol.SymbolKindConstant,
	query.SymbolTrigger:   protocol.SymbolKindEvent,
	query.SymbolComponent: protocol.SymbolKindPackage,
	query.SymbolPlugin:    protocol.SymbolKindPackage,
	query.SymbolNode:      protocol.SymbolKindFunction,
	query.SymbolOutput:    protocol.SymbolKindProperty,
	query.SymbolBlock:     protocol.SymbolKindObject,
}

// formatting is `fuscia fmt` on the editor's text: one edit that replaces the whole document,
// or none when it is formatted. A text that does not parse is not formatted (as fmt refuses
// it): the answer is an error that names the first syntax error.
func (s *Server) formatting(_ *glsp.Context, p *protocol.DocumentFormattingParams) ([]protocol.TextEdit, error) {
	d, err := s.docs.get(p.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	out, diags := lang.Format(d.path, d.text.src)
	if diags.HasErrors() {
		return nil, notFormatted(diags)
	}
	if string(out) == string(d.text.src) {
		return []protocol.TextEdit{}, nil
	}
	return []protocol.TextEdit{{Range: d.text.whole(), NewText: string(out)}}, nil
}

func notFormatted(diags hcl.Diagnostics) error {
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		where := ""
		if d.Subject != nil {
			where = fmt.Sprintf(" on line %d", d.Subject.Start.Line)
		}
		return fmt.Errorf("cannot format a file that does not parse: %s%s. Fix the errors the diagnostics show, then format again", d.Summary, where)
	}
	return errors.New("cannot format a file that does not parse")
}

// locations converts ranges to locations, leaving out those in files that cannot be read.
func (s *Server) locations(d *document, ranges []hcl.Range) []protocol.Location {
	out := make([]protocol.Location, 0, len(ranges))
	for _, r := range ranges {
		if loc, ok := s.location(d, r); ok {
			out = append(out, loc)
		}
	}
	return out
}

// location converts a range in d's file, in another open document, or in a file on disk.
func (s *Server) location(d *document, r hcl.Range) (protocol.Location, bool) {
	if r.Filename == "" || r.Filename == d.path {
		return protocol.Location{URI: d.uri, Range: d.text.rangeOf(r)}, true
	}
	if other := s.docs.byPath(r.Filename); other != nil {
		return protocol.Location{URI: other.uri, Range: other.text.rangeOf(r)}, true
	}
	src, err := os.ReadFile(r.Filename)
	if err != nil {
		return protocol.Location{}, false
	}
	return protocol.Location{URI: uriOf(r.Filename), Range: newText(src).rangeOf(r)}, true
}
