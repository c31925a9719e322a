package lang

import "github.com/fuscia/fuscia/lang/addrs"

// Limits of docs/reference/language.md. Each is enforced with a diagnostic that names the limit and the value.
const (
	MaxFileSize     = 1 << 20 // bytes of one workflow file
	MaxNodes        = 10000   // nodes in a workflow, loop bodies included
	MaxNameLength   = addrs.MaxNameLength
	MaxForEachItems = 100000
	// MaxNestingDepth bounds brackets, braces and parentheses. It is not in docs/reference/language.md; it exists
	// so that a pathological file gets a diagnostic instead of exhausting the parser's stack, and
	// no readable workflow comes near it.
	MaxNestingDepth = 200
)
