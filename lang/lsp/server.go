package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/sourcegraph/jsonrpc2"
	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/plugin"
)

// Config is what a Server needs.
type Config struct {
	// Env says where components and plugins are installed: -home and -plugin-dir, as for
	// `fuscia validate`.
	Env plan.Env
	// Plugins asks plugins for their schemas. The caller owns it and closes it after Serve;
	// nil means a manager without a schema cache, which Serve closes.
	Plugins *plugin.Manager
	// Logger receives the server's own messages; nil discards them. It must not write to the
	// Serve's out, which carries nothing but protocol messages.
	Logger *slog.Logger
	// Trace logs every message received and sent, at debug level.
	Trace bool
	// Version is the server's version, which the client is told at initialize.
	Version string
	// CheckDelay is how long the diagnostics of a changed document wait for the typing to
	// pause before the check starts: 0 means DefaultCheckDelay, a negative value none.
	CheckDelay time.Duration
}

// DefaultCheckDelay is Config.CheckDelay's default: short against the 300 ms in which
// diagnostics should follow a change, long enough that a completion typed right after a change
// is not slowed by a check of the text it makes stale.
const DefaultCheckDelay = 75 * time.Millisecond

// Server is a language server for one client. Its lifecycle:
//
//  1. New makes it;
//  2. Serve reads requests and notifications from in, in order, on one goroutine, and writes
//     the answers and notifications to out;
//  3. Serve returns when the client sends exit, when in ends, or when its context ends, after
//     the checks in flight have returned.
//
// A Server serves once.
type Server struct {
	cfg     Config
	log     *slog.Logger
	plugins *plugin.Manager
	handler protocol.Handler
	docs    documents
	// checks is made by Serve, before the first message is read.
	checks *checks
	// stopChecks cancels the context of every check (Serve's).
	stopChecks context.CancelFunc
	// shutdown is set when the client has sent shutdown: exit then ends with code 0.
	shutdown atomic.Bool
	// checkFn returns a document's diagnostics: check, which tests wrap to hold a check in
	// flight. Set by New, read by Serve.
	checkFn func(context.Context, *document) hcl.Diagnostics
}

// New returns a Server for cfg.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg, log: cfg.Logger, plugins: cfg.Plugins}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.handler = protocol.Handler{
		Initialize:  s.initialize,
		Initialized: func(*glsp.Context, *protocol.InitializedParams) error { return nil },
		Shutdown:    s.shutdownRequest,
		SetTrace:    func(*glsp.Context, *protocol.SetTraceParams) error { return nil },
		// Requests are answered in order, each before the next is read: by the time a
		// cancellation arrives, its request has been answered.
		CancelRequest:                   func(*glsp.Context, *protocol.CancelParams) error { return nil },
		WorkspaceDidChangeConfiguration: func(*glsp.Context, *protocol.DidChangeConfigurationParams) error { return nil },

		TextDocumentDidOpen:   s.didOpen,
		TextDocumentDidChange: s.didChange,
		TextDocumentDidSave:   s.didSave,
		TextDocumentDidClose:  s.didClose,

		TextDocumentCompletion:     s.completion,
		TextDocumentHover:          s.hover,
		TextDocumentDefinition:     s.definition,
		TextDocumentReferences:     s.references,
		TextDocumentPrepareRename:  s.prepareRename,
		TextDocumentRename:         s.rename,
		TextDocumentDocumentSymbol: s.documentSymbol,
		TextDocumentFormatting:     s.formatting,
	}
	s.checkFn = s.check
	return s
}

// Serve speaks the protocol over in and out (Content-Length framing, JSON-RPC 2.0) until the
// client sends exit, in ends or ctx ends. It returns the exit code the protocol asks of a
// server process: 0 when the client sent shutdown first, 1 otherwise.
func (s *Server) Serve(ctx context.Context, in io.ReadCloser, out io.Writer) int {
	if s.plugins == nil {
		s.plugins = plugin.NewManager(plugin.Options{Logger: s.log})
		defer s.plugins.Close()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	checkCtx, stopChecks := context.WithCancel(ctx)
	s.checks, s.stopChecks = newChecks(checkCtx, s.safely(s.checkFn), checkDelay(s.cfg.CheckDelay)), stopChecks

	rpcLog := rpcLogger{s.log}
	opts := []jsonrpc2.ConnOpt{jsonrpc2.SetLogger(rpcLog)}
	if s.cfg.Trace {
		opts = append(opts, jsonrpc2.LogMessages(rpcLog))
	}
	codec := &readErrorCodec{}
	stream := jsonrpc2.NewBufferedStream(&pipe{in: in, out: out}, codec)
	conn := jsonrpc2.NewConn(ctx, stream, jsonrpc2.HandlerWithError(s.handle).SuppressErrClosed(), opts...)
	select {
	case <-conn.DisconnectNotify():
	case <-ctx.Done():
		_ = conn.Close()
	}
	s.checks.stop(stopChecks)
	if s.shutdown.Load() {
		return 0
	}
	// The JSON-RPC library ends the connection on a message it cannot read, without an
	// answer: say why, or the editor shows a server that stopped for no reason.
	if err := codec.err(); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		s.log.Error("the editor sent a message that is not LSP's JSON-RPC with a Content-Length header; the server stops", "error", err)
	} else {
		s.log.Warn("the editor closed the connection without shutdown; the server stops")
	}
	return 1
}

