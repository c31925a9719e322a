package bounds

import (
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// TestParseNumber: literals beyond 10^±MaxExponent, and text cty would read as a binary
// exponent, are refused; those in range parse as cty does.
func TestParseNumber(t *testing.T) {
	for _, lit := range []string{"1e10000000", "-1e1001", "1e-1001", "0.0001e-998", "123e999", "1e99999999999999999999", "1p100000000", "0x10"} {
		if _, err := ParseNumber(lit); err == nil {
			t.Errorf("ParseNumber(%q) took it", lit)
		}
	}
	for _, lit := range []string{"0", "-0.5", "1e1000", "9.99e1000", "12e998", "1e-1000", "0.001e-997", "0e99999999999", "123456789012345678901234567890", "3.14159"} {
		v, err := ParseNumber(lit)
		want, _ := cty.ParseNumberVal(lit)
		if err != nil || !v.RawEquals(want) {
			t.Errorf("ParseNumber(%q) = %#v, %v; want %#v", lit, v, err, want)
		}
	}
}

// TestCheckNumber agrees with LiteralInRange on the edges, both signs, refuses infinities
// (cty's 1/0: no JSON holds one) and leaves unknowns, nulls and other types alone.
func TestCheckNumber(t *testing.T) {
	for _, lit := range []string{"1e1000", "9.999e1000", "1e-1000", "1.0001e-1000", "0", "1", "2.5e-300", "7e500"} {
		for _, sign := range []string{"", "-"} {
			v, _ := cty.ParseNumberVal(sign + lit)
			if err := CheckNumber(v); err != nil {
				t.Errorf("CheckNumber(%s%s): %v", sign, lit, err)
			}
		}
	}
	for _, lit := range []string{"1e1001", "1e-1001", "9.99e-1001", "1e600000000", "1e-600000000"} {
		for _, sign := range []string{"", "-"} {
			v, _ := cty.ParseNumberVal(sign + lit)
			if err := CheckNumber(v); err == nil || !strings.Contains(err.Error(), "out of range") {
				t.Errorf("CheckNumber(%s%s): %v; want out of range", sign, lit, err)
			}
		}
	}
	for _, v := range []cty.Value{cty.UnknownVal(cty.Number), cty.NullVal(cty.Number), cty.StringVal("1e99999")} {
		if err := CheckNumber(v); err != nil {
			t.Errorf("CheckNumber(%#v): %v", v, err)
		}
	}
	for _, v := range []cty.Value{cty.PositiveInfinity, cty.NegativeInfinity} {
		if err := CheckNumber(v); err == nil || !strings.Contains(err.Error(), "infinite") {
			t.Errorf("CheckNumber(%#v): %v; want infinite refused", v, err)
		}
	}
}

// TestCheckJSON: nesting past MaxJSONDepth and numbers out of range are named; strings that
// look like either are not.
func TestCheckJSON(t *testing.T) {
	deep := strings.Repeat("[", MaxJSONDepth+1) + strings.Repeat("]", MaxJSONDepth+1)
	ok := strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth)
	for doc, want := range map[string]string{
		deep:                                 "nests more than 1000",
		`{"a":[1,2,{"b":1e10000000}]}`:       "out of range",
		ok:                                   "",
		`{"s":"[[[[ 1e10000000 \" {{"}`:      "",
		`[-0.5, 1e1000, 3, "x", true, null]`: "",
	} {
		err := CheckJSON([]byte(doc))
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("CheckJSON(%.40q): %v; want %q", doc, err, want)
		}
	}
}
