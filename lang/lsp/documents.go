package lsp

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/fuscia/fuscia/lang/query"
)

// document is one open document at one version. It is immutable: a change makes a new one,
// so a check or a query may hold it while the editor goes on typing.
type document struct {
	uri protocol.DocumentUri
	// path is the name the language gives the file (diagnostics' ranges, relative paths of
	// called workflows): the file's path for a file: URI, else the URI itself.
	path string
	// language is the editor's language id ("fuscia", "fuscia-test"), which says what an
	// unsaved buffer without a file name is.
	language string
	version  protocol.Integer
	text     *text
	// q is the document as lang/query analyses it; it caches its analysis, so the questions
	// asked about one version parse it once.
	q query.Doc
}

func newDocument(uri protocol.DocumentUri, language string, version protocol.Integer, tx *text) *document {
	path := pathOf(uri)
	return &document{uri: uri, path: path, language: language, version: version, text: tx, q: query.NewDoc(path, tx.src)}
}

// kind says which checks apply to a document: by its name, else by its language id.
type kind int

// The language ids of the editor extensions (editors/).
const (
	languageWorkflow = "fuscia"
	languageTest     = "fuscia-test"
)

const (
	kindOther    kind = iota
	kindWorkflow      // *.fsc.hcl
	kindTest          // *.fsctest.hcl
)

func (d *document) kind() kind {
	switch {
	case strings.HasSuffix(d.path, ".fsctest.hcl"):
		return kindTest
	case strings.HasSuffix(d.path, ".fsc.hcl"):
		return kindWorkflow
	case d.language == languageTest:
		return kindTest
	case d.language == languageWorkflow:
		return kindWorkflow
	}
	return kindOther
}

// pathOf is the file path of a file: URI ("file:///a/b%20c.fsc.hcl" is "/a/b c.fsc.hcl"), or
// the URI as it is for any other scheme (an unsaved "untitled:" buffer).
func pathOf(uri protocol.DocumentUri) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return uri
	}
	p := u.Path
	if len(p) >= 3 && p[0] == '/' && p[2] == ':' {
		p = p[1:] // file:///C:/x on Windows
	}
	return filepath.FromSlash(p)
}

// uriOf is the file: URI of an absolute path.
func uriOf(path string) protocol.DocumentUri {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// documents are the open documents by URI.
type documents struct {
	mu sync.Mutex
	// byURI holds the newest version of each open document. The handlers (one goroutine, in
	// the order the client sent its messages) replace entries; checks and queries read them.
	byURI map[protocol.DocumentUri]*document
}

func (ds *documents) get(uri protocol.DocumentUri) (*document, error) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	d, ok := ds.byURI[uri]
	if !ok {
		return nil, fmt.Errorf("the document %s is not open", uri)
	}
	return d, nil
}

// byPath is the open document whose file is path, or nil.
func (ds *documents) byPath(path string) *document {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	for _, d := range ds.byURI {
		if d.path == path {
			return d
		}
	}
	return nil
}

func (ds *documents) open(d *document) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if ds.byURI == nil {
		ds.byURI = map[protocol.DocumentUri]*document{}
	}
	ds.byURI[d.uri] = d
}

func (ds *documents) close(uri protocol.DocumentUri) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	delete(ds.byURI, uri)
}

// change applies the content changes of a didChange to the open document and returns its new
// version. A change without a range replaces the whole text (the sync this server asks for);
// one with a range replaces that range, so a client that sends increments works too.
func (ds *documents) change(uri protocol.DocumentUri, version protocol.Integer, changes []any) (*document, error) {
	old, err := ds.get(uri)
	if err != nil {
		return nil, err
	}
	tx := old.text
	for _, c := range changes {
		switch c := c.(type) {
		case protocol.TextDocumentContentChangeEventWhole:
			tx = newText([]byte(c.Text))
		case protocol.TextDocumentContentChangeEvent:
			if c.Range == nil {
				tx = newText([]byte(c.Text))
				continue
			}
			start, end := tx.offset(c.Range.Start), tx.offset(c.Range.End)
			if end < start {
				return nil, fmt.Errorf("the change of %s has a range that ends before it starts", uri)
			}
			src := make([]byte, 0, len(tx.src)-(end-start)+len(c.Text))
			src = append(append(append(src, tx.src[:start]...), c.Text...), tx.src[end:]...)
			tx = newText(src)
		default:
			return nil, fmt.Errorf("unexpected content change %T", c)
		}
	}
	d := newDocument(uri, old.language, version, tx)
	ds.open(d)
	return d, nil
}

// all are the open documents, in no order.
func (ds *documents) all() []*document {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	out := make([]*document, 0, len(ds.byURI))
	for _, d := range ds.byURI {
		out = append(out, d)
	}
	return out
}
