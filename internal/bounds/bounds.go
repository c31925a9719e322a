// Package bounds holds the limits on values that Fuscia takes from text it does not control (a
// workflow file, a webhook's body, a run's payload, a document given to jsondecode): the size
// of a number and the nesting of a JSON document. They live below the language, its functions
// and the schema checks so that each enforces the same limits with the same words.
//
// Why numbers are bounded: go-cty keeps numbers at arbitrary precision and writes them out
// digit by digit. 1e10000000, ten bytes, became a ten-million-digit string in the journal and a
// minute of a core; tostring(1e600000000) in a workflow ran a plan for eight minutes and then out
// of memory. The bound is far beyond float64's (about 1e308) and anything a workflow means by a
// number.
package bounds

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"
)

// MaxExponent bounds a number's size: its leading digit stands for at most 10^MaxExponent and,
// unless the number is 0, at least 10^-MaxExponent.
const MaxExponent = 1000

// MaxJSONDepth bounds the nesting of a JSON document Fuscia takes from outside: it is kept
// inside the journal's entries, a few levels deeper, and read back by encoding/json, which
// refuses 10,000 levels; go-cty's decoder recurses once a level without a limit of its own.
const MaxJSONDepth = 1000

// rangeSentence is the sentence every refusal of a number ends with.
var rangeSentence = fmt.Sprintf("Fuscia takes numbers up to 1e%d in size, and down to 1e-%d", MaxExponent, MaxExponent)

// ParseNumber makes a cty number of a decimal literal, refusing one whose size is beyond
// 10^±MaxExponent and any text that is not a plain decimal number.
func ParseNumber(lit string) (cty.Value, error) {
	if strings.Trim(lit, "0123456789.+-eE") != "" {
		// cty would take more (a binary exponent, 1p100000000, is as large as it is short).
		return cty.NilVal, fmt.Errorf("%q is not a decimal number", lit)
	}
	if !LiteralInRange(lit) {
		return cty.NilVal, fmt.Errorf("the number %s is out of range: %s", shorten(lit), rangeSentence)
	}
	return cty.ParseNumberVal(lit)
}

// LiteralInRange reports whether the decimal literal lit ([-]digits[.digits][e[±]digits]; any
// other text is left to the parser) has its leading significant digit within
// 10^±MaxExponent. Zero is in range whatever its exponent. It reads the text only: no number
// is built.
func LiteralInRange(lit string) bool {
	i := 0
	if i < len(lit) && (lit[i] == '-' || lit[i] == '+') {
		i++
	}
	// The position of the first significant digit relative to the decimal point.
	lead, seenPoint, significant := 0, false, false
	for ; i < len(lit); i++ {
		c := lit[i]
		switch {
		case c == '.':
			seenPoint = true
		case '0' <= c && c <= '9':
			if c != '0' && !significant {
				significant = true
			}
			switch {
			case !seenPoint && (significant || c != '0'):
				lead++ // an integer digit from the first significant one on
			case seenPoint && !significant:
				lead-- // a zero between the point and the first significant digit
			}
		default:
			goto exponent
		}
	}
exponent:
	if !significant {
		return true
	}
	if i < len(lit) && (lit[i] == 'e' || lit[i] == 'E') {
		e := lit[i+1:]
		if len(e) > 0 && e[0] == '+' {
			e = e[1:]
		}
		if len(e) > 12 { // past any bound: digits beyond int64's, with or without a sign
			return false
		}
		n, err := strconv.ParseInt(e, 10, 64)
		if err != nil {
			return true // not a number the parser takes: it says so
		}
		lead += int(n)
	}
	// The leading digit stands for 10^(lead-1).
	return lead-1 <= MaxExponent && lead-1 >= -MaxExponent
}

// The limits as numbers: a number in range is 0 or has a size in [smallest, beyond).
var smallest, beyond = func() (*big.Float, *big.Float) {
	s, _, err := big.ParseFloat(fmt.Sprintf("1e-%d", MaxExponent), 10, 512, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	b, _, err := big.ParseFloat(fmt.Sprintf("1e%d", MaxExponent+1), 10, 512, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	return s, b
}()

// CheckNumber refuses a known number (a result of arithmetic or of a function) whose size is
// beyond 10^±MaxExponent, or that is infinite (cty's 1/0 and log(0)): no JSON document, input
// or journal entry can hold one. Anything else is left alone. The check compares binary
// exponents first, so a number far from the limits costs no more than reading its exponent.
func CheckNumber(v cty.Value) error {
	if !v.IsKnown() || v.IsNull() || v.Type() != cty.Number {
		return nil
	}
	v, _ = v.Unmark()
	f := v.AsBigFloat()
	if f.IsInf() {
		return fmt.Errorf("the result is infinite (a division by zero, the log of 0, or a pow beyond 1.8e308): Fuscia's numbers are finite, up to 1e%d in size", MaxExponent)
	}
	if f.Sign() == 0 {
		return nil
	}
	// 10^1001 ≈ 2^3325.2 and 10^-1000 ≈ 2^-3321.9: well inside [-3300, 3300] needs no compare.
	if e := f.MantExp(nil); e > -3300 && e < 3300 {
		return nil
	}
	f.Abs(f)
	if f.Cmp(beyond) >= 0 {
		return fmt.Errorf("the number is 1e%d or more in size, out of range: %s", MaxExponent+1, rangeSentence)
	}
	if f.Cmp(smallest) < 0 {
		return fmt.Errorf("the number is less than 1e-%d in size (and not 0), out of range: %s", MaxExponent, rangeSentence)
	}
	return nil
}

// CheckJSON says whether a JSON document stays within what Fuscia takes: nesting of at most
// MaxJSONDepth arrays and objects, numbers within 10^±MaxExponent. doc need not be valid JSON
// (a parser after it reports what is wrong); the check is a scan, with no values built.
func CheckJSON(doc []byte) error {
	depth := 0
	for i := 0; i < len(doc); i++ {
		switch c := doc[i]; {
		case c == '"':
			for i++; i < len(doc) && doc[i] != '"'; i++ {
				if doc[i] == '\\' {
					i++
				}
			}
		case c == '[' || c == '{':
			if depth++; depth > MaxJSONDepth {
				return fmt.Errorf("the document nests more than %d arrays and objects deep", MaxJSONDepth)
			}
		case c == ']' || c == '}':
			depth--
		case c == '-' || '0' <= c && c <= '9':
			start := i
			for i < len(doc) && strings.IndexByte("0123456789+-.eE", doc[i]) >= 0 {
				i++
			}
			if lit := string(doc[start:i]); !LiteralInRange(lit) {
				return fmt.Errorf("the number %s is out of range: %s", shorten(lit), rangeSentence)
			}
			i--
		}
	}
	return nil
}

// shorten keeps a refused literal readable in a message.
func shorten(lit string) string {
	if len(lit) > 40 {
		return lit[:40] + "…"
	}
	return lit
}

// CheckValue is CheckNumber for every number in v, however deep.
func CheckValue(v cty.Value) error {
	var found error
	_ = cty.Walk(v, func(_ cty.Path, el cty.Value) (bool, error) {
		if found != nil {
			return false, nil
		}
		if el.Type() == cty.Number {
			found = CheckNumber(el)
		}
		return found == nil, nil
	})
	return found
}
