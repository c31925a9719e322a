package sdk

import (
	"slices"
	"strings"
)

// Unknowns is the set of JSON Pointers (RFC 6901) of values not known yet at plan time, such as
// "/args/0" for an element computed from another node's output. Unknown values are null in the
// document being checked; Unknowns tells such a null from a null the user wrote. The zero
// Unknowns is empty: everything is known.
type Unknowns struct {
	set map[string]struct{}
}

// NewUnknowns returns the set of the given pointers; it is how Fuscia's unknown_paths arrive,
// and lets a plugin's tests call its Validate and Configure functions.
func NewUnknowns(pointers ...string) Unknowns {
	if len(pointers) == 0 {
		return Unknowns{}
	}
	u := Unknowns{set: make(map[string]struct{}, len(pointers))}
	for _, p := range pointers {
		u.set[p] = struct{}{}
	}
	return u
}

// Has reports whether exactly the value at pointer is unknown.
func (u Unknowns) Has(pointer string) bool {
	_, ok := u.set[pointer]
	return ok
}

// Within reports whether the value at pointer is not fully known: it is unknown, it is inside
// an unknown value ("/a" unknown makes "/a/b" unknown), or something inside it is unknown ("/a/b"
// unknown makes "/a" partly unknown).
func (u Unknowns) Within(pointer string) bool {
	for p := range u.set {
		if p == pointer || isBelow(pointer, p) || isBelow(p, pointer) {
			return true
		}
	}
	return false
}

// Len is the number of unknown values.
func (u Unknowns) Len() int { return len(u.set) }

// Pointers returns the unknown pointers, sorted.
func (u Unknowns) Pointers() []string {
	out := make([]string, 0, len(u.set))
	for p := range u.set {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// isBelow reports whether pointer p is strictly inside parent, segment-wise: "/a/b" is below
// "/a" and below "" (the whole document), "/ab" is not below "/a".
func isBelow(p, parent string) bool {
	return len(p) > len(parent) && strings.HasPrefix(p, parent) && p[len(parent)] == '/'
}
