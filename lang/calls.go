package lang

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// CallsOnly reports whether every function that n's expressions call (inputs, for_each, when,
// switch cases, a wait's or a call's expressions) is one ok accepts. An expression that is not
// native HCL syntax cannot be searched for calls: CallsOnly then reports false, so that a
// caller asking "only pure functions?" never gets a yes it cannot back.
//
// The engine asks it with funcs.Pure to decide whether a node's result can be computed again
// after a crash instead of being made durable first (docs/engine.md, "Durability").
func (n *Node) CallsOnly(ok func(name string) bool) bool {
	for _, expr := range n.exprs {
		if !exprCallsOnly(expr, ok) {
			return false
		}
	}
	return true
}

// exprCallsOnly reports whether every function call in expr is one ok accepts.
func exprCallsOnly(expr hcl.Expression, ok func(name string) bool) bool {
	syn, native := expr.(hclsyntax.Expression)
	if !native {
		return false
	}
	all := true
	_ = hclsyntax.VisitAll(syn, func(node hclsyntax.Node) hcl.Diagnostics {
		if call, isCall := node.(*hclsyntax.FunctionCallExpr); isCall && !ok(call.Name) {
			all = false
		}
		return nil
	})
	return all
}
