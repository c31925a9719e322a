// Package query answers an editor's questions about a workflow file: completion, hover,
// definition, references, rename and the document outline. It is pure: a [Doc] (a file name and
// its text, saved or not) and a byte offset go in, values with hcl.Range come out; nothing is
// read from disk except through [Env], which the language server (lang/lsp) implements from
// what is installed.
package query
