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

// ElementName names the function the language wraps the element (and the key) of every `for`
// expression in, as it wraps the collection in IterationsName: `[for x in C : V]` is evaluated
// as `[for x in IterationsName(C) : ElementName(V)]`. It cannot be written in HCL either.
const ElementName = "for element"

// MaxElementBytes bounds the bytes the elements and keys the `for` expressions of one
// evaluation make take written out as JSON (JSONSize). The iteration bound alone let an
// element repeat a long value: `[for x in trigger.payload.items :
// "${trigger.payload.header}:${x}"]` with a 1 MiB payload of 100,000 items and an 800 KB header
// is 80 GB, sent by whoever may call the webhook. A value an element only refers to counts each
// time: it is written out that many times when the result is journaled or encoded.
const MaxElementBytes = 64 << 20

var errTooManyElementBytes = fmt.Errorf("for expressions have made more than %d MiB of elements in this evaluation, counting a value each time an element holds it: make smaller elements, or do the work in a task", MaxElementBytes>>20)

// Iterations counts the elements the `for` expressions of one evaluation (or of one workflow's
// check) have iterated over, and the bytes of the elements they made. Its zero value is ready;
// it is not safe for concurrent use: each evaluation has its own.
type Iterations struct {
	n     int
	bytes int
	fn    function.Function
	elFn  function.Function
}

// Func returns the function to put under IterationsName in the evaluation's context: it
// returns its collection as given after charging its length to it.
func (it *Iterations) Func() function.Function {
	if it.fn == (function.Function{}) {
		it.fn = iterationsFunc(it)
	}
	return it.fn
}

// ElementFunc returns the function to put under ElementName in the evaluation's context: it
// returns an element as given after charging its size to it.
func (it *Iterations) ElementFunc() function.Function {
	if it.elFn == (function.Function{}) {
		it.elFn = elementFunc(it)
	}
	return it.elFn
}

// Table returns a new function table (as funcs.Table) whose IterationsName and ElementName count
// against it.
func (it *Iterations) Table() map[string]function.Function {
	t := Table()
	t[IterationsName] = it.Func()
	t[ElementName] = it.ElementFunc()
	return t
}

// elementFunc returns the identity that charges an element's size written out (JSONSize) to it; with it
// nil, an element only has to be within MaxElementBytes on its own. Like the collection, the
// element reaches it unevaluated (see iterationsFunc), so that past the bound the rest of the
// evaluation's elements are not built.
func elementFunc(it *Iterations) function.Function {
	element := unevaluated("element", func() bool { return it != nil && it.bytes > MaxElementBytes })
	return function.New(&function.Spec{
		Description: "Returns an element of a for expression, counting its size against the evaluation's bound.",
		Params:      []function.Parameter{{Name: "element", Type: element, AllowUnknown: true, AllowNull: true}},
		Type:        function.StaticReturnType(cty.DynamicPseudoType),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if !args[0].IsKnown() {
				return cty.NilVal, errTooManyElementBytes // not evaluated: past the bound already
			}
			el := *args[0].EncapsulatedValue().(*cty.Value)
			used := 0
			if it != nil {
				used = it.bytes
			}
			used += JSONSize(el, MaxElementBytes-used)
			if it != nil {
				it.bytes = used
			}
			if used > MaxElementBytes {
				return cty.NilVal, errTooManyElementBytes
			}
			return el, nil
		},
	})
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
	collection := unevaluated("collection", func() bool { return it != nil && it.n > MaxIterations })
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

// unevaluated is the type of a parameter that reaches its function unevaluated: a capsule whose
// decoder (hcl calls it with the argument's expression) evaluates the expression and wraps its
// value, or, once past reports that the bound is passed, returns an unknown capsule without
// evaluating it.
func unevaluated(name string, past func() bool) cty.Type {
	var ty cty.Type
	decode := func(expr hcl.Expression, ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
		if past() {
			return cty.UnknownVal(ty), nil
		}
		v, diags := expr.Value(ctx)
		return cty.CapsuleVal(ty, &v), diags
	}
	ty = cty.CapsuleWithOps(name, reflect.TypeOf(cty.Value{}), &cty.CapsuleOps{
		ExtensionData: func(key any) any {
			if key == customdecode.CustomExpressionDecoder {
				return customdecode.CustomExpressionDecoderFunc(decode)
			}
			return nil
		},
	})
	return ty
}
