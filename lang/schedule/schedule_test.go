package schedule

import (
	"strings"
	"testing"
	"time"
)

func mustParse(t testing.TB, expr, tz string) *Schedule {
	t.Helper()
	s, err := Parse(expr, tz)
	if err != nil {
		t.Fatalf("Parse(%q, %q): %v", expr, tz, err)
	}
	return s
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// walk returns the fire instants in (from, to], by calling Next repeatedly.
func walk(s *Schedule, from, to time.Time) []string {
	var got []string
	for t := s.Next(from); !t.IsZero() && !t.After(to); t = s.Next(t) {
		if t.Location() != time.UTC {
			panic("Next returned a non-UTC time")
		}
		got = append(got, t.Format(time.RFC3339))
		if len(got) > 10000 {
			break
		}
	}
	return got
}

type walkCase struct {
	expr, tz string
	from, to string // RFC 3339 instants; the walk covers (from, to]
	want     []string
}

func runWalks(t *testing.T, cases []walkCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.tz+" "+c.expr+" "+c.from, func(t *testing.T) {
			got := walk(mustParse(t, c.expr, c.tz), utc(c.from), utc(c.to))
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("fires in (%s, %s]:\n got %v\nwant %v", c.from, c.to, got, c.want)
			}
		})
	}
}

// Europe/Berlin 2026: clocks go from 02:00 CET to 03:00 CEST at 2026-03-29T01:00Z and
// from 03:00 CEST back to 02:00 CET at 2026-10-25T01:00Z.
// America/New_York 2026: from 02:00 EST to 03:00 EDT at 2026-03-08T07:00Z and from
// 02:00 EDT back to 01:00 EST at 2026-11-01T06:00Z.

func TestNextSpringForward(t *testing.T) {
	runWalks(t, []walkCase{
		// A fixed time in the skipped hour fires once, at 03:00 local (go-cron: 03:30).
		{"30 2 * * *", "Europe/Berlin", "2026-03-27T12:00:00Z", "2026-03-30T12:00:00Z", []string{
			"2026-03-28T01:30:00Z", // 02:30 CET
			"2026-03-29T01:00:00Z", // 03:00 CEST, first instant after the gap
			"2026-03-30T00:30:00Z", // 02:30 CEST
		}},
		{"0 2 * * *", "Europe/Berlin", "2026-03-27T12:00:00Z", "2026-03-30T12:00:00Z", []string{
			"2026-03-28T01:00:00Z",
			"2026-03-29T01:00:00Z", // 03:00 CEST
			"2026-03-30T00:00:00Z",
		}},
		// The made-up 02:30 and the real 03:30 both fire (go-cron: only 03:30).
		{"30 2,3 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", "2026-03-29T12:00:00Z", []string{
			"2026-03-29T01:00:00Z", // 02:30 made up at 03:00 CEST
			"2026-03-29T01:30:00Z", // 03:30 CEST
		}},
		// Several skipped times of a fixed hour fire once together.
		{"*/15 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", "2026-03-29T12:00:00Z", []string{
			"2026-03-29T01:00:00Z",
		}},
		// A skipped time and a real one at the same instant fire once.
		{"0 2,3 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", "2026-03-29T12:00:00Z", []string{
			"2026-03-29T01:00:00Z",
		}},
		// Hour "*": absolute time, nothing made up.
		{"*/15 * * * *", "Europe/Berlin", "2026-03-29T00:00:00Z", "2026-03-29T01:30:00Z", []string{
			"2026-03-29T00:15:00Z", "2026-03-29T00:30:00Z", "2026-03-29T00:45:00Z", // 01:xx CET
			"2026-03-29T01:00:00Z", "2026-03-29T01:15:00Z", "2026-03-29T01:30:00Z", // 03:xx CEST
		}},
		{"30 * * * *", "Europe/Berlin", "2026-03-28T23:00:00Z", "2026-03-29T02:00:00Z", []string{
			"2026-03-28T23:30:00Z", // 00:30 CET
			"2026-03-29T00:30:00Z", // 01:30 CET
			"2026-03-29T01:30:00Z", // 03:30 CEST
		}},
		{"0 * * * *", "Europe/Berlin", "2026-03-28T23:00:00Z", "2026-03-29T02:00:00Z", []string{
			"2026-03-29T00:00:00Z", // 01:00 CET
			"2026-03-29T01:00:00Z", // 03:00 CEST
			"2026-03-29T02:00:00Z", // 04:00 CEST
		}},
		{"30 2 * * *", "America/New_York", "2026-03-06T12:00:00Z", "2026-03-09T12:00:00Z", []string{
			"2026-03-07T07:30:00Z", // 02:30 EST
			"2026-03-08T07:00:00Z", // 03:00 EDT, first instant after the gap
			"2026-03-09T06:30:00Z", // 02:30 EDT
		}},
		{"0 * * * *", "America/New_York", "2026-03-08T05:30:00Z", "2026-03-08T08:00:00Z", []string{
			"2026-03-08T06:00:00Z", // 01:00 EST
			"2026-03-08T07:00:00Z", // 03:00 EDT
			"2026-03-08T08:00:00Z", // 04:00 EDT
		}},
		{"*/20 * * * *", "America/New_York", "2026-03-08T06:30:00Z", "2026-03-08T07:30:00Z", []string{
			"2026-03-08T06:40:00Z", // 01:40 EST
			"2026-03-08T07:00:00Z", // 03:00 EDT
			"2026-03-08T07:20:00Z", // 03:20 EDT
		}},
	})
}

