package lang

import (
	"fmt"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/fuscia/fuscia/internal/bounds"
	"github.com/fuscia/fuscia/lang/funcs"
)

// guard bounds what the expressions of a parsed file can cost to evaluate, in place, and
// reports the literals out of range. A workflow file is input: one short expression must not
// run `validate` or `plan` out of memory or for minutes. Three things are rewritten or refused
// (docs/reference/language.md, "Limits"):
//
//   - a number literal beyond bounds' range (1e600000000 is twelve bytes; go-cty writes it out
//     in every digit) is an error;
//   - arithmetic returns an error instead of a number beyond that range (squaring 1e1000 a few
//     times is as large as the literal);
//   - the collection of every `for` expression passes through funcs.IterationsName, which counts
//     its elements against funcs.MaxIterations (three nested `for`s over range(1000) are a
//     billion elements), and its element and key through funcs.ElementName, which counts their
//     bytes against funcs.MaxElementBytes (a short element can repeat a long string).
//
// The rewritten expressions read the same variables and have the same ranges, so references,
// diagnostics and the language server see the file as written. iterating is nil when the file
// has no `for` expression; otherwise it holds every attribute's expression, true for those
// with a `for` in them (see Workflow.counts).
func guard(body hcl.Body) (diags hcl.Diagnostics, iterating map[hcl.Expression]bool) {
	syn, ok := body.(*hclsyntax.Body)
	if !ok {
		return nil, map[hcl.Expression]bool{}
	}
	g := &guardWalk{ops: boundedOperations()}
	_ = hclsyntax.Walk(syn, g)
	if len(g.withFors) == 0 {
		return g.diags, nil
	}
	iterating = make(map[hcl.Expression]bool, len(g.attrs))
	for _, e := range g.attrs {
		iterating[e] = false
	}
	for _, e := range g.withFors {
		if e != nil {
			iterating[e] = true
		}
	}
	return g.diags, iterating
}

// MaxExpressionDepth bounds how deep an expression's syntax nests, operators included: the file's
// own limit on brackets (MaxNestingDepth) does not see `1+1+1…`, half a million of which in a
// 1 MiB file overflowed the stack of the evaluation. No readable expression comes near it.
const MaxExpressionDepth = 1000

// MaxTryNesting bounds how deep try and can nest in one another: each evaluates its arguments
// twice (once for the result's type), so n nested ones evaluate the innermost 2^n times
// (25 took 84 s).
const MaxTryNesting = 5

// guardWalk is guard's walk over a file's syntax.
type guardWalk struct {
	ops      map[*hclsyntax.Operation]*hclsyntax.Operation
	diags    hcl.Diagnostics
	attrs    []hclsyntax.Expression // every attribute's expression, in the walk's order
	top      hclsyntax.Expression   // the expression of the attribute being walked
	withFors []hclsyntax.Expression
	depth    int // of the node entered last, within its attribute
	tries    int // try and can calls around it
	tooDeep  bool
}

func (g *guardWalk) Enter(node hclsyntax.Node) hcl.Diagnostics {
	g.depth++
	switch e := node.(type) {
	case *hclsyntax.Attribute:
		g.top, g.depth, g.tooDeep = e.Expr, 0, false
		g.attrs = append(g.attrs, e.Expr)
	case *hclsyntax.LiteralValueExpr:
		if err := bounds.CheckNumber(e.Val); err != nil {
			g.diags = append(g.diags, errorf(e.SrcRange, "Number out of range",
				"This number is out of range: Fuscia takes numbers up to 1e%d in size, and down to 1e-%d (other than 0).", bounds.MaxExponent, bounds.MaxExponent))
			e.Val = cty.UnknownVal(cty.Number) // evaluated no further, in case the caller goes on
		}
	case *hclsyntax.BinaryOpExpr:
		if op, ok := g.ops[e.Op]; ok {
			e.Op = op
		}
		if g.depth > MaxExpressionDepth {
			g.prune(e.SrcRange)
			e.LHS, e.RHS = unknownAt(e.LHS.Range()), unknownAt(e.RHS.Range())
		}
	case *hclsyntax.ConditionalExpr:
		if g.depth > MaxExpressionDepth {
			g.prune(e.SrcRange)
			e.Condition, e.TrueResult, e.FalseResult = unknownAt(e.Condition.Range()), unknownAt(e.TrueResult.Range()), unknownAt(e.FalseResult.Range())
		}
	case *hclsyntax.UnaryOpExpr:
		if op, ok := g.ops[e.Op]; ok {
			e.Op = op
		}
	case *hclsyntax.FunctionCallExpr:
		if e.Name == "try" || e.Name == "can" {
			if g.tries++; g.tries == MaxTryNesting+1 {
				g.diags = append(g.diags, errorf(e.NameRange, "Too many nested try and can calls",
					"This %s is inside %d other try or can calls; the limit is %d. Each one evaluates its arguments twice, so that nesting them multiplies the work: call them one after another instead.", e.Name, MaxTryNesting, MaxTryNesting))
				e.Args = nil // not evaluated: try() and can() without arguments are errors of their own
			}
		}
	case *hclsyntax.ForExpr:
		if len(g.withFors) == 0 || g.withFors[len(g.withFors)-1] != g.top {
			g.withFors = append(g.withFors, g.top)
		}
		if call, ok := e.CollExpr.(*hclsyntax.FunctionCallExpr); ok && call.Name == funcs.IterationsName {
			break // guarded already (a file given twice)
		}
		e.CollExpr = wrapCall(funcs.IterationsName, e.CollExpr)
		if !partOfElement(e, e.ValExpr) {
			e.ValExpr = wrapCall(funcs.ElementName, e.ValExpr)
		}
		if e.KeyExpr != nil && !partOfElement(e, e.KeyExpr) {
			e.KeyExpr = wrapCall(funcs.ElementName, e.KeyExpr)
		}
	}
	return nil
}

