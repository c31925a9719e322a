package addrs

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Instance is the address of one instance of a node: the node's address and its index
// path, outermost first. A node runs as one or more instances:
//
//	task.fetch                   a node's own instance: a plain node, a for_each task's
//	                             aggregate, a loop as a whole
//	task.send_all[3]             item 3 of a for_each task
//	loop.notify[1]               iteration 1 of loop notify
//	loop.notify/task.send[1]     task.send in iteration 1 of loop notify
//	loop.notify/task.send[1][2]  item 2 of a for_each task in iteration 1 (the form allows it;
//	                             the language has no for_each in a loop body today)
//
// String is the one text form of an instance, and ParseInstance reads it back. The journal
// keeps the two parts apart (an entry's node and index fields, NewInstance reads them), but
// the text form is stored too: a task id is `EXECUTION_ID:` followed by it (docs/engine.md), and
// a run resumed by a later fuscia must find the task ids an earlier one journaled. Changing
// String changes the on-disk format.
//
// An Instance does not own Index: nothing here modifies or keeps it beyond the value, and
// WithIndex returns a new slice, so an address may share its index with a journal entry.
type Instance struct {
	Node  Node
	Index []int
}

// String returns the address as the journal, the task ids and the CLI write it:
// `loop.notify/task.send[1]`.
func (a Instance) String() string {
	node := a.Node.String()
	if len(a.Index) == 0 {
		return node
	}
	var b strings.Builder
	b.Grow(len(node) + 4*len(a.Index))
	b.WriteString(node)
	for _, i := range a.Index {
		b.WriteByte('[')
		b.WriteString(strconv.Itoa(i))
		b.WriteByte(']')
	}
	return b.String()
}

// Equal reports whether a and b address the same instance.
func (a Instance) Equal(b Instance) bool {
	return a.Node == b.Node && slices.Equal(a.Index, b.Index)
}

// WithIndex returns the address of instance i inside a: an item of a for_each task, an
// iteration of a loop. The result has an index slice of its own.
func (a Instance) WithIndex(i int) Instance {
	index := make([]int, len(a.Index)+1)
	copy(index, a.Index)
	index[len(a.Index)] = i
	return Instance{Node: a.Node, Index: index}
}

// Parent returns the instance that contains a, and false when a has no index (a node's own
// instance is contained in the run). The parent of an item is the for_each task's aggregate
// (task.x[3] → task.x, loop.l/task.x[1][2] → loop.l/task.x[1]), of an iteration the loop
// (loop.l[1] → loop.l), and of a body node's instance the iteration it runs in
// (loop.l/task.y[1] → loop.l[1]).
func (a Instance) Parent() (Instance, bool) {
	switch {
	case len(a.Index) == 0:
		return Instance{}, false
	case len(a.Index) == 1 && a.Node.Loop != "":
		return Instance{Node: a.Node.LoopAddr(), Index: slices.Clip(a.Index[:1])}, true
	}
	return Instance{Node: a.Node, Index: slices.Clip(a.Index[:len(a.Index)-1])}, true
}

// errNodeAddr says what a node address looks like.
const errNodeAddr = "not a node address: want KIND.NAME or loop.LOOP/KIND.NAME, KIND one of task, switch, join, loop, wait, call, and names as in docs/reference/language.md"

// NewInstance returns the address of the instance that a journal entry or a log line names
// by its node's address (`loop.notify/task.send`) and its index path ([1]). It refuses a node
// that is not a node address and a negative index; index is kept, not copied.
func NewInstance(node string, index []int) (Instance, error) {
	a, ok := ParseNode(node)
	if !ok {
		return Instance{}, fmt.Errorf("instance of %q: %s", node, errNodeAddr)
	}
	for _, i := range index {
		if i < 0 {
			return Instance{}, fmt.Errorf("instance of %s: index %v: an index is 0 or more", node, index)
		}
	}
	return Instance{Node: a, Index: index}, nil
}

// ParseInstance parses the form String writes: a node's address followed by zero or more
// indexes, each a whole number 0 or more in decimal without sign or leading zeros, in brackets
// (`task.x`, `task.x[3]`, `loop.l/task.y[1][2]`). Any other text is an error that says what is
// wrong; parsing the String of an address gives that address back, and the String of a parsed
// address is the text parsed.
func ParseInstance(s string) (Instance, error) {
	node, rest := s, ""
	if i := strings.IndexByte(s, '['); i >= 0 {
		node, rest = s[:i], s[i:]
	}
	a, ok := ParseNode(node)
	if !ok {
		if node == "" {
			return Instance{}, fmt.Errorf("instance address %q: no node address before the index", s)
		}
		return Instance{}, fmt.Errorf("instance address %q: %q is %s", s, node, errNodeAddr)
	}
	inst := Instance{Node: a}
	for rest != "" {
		if rest[0] != '[' {
			return Instance{}, fmt.Errorf("instance address %q: unexpected %q after %q: an index is written [N]", s, rest, s[:len(s)-len(rest)])
		}
		digits, after, found := strings.Cut(rest[1:], "]")
		if !found {
			return Instance{}, fmt.Errorf("instance address %q: %q has no closing ']'", s, rest)
		}
		i, err := parseIndex(digits)
		if err != nil {
			return Instance{}, fmt.Errorf("instance address %q: index [%s]: %w", s, digits, err)
		}
		inst.Index = append(inst.Index, i)
		rest = after
	}
	return inst, nil
}

// parseIndex parses one index: decimal digits, no sign, no leading zero but for 0 itself, and
// no larger than an int holds.
func parseIndex(s string) (int, error) {
	if s == "" {
		return 0, errors.New("empty; an index is a whole number, 0 or more")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errors.New("an index is a whole number, 0 or more, in decimal digits only")
		}
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, errors.New("leading zero; an index is written without one")
	}
	i, err := strconv.Atoi(s)
	if err != nil {
		return 0, errors.New("too large")
	}
	return i, nil
}