func TestNextFallBack(t *testing.T) {
	runWalks(t, []walkCase{
		// A fixed time in the repeated hour fires once, at its first instant (go-cron: twice).
		{"30 2 * * *", "Europe/Berlin", "2026-10-23T12:00:00Z", "2026-10-26T12:00:00Z", []string{
			"2026-10-24T00:30:00Z", // 02:30 CEST
			"2026-10-25T00:30:00Z", // 02:30 CEST; not again at 02:30 CET (01:30Z)
			"2026-10-26T01:30:00Z", // 02:30 CET
		}},
		{"*/15 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", "2026-10-25T12:00:00Z", []string{
			"2026-10-25T00:00:00Z", "2026-10-25T00:15:00Z", "2026-10-25T00:30:00Z", "2026-10-25T00:45:00Z",
		}},
		{"30 1 * * *", "America/New_York", "2026-10-30T12:00:00Z", "2026-11-02T12:00:00Z", []string{
			"2026-10-31T05:30:00Z", // 01:30 EDT
			"2026-11-01T05:30:00Z", // 01:30 EDT; not again at 01:30 EST (06:30Z)
			"2026-11-02T06:30:00Z", // 01:30 EST
		}},
		// Hour "*": every hour / 15 minutes in absolute time, both copies of the hour.
		{"0 * * * *", "Europe/Berlin", "2026-10-24T22:30:00Z", "2026-10-25T03:00:00Z", []string{
			"2026-10-24T23:00:00Z", // 01:00 CEST
			"2026-10-25T00:00:00Z", // 02:00 CEST
			"2026-10-25T01:00:00Z", // 02:00 CET
			"2026-10-25T02:00:00Z", // 03:00 CET
			"2026-10-25T03:00:00Z", // 04:00 CET
		}},
		{"*/15 * * * *", "Europe/Berlin", "2026-10-24T23:50:00Z", "2026-10-25T02:10:00Z", []string{
			"2026-10-25T00:00:00Z", "2026-10-25T00:15:00Z", "2026-10-25T00:30:00Z", "2026-10-25T00:45:00Z",
			"2026-10-25T01:00:00Z", "2026-10-25T01:15:00Z", "2026-10-25T01:30:00Z", "2026-10-25T01:45:00Z",
			"2026-10-25T02:00:00Z",
		}},
		{"@hourly", "America/New_York", "2026-11-01T04:30:00Z", "2026-11-01T08:00:00Z", []string{
			"2026-11-01T05:00:00Z", // 01:00 EDT
			"2026-11-01T06:00:00Z", // 01:00 EST
			"2026-11-01T07:00:00Z", // 02:00 EST
			"2026-11-01T08:00:00Z", // 03:00 EST
		}},
		{"*/30 * * * *", "America/New_York", "2026-11-01T04:50:00Z", "2026-11-01T07:00:00Z", []string{
			"2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", // 01:00, 01:30 EDT
			"2026-11-01T06:00:00Z", "2026-11-01T06:30:00Z", // 01:00, 01:30 EST
			"2026-11-01T07:00:00Z", // 02:00 EST
		}},
		// Daily at midnight is unaffected.
		{"@daily", "Europe/Berlin", "2026-10-24T12:00:00Z", "2026-10-26T12:00:00Z", []string{
			"2026-10-24T22:00:00Z", // 00:00 CEST
			"2026-10-25T23:00:00Z", // 00:00 CET
		}},
	})
}