// readErrorCodec is VS Code's framing (Content-Length headers), keeping the error that ended
// the reading.
type readErrorCodec struct {
	jsonrpc2.VSCodeObjectCodec
	mu   sync.Mutex
	last error
}

func (c *readErrorCodec) ReadObject(stream *bufio.Reader, v any) error {
	err := readFramed(stream, v)
	if err != nil {
		c.mu.Lock()
		c.last = err
		c.mu.Unlock()
	}
	return err
}

// maxHeaderLines bounds the header lines of one message (an editor sends one or two).
const maxHeaderLines = 32

// readFramed reads one message framed as VS Code frames them: header lines ending in \r\n, an
// empty line, then Content-Length bytes of JSON. It is jsonrpc2.VSCodeObjectCodec's reading
// with a bound on each header line (the reader's buffer, 4 KiB: the library read a line of any
// length into memory) and on their number, and header names read without regard to case.
func readFramed(stream *bufio.Reader, v any) error {
	var length uint64
	for n := 0; ; n++ {
		if n == maxHeaderLines {
			return fmt.Errorf("more than %d header lines before a message", maxHeaderLines)
		}
		line, err := stream.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return fmt.Errorf("a header line longer than %d bytes", stream.Size())
		}
		if err != nil {
			return err
		}
		if !bytes.HasSuffix(line, []byte("\r\n")) {
			return errors.New(`header lines must end in \r\n`)
		}
		line = line[:len(line)-2]
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if ok && strings.EqualFold(string(bytes.TrimSpace(name)), "Content-Length") {
			if length, err = strconv.ParseUint(string(bytes.TrimSpace(value)), 10, 32); err != nil {
				return fmt.Errorf("Content-Length %q: %w", value, err)
			}
		}
	}
	if length == 0 {
		return errors.New("no Content-Length header")
	}
	return json.NewDecoder(io.LimitReader(stream, int64(length))).Decode(v)
}

func (c *readErrorCodec) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// handle answers one message through glsp's protocol handler, which decodes the parameters
// and calls the Server's method for it. It runs on the connection's read goroutine, so
// messages are handled one at a time, in order.
func (s *Server) handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (result any, err error) {
	defer func() {
		// A bug in answering one request must not end the editor's session.
		if r := recover(); r != nil {
			s.log.Error("internal error; please report it", "method", req.Method, "panic", r)
			s.log.Debug("internal error", "stack", string(debug.Stack()))
			result, err = nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInternalError, Message: fmt.Sprintf("internal error in fuscia (%v); please report it with the file and what you did", r)}
		}
	}()
	if req.Method == protocol.MethodExit {
		// glsp's handler refuses every method but initialize after shutdown, exit included;
		// exit is the connection's to handle.
		s.log.Debug("exit", "after_shutdown", s.shutdown.Load())
		_ = conn.Close()
		return nil, nil
	}
	gctx := &glsp.Context{
		Method: req.Method,
		Notify: func(method string, params any) {
			if err := conn.Notify(ctx, method, params); err != nil && !errors.Is(err, jsonrpc2.ErrClosed) {
				s.log.Warn("cannot send a notification", "method", method, "error", err)
			}
		},
		Call: func(method string, params, result any) {
			if err := conn.Call(ctx, method, params, result); err != nil {
				s.log.Warn("cannot call the client", "method", method, "error", err)
			}
		},
	}
	if req.Params != nil {
		gctx.Params = *req.Params
	}
	r, validMethod, validParams, err := s.handler.Handle(gctx)
	switch {
	case !validMethod:
		return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: fmt.Sprintf("method not supported: %s", req.Method)}
	case !validParams:
		msg := "invalid parameters"
		if err != nil {
			msg += ": " + err.Error()
		}
		return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: msg}
	case err != nil && !s.handler.IsInitialized() && req.Method != protocol.MethodInitialize:
		return nil, &jsonrpc2.Error{Code: codeServerNotInitialized, Message: err.Error()}
	case err != nil:
		s.log.Debug("request failed", "method", req.Method, "error", err)
		return nil, &jsonrpc2.Error{Code: codeRequestFailed, Message: err.Error()}
	}
	return r, nil
}

// Error codes of the protocol that JSON-RPC does not define.
const (
	codeServerNotInitialized = -32002
	codeRequestFailed        = -32803
)

// pipe is the connection's stream: the client's messages come from in, the answers go to out.
// Closing it closes in, so that the read loop stops.
type pipe struct {
	in  io.ReadCloser
	out io.Writer
}

func (p *pipe) Read(b []byte) (int, error)  { return p.in.Read(b) }
func (p *pipe) Write(b []byte) (int, error) { return p.out.Write(b) }
func (p *pipe) Close() error                { return p.in.Close() }

// rpcLogger sends the JSON-RPC layer's messages (protocol errors; every message with Trace)
// to the server's logger at debug level.
type rpcLogger struct{ log *slog.Logger }

func (l rpcLogger) Printf(format string, v ...any) {
	l.log.Debug(strings.TrimSuffix(fmt.Sprintf(format, v...), "\n"))
}

func checkDelay(d time.Duration) time.Duration {
	if d == 0 {
		return DefaultCheckDelay
	}
	return d
}
