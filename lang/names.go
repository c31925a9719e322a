package lang

import (
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/lang/addrs"
)

// validName reports whether s is a valid name: [a-z][a-z0-9_-]*, at most MaxNameLength bytes.
// The rule is addrs.ValidName, so that the names the language accepts are the ones addresses
// parse.
func validName(s string) bool { return addrs.ValidName(s) }

// checkName returns a diagnostic when name is not valid; what is e.g. "task name".
func checkName(name, what string, rng hcl.Range) *hcl.Diagnostic {
	if validName(name) {
		return nil
	}
	if len(name) > MaxNameLength {
		return errorf(rng, "Name too long",
			"The %s %q is %d characters long; the limit is %d.", what, truncate(name, 80), len(name), MaxNameLength)
	}
	return errorf(rng, "Invalid name",
		"The %s %q is not valid: names start with a lowercase letter a-z and contain only a-z, 0-9, \"_\" and \"-\".", what, name)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// nameSet tracks declared names of one kind so that duplicates point at the first declaration.
type nameSet struct {
	what string
	hint string
	seen map[string]hcl.Range
}

func newNameSet(what, hint string) *nameSet {
	return &nameSet{what: what, hint: hint, seen: make(map[string]hcl.Range)}
}

// add records name, or returns a diagnostic if it was declared before.
func (s *nameSet) add(name string, rng hcl.Range) *hcl.Diagnostic {
	if prev, ok := s.seen[name]; ok {
		article := "A"
		if strings.ContainsRune("aeiou", rune(s.what[0])) {
			article = "An"
		}
		return errorf(rng, "Duplicate "+s.what+" name",
			"%s %s named %q was already declared at %s:%d. %s",
			article, s.what, name, prev.Filename, prev.Start.Line, s.hint)
	}
	s.seen[name] = rng
	return nil
}