// TestNextInsideRepeatedHour starts Next at instants inside a repeated hour, where an
// earlier wall-clock time fires later.
func TestNextInsideRepeatedHour(t *testing.T) {
	tests := []struct {
		expr, tz, from, want string
	}{
		{"*/15 * * * *", "Europe/Berlin", "2026-10-25T00:50:00Z", "2026-10-25T01:00:00Z"}, // 02:50 CEST -> 02:00 CET
		{"*/15 * * * *", "Europe/Berlin", "2026-10-25T00:40:00Z", "2026-10-25T00:45:00Z"}, // 02:40 CEST -> 02:45 CEST
		{"10 * * * *", "Europe/Berlin", "2026-10-25T00:30:00Z", "2026-10-25T01:10:00Z"},   // 02:30 CEST -> 02:10 CET
		{"10 2 * * *", "Europe/Berlin", "2026-10-25T00:30:00Z", "2026-10-26T01:10:00Z"},   // fixed: not again today
		{"50 2 * * *", "Europe/Berlin", "2026-10-25T01:30:00Z", "2026-10-26T01:50:00Z"},   // from 02:30 CET: 02:50 CEST was 00:50Z
		{"50 2 * * *", "Europe/Berlin", "2026-10-25T00:30:00Z", "2026-10-25T00:50:00Z"},
		{"5 1 * * *", "America/New_York", "2026-11-01T06:01:00Z", "2026-11-02T06:05:00Z"},
		{"5 * * * *", "America/New_York", "2026-11-01T05:59:00Z", "2026-11-01T06:05:00Z"},
	}
	for _, tt := range tests {
		got := mustParse(t, tt.expr, tt.tz).Next(utc(tt.from))
		if got.Format(time.RFC3339) != tt.want {
			t.Errorf("%s (%s): Next(%s) = %s, want %s", tt.expr, tt.tz, tt.from, got.Format(time.RFC3339), tt.want)
		}
	}
}

// TestNextOddTransitions covers a 30-minute shift (Australia/Lord_Howe) and a skipped
// day (Pacific/Apia went from UTC-10 to UTC+14, skipping 2011-12-30).
func TestNextOddTransitions(t *testing.T) {
	runWalks(t, []walkCase{
		// Lord Howe: 02:00 (+10:30) becomes 02:30 (+11) at 2026-10-03T15:30Z ...
		{"15 2 * * *", "Australia/Lord_Howe", "2026-10-02T12:00:00Z", "2026-10-04T18:00:00Z", []string{
			"2026-10-02T15:45:00Z", // 02:15 +10:30
			"2026-10-03T15:30:00Z", // 02:30 +11, first instant after the gap
			"2026-10-04T15:15:00Z", // 02:15 +11
		}},
		{"*/20 * * * *", "Australia/Lord_Howe", "2026-10-03T15:00:00Z", "2026-10-03T16:00:00Z", []string{
			"2026-10-03T15:10:00Z", // 01:40 +10:30; 02:00 and 02:20 do not exist
			"2026-10-03T15:40:00Z", // 02:40 +11
			"2026-10-03T16:00:00Z", // 03:00 +11
		}},
		// ... and 02:00 (+11) becomes 01:30 (+10:30) at 2026-04-04T15:00Z.
		{"45 1 * * *", "Australia/Lord_Howe", "2026-04-03T12:00:00Z", "2026-04-05T18:00:00Z", []string{
			"2026-04-03T14:45:00Z", // 01:45 +11
			"2026-04-04T14:45:00Z", // 01:45 +11, not again at 01:45 +10:30
			"2026-04-05T15:15:00Z", // 01:45 +10:30
		}},
		{"0 9 * * *", "Pacific/Apia", "2011-12-28T00:00:00Z", "2012-01-01T00:00:00Z", []string{
			"2011-12-28T19:00:00Z", // 12-28 09:00 -10
			"2011-12-29T19:00:00Z", // 12-29 09:00 -10
			"2011-12-30T10:00:00Z", // 12-30 09:00 skipped: 12-31 00:00 +14
			"2011-12-30T19:00:00Z", // 12-31 09:00 +14
			"2011-12-31T19:00:00Z", // 2012-01-01 09:00 +14
		}},
	})
}

