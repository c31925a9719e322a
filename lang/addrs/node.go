package addrs

import "strings"

// NodeKind is the block type of a node.
type NodeKind string

// The node kinds of docs/reference/language.md. Their string form is the block type and the
// first step of the node's address.
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

// ParseNodeKind returns the kind whose block type is s; ok is false for anything else.
func ParseNodeKind(s string) (NodeKind, bool) {
	for _, k := range nodeKinds {
		if string(k) == s {
			return k, true
		}
	}
	return "", false
}

// Node is the address of a node: `task.fetch`, or `loop.notify/task.send` for a node in the
// body of loop `notify`. Addresses are values: compare them with ==.
type Node struct {
	Loop string // name of the enclosing loop; empty at the top level
	Kind NodeKind
	Name string
}

// String returns the address in the form users write and see.
func (a Node) String() string {
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
func (a Node) Local() string { return string(a.Kind) + "." + a.Name }

// IsZero reports whether a is the zero address.
func (a Node) IsZero() bool { return a.Kind == "" }

// LoopAddr is the address of the enclosing loop node; the zero Node at the top level.
func (a Node) LoopAddr() Node {
	if a.Loop == "" {
		return Node{}
	}
	return Node{Kind: KindLoop, Name: a.Loop}
}

// ParseNode parses `kind.name` or `loop.L/kind.name`; ok is false for anything else. It
// accepts exactly the strings String writes.
func ParseNode(s string) (Node, bool) {
	var a Node
	if i := strings.IndexByte(s, '/'); i >= 0 {
		outer, ok := ParseNode(s[:i])
		if !ok || outer.Kind != KindLoop || outer.Loop != "" {
			return Node{}, false
		}
		a.Loop = outer.Name
		s = s[i+1:]
	}
	kind, name, found := strings.Cut(s, ".")
	if !found {
		return Node{}, false
	}
	k, ok := ParseNodeKind(kind)
	if !ok || !ValidName(name) {
		return Node{}, false
	}
	if a.Loop != "" && k == KindLoop {
		return Node{}, false
	}
	a.Kind, a.Name = k, name
	return a, true
}
