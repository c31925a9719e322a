package main

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestPercentiles(t *testing.T) {
	if got := percentiles(nil); got != (pcts{}) {
		t.Errorf("no durations: %+v", got)
	}
	if got, want := percentiles([]time.Duration{7}), (pcts{7, 7, 7, 7}); got != want {
		t.Errorf("one duration: %+v, want %+v", got, want)
	}
	// 1..100 ms in a random order: nearest rank.
	ds := make([]time.Duration, 100)
	for i := range ds {
		ds[i] = time.Duration(i+1) * time.Millisecond
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })
	before := append([]time.Duration(nil), ds...)
	want := pcts{p50: 50 * time.Millisecond, p90: 90 * time.Millisecond, p99: 99 * time.Millisecond, max: 100 * time.Millisecond}
	if got := percentiles(ds); got != want {
		t.Errorf("1..100 ms: %+v, want %+v", got, want)
	}
	for i := range ds {
		if ds[i] != before[i] {
			t.Fatal("percentiles reordered its argument")
		}
	}
	// Ten values: p90 is the 9th, p99 the 10th.
	ten := []time.Duration{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}
	if got, want := percentiles(ten), (pcts{5, 9, 10, 10}); got != want {
		t.Errorf("1..10: %+v, want %+v", got, want)
	}
}

func TestLinearSlope(t *testing.T) {
	if got := linearSlope([]float64{0, 1, 2, 3}, []float64{1, 3, 5, 7}); math.Abs(got-2) > 1e-12 {
		t.Errorf("y = 2x + 1: slope %v", got)
	}
	if got := linearSlope([]float64{0, 1, 2}, []float64{4, 4, 4}); got != 0 {
		t.Errorf("flat: slope %v", got)
	}
	for name, xs := range map[string][]float64{"no points": nil, "one point": {1}, "one x": {2, 2, 2}} {
		if got := linearSlope(xs, make([]float64, len(xs))); !math.IsNaN(got) {
			t.Errorf("%s: slope %v, want NaN", name, got)
		}
	}
}

// samples is a soak's memory every 10 s for d: VmRSS vm(t) and RssAnon anon(t) MiB at t minutes.
func samples(d time.Duration, vm, anon func(min float64) float64) []memSample {
	var ss []memSample
	for at := time.Duration(0); at <= d; at += 10 * time.Second {
		ss = append(ss, memSample{At: at, VmRSS: mb(vm(at.Minutes())), RssAnon: mb(anon(at.Minutes()))})
	}
	return ss
}

func TestTrendOf(t *testing.T) {
	constant := func(v float64) func(float64) float64 { return func(float64) float64 { return v } }
	// A step after the second minute: the first minute (warm-up) does not count.
	step := func(before, after float64) func(float64) float64 {
		return func(m float64) float64 {
			if m < 2 {
				return before
			}
			return after
		}
	}
	for _, c := range []struct {
		name                     string
		d                        time.Duration
		vm, anon                 func(float64) float64
		verdict, verdVM, verdAnn string
	}{
		{"too short", 2*time.Minute + 59*time.Second, constant(100), constant(50), "n/a (needs -duration 3m or more)", "n/a", "n/a"},
		{"flat", 4 * time.Minute, constant(100), constant(50), "flat", "flat", "flat"},
		{"warm-up ignored", 4 * time.Minute, func(m float64) float64 { return map[bool]float64{true: 10, false: 100}[m < 1] }, constant(50), "flat", "flat", "flat"},
		{"within 10%", 4 * time.Minute, step(100, 109), constant(50), "flat", "flat", "flat"},
		{"vm grows", 4 * time.Minute, step(100, 111), constant(50), "growing", "growing", "flat"},
		{"anon grows", 4 * time.Minute, constant(100), step(50, 60), "growing", "flat", "growing"},
		{"within 5 MiB", 4 * time.Minute, step(20, 24.9), constant(10), "flat", "flat", "flat"},
		{"over 5 MiB", 4 * time.Minute, step(20, 25.2), constant(10), "growing", "growing", "flat"},
		{"shrinking is not growing", 4 * time.Minute, step(100, 50), constant(50), "flat", "shrinking", "flat"},
	} {
		tr := trendOf(samples(c.d, c.vm, c.anon), c.d)
		if tr.Verdict != c.verdict || tr.VerdictVM != c.verdVM || tr.VerdictAnon != c.verdAnn {
			t.Errorf("%s: verdict %q (VmRSS %q, RssAnon %q), want %q (%q, %q)", c.name,
				tr.Verdict, tr.VerdictVM, tr.VerdictAnon, c.verdict, c.verdVM, c.verdAnn)
		}
	}

	// Averages by minute and slopes of a steady 2 MiB/min rise over 4 minutes. The last minute
	// runs to the end of the soak and a second past it: 3:00 to 4:00 inclusive.
	tr := trendOf(samples(4*time.Minute, func(m float64) float64 { return 100 + 2*m }, constant(30)), 4*time.Minute)
	near := func(got, want float64) bool { return math.Abs(got-want) < 0.01 }
	if !near(tr.First.vm, 100.833) || !near(tr.Second.vm, 102.833) || !near(tr.Last.vm, 107) || !near(tr.First.anon, 30) {
		t.Errorf("averages: first %+v, second %+v, last %+v", tr.First, tr.Second, tr.Last)
	}
	if !near(float64(tr.Slopes.VM), 2) || !near(float64(tr.Slopes.VMAll), 2) || !near(float64(tr.Slopes.Anon), 0) {
		t.Errorf("slopes %+v, want VmRSS 2 MiB/min, RssAnon 0", tr.Slopes)
	}
	// No samples: every figure NaN.
	tr = trendOf(nil, 5*time.Minute)
	if !math.IsNaN(tr.First.vm) || !math.IsNaN(tr.Last.anon) || !math.IsNaN(float64(tr.Slopes.VMAll)) || tr.VerdictVM != "n/a" {
		t.Errorf("no samples: %+v", tr)
	}
}
