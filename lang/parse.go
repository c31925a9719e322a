package lang

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// Parser reads and parses workflow files and remembers their sources, so that diagnostics can be
// rendered with the offending line (hcl.NewDiagnosticTextWriter takes Files()).
type Parser struct {
	files map[string]*hcl.File
	// children are the workflows call nodes run, by absolute path, loaded once (loadCall).
	children map[string]*childLoad
	// called are the absolute paths call nodes name, whether they could be read or not.
	called map[string]bool
	// iterating is guard's account of each file that has a `for` expression.
	iterating map[string]map[hcl.Expression]bool
	// Sources, when set, replaces the file system: workflow files (the loaded one and the ones it
	// calls) are read from it by path, as a saved plan or a resumed run needs.
	Sources map[string][]byte
	// Expect, when not nil, holds the content the files read from the file system must have,
	// by path and sha256: a file it has no sum for, or whose content is not what the sum says,
	// is refused before it is parsed. serve sets it to the files its check child evaluated
	// (CalledSums there), so that it never evaluates a file the child did not.
	Expect map[string][sha256.Size]byte
}

// NewParser returns an empty Parser.
func NewParser() *Parser { return &Parser{files: make(map[string]*hcl.File)} }

// Files returns every file parsed so far, by name.
func (p *Parser) Files() map[string]*hcl.File { return p.files }

// Called returns the absolute paths of the files that the call nodes of the workflows loaded so
// far name, sorted: the ones that could be read (they are in Files too) and the ones that could
// not. serve loads a workflow again when one of them changes.
func (p *Parser) Called() []string {
	out := make([]string, 0, len(p.called))
	for path := range p.called {
		out = append(out, path)
	}
	sort.Strings(out)
	return out
}

// CalledSums returns the files Called returns with the sha256 of the content read for each, a
// zero sum for one that could not be read; nil when there are none.
func (p *Parser) CalledSums() map[string][sha256.Size]byte {
	if len(p.called) == 0 {
		return nil
	}
	out := make(map[string][sha256.Size]byte, len(p.called))
	for path := range p.called {
		var sum [sha256.Size]byte
		if f := p.files[path]; f != nil {
			sum = sha256.Sum256(f.Bytes)
		}
		out[path] = sum
	}
	return out
}

// ReadFile reads a workflow file as the parser does: a regular file of at most MaxFileSize
// bytes. It opens the file without blocking and checks what it opened, so that a pipe or a
// device (a FIFO without a writer, a link to /dev/zero) is refused rather than waited on or
// read forever, even when it replaced the file a moment before; and it reads at most one byte
// past the limit, whatever the file's size says.
func ReadFile(filename string) ([]byte, hcl.Diagnostics) {
	cannot := func(err error) hcl.Diagnostics {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot read workflow file",
			Detail:   fmt.Sprintf("The file %s could not be read: %s.", filename, describeFSError(err)),
		}}
	}
	f, err := os.OpenFile(filename, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, cannot(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, cannot(err)
	}
	if info.IsDir() || !info.Mode().IsRegular() {
		what := "a directory; give a .fsc.hcl file"
		if !info.IsDir() {
			what = "not a regular file (a pipe or device would block or never end); give a .fsc.hcl file"
		}
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot read workflow file",
			Detail:   fmt.Sprintf("%s is %s.", filename, what),
		}}
	}
	if info.Size() > MaxFileSize {
		return nil, fileTooLarge(filename, info.Size())
	}
	src, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, cannot(err)
	}
	if len(src) > MaxFileSize {
		return nil, fileTooLarge(filename, int64(len(src)))
	}
	return src, nil
}

// ParseFile reads filename (ReadFile) and parses it.
func (p *Parser) ParseFile(filename string) (*hcl.File, hcl.Diagnostics) {
	if f, ok := p.files[filename]; ok {
		return f, nil
	}
	if p.Sources != nil {
		src, ok := p.Sources[filepath.Clean(filename)]
		if !ok {
			return nil, hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Cannot read workflow file",
				Detail:   fmt.Sprintf("The saved sources have no file %s.", filename),
			}}
		}
		return p.ParseSource(filename, src)
	}
	src, diags := ReadFile(filename)
	if diags.HasErrors() {
		return nil, diags
	}
	if p.Expect != nil {
		if sum, ok := p.Expect[filename]; !ok || sum != sha256.Sum256(src) {
			return nil, hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Workflow file changed while it was checked",
				Detail: fmt.Sprintf("The file %s is not what it was when this workflow was checked a moment ago "+
					"(it changed in between, or was not read then); the workflow is loaded again when the file changes.", filename),
			}}
		}
	}
	return p.ParseSource(filename, src)
}

