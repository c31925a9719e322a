package journal

import (
	"math"
	"slices"
	"testing"
	"time"
)

// TestFinishedNanos: the finish index's key of a time, clamped where UnixNano is undefined.
func TestFinishedNanos(t *testing.T) {
	cases := []struct {
		name string
		at   time.Time
		want uint64
	}{
		{"epoch", time.Unix(0, 0), 0},
		{"before 1970", time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC), 0},
		{"year 1", time.Time{}.Add(time.Hour), 0},
		{"a run's finish", time.Date(2026, 11, 21, 10, 0, 0, 5, time.UTC), uint64(time.Date(2026, 11, 21, 10, 0, 0, 5, time.UTC).UnixNano())},
		{"the last nanosecond that fits", time.Unix(0, math.MaxInt64), math.MaxInt64},
		{"one after it", time.Unix(0, math.MaxInt64).Add(time.Nanosecond), math.MaxUint64},
		{"year 2263", time.Date(2263, 1, 1, 0, 0, 0, 0, time.UTC), math.MaxUint64},
		{"year 3000", time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), math.MaxUint64},
		{"year 9999", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), math.MaxUint64},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := finishedNanos(tc.at); got != tc.want {
				t.Errorf("finishedNanos(%s) = %d, want %d", tc.at, got, tc.want)
			}
		})
	}
}

// TestListCompletedBeforeFarFuture: a cutoff after 2262 selects every finished run (it used to
// overflow to a time before all of them and select none), and Delete of what it selects leaves
// the unfinished runs.
func TestListCompletedBeforeFarFuture(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer closeStore(t, s)
	seedRuns(t, s)
	finished := []int{8, 6, 3, 2, 1}
	for _, cutoff := range []time.Time{
		time.Date(2262, 4, 11, 0, 0, 0, 0, time.UTC), // still fits
		time.Date(2263, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC),
	} {
		got, err := s.List(Filter{CompletedBefore: cutoff})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), finished) {
			t.Errorf("List(completed before %s) = %v, want %v", cutoff.Format(time.DateOnly), ids(got), finished)
		}
	}
	got, err := s.List(Filter{CompletedBefore: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	var del []string
	for _, r := range got {
		del = append(del, r.ID)
	}
	if err := s.Delete(del...); err != nil {
		t.Fatal(err)
	}
	left, err := s.List(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{7, 5, 4}; !slices.Equal(ids(left), want) {
		t.Errorf("left after deleting everything finished: %v, want %v", ids(left), want)
	}
}
