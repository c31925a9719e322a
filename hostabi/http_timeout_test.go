package hostabi

import (
	"math"
	"testing"
	"time"
)

// TestRequestTimeout: timeout_ms bounds an exchange; one too large for a time.Duration is no
// bound (the attempt's own timeout still applies), not a deadline already past.
func TestRequestTimeout(t *testing.T) {
	for _, tc := range []struct {
		ms   int64
		want time.Duration
		ok   bool
	}{
		{0, 0, false}, {-5, 0, false}, {1500, 1500 * time.Millisecond, true},
		{math.MaxInt64 / int64(time.Millisecond), time.Duration(math.MaxInt64/int64(time.Millisecond)) * time.Millisecond, true},
		{1 << 53, 0, false}, {math.MaxInt64, 0, false},
	} {
		if got, ok := requestTimeout(tc.ms); got != tc.want || ok != tc.ok {
			t.Errorf("requestTimeout(%d) = %v, %t; want %v, %t", tc.ms, got, ok, tc.want, tc.ok)
		}
	}
}