// ParseSource parses src as the file filename, after checking the file-level limits.
func (p *Parser) ParseSource(filename string, src []byte) (*hcl.File, hcl.Diagnostics) {
	if len(src) > MaxFileSize {
		return nil, fileTooLarge(filename, int64(len(src)))
	}
	// Keep the source even when it is rejected below, so the diagnostic can show line 1.
	p.files[filename] = &hcl.File{Bytes: src}
	if diag := checkText(filename, src); diag != nil {
		return nil, hcl.Diagnostics{diag}
	}
	if diag := checkNesting(filename, src); diag != nil {
		return nil, hcl.Diagnostics{diag}
	}
	f, diags := parseChunked(src, filename)
	if f != nil {
		gdiags, iterating := guard(f.Body)
		diags = append(diags, gdiags...)
		if iterating != nil {
			if p.iterating == nil {
				p.iterating = make(map[string]map[hcl.Expression]bool)
			}
			p.iterating[filename] = iterating
		}
		p.files[filename] = f
	}
	return f, diags
}

func fileTooLarge(filename string, size int64) hcl.Diagnostics {
	return hcl.Diagnostics{errorf(fileStart(filename), "Workflow file too large",
		"%s is %d bytes; the limit for one workflow file is %d bytes (1 MiB). Split it with `call` blocks.",
		filename, size, MaxFileSize)}
}

// checkText rejects binary input before the HCL lexer turns it into a cascade of diagnostics.
func checkText(filename string, src []byte) *hcl.Diagnostic {
	if i := bytes.IndexByte(src, 0); i >= 0 || !utf8.Valid(src) {
		return errorf(fileStart(filename), "Workflow file is not text",
			"%s contains bytes that are not UTF-8 text (a NUL byte or an invalid sequence). A workflow file is HCL text.",
			filename)
	}
	return nil
}

// CheckNesting is checkNesting for the other parsers of HCL text (the language server's
// partial parses, the lock file, -var values, the test report's snippets): hclsyntax's parser
// recurses once per level, and a deep enough text overflows the stack, which no recover
// catches.
func CheckNesting(filename string, src []byte) *hcl.Diagnostic { return checkNesting(filename, src) }

// checkNesting bounds the depth of brackets so that a hostile file cannot exhaust the parser's
// recursion. Brackets inside strings and comments are counted too: that can only over-count, and
// only files far past any readable nesting are affected.
func checkNesting(filename string, src []byte) *hcl.Diagnostic {
	depth, line, col := 0, 1, 1
	// Prefix operators nest too (`!!!!x`, `----1`): count runs of them, spaces between allowed.
	unary := 0
	for i, b := range src {
		switch b {
		case '!', '-':
			unary++
		case ' ', '\t', '\r', '\n':
		default:
			unary = 0
		}
		if unary > MaxNestingDepth {
			return errorf(charRange(filename, line, col, i), "Expression nested too deeply",
				"More than %d prefix operators (! or -) follow each other here; each one nests the expression a level deeper. Simplify the expression.",
				MaxNestingDepth)
		}
		switch b {
		case '(', '[', '{':
			depth++
			if depth > MaxNestingDepth {
				return errorf(charRange(filename, line, col, i), "Expression nested too deeply",
					"Brackets, braces and parentheses nest more than %d levels deep here. Split the expression into smaller parts, for example with a builtin.transform task.",
					MaxNestingDepth)
			}
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		case '\n':
			line++
			col = 0
		}
		col++
	}
	return nil
}

// charRange is the range of the one character at byte offset i.
func charRange(filename string, line, col, i int) hcl.Range {
	return hcl.Range{Filename: filename,
		Start: hcl.Pos{Line: line, Column: col, Byte: i},
		End:   hcl.Pos{Line: line, Column: col + 1, Byte: i + 1}}
}

// DescribeFSError says in a few words why a file could not be read ("no such file",
// "permission denied"), for diagnostics about files outside workflows (test files).
func DescribeFSError(err error) string { return describeFSError(err) }

func describeFSError(err error) string {
	switch {
	case os.IsNotExist(err):
		return "no such file"
	case os.IsPermission(err):
		return "permission denied"
	default:
		return err.Error()
	}
}
