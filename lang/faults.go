package lang

// faults records what Load found wrong in a file, so that a later step skips it instead of
// reporting the same problem again in other words: a node with a bad reference is not
// evaluated (which would fail on that reference once more), and a reference to a node block
// whose name was rejected is not an "undeclared node" besides. Everything else is still checked,
// so that one run reports every independent error (docs/language.md, "Validation").
type faults struct {
	// nodes are the nodes with an error in their own block or in their references.
	nodes map[*Node]bool
	// outputs is set when an output block has a bad reference: outputs are then not evaluated.
	outputs bool
	// rejected are the names of node blocks that were not declared because the name itself is
	// invalid.
	rejected map[string]bool
}

func newFaults() *faults {
	return &faults{nodes: map[*Node]bool{}, rejected: map[string]bool{}}
}
