package main

import (
	"testing"
	"time"
)

// TestParseDate: what -completed-before accepts, including dates past 2262 (where a time no
// longer fits int64 nanoseconds; the store treats them as after every run).
func TestParseDate(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: "2026-11-21T10:00:00Z", want: now},
		{in: "2026-11-21T12:00:00+02:00", want: now},
		{in: "2026-11-21T10:00:00.5Z", want: now.Add(500 * time.Millisecond)},
		{in: "2026-11-21", want: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)},
		{in: "  2026-11-21 ", want: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)},
		{in: "2263-01-01", want: time.Date(2263, 1, 1, 0, 0, 0, 0, time.UTC)},
		{in: "3000-01-01T00:00:00Z", want: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{in: "9999-12-31", want: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)},
		{in: "720h", want: now.Add(-720 * time.Hour)},
		{in: "90m", want: now.Add(-90 * time.Minute)},
		{in: "30d", want: now.Add(-30 * 24 * time.Hour)},
		{in: "0d", want: now},
		{in: "0s", want: now},
		{in: "-1h", bad: true},
		{in: "-3d", bad: true},
		{in: "100001d", bad: true},
		{in: "3.5d", bad: true},
		{in: "yesterday", bad: true},
		{in: "2026-13-01", bad: true},
		{in: "10000-01-01", bad: true},
		{in: "", bad: true},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseDate(tc.in, now)
			if tc.bad {
				if err == nil {
					t.Fatalf("parseDate(%q) = %s, want an error", tc.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseDate(%q): %v", tc.in, err)
			}
			if !got.Equal(tc.want) {
				t.Errorf("parseDate(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}
