package hclsyntax

// Not in upstream HCL: see this module's README.md.

import (
	"fmt"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// MaxNumberText bounds the text an operand or a function's argument is converted from when a
// number is wanted. go-cty's parse of a number is quadratic in its digits (four million took
// 35 s) and a number of Fuscia's range needs a few thousand at most, even in base 2.
const MaxNumberText = 4096

// convertBounded is convert.Convert, refusing to read a number from a known string longer than
// MaxNumberText bytes.
func convertBounded(val cty.Value, ty cty.Type) (cty.Value, error) {
	if ty == cty.Number && val.Type() == cty.String && val.IsKnown() && !val.IsNull() {
		if s, _ := val.Unmark(); len(s.AsString()) > MaxNumberText {
			return cty.NilVal, fmt.Errorf("a number is read from %d bytes of text at most; this text is %d bytes", MaxNumberText, len(s.AsString()))
		}
	}
	return convert.Convert(val, ty)
}
