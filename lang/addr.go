package lang

import "strings"

// NodeKind is the block type of a node.
type NodeKind string

// The node kinds of docs/reference/language.md. Their string form is the block type and the first step of the
// node's address.
const (
	KindTask   NodeKind = "task"
	KindSwitch NodeKind = "switch"
	KindJoin   NodeKind = "join"
	KindLoop   NodeKind = "loop"
	KindWait   NodeKind = "wait"
	KindCall   NodeKind = "call"
)

// nodeKinds lists every kind, in the order used for messages.
var nodeKinds = []NodeKind{KindTask, KindSwitch, KindJoin, KindLoop, KindWait, KindCall}

func parseNodeKind(s string) (NodeKind, bool) {
	for _, k := range nodeKinds {
		if string(k) == s {
			return k, true
		}
	}
	return "", false
}

// Addr is the address of a node: `task.fetch`, or `loop.notify/task.send` for a node in the body
// of loop `notify`. Addresses are values: compare them with ==.
type Addr struct {
	Loop string // name of the enclosing loop; empty at the top level
	Kind NodeKind
	Name string
}

// String returns the address in the form users write and see.
func (a Addr) String() string {
	var b strings.Builder
	if a.Loop != "" {
		b.Grow(len(a.Loop) + len(a.Name) + 14)
		b.WriteString("loop.")
		b.WriteString(a.Loop)
		b.WriteByte('/')
	}
	b.WriteString(string(a.Kind))
	b.WriteByte('.')
	b.WriteString(a.Name)
	return b.String()
}

// Local is the address without its loop prefix (`task.send`), as written inside a loop body.
func (a Addr) Local() string { return string(a.Kind) + "." + a.Name }

// IsZero reports whether a is the zero address.
func (a Addr) IsZero() bool { return a.Kind == "" }

// LoopAddr is the address of the enclosing loop node; the zero Addr at the top level.
func (a Addr) LoopAddr() Addr {
	if a.Loop == "" {
		return Addr{}
	}
	return Addr{Kind: KindLoop, Name: a.Loop}
}

// ParseAddr parses `kind.name` or `loop.L/kind.name`; ok is false for anything else.
func ParseAddr(s string) (Addr, bool) {
	var a Addr
	if i := strings.IndexByte(s, '/'); i >= 0 {
		outer, ok := ParseAddr(s[:i])
		if !ok || outer.Kind != KindLoop || outer.Loop != "" {
			return Addr{}, false
		}
		a.Loop = outer.Name
		s = s[i+1:]
	}
	kind, name, found := strings.Cut(s, ".")
	if !found {
		return Addr{}, false
	}
	k, ok := parseNodeKind(kind)
	if !ok || !validName(name) {
		return Addr{}, false
	}
	if a.Loop != "" && k == KindLoop {
		return Addr{}, false
	}
	a.Kind, a.Name = k, name
	return a, true
}
