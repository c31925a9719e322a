package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// dateHelp describes what parseDate accepts, for flag usages and errors.
const dateHelp = "an RFC 3339 time (2026-11-21T10:00:00Z), a date (2026-11-21, midnight UTC), or an age such as 720h or 30d"

// parseDate reads a -completed-before value: an RFC 3339 time, a YYYY-MM-DD date (midnight
// UTC), or a Go duration (with `d` for days too) meaning that long before now.
func parseDate(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if d, ok := parseAge(s); ok {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is not a time: use %s", s, dateHelp)
}

// parseAge reads a non-negative Go duration, or a whole number of days ("30d"), which
// time.ParseDuration does not know.
func parseAge(s string) (time.Duration, bool) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 1e5 {
			return 0, false
		}
		return time.Duration(n) * 24 * time.Hour, true
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}
