package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	protocol "github.com/tliron/glsp/protocol_3_16"
)

// waitFor bounds every wait for the server: generous, because tests run with -race on busy
// machines; nothing waits that long when the server works.
const waitFor = 30 * time.Second

// client is the editor's end of a connection to a language server, for tests: it sends
// requests and notifications, and records the notifications the server sends.
type client struct {
	t    testing.TB
	conn *jsonrpc2.Conn

	mu sync.Mutex
	// diags are the publishDiagnostics notifications received, in order. Guarded by mu.
	diags []protocol.PublishDiagnosticsParams
	// changed is closed and replaced when a notification arrives. Guarded by mu.
	changed chan struct{}
}

// newClient speaks to a server over rwc (the server's stdout to read, its stdin to write).
func newClient(t testing.TB, rwc io.ReadWriteCloser) *client {
	c := &client{t: t, changed: make(chan struct{})}
	c.conn = jsonrpc2.NewConn(context.Background(), jsonrpc2.NewBufferedStream(rwc, jsonrpc2.VSCodeObjectCodec{}),
		jsonrpc2.HandlerWithError(c.handle), jsonrpc2.SetLogger(testLogger{t}))
	t.Cleanup(func() { _ = c.conn.Close() })
	return c
}

func (c *client) handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	if req.Method != protocol.ServerTextDocumentPublishDiagnostics || req.Params == nil {
		return nil, nil
	}
	var p protocol.PublishDiagnosticsParams
	if err := json.Unmarshal(*req.Params, &p); err != nil {
		c.t.Errorf("publishDiagnostics: %v", err)
		return nil, nil
	}
	c.mu.Lock()
	c.diags = append(c.diags, p)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	return nil, nil
}

// call sends a request and decodes its result into result (which may be nil).
func (c *client) call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	err := c.conn.Call(ctx, method, params, result)
	if ctx.Err() != nil {
		c.t.Fatalf("%s: no answer within %s", method, waitFor)
	}
	return err
}

// mustCall is call that fails the test on an error.
func (c *client) mustCall(method string, params, result any) {
	c.t.Helper()
	if err := c.call(method, params, result); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

func (c *client) notify(method string, params any) {
	c.t.Helper()
	if err := c.conn.Notify(context.Background(), method, params); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

func (c *client) initialize() {
	c.t.Helper()
	var res protocol.InitializeResult
	c.mustCall(protocol.MethodInitialize, protocol.InitializeParams{}, &res)
	c.notify(protocol.MethodInitialized, protocol.InitializedParams{})
}

func (c *client) open(uri, text string) {
	c.t.Helper()
	c.notify(protocol.MethodTextDocumentDidOpen, protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{
		URI: uri, LanguageID: "fuscia", Version: 1, Text: text,
	}})
}

func (c *client) change(uri string, version int, text string) {
	c.t.Helper()
	c.notify(protocol.MethodTextDocumentDidChange, protocol.DidChangeTextDocumentParams{
		TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri}, Version: protocol.Integer(version)},
		ContentChanges: []any{protocol.TextDocumentContentChangeEventWhole{Text: text}},
	})
}

// waitDiagnostics waits for a publishDiagnostics of uri for which ok holds, among those that
// arrived after the first skip ones, and returns it with the count of notifications so far.
func (c *client) waitDiagnostics(uri string, skip int, ok func(protocol.PublishDiagnosticsParams) bool) (protocol.PublishDiagnosticsParams, int) {
	c.t.Helper()
	deadline := time.After(waitFor)
	for {
		c.mu.Lock()
		for i := skip; i < len(c.diags); i++ {
			if p := c.diags[i]; p.URI == uri && ok(p) {
				c.mu.Unlock()
				return p, i + 1
			}
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			c.t.Fatalf("no diagnostics of %s as expected within %s; received %d notifications", uri, waitFor, c.received())
		}
	}
}

// versionAtLeast accepts a publication of the document's version v or later.
func versionAtLeast(v int) func(protocol.PublishDiagnosticsParams) bool {
	return func(p protocol.PublishDiagnosticsParams) bool { return p.Version != nil && int(*p.Version) >= v }
}

func (c *client) received() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.diags)
}

// published returns the notifications received so far.
func (c *client) published() []protocol.PublishDiagnosticsParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]protocol.PublishDiagnosticsParams(nil), c.diags...)
}

// rpcCode is the JSON-RPC error code of err, or 0.
func rpcCode(err error) int64 {
	var e *jsonrpc2.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

type testLogger struct{ t testing.TB }

func (l testLogger) Printf(format string, v ...any) { l.t.Logf("client: "+format, v...) }

// duplex joins a reader and a writer into the client's end of a connection.
type duplex struct {
	r io.ReadCloser
	w io.WriteCloser
}

func (d duplex) Read(b []byte) (int, error)  { return d.r.Read(b) }
func (d duplex) Write(b []byte) (int, error) { return d.w.Write(b) }
func (d duplex) Close() error                { return errors.Join(d.w.Close(), d.r.Close()) }

// inProcess starts s in this process, connected to a client through pipes. wait returns the
// server's exit code once Serve has returned (failing the test after waitFor); the test's
// cleanup closes the connection and waits.
func inProcess(t testing.TB, s *Server) (c *client, wait func() int) {
	t.Helper()
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := s.Serve(context.Background(), toServer, fromServer)
		_ = fromServer.Close()
		done <- code
	}()
	c = newClient(t, duplex{r: toClient, w: fromClient})
	var once sync.Once
	code := -1
	wait = func() int {
		once.Do(func() {
			select {
			case code = <-done:
			case <-time.After(waitFor):
				t.Errorf("the server did not return within %s", waitFor)
			}
		})
		return code
	}
	t.Cleanup(func() {
		_ = c.conn.Close()
		wait()
	})
	return c, wait
}
