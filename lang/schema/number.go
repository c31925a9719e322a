package schema

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"
)

// maxNumberExponent bounds the size of a number read from JSON or converted from a string: its
// decimal exponent, written out, is at most this far from 0. cty keeps numbers at arbitrary
// precision and writes them out digit by digit (ToJSON): 1e10000000, ten bytes of a webhook's
// body, was a ten-million-digit string in the journal and a minute of a core. The bound is
// far beyond float64's (about 1e308) and anything a workflow means by a number.
const maxNumberExponent = 1000

// parseNumber makes a cty number of a JSON number literal, refusing one whose magnitude is
// beyond 10^±maxNumberExponent.
func parseNumber(lit string) (cty.Value, error) {
	if strings.Trim(lit, "0123456789.+-eE") != "" {
		// cty would take more (a binary exponent, 1p100000000, is as large as it is short).
		return cty.NilVal, fmt.Errorf("%q is not a decimal number", lit)
	}
	if !numberInRange(lit) {
		shown := lit
		if len(shown) > 40 {
			shown = shown[:40] + "…"
		}
		return cty.NilVal, fmt.Errorf("the number %s is out of range: Fuscia takes numbers up to 1e%d in size, and down to 1e-%d", shown, maxNumberExponent, maxNumberExponent)
	}
	return cty.ParseNumberVal(lit)
}

// numberInRange reports whether the decimal literal lit ([-]digits[.digits][e[±]digits]; any
// other text is left to the parser) has its leading significant digit within
// 10^±maxNumberExponent. Zero is in range whatever its exponent.
func numberInRange(lit string) bool {
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
	return lead-1 <= maxNumberExponent && lead-1 >= -maxNumberExponent
}

// MaxJSONDepth bounds the nesting of a document Fuscia takes from outside (a webhook's body, a
// run's payload): it is kept inside the journal's entries, a few levels deeper, and read back
// by encoding/json, which refuses 10,000 levels.
const MaxJSONDepth = 1000

// CheckBounds says whether a JSON document stays within what Fuscia takes: nesting of at most
// MaxJSONDepth arrays and objects, numbers within 10^±1000. doc is valid JSON already; the
// check is a scan, with no values built.
func CheckBounds(doc []byte) error {
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
			if _, err := parseNumber(string(doc[start:i])); err != nil {
				return err
			}
			i--
		}
	}
	return nil
}
