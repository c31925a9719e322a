// Package lsp is Fuscia's language server: `fuscia lsp` speaks the Language Server Protocol
// over stdin and stdout, so that an editor checks workflows (*.fsc.hcl) and test files
// (*.fsctest.hcl) as the user types, and completes, explains, navigates, renames and formats
// them.
//
// # Model
//
// The editor opens documents and sends their whole text on every change; the [Server] keeps
// the newest text of each open document (documents.go). Every question is answered from that
// text, saved or not: diagnostics (check.go, diagnostics.go), formatting and the features of
// lang/query (features.go), which the server asks with byte offsets and what is installed
// (env.go). The protocol counts positions in lines and UTF-16 code units; the language in
// bytes; text.go converts between them.
//
// # Diagnostics
//
// A workflow's diagnostics are those of `fuscia validate` for the same text: the same call
// (engine/planner.Make for validate, with the components and plugins of -home and
// -plugin-dir), so the same words and ranges. A test file's are those of decoding it and of
// checking each run against its workflow (lang/testfile). Diagnostics about other files (a
// called workflow) are left to those files' own documents.
//
// # Protocol
//
// glsp (github.com/tliron/glsp) gives the protocol's types (3.16) and decodes each message's
// parameters for the Server's method; sourcegraph/jsonrpc2, on which glsp's own server is
// built, frames and dispatches the messages. The server is assembled from the two here rather
// than with glsp's server package so that it serves any reader and writer (tests speak to it
// over pipes), handles exit itself (glsp's handler refuses it after shutdown) and logs through
// slog, never to stdout.
//
// # Concurrency
//
// Messages are handled one at a time, in the order the client sent them, on the connection's
// read goroutine: a feature sees the text of every change sent before it. Checks run on their
// own goroutines, at most one per document; a change cancels the check in flight and queues
// its text (diagnostics.go). Serve returns once every check has returned.
package lsp