func TestNextPlain(t *testing.T) {
	runWalks(t, []walkCase{
		{"* * * * *", "", "2026-01-01T00:00:00Z", "2026-01-01T00:03:00Z", []string{
			"2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z", "2026-01-01T00:03:00Z",
		}},
		{"*/5 * * * *", "UTC", "2026-01-01T00:02:30Z", "2026-01-01T00:15:00Z", []string{
			"2026-01-01T00:05:00Z", "2026-01-01T00:10:00Z", "2026-01-01T00:15:00Z",
		}},
		// Fri 2026-01-02 10:00 CET, then weekdays at 09:00 CET.
		{"0 9 * * 1-5", "Europe/Berlin", "2026-01-02T09:00:00Z", "2026-01-09T23:00:00Z", []string{
			"2026-01-05T08:00:00Z", "2026-01-06T08:00:00Z", "2026-01-07T08:00:00Z",
			"2026-01-08T08:00:00Z", "2026-01-09T08:00:00Z",
		}},
		{"0 9 * * mon-fri", "America/New_York", "2026-07-03T14:00:00Z", "2026-07-07T23:00:00Z", []string{
			"2026-07-06T13:00:00Z", "2026-07-07T13:00:00Z",
		}},
		// Day-of-month and day-of-week both restricted: either matches (the 13th, and Fridays).
		{"0 0 13 * 5", "UTC", "2026-01-01T00:00:00Z", "2026-02-14T00:00:00Z", []string{
			"2026-01-02T00:00:00Z", "2026-01-09T00:00:00Z", "2026-01-13T00:00:00Z",
			"2026-01-16T00:00:00Z", "2026-01-23T00:00:00Z", "2026-01-30T00:00:00Z",
			"2026-02-06T00:00:00Z", "2026-02-13T00:00:00Z",
		}},
		// A field starting with "*" makes it an AND (Vixie cron): odd days that are Mondays.
		{"0 0 */2 * 1", "UTC", "2026-01-01T00:00:00Z", "2026-03-31T00:00:00Z", []string{
			"2026-01-05T00:00:00Z", "2026-01-19T00:00:00Z", "2026-02-09T00:00:00Z",
			"2026-02-23T00:00:00Z", "2026-03-09T00:00:00Z", "2026-03-23T00:00:00Z",
		}},
		// Day-of-week only; 7 and SUN are Sunday; upper-case names work (go-cron alone refuses "THU").
		{"0 0 * * 7", "UTC", "2026-01-01T00:00:00Z", "2026-01-12T00:00:00Z", []string{
			"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z",
		}},
		{"0 12 * * THU", "UTC", "2026-01-01T00:00:00Z", "2026-01-09T00:00:00Z", []string{
			"2026-01-01T12:00:00Z", "2026-01-08T12:00:00Z",
		}},
		{"0 0 31 * *", "UTC", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z", []string{
			"2026-01-31T00:00:00Z", "2026-03-31T00:00:00Z", "2026-05-31T00:00:00Z", "2026-07-31T00:00:00Z",
			"2026-08-31T00:00:00Z", "2026-10-31T00:00:00Z", "2026-12-31T00:00:00Z",
		}},
		{"0 12 29 2 *", "UTC", "2026-01-01T00:00:00Z", "2033-01-01T00:00:00Z", []string{
			"2028-02-29T12:00:00Z", "2032-02-29T12:00:00Z",
		}},
		{"0 22-2 * * *", "UTC", "2026-01-01T12:00:00Z", "2026-01-02T12:00:00Z", []string{
			"2026-01-01T22:00:00Z", "2026-01-01T23:00:00Z", "2026-01-02T00:00:00Z",
			"2026-01-02T01:00:00Z", "2026-01-02T02:00:00Z",
		}},
		{"@monthly", "Europe/Berlin", "2026-01-15T00:00:00Z", "2026-04-01T00:00:00Z", []string{
			"2026-01-31T23:00:00Z", "2026-02-28T23:00:00Z", "2026-03-31T22:00:00Z",
		}},
	})
}

