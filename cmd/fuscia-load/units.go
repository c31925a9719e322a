package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// The figures of a result keep the precision they were measured with, so that the lines
// printed as they are measured show them as they always have; each type says how the RESULT
// line rounds it. NaN and ±Inf (a rate over no time) become 0 there, as round does.

// mebibytes is a size in MiB; RESULT gives it to 0.1 MiB.
type mebibytes float64

// toMiB is bytes in MiB.
func toMiB(bytes int64) mebibytes { return mebibytes(float64(bytes) / mib) }

func (v mebibytes) MarshalJSON() ([]byte, error) { return json.Marshal(round(float64(v), 1)) }

// seconds is a time in seconds; RESULT gives it to the millisecond.
type seconds float64

func (v seconds) MarshalJSON() ([]byte, error) { return json.Marshal(round(float64(v), 3)) }

// centiseconds is a time in seconds that RESULT gives to 0.01 s.
type centiseconds float64

func (v centiseconds) MarshalJSON() ([]byte, error) { return json.Marshal(round(float64(v), 2)) }

// perSecond is a rate; RESULT gives it to 0.1 per second.
type perSecond float64

func (v perSecond) MarshalJSON() ([]byte, error) { return json.Marshal(round(float64(v), 1)) }

// millis is a duration that RESULT gives in milliseconds, to the microsecond.
type millis time.Duration

func (v millis) MarshalJSON() ([]byte, error) { return json.Marshal(msf(time.Duration(v))) }

// slope is a trend in MiB per minute, NaN when there are too few samples; RESULT gives it to
// 0.001, or null for NaN.
type slope float64

func (v slope) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(v)) {
		return []byte("null"), nil
	}
	return json.Marshal(round(float64(v), 3))
}

// fmtMiB prints a size in MiB, or n/a for NaN.
func fmtMiB(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " MiB"
}

// fmtSlope prints a slope in MiB per minute with its sign, or n/a for NaN.
func fmtSlope(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%+.2f MiB/min", v)
}

// msf is d in milliseconds to the microsecond.
func msf(d time.Duration) float64 { return round(float64(d)/float64(time.Millisecond), 3) }

// ms prints d in milliseconds to the microsecond, without trailing zeros.
func ms(d time.Duration) string { return strconv.FormatFloat(msf(d), 'f', -1, 64) + " ms" }

// round is v to digits decimals, half away from zero; 0 for NaN and ±Inf.
func round(v float64, digits int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// millisFloat is a time in milliseconds; RESULT gives it to 0.1 ms.
type millisFloat float64

func (v millisFloat) MarshalJSON() ([]byte, error) { return json.Marshal(round(float64(v), 1)) }
