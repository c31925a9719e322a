// Package benchpair measures what a runtime's path adds to a bare call under the same load: the
// two are timed alternately in one loop, so a busy machine slows both alike and the difference
// of their medians is what the path costs.
package benchpair

import (
	"slices"
	"testing"
	"time"
)

// Measure runs path and bare one after the other b.N times and reports path's p50 and p99
// (p50-µs, p99-µs), bare's p50 (bare-p50-µs) and the difference of the p50s under extraMetric.
// Warm both up before calling it.
func Measure(b *testing.B, path, bare func(), extraMetric string) {
	b.Helper()
	lat := make([]time.Duration, 0, b.N)
	bareLat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		path()
		t1 := time.Now()
		bare()
		lat = append(lat, t1.Sub(t0))
		bareLat = append(bareLat, time.Since(t1))
	}
	b.StopTimer()
	slices.Sort(lat)
	slices.Sort(bareLat)
	p50, bare50 := lat[len(lat)/2], bareLat[len(bareLat)/2]
	b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(bare50.Microseconds()), "bare-p50-µs")
	b.ReportMetric(float64((p50-bare50).Nanoseconds())/1e3, extraMetric)
}
