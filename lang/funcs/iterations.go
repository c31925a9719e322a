package funcs

import (
	"fmt"
	"reflect"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/customdecode"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// IterationsName names the function the language wraps the collection of every `for`
// expression in when it parses a workflow (lang, ParseSource): `[for x in C : …]` is evaluated
// as `[for x in IterationsName(C) : …]`. The name cannot be written in HCL (it has a space), so
// no workflow calls it itself; it reads well in the message of the error it returns.
const IterationsName = "for expression"

// MaxIterations bounds the elements the `for` expressions of one evaluation iterate over, nested
// ones counted every time they run. Without it three nested `for`s over range(1000) asked for a
// billion elements and `validate` ran out of memory. A for expression costs 2-10 µs an element
// here (more when it builds an object), so the bound is at most about a second of a core; it is
// the bound of for_each and setproduct too: no expression makes more than 100,000 of anything.
const MaxIterations = 100_000

var errTooManyIterations = fmt.Errorf("for expressions have iterated over more than %d elements in this evaluation, counting each run of a nested one: iterate over less, or do the work in a task", MaxIterations)

// Iterations counts the elements the `for` expressions of one evaluation (or of one workflow's
// check) have iterated over. Its zero value is ready; it is not safe for concurrent use: each
// evaluation has its own.
type Iterations struct {
	n  int
	fn function.Function
}

// Func returns the function to put under IterationsName in the evaluation's context: it
// returns its collection as given after charging its length to it.
func (it *Iterations) Func() function.Function {
	if it.fn == (function.Function{}) {
		it.fn = iterationsFunc(it)
	}
	return it.fn
}

// Table returns a new function table (as funcs.Table) whose IterationsName counts against it.
func (it *Iterations) Table() map[string]function.Function {
	t := Table()
	t[IterationsName] = it.Func()
	return t
}

// iterationsFunc returns the identity that charges a collection's length to it; with it nil, a
// collection only has to be within MaxIterations on its own (the table's default, for an
// evaluation that has no Iterations of its own).
//
// The collection reaches the function unevaluated, as try's expressions reach try: its
// parameter's type is a capsule whose decoder (hcl calls it with the argument's expression) is
// this count's. Once the count is past the bound the decoder does not evaluate the collection at
// all, and the rest of the evaluation, which has failed, ends quickly: an enclosing for would
// otherwise still build the collection of every nested one (range(1000) costs about a
// millisecond). Each for expression met after that fails with the same error (the evaluator
// reports it once: see lang's dedupe).
func iterationsFunc(it *Iterations) function.Function {
	var collection cty.Type
	decode := func(expr hcl.Expression, ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
		if it != nil && it.n > MaxIterations {
			return cty.UnknownVal(collection), nil
		}
		v, diags := expr.Value(ctx)
		return cty.CapsuleVal(collection, &v), diags
	}
	collection = cty.CapsuleWithOps("collection", reflect.TypeOf(cty.Value{}), &cty.CapsuleOps{
		ExtensionData: func(key any) any {
			if key == customdecode.CustomExpressionDecoder {
				return customdecode.CustomExpressionDecoderFunc(decode)
			}
			return nil
		},
	})
	return function.New(&function.Spec{
		Description: "Returns the collection of a for expression, counting its elements against the evaluation's bound.",
		Params:      []function.Parameter{{Name: "collection", Type: collection, AllowUnknown: true}},
		Type:        function.StaticReturnType(cty.DynamicPseudoType),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if !args[0].IsKnown() {
				// Not evaluated: the count was past the bound already. The same error again, so
				// that an expression evaluated twice (try and can do) fails the same way twice.
				return cty.NilVal, errTooManyIterations
			}
			coll := *args[0].EncapsulatedValue().(*cty.Value)
			if plain, _ := coll.Unmark(); plain.IsKnown() && !plain.IsNull() && plain.CanIterateElements() {
				n := plain.LengthInt()
				if it != nil {
					it.n += n
					n = it.n
				}
				if n > MaxIterations {
					return cty.NilVal, errTooManyIterations
				}
			}
			return coll, nil
		},
	})
}
