package funcs

import (
	"fmt"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// MaxProduct bounds setproduct's result. Without it, four range(1024) arguments ask for 2^40
// elements and a `validate` would run out of memory; the bound matches the for_each limit.
const MaxProduct = 100000

// limitedSetProduct is go-cty's setproduct, refusing results over MaxProduct elements before
// computing them.
var limitedSetProduct = function.New(&function.Spec{
	Description: stdlib.SetProductFunc.Description(),
	Params:      stdlib.SetProductFunc.Params(),
	VarParam:    stdlib.SetProductFunc.VarParam(),
	Type: func(args []cty.Value) (cty.Type, error) {
		return stdlib.SetProductFunc.ReturnTypeForValues(args)
	},
	RefineResult: func(b *cty.RefinementBuilder) *cty.RefinementBuilder { return b.NotNull() },
	Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
		total := 1
		for _, a := range args {
			if !a.IsKnown() || a.IsNull() {
				break
			}
			ua, _ := a.Unmark()
			total *= ua.LengthInt()
			if total > MaxProduct {
				return cty.NilVal, fmt.Errorf("the product would have more than %d elements; use smaller collections", MaxProduct)
			}
			if total == 0 {
				break
			}
		}
		return stdlib.SetProductFunc.Call(args)
	},
})
