package lang

import "github.com/fuscia/fuscia/lang/addrs"

// NodeKind is the block type of a node (addrs.NodeKind).
type NodeKind = addrs.NodeKind

// The node kinds of docs/reference/language.md. Their string form is the block type and the first step of the
// node's address.
const (
	KindTask   = addrs.KindTask
	KindSwitch = addrs.KindSwitch
	KindJoin   = addrs.KindJoin
	KindLoop   = addrs.KindLoop
	KindWait   = addrs.KindWait
	KindCall   = addrs.KindCall
)

func parseNodeKind(s string) (NodeKind, bool) { return addrs.ParseNodeKind(s) }

// Addr is the address of a node: `task.fetch`, or `loop.notify/task.send` for a node in the body
// of loop `notify`. Addresses are values: compare them with ==. It is addrs.Node, which the
// journal reads too: the addresses of instances are addrs.Instance.
type Addr = addrs.Node

// ParseAddr parses `kind.name` or `loop.L/kind.name`; ok is false for anything else.
func ParseAddr(s string) (Addr, bool) { return addrs.ParseNode(s) }
