package schema

import (
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// TestNumbersOutOfRange: a number whose size is beyond 10^±1000 is refused wherever a
// document's numbers become values (the direct parser, encoding/json's way, a string
// converted by a schema), where it used to become a value that ToJSON wrote out in millions of
// digits: ten bytes of a webhook's body, a minute of a core.
func TestNumbersOutOfRange(t *testing.T) {
	for _, lit := range []string{"1e10000000", "-1e1001", "1e-1001", "0.0001e-998", "123e999", "1e99999999999999999999", "1p100000000"} {
		if _, err := ParseJSON([]byte(`{"id":` + lit + `}`)); !strings.HasPrefix(lit, "1p") && (err == nil || !strings.Contains(err.Error(), "out of range")) {
			t.Errorf("ParseJSON of %s: %v; want out of range", lit, err)
		}
	}
	for _, lit := range []string{"0", "-0.5", "1e1000", "12e998", "1e-1000", "0.001e-997", "0e99999999999", "123456789012345678901234567890", "3.14159"} {
		v, err := ParseJSON([]byte(lit))
		if err != nil {
			t.Errorf("ParseJSON of %s: %v", lit, err)
			continue
		}
		want, _ := cty.ParseNumberVal(lit)
		if !v.RawEquals(want) {
			t.Errorf("ParseJSON of %s = %#v, want %#v", lit, v, want)
		}
	}
	// A schema that wants a number converts a string only when it is a number in range.
	if _, ok := convert(cty.StringVal("1e10000000"), tNumber); ok {
		t.Error(`the string "1e10000000" was converted to a number`)
	}
	if v, ok := convert(cty.StringVal("42"), tNumber); !ok || !v.RawEquals(cty.NumberIntVal(42)) {
		t.Errorf(`the string "42": %#v, %t`, v, ok)
	}
}
