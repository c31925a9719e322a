// Package query answers an editor's questions about a workflow file (*.fsc.hcl) or a test file
// (*.fsctest.hcl): completion ([Complete]), hover ([Hover]), go to definition ([Definition]),
// find references ([References]), rename ([PrepareRename], [Rename]) and the outline
// ([Symbols]). The language server (lang/lsp) calls it; it knows nothing of the protocol.
//
// # Model
//
// A [Doc] is a file's name and its current text, saved or not; offsets are byte offsets into
// it, and answers carry hcl.Range values (lines and columns from 1, columns in characters, and
// byte offsets). Nothing is read from disk: what is installed — the tasks, triggers and
// schemas of components and plugins — comes from an [Env] the caller implements.
//
// The questions read the file in two ways:
//
//   - Completion reads the context at the cursor from the tokens before it (cursor.go) and the
//     file's blocks from its bytes (textscan.go), and parses only the blocks it needs. While the
//     user types `task.`, the text does not parse; the tokens and the block headers still say
//     where the cursor is and what the file declares.
//   - Hover, definition, references, rename and the outline use the syntax tree of the whole
//     file (analysis.go), parsed by lang's parser. Hover's plan facts (timeouts, retry policies,
//     upstream nodes) come from loading the text as `fuscia validate` does; a called workflow
//     is not loaded, as that would read another file.
//
// What completion offers comes from the language itself: the block and attribute names from
// lang.BlockSchemas (the decoder's schemas), their documentation from blockdocs.go (checked
// against those schemas by a test), the functions from lang/funcs, the builtins and their
// input schemas from lang/builtin, and the output fields of a node from what runs it (a
// builtin's documented output, a component's or plugin's output schema, a switch's
// `selected`, a join's branches, a loop's body).
//
// # Rename
//
// Rename changes a node's, variable's, secret's, component's or plugin's label and every
// reference to it — task.x, task.x.output…, after = [task.x], switch.x.KEY — and the attributes
// named after a node in a join's keyed output (join.j.output.x) and in a loop's default output
// (loop.l.output[i].x). It never edits strings or comments. It refuses:
//
//   - a file with syntax errors, where references could be missed;
//   - outputs and triggers, which are named from outside the file (calling workflows,
//     `apply -trigger`, test files);
//   - a new name that is not a valid name, or that is taken in the same namespace (node names
//     are shared by every node kind).
//
// References across files (a test file's `mock "task.x"`, a caller's call.c.output.x) are
// not followed.
//
// # Cost
//
// Completion costs one pass over the bytes, the tokens of the block around the cursor, and
// a parse of each block it reads: about 5 ms on a file of 1,000 nodes
// (BenchmarkComplete1000). The other questions parse the whole file once per [Doc] built with
// [NewDoc], and hover loads it once more for plan facts.
//
// # Concurrency
//
// The functions are safe to call from several goroutines, on the same Doc too: a Doc's cached
// analysis is built once (sync.Once) and never changed after.
package query
