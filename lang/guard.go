package lang

import (
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
//     billion elements).
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
	ops := boundedOperations()
	var (
		attrs    []hclsyntax.Expression // every attribute's expression, in the walk's order
		top      hclsyntax.Expression   // the expression of the attribute being walked
		withFors []hclsyntax.Expression
	)
	_ = hclsyntax.VisitAll(syn, func(node hclsyntax.Node) hcl.Diagnostics {
		switch e := node.(type) {
		case *hclsyntax.Attribute:
			top = e.Expr
			attrs = append(attrs, e.Expr)
		case *hclsyntax.LiteralValueExpr:
			if err := bounds.CheckNumber(e.Val); err != nil {
				diags = append(diags, errorf(e.SrcRange, "Number out of range",
					"This number is out of range: Fuscia takes numbers up to 1e%d in size, and down to 1e-%d (other than 0).", bounds.MaxExponent, bounds.MaxExponent))
				e.Val = cty.UnknownVal(cty.Number) // evaluated no further, in case the caller goes on
			}
		case *hclsyntax.BinaryOpExpr:
			if op, ok := ops[e.Op]; ok {
				e.Op = op
			}
		case *hclsyntax.UnaryOpExpr:
			if op, ok := ops[e.Op]; ok {
				e.Op = op
			}
		case *hclsyntax.ForExpr:
			if len(withFors) == 0 || withFors[len(withFors)-1] != top {
				withFors = append(withFors, top)
			}
			if call, ok := e.CollExpr.(*hclsyntax.FunctionCallExpr); ok && call.Name == funcs.IterationsName {
				break // guarded already (a file given twice)
			}
			rng := e.CollExpr.Range()
			start, end := rng, rng
			start.End, end.Start = rng.Start, rng.End
			e.CollExpr = &hclsyntax.FunctionCallExpr{
				Name:            funcs.IterationsName,
				Args:            []hclsyntax.Expression{e.CollExpr},
				NameRange:       start,
				OpenParenRange:  start,
				CloseParenRange: end,
			}
		}
		return nil
	})
	if len(withFors) == 0 {
		return diags, nil
	}
	iterating = make(map[hcl.Expression]bool, len(attrs))
	for _, e := range attrs {
		iterating[e] = false
	}
	for _, e := range withFors {
		if e != nil {
			iterating[e] = true
		}
	}
	return diags, iterating
}

// boundedOperations maps each arithmetic operation of hclsyntax to one whose result must be
// within bounds' range. The others (comparisons, logic) cannot make a number.
var boundedOperations = sync.OnceValue(func() map[*hclsyntax.Operation]*hclsyntax.Operation {
	m := make(map[*hclsyntax.Operation]*hclsyntax.Operation)
	for _, op := range []*hclsyntax.Operation{hclsyntax.OpAdd, hclsyntax.OpSubtract, hclsyntax.OpMultiply,
		hclsyntax.OpDivide, hclsyntax.OpModulo, hclsyntax.OpNegate} {
		bounded := *op
		bounded.Impl = boundedResult(op.Impl)
		m[op] = &bounded
	}
	return m
})

// boundedResult is f with its number result checked by bounds.CheckNumber. Its parameters are
// f's, so hclsyntax converts the operands exactly as before.
func boundedResult(f function.Function) function.Function {
	return function.New(&function.Spec{
		Description: f.Description(),
		Params:      f.Params(),
		VarParam:    f.VarParam(),
		Type:        f.ReturnTypeForValues,
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
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
