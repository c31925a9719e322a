package schema

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Problem is one coercion or validation failure at a path inside the value.
type Problem struct {
	// Path locates the value at fault inside the input, written the way it would be written in
	// HCL: "headers.Accept", "args[2]", `headers["Content Type"]`; "" is the input itself.
	Path string
	// Message is a sentence without a capital or a full stop, ready to follow the path:
	// `must be an integer, got string "abc"`, `attribute "url" is required`.
	Message string
	// Attribute names the attribute at fault when the problem is an attribute the schema does
	// not allow; Path is then the object that holds it. Callers use it to point at the attribute.
	Attribute string
	// Pointer is Path as a JSON Pointer: "/headers/Accept", "/args/2"; "" is the value itself.
	Pointer string
}

// String returns "<path>: <message>", or just the message when the problem is about the whole
// input.
func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// step is one step of a path: an attribute name, or an index when index >= 0.
type step struct {
	key   string
	index int
}

func keyStep(k string) step { return step{key: k, index: -1} }
func indexStep(i int) step  { return step{index: i} }

// pathCap is the depth up to which walking a value appends to its path without allocating.
const pathCap = 16

// path is a location inside a value. Paths are built by appending to a parent's path, so a
// path that is kept must be cloned (see problem construction).
type path []step

func (p path) String() string {
	var b strings.Builder
	for i, s := range p {
		switch {
		case s.index >= 0:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		case hclsyntax.ValidIdentifier(s.key):
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		default:
			b.WriteByte('[')
			b.WriteString(strconv.Quote(s.key))
			b.WriteByte(']')
		}
	}
	return b.String()
}

// within reports whether p is q or lies under it.
func (p path) within(q path) bool {
	return len(p) >= len(q) && slices.Equal(p[:len(q)], q)
}

func comparePaths(a, b path) int {
	for i := range min(len(a), len(b)) {
		x, y := a[i], b[i]
		if c := cmp.Compare(x.index, y.index); c != 0 {
			return c
		}
		if c := strings.Compare(x.key, y.key); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// problem is a Problem before its path is rendered, so that problems sort by path structure
// ("args[2]" before "args[10]") and can be compared with other paths.
type problem struct {
	at  path
	msg string
	// attr is the unknown attribute of an additionalProperties failure.
	attr string
	// want is set on type mismatches, so that the failures of all branches of an anyOf can be
	// told apart from other failures and merged into one message.
	want types
}

func newProblem(at path, msg string) problem {
	return problem{at: slices.Clone(at), msg: msg}
}

// render sorts problems by path, then message, drops exact duplicates (two schemas applying to
// the same value may both reject it) and renders them.
func render(ps []problem) []Problem {
	if len(ps) == 0 {
		return nil
	}
	slices.SortStableFunc(ps, func(a, b problem) int {
		if c := comparePaths(a.at, b.at); c != 0 {
			return c
		}
		return strings.Compare(a.msg, b.msg)
	})
	out := make([]Problem, 0, len(ps))
	for i, p := range ps {
		if i > 0 && comparePaths(ps[i-1].at, p.at) == 0 && ps[i-1].msg == p.msg {
			continue
		}
		out = append(out, Problem{Path: p.at.String(), Message: p.msg, Attribute: p.attr, Pointer: p.at.pointer()})
	}
	return out
}
