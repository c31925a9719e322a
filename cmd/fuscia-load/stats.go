package main

import (
	"encoding/json"
	"math"
	"sort"
	"time"
)

// pcts are percentiles of a set of durations: the nearest-rank p50, p90 and p99, and the
// largest. The zero value is the percentiles of no durations. RESULT gives them in
// milliseconds: {"max":…,"p50":…,"p90":…,"p99":…}.
type pcts struct{ p50, p90, p99, max time.Duration }

func (p pcts) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Max millis `json:"max"`
		P50 millis `json:"p50"`
		P90 millis `json:"p90"`
		P99 millis `json:"p99"`
	}{millis(p.max), millis(p.p50), millis(p.p90), millis(p.p99)})
}

// percentiles of ds, which it does not modify.
func percentiles(ds []time.Duration) pcts {
	if len(ds) == 0 {
		return pcts{}
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	at := func(q float64) time.Duration {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return pcts{at(0.50), at(0.90), at(0.99), s[len(s)-1]}
}

// linearSlope is the least-squares slope of ys over xs; NaN for fewer than two points or
// when every x is the same.
func linearSlope(xs, ys []float64) float64 {
	n := float64(len(xs))
	if len(xs) < 2 {
		return math.NaN()
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return math.NaN()
	}
	return (n*sxy - sx*sy) / den
}

// memAvg is serve's average memory over a span, in MiB; NaN when no sample fell in it (RESULT:
// null).
type memAvg struct{ vm, anon float64 }

func (a memAvg) MarshalJSON() ([]byte, error) {
	if math.IsNaN(a.vm) {
		return []byte("null"), nil
	}
	return json.Marshal(struct {
		RssAnon mebibytes `json:"rssanon"`
		VmRSS   mebibytes `json:"vmrss"`
	}{mebibytes(a.anon), mebibytes(a.vm)})
}

// rssTrend says whether serve's memory grew over a soak: averages over the first, second and
// last minute, slopes, and a verdict that compares the last minute with the second (the first
// is warm-up).
type rssTrend struct {
	First       memAvg    `json:"rss_first_min_avg_mib"`
	Second      memAvg    `json:"rss_second_min_avg_mib"`
	Last        memAvg    `json:"rss_last_min_avg_mib"`
	Slopes      rssSlopes `json:"rss_slope_mib_per_min"`
	Verdict     string    `json:"verdict"`         // flat, growing, or n/a (…) for a soak too short to say
	VerdictVM   string    `json:"verdict_vmrss"`   // flat, growing, shrinking or n/a
	VerdictAnon string    `json:"verdict_rssanon"` // likewise
}

// rssSlopes are least-squares slopes of VmRSS and RssAnon, in MiB per minute: of the samples
// after the first minute, and of all of them.
type rssSlopes struct {
	VM      slope `json:"vmrss"`
	Anon    slope `json:"rssanon"`
	VMAll   slope `json:"vmrss_all"`
	AnonAll slope `json:"rssanon_all"`
}

// trendOf is the rssTrend of samples ss over a soak of duration d.
func trendOf(ss []memSample, d time.Duration) rssTrend {
	avg := func(from, to time.Duration) memAvg {
		var vm, anon float64
		n := 0
		for _, s := range ss {
			if s.At >= from && s.At < to {
				vm += float64(s.VmRSS) / mib
				anon += float64(s.RssAnon) / mib
				n++
			}
		}
		if n == 0 {
			return memAvg{math.NaN(), math.NaN()}
		}
		return memAvg{vm / float64(n), anon / float64(n)}
	}
	t := rssTrend{
		First:  avg(0, time.Minute),
		Second: avg(time.Minute, 2*time.Minute),
		Last:   avg(d-time.Minute, d+time.Second),
	}
	slopeOf := func(after time.Duration, f func(memSample) int64) slope {
		var xs, ys []float64
		for _, s := range ss {
			if s.At >= after {
				xs = append(xs, s.At.Minutes())
				ys = append(ys, float64(f(s))/mib)
			}
		}
		return slope(linearSlope(xs, ys))
	}
	vm := func(s memSample) int64 { return s.VmRSS }
	anon := func(s memSample) int64 { return s.RssAnon }
	t.Slopes.VM, t.Slopes.Anon = slopeOf(time.Minute, vm), slopeOf(time.Minute, anon)
	t.Slopes.VMAll, t.Slopes.AnonAll = slopeOf(0, vm), slopeOf(0, anon)
	if d < 3*time.Minute || math.IsNaN(t.Second.vm) || math.IsNaN(t.Last.vm) {
		t.Verdict, t.VerdictVM, t.VerdictAnon = "n/a (needs -duration 3m or more)", "n/a", "n/a"
		return t
	}
	flat := func(second, last float64) string {
		if math.Abs(last-second) <= math.Max(0.10*second, 5) {
			return "flat"
		}
		if last > second {
			return "growing"
		}
		return "shrinking"
	}
	t.VerdictVM, t.VerdictAnon = flat(t.Second.vm, t.Last.vm), flat(t.Second.anon, t.Last.anon)
	switch {
	case t.VerdictVM == "growing" || t.VerdictAnon == "growing":
		t.Verdict = "growing"
	default:
		t.Verdict = "flat"
	}
	return t
}