// partOfElement says whether expr is only a reference into the element the for expression e
// iterates over (`x`, `x.name`, `k`): what it makes is already in the collection, so it need
// not be charged (a call to funcs.ElementName costs about 2 µs).
func partOfElement(e *hclsyntax.ForExpr, expr hclsyntax.Expression) bool {
	ref, ok := expr.(*hclsyntax.ScopeTraversalExpr)
	if !ok {
		return false
	}
	root := ref.Traversal.RootName()
	return root == e.ValVar || (e.KeyVar != "" && root == e.KeyVar)
}

// wrapCall is the call of the function name with expr as its argument, at expr's range.
func wrapCall(name string, expr hclsyntax.Expression) *hclsyntax.FunctionCallExpr {
	rng := expr.Range()
	start, end := rng, rng
	start.End, end.Start = rng.Start, rng.End
	return &hclsyntax.FunctionCallExpr{
		Name:            name,
		Args:            []hclsyntax.Expression{expr},
		NameRange:       start,
		OpenParenRange:  start,
		CloseParenRange: end,
	}
}

func (g *guardWalk) Exit(node hclsyntax.Node) hcl.Diagnostics {
	g.depth--
	if call, ok := node.(*hclsyntax.FunctionCallExpr); ok && (call.Name == "try" || call.Name == "can") {
		g.tries--
	}
	return nil
}

// prune reports, once an attribute, an expression nested past MaxExpressionDepth; the caller
// cuts it there so that neither this walk nor an evaluation goes deeper.
func (g *guardWalk) prune(rng hcl.Range) {
	if g.tooDeep {
		return
	}
	g.tooDeep = true
	g.diags = append(g.diags, errorf(rng, "Expression too complex",
		"The expression nests more than %d operations deep here. Split it, with a task's outputs or a builtin.transform in between.", MaxExpressionDepth))
}

// unknownAt is an unknown value in place of a cut expression.
func unknownAt(rng hcl.Range) hclsyntax.Expression {
	return &hclsyntax.LiteralValueExpr{Val: cty.DynamicVal, SrcRange: rng}
}

// boundedOperations maps each arithmetic operation of hclsyntax to one whose result must be
// within bounds' range. The others (comparisons, logic) cannot make a number.
var boundedOperations = sync.OnceValue(func() map[*hclsyntax.Operation]*hclsyntax.Operation {
	m := make(map[*hclsyntax.Operation]*hclsyntax.Operation)
	for _, op := range []*hclsyntax.Operation{hclsyntax.OpAdd, hclsyntax.OpSubtract, hclsyntax.OpMultiply,
		hclsyntax.OpDivide, hclsyntax.OpModulo, hclsyntax.OpNegate} {
		bounded := *op
		bounded.Impl = boundedResult(op.Impl, op == hclsyntax.OpModulo)
		m[op] = &bounded
	}
	return m
})

// boundedResult is f with its number result checked by bounds.CheckNumber (and, for modulo, its
// divisor not 0). Its parameters are f's, so hclsyntax converts the operands exactly as before.
func boundedResult(f function.Function, modulo bool) function.Function {
	return function.New(&function.Spec{
		Description: f.Description(),
		Params:      f.Params(),
		VarParam:    f.VarParam(),
		Type:        f.ReturnTypeForValues,
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if modulo && len(args) == 2 && args[1].IsKnown() && !args[1].IsNull() {
				// go-cty answers a % 0 with a; a remainder of a division by zero has no value.
				if d, _ := args[1].Unmark(); d.Type() == cty.Number && d.AsBigFloat().Sign() == 0 {
					return cty.NilVal, fmt.Errorf("the remainder of a division by zero (%% 0) has no value")
				}
			}
			ret, err := f.Call(args)
			if err != nil {
				return cty.NilVal, err
			}
			if err := bounds.CheckNumber(ret); err != nil {
				return cty.NilVal, err
			}
			return ret, nil
		},
	})
}