func TestNextDetails(t *testing.T) {
	s := mustParse(t, "0 12 29 2 *", "")
	// 2100 is not a leap year: the next February 29 after 2096 is in 2104, beyond 5 years.
	if got := s.Next(utc("2096-03-01T00:00:00Z")); !got.IsZero() {
		t.Errorf("Next after 2096-03-01 = %v, want zero", got)
	}
	if got := s.Next(utc("2095-03-01T00:00:00Z")); !got.Equal(utc("2096-02-29T12:00:00Z")) {
		t.Errorf("Next after 2095-03-01 = %v", got)
	}
	// Input in any location, sub-second precision; strictly after.
	berlin, _ := time.LoadLocation("Europe/Berlin")
	s = mustParse(t, "0 9 * * *", "America/New_York")
	from := time.Date(2026, 6, 1, 15, 0, 0, 0, berlin) // 09:00 EDT exactly
	if got := s.Next(from); got != utc("2026-06-02T13:00:00Z") {
		t.Errorf("Next(%v) = %v", from, got)
	}
	if got := s.Next(from.Add(-time.Nanosecond)); got != utc("2026-06-01T13:00:00Z") {
		t.Errorf("Next(%v) = %v", from.Add(-time.Nanosecond), got)
	}
}

// TestNextLongWalk walks a daily schedule through 2026-2050, past the last transition
// listed in the zone files (where Go computes transitions from the zone's rule, and
// its ZoneBounds misbehaves on December 31 of leap years).
func TestNextLongWalk(t *testing.T) {
	for _, tz := range []string{"America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "UTC"} {
		loc, _ := time.LoadLocation(tz)
		s := mustParse(t, "0 9 * * *", tz)
		prev := time.Date(2025, 12, 31, 9, 0, 0, 0, loc)
		for x := prev; x.Year() < 2050; {
			x = s.Next(x)
			l := x.In(loc)
			if l.Hour() != 9 || l.Minute() != 0 || l.YearDay() != prev.AddDate(0, 0, 1).YearDay() {
				t.Fatalf("%s: after %v fired at %v", tz, prev, l)
			}
			prev = l
		}
	}
	// In the reference test's terms: December 31, 2040, America/New_York.
	s := mustParse(t, "0 9 31 12 *", "America/New_York")
	if got := s.Next(utc("2040-12-30T00:00:00Z")); got != utc("2040-12-31T14:00:00Z") {
		t.Errorf("Next = %v, want 2040-12-31T14:00:00Z", got)
	}
}

