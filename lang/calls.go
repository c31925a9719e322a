package lang

import (
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/fuscia/fuscia/lang/funcs"
)

// CallsOnly reports whether every function that n's expressions call (inputs, for_each, when,
// switch cases, a wait's or a call's expressions) is one ok accepts. An expression that is not
// native HCL syntax cannot be searched for calls: CallsOnly then reports false, so that a
// caller asking "only pure functions?" never gets a yes it cannot back.
//
// The engine asks it with funcs.Pure to decide whether a node's result can be computed again
// after a crash instead of being made durable first (docs/engine.md, "Durability"). A linked
// node answers from the calls noted at link time; another (built by hand) walks its
// expressions.
func (n *Node) CallsOnly(ok func(name string) bool) bool {
	calls, opaque := n.calls, n.callsOpaque
	if !n.callsKnown {
		calls, opaque = collectCalls(n.exprs)
	}
	if opaque {
		return false
	}
	for _, name := range calls {
		if !ok(name) {
			return false
		}
	}
	return true
}

// noteCalls records the functions n's expressions call. The linker calls it once per node,
// before the workflow is shared.
func (n *Node) noteCalls() {
	n.calls, n.callsOpaque = collectCalls(n.exprs)
	n.callsKnown = true
}

// collectCalls returns the names of the functions exprs call, each once, and whether one of
// them is not native syntax (its calls cannot be known).
func collectCalls(exprs []hcl.Expression) (names []string, opaque bool) {
	for _, expr := range exprs {
		syn, native := expr.(hclsyntax.Expression)
		if !native {
			return nil, true
		}
		_ = hclsyntax.VisitAll(syn, func(node hclsyntax.Node) hcl.Diagnostics {
			// IterationsName and ElementName wrap every for expression's collection and
			// elements (guard): syntax, not calls.
			if call, isCall := node.(*hclsyntax.FunctionCallExpr); isCall && call.Name != funcs.IterationsName && call.Name != funcs.ElementName && !slices.Contains(names, call.Name) {
				names = append(names, call.Name)
			}
			return nil
		})
	}
	return names, false
}
