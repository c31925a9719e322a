package lsp

import (
	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"
)

// initialize tells the client what the server does.
func (s *Server) initialize(_ *glsp.Context, p *protocol.InitializeParams) (any, error) {
	if p.ClientInfo != nil {
		s.log.Debug("initialize", "client", p.ClientInfo.Name)
	}
	// Incremental: an editor sends what changed, not the whole text, which for a large
	// workflow is most of the cost of a keystroke (decoding 100 KB of JSON per change).
	change := protocol.TextDocumentSyncKindIncremental
	yes := true
	version := s.cfg.Version
	return protocol.InitializeResult{
		Capabilities: protocol.ServerCapabilities{
			TextDocumentSync: protocol.TextDocumentSyncOptions{OpenClose: &yes, Change: &change, Save: true},
			CompletionProvider: &protocol.CompletionOptions{
				TriggerCharacters: []string{"."},
			},
			HoverProvider:              true,
			DefinitionProvider:         true,
			ReferencesProvider:         true,
			RenameProvider:             protocol.RenameOptions{PrepareProvider: &yes},
			DocumentSymbolProvider:     true,
			DocumentFormattingProvider: true,
		},
		ServerInfo: &protocol.InitializeResultServerInfo{Name: "fuscia", Version: &version},
	}, nil
}

// shutdownRequest stops the checks; exit follows.
func (s *Server) shutdownRequest(*glsp.Context) error {
	s.shutdown.Store(true)
	s.checks.stop(s.stopChecks)
	return nil
}

func (s *Server) didOpen(ctx *glsp.Context, p *protocol.DidOpenTextDocumentParams) error {
	d := newDocument(p.TextDocument.URI, p.TextDocument.LanguageID, p.TextDocument.Version, newText([]byte(p.TextDocument.Text)))
	s.docs.open(d)
	s.checks.schedule(d, ctx.Notify)
	return nil
}

func (s *Server) didChange(ctx *glsp.Context, p *protocol.DidChangeTextDocumentParams) error {
	d, err := s.docs.change(p.TextDocument.URI, p.TextDocument.Version, p.ContentChanges)
	if err != nil {
		return err
	}
	s.checks.schedule(d, ctx.Notify)
	if d.kind() == kindWorkflow {
		// Open test files are checked against the open text of the workflows they test.
		for _, other := range s.docs.all() {
			if other.kind() == kindTest {
				s.checks.schedule(other, ctx.Notify)
			}
		}
	}
	return nil
}

// didSave checks the other open documents again: one may call the workflow just saved, which
// its check reads from disk.
func (s *Server) didSave(ctx *glsp.Context, p *protocol.DidSaveTextDocumentParams) error {
	for _, d := range s.docs.all() {
		if d.uri != p.TextDocument.URI {
			s.checks.schedule(d, ctx.Notify)
		}
	}
	return nil
}

func (s *Server) didClose(ctx *glsp.Context, p *protocol.DidCloseTextDocumentParams) error {
	s.docs.close(p.TextDocument.URI)
	s.checks.closed(p.TextDocument.URI, ctx.Notify)
	return nil
}
