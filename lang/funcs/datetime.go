package funcs

import (
	"errors"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// timeCmpFunc is Terraform's timecmp, which compares instants rather than
// strings, so that timestamps in different time zones compare correctly.
var timeCmpFunc = function.New(&function.Spec{
	Description: "Compares two RFC 3339 timestamps, returning -1, 0 or 1 as the first is before, at or after the second.",
	Params: []function.Parameter{
		{Name: "timestamp_a", Type: cty.String},
		{Name: "timestamp_b", Type: cty.String},
	},
	Type:         function.StaticReturnType(cty.Number),
	RefineResult: refineNotNull,
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		var ts [2]time.Time
		for i := range ts {
			t, err := time.Parse(time.RFC3339, args[i].AsString())
			if err != nil {
				return cty.NilVal, function.NewArgError(i, timestampError(err))
			}
			ts[i] = t
		}
		return cty.NumberIntVal(int64(ts[0].Compare(ts[1]))), nil
	},
})

// timestampError describes why a timestamp did not parse without quoting
// it: the value may be sensitive and marks are not visible here, and Go's
// own message speaks in terms of its reference-date layouts.
func timestampError(err error) error {
	const prefix = "not a valid RFC 3339 timestamp"
	var pe *time.ParseError
	switch {
	case !errors.As(err, &pe):
		return errors.New(prefix)
	case strings.HasPrefix(pe.Message, ": extra text"):
		return errors.New(prefix + ": unexpected text after the time zone")
	case pe.Message != "":
		// The remaining messages name a field ("day out of range"), never
		// the value.
		return errors.New(prefix + pe.Message)
	}
	if what, ok := rfc3339Elems[pe.LayoutElem]; ok {
		return errors.New(prefix + ": expected " + what)
	}
	return errors.New(prefix + `: expected a timestamp such as "2006-01-02T15:04:05Z" or "2006-01-02T15:04:05.999+01:00"`)
}

var rfc3339Elems = map[string]string{
	"2006":   "a four-digit year",
	"01":     "a two-digit month",
	"02":     "a two-digit day",
	"15":     "a two-digit hour",
	"04":     "a two-digit minute",
	"05":     "a two-digit second",
	"Z07:00": `a time zone, "Z" or an offset such as "+01:00"`,
	"T":      `"T" between the date and the time`,
	"-":      `"-" between the parts of the date`,
	":":      `":" between the parts of the time`,
	".":      `"." before the fraction of a second`,
}