func TestString(t *testing.T) {
	for _, tt := range []struct{ expr, tz, want string }{
		{"0 9 * * 1-5", "Europe/Berlin", "0 9 * * 1-5 (Europe/Berlin)"},
		{" 0  9 * *\t1-5 ", "", "0 9 * * 1-5 (UTC)"},
		{"@daily", "America/New_York", "@daily (America/New_York)"},
	} {
		if got := mustParse(t, tt.expr, tt.tz).String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestParseAccepts(t *testing.T) {
	for _, expr := range []string{
		"* * * * *", "? ? ? ? ?", "0 0 1 1 *", "59 23 31 12 6", "0 0 * * 0,7", "0-59/15 8-18/2 1,15 jan-jun,DEC sun-sat",
		"5/15 * * * *", "0 0 * nov-feb *", "0 0 * * fri-mon", "0 0 1 * *",
		"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly", "@DAILY",
		"0 0 31 2 1", // day-of-week restricted too: Mondays in February
	} {
		if _, err := Parse(expr, "Europe/Berlin"); err != nil {
			t.Errorf("Parse(%q): %v", expr, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ expr, tz, want string }{
		{"", "", `the cron expression is empty`},
		{"   ", "", `the cron expression is empty`},
		{"0 9 * *", "", `"0 9 * *" has 4 fields, not 5`},
		{"0 0 9 * * 1", "", `"0 0 9 * * 1" has 6 fields, not 5`},
		{"0 9 * * 1-5", "Mars/Olympus", `"Mars/Olympus" is not an IANA time zone name such as "UTC" or "Europe/Berlin"`},
		{"TZ=Europe/Berlin 0 9 * * *", "", `"TZ=Europe/Berlin 0 9 * * *": the time zone goes in the timezone attribute, not in a TZ= prefix`},
		{"CRON_TZ=UTC 0 9 * * *", "UTC", `"CRON_TZ=UTC 0 9 * * *": the time zone goes in the timezone attribute, not in a CRON_TZ= prefix`},
		{"61 * * * *", "", `"61 * * * *": minute 61 is out of range 0-59`},
		{"0 24 * * *", "", `"0 24 * * *": hour 24 is out of range 0-23`},
		{"0 0 0 * *", "", `"0 0 0 * *": day-of-month 0 is out of range 1-31`},
		{"0 0 32 * *", "", `"0 0 32 * *": day-of-month 32 is out of range 1-31`},
		{"0 0 * 13 *", "", `"0 0 * 13 *": month 13 is out of range 1-12`},
		{"0 0 * * 8", "", `"0 0 * * 8": day-of-week 8 is out of range 0-7`},
		{"0 8-25 * * *", "", `"0 8-25 * * *": hour 25 is out of range 0-23`},
		{"x * * * *", "", `"x * * * *": minute "x" is not valid: "x" is not a number 0-59`},
		{"0 0 * foo *", "", `"0 0 * foo *": month "foo" is not valid: "foo" is not a number 1-12 or a name jan-dec`},
		{"0 0 * * fri#3", "", `"0 0 * * fri#3": day-of-week "fri#3" is not valid: "fri#3" is not a number 0-7 or a name sun-sat`},
		{"0 0 L * *", "", `"0 0 L * *": day-of-month "L" is not valid: "L" is not a number 1-31`},
		{"H * * * *", "", `"H * * * *": minute "H" is not valid: "H" is not a number 0-59`},
		{"+5 * * * *", "", `"+5 * * * *": minute "+5" is not valid: "+5" is not a number 0-59`},
		{"-5 * * * *", "", `"-5 * * * *": minute "-5" is not a value, a range a-b or a step such as */5`},
		{"1-2-3 * * * *", "", `"1-2-3 * * * *": minute "1-2-3" is not a value, a range a-b or a step such as */5`},
		{"*/5/2 * * * *", "", `"*/5/2 * * * *": minute "*/5/2" is not a value, a range a-b or a step such as */5`},
		{"*-5 * * * *", "", `"*-5 * * * *": minute "*-5" uses "*" inside a range; write "*" alone or a range a-b`},
		{"1,,2 * * * *", "", `"1,,2 * * * *": minute "1,,2" has an empty list item`},
		{", * * * *", "", `", * * * *": minute "," has an empty list item`},
		{"*/0 * * * *", "", `"*/0 * * * *": minute "*/0" has step 0, which must be at least 1`},
		{"*/x * * * *", "", `"*/x * * * *": minute "*/x" has step "x", which is not a whole number`},
		{"*/60 * * * *", "", `"*/60 * * * *": minute "*/60" has step 60, which must be smaller than the 60 values it steps through`},
		{"50/30 * * * *", "", `"50/30 * * * *": minute "50/30" has step 30, which must be smaller than the 10 values it steps through`},
		{"0 0 30 2 *", "", `"0 0 30 2 *" never fires: none of its months has a day 30`},
		{"0 0 31 4,6,9,11 *", "", `"0 0 31 4,6,9,11 *" never fires: none of its months has a day 31`},
		{"0 0 30,31 feb *", "", `"0 0 30,31 feb *" never fires: none of its months has a day 30 or 31`},
		{"@every 5m", "", `"@every 5m" is not supported: a schedule fires at clock times, e.g. "*/5 * * * *", not at intervals`},
		{"@dayly", "", `"@dayly" is not a cron descriptor; the descriptors are @yearly, @monthly, @weekly, @daily and @hourly`},
		{strings.Repeat("1,", 600) + "1 * * * *", "", `the cron expression is longer than 1024 characters`},
	}
	for _, tt := range tests {
		s, err := Parse(tt.expr, tt.tz)
		if err == nil {
			t.Errorf("Parse(%q, %q) = %v, want error %q", tt.expr, tt.tz, s, tt.want)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("Parse(%q, %q) error\n got %s\nwant %s", tt.expr, tt.tz, err, tt.want)
		}
		for _, bad := range []string{"failed", "parse", "strconv", "Atoi", "invalid syntax"} {
			if strings.Contains(err.Error(), bad) {
				t.Errorf("Parse(%q) error %q has Go-internal wording %q", tt.expr, err, bad)
			}
		}
	}
}

func TestMissed(t *testing.T) {
	never := time.Time{}
	tests := []struct {
		name      string
		expr, tz  string
		last, now string // last "" means never fired
		window    time.Duration
		want      string // "" means none
	}{
		{"due while down", "0 9 * * *", "UTC", "2026-05-01T09:00:00Z", "2026-05-02T09:30:00Z", time.Hour, "2026-05-02T09:00:00Z"},
		{"too old", "0 9 * * *", "UTC", "2026-05-01T09:00:00Z", "2026-05-02T10:30:00Z", time.Hour, ""},
		{"exactly window old", "0 9 * * *", "UTC", "2026-05-01T09:00:00Z", "2026-05-02T10:00:00Z", time.Hour, "2026-05-02T09:00:00Z"},
		{"already fired", "0 9 * * *", "UTC", "2026-05-02T09:00:00Z", "2026-05-02T09:30:00Z", time.Hour, ""},
		{"due at now", "0 9 * * *", "UTC", "2026-05-01T09:00:00Z", "2026-05-02T09:00:00Z", time.Hour, "2026-05-02T09:00:00Z"},
		{"latest of several", "*/10 * * * *", "UTC", "2026-05-02T08:00:00Z", "2026-05-02T09:35:00Z", 24 * time.Hour, "2026-05-02T09:30:00Z"},
		{"last after now", "*/10 * * * *", "UTC", "2026-05-02T10:00:00Z", "2026-05-02T09:35:00Z", time.Hour, ""},
		{"never fired, in window", "0 9 * * *", "Europe/Berlin", "", "2026-05-02T07:30:00Z", time.Hour, "2026-05-02T07:00:00Z"},
		{"never fired, window open at start", "0 9 * * *", "Europe/Berlin", "", "2026-05-02T08:00:00Z", time.Hour, ""},
		{"never fired, out of window", "0 9 * * *", "Europe/Berlin", "", "2026-05-02T09:30:00Z", time.Hour, ""},
		{"long window, sparse", "0 0 1 * *", "UTC", "2026-01-01T00:00:00Z", "2026-05-20T00:00:00Z", 90 * 24 * time.Hour, "2026-05-01T00:00:00Z"},
		{"long window, last inside", "0 0 1 * *", "UTC", "2026-05-01T00:00:00Z", "2026-05-20T00:00:00Z", 90 * 24 * time.Hour, ""},
		{"zero window", "0 9 * * *", "UTC", "2026-05-01T09:00:00Z", "2026-05-02T09:00:00Z", 0, "2026-05-02T09:00:00Z"},
		{"negative window", "0 9 * * *", "UTC", "2026-05-01T09:00:00Z", "2026-05-02T09:00:00Z", -time.Hour, ""},
		{"skipped hour made up", "30 2 * * *", "Europe/Berlin", "2026-03-28T01:30:00Z", "2026-03-29T01:10:00Z", time.Hour, "2026-03-29T01:00:00Z"},
		{"repeated hour fired once", "30 2 * * *", "Europe/Berlin", "2026-10-25T00:30:00Z", "2026-10-25T01:45:00Z", 3 * time.Hour, ""},
		{"repeated hour, hourly", "30 * * * *", "Europe/Berlin", "2026-10-25T00:30:00Z", "2026-10-25T01:45:00Z", 3 * time.Hour, "2026-10-25T01:30:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			last := never
			if tt.last != "" {
				last = utc(tt.last)
			}
			got, ok := mustParse(t, tt.expr, tt.tz).Missed(last, utc(tt.now), tt.window)
			gotS := ""
			if ok {
				gotS = got.Format(time.RFC3339)
			} else if !got.IsZero() {
				t.Errorf("Missed returned %v with false", got)
			}
			if gotS != tt.want {
				t.Errorf("Missed(%s, %s, %v) = %q, want %q", tt.last, tt.now, tt.window, gotS, tt.want)
			}
		})
	}
}

// TestNextMatchesReference checks Next against a minute-by-minute walk through
// absolute time around 2026's transitions that applies the package's rules directly.
func TestNextMatchesReference(t *testing.T) {
	exprs := []string{
		"* * * * *", "*/15 * * * *", "0 * * * *", "30 * * * *", "0 */2 * * *", "*/7 * * * *",
		"30 2 * * *", "30 1 * * *", "0 2 * * *", "0 3 * * *", "*/15 2 * * *", "45 1-3 * * *",
		"0,30 1,2 * * *", "* 2 * * *", "59 1 * * *", "0 0 * * *", "15 2 * * 0", "0 2 29 3 *",
	}
	windows := []struct{ tz, day string }{
		{"Europe/Berlin", "2026-03-28T12:00:00Z"},
		{"Europe/Berlin", "2026-10-24T12:00:00Z"},
		{"America/New_York", "2026-03-07T18:00:00Z"},
		{"America/New_York", "2026-10-31T18:00:00Z"},
		{"Australia/Lord_Howe", "2026-04-04T00:00:00Z"},
		{"Australia/Lord_Howe", "2026-10-03T00:00:00Z"},
		{"UTC", "2026-03-28T12:00:00Z"},
		{"America/New_York", "2040-12-30T12:00:00Z"}, // rule-based, leap year end
		{"Europe/Berlin", "2040-10-27T12:00:00Z"},    // rule-based fall back
	}
	for _, w := range windows {
		loc, err := time.LoadLocation(w.tz)
		if err != nil {
			t.Fatal(err)
		}
		from := utc(w.day)
		to := from.Add(36 * time.Hour)
		for _, expr := range exprs {
			s := mustParse(t, expr, w.tz)
			want := reference(t, expr, loc, from, to)
			got := walk(s, from, to)
			if i := firstDiff(got, want); i >= 0 {
				t.Errorf("%s in %s from %s: %d fires, want %d; first difference at %d:\n got %v\nwant %v",
					expr, w.tz, w.day, len(got), len(want), i, got[i:min(i+3, len(got))], want[i:min(i+3, len(want))])
			}
		}
	}
}

func firstDiff(a, b []string) int {
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	return -1
}

// reference returns the fire instants in (from, to] by walking every minute.
func reference(t *testing.T, expr string, loc *time.Location, from, to time.Time) []string {
	fields := strings.Fields(expr)
	var sets [5][]bool
	for i, f := range fields {
		set, err := checkField(f, fieldInfo[i])
		if err != nil {
			t.Fatal(err)
		}
		sets[i] = set
	}
	hourStar := isStar(fields[1])
	or := !isStar(fields[2]) && !isStar(fields[4])
	match := func(l time.Time) bool {
		d, wd := sets[2][l.Day()], sets[4][int(l.Weekday())]
		day := d && wd
		if or {
			day = d || wd
		}
		return sets[0][l.Minute()] && sets[1][l.Hour()] && sets[3][int(l.Month())] && day
	}
	wall := func(i time.Time) time.Time { return wallOf(i, loc) }
	var got []string
	for i := from.Truncate(time.Minute).Add(time.Minute); !i.After(to); i = i.Add(time.Minute) {
		w := wall(i)
		fire := match(w.In(time.UTC))
		if fire && !hourStar {
			// Fire only at the first instant with this wall clock.
			for d := time.Minute; d <= 3*time.Hour; d += time.Minute {
				if wall(i.Add(-d)).Equal(w) {
					fire = false
				}
			}
		}
		if !fire && !hourStar {
			// Clocks jumped forward at i: make up the skipped minutes.
			if before := wall(i.Add(-time.Minute)).Add(time.Minute); before.Before(w) {
				for x := before; x.Before(w); x = x.Add(time.Minute) {
					if match(x) {
						fire = true
					}
				}
			}
		}
		if fire {
			got = append(got, i.Format(time.RFC3339))
		}
	}
	return got
}

func BenchmarkNext(b *testing.B) {
	for _, bc := range []struct{ expr, tz string }{
		{"* * * * *", "UTC"},
		{"*/15 * * * *", "Europe/Berlin"},
		{"0 9 * * 1-5", "America/New_York"},
		{"0 0 29 2 *", "Europe/Berlin"},
	} {
		s := mustParse(b, bc.expr, bc.tz)
		b.Run(bc.expr+" "+bc.tz, func(b *testing.B) {
			t := utc("2026-01-01T00:00:00Z")
			for b.Loop() {
				t = s.Next(t)
				if t.IsZero() || t.Year() > 2100 {
					t = utc("2026-01-01T00:00:00Z")
				}
			}
		})
	}
}
