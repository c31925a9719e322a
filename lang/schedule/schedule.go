// Package schedule evaluates schedule triggers' cron expressions in their time zone.
//
// # Syntax
//
// An expression has the five standard cron fields, separated by spaces:
//
//	minute (0-59)  hour (0-23)  day-of-month (1-31)  month (1-12 or jan-dec)  day-of-week (0-7 or sun-sat; 0 and 7 are Sunday)
//
// Each field is a comma-separated list of items; an item is "*", a value, a range "a-b",
// or either of those followed by a step "/n" ("*/15", "8-18/2"; "5/15" means "5-59/15").
// Names are case-insensitive. "?" is accepted as a synonym of "*". A range whose start is
// past its end wraps around ("22-2" in the hour field is 22, 23, 0, 1, 2; "fri-mon").
// These are the rules of go-cron's standard parser (github.com/netresearch/go-cron),
// which does the parsing; Parse checks each field first so that errors name the field
// and the problem. Parse also accepts the descriptors that parser knows, each of which
// stands for a five-field expression: @yearly and @annually ("0 0 1 1 *"), @monthly
// ("0 0 1 * *"), @weekly ("0 0 * * 0"), @daily and @midnight ("0 0 * * *") and @hourly
// ("0 * * * *"). It refuses @every (a schedule fires at clock times, not at intervals
// counted from whenever the server started), the L, W, # and H extensions, a TZ= or
// CRON_TZ= prefix (the trigger's timezone attribute names the zone), and expressions
// that can never fire ("0 0 30 2 *"), which go-cron accepts.
//
// Day-of-month and day-of-week combine as in Vixie/ISC cron: when both fields are
// restricted (neither starts with "*" or "?"), a day matches if it matches either
// field, so "0 0 13 * 5" fires on every 13th and on every Friday; when either field
// starts with "*" both must match, so "0 0 */2 * 1" fires on odd-numbered days that are
// Mondays. (go-cron itself ANDs the two fields unless told otherwise; Parse sets the
// schedule's DowOrDom flag according to the rule above.)
//
// # Time zones and daylight saving time
//
// The fields are matched against the wall clock of the schedule's time zone. Where
// daylight saving time makes a wall-clock time not exist or exist twice, a schedule
// behaves as in ISC cron:
//
//   - Clocks go forward (e.g. 02:00 becomes 03:00): an occurrence that falls in the
//     skipped interval fires once, at the first instant after the gap (03:00 local).
//     "30 2 * * *" in Europe/Berlin fires at 03:00 CEST on 2026-03-29.
//   - Clocks go back (e.g. 03:00 becomes 02:00 again): an occurrence in the repeated
//     interval fires once, at its first (pre-transition) instant. "30 2 * * *" in
//     Europe/Berlin fires at 02:30 CEST on 2026-10-25 and not again at 02:30 CET.
//   - Schedules whose hour field starts with "*" ("0 * * * *", "*/15 * * * *",
//     "0 */2 * * *", @hourly) instead follow absolute time through transitions: they
//     fire in both copies of a repeated hour, and their occurrences in a skipped hour
//     do not exist (the next one fires as usual), so an hourly job stays hourly.
//
// ISC cron exempts a schedule from the two make-up rules when its minute or its hour
// field starts with "*"; here only the hour field counts, so "*/15 2 * * *" fires once
// at 03:00 when 02:00 is skipped rather than not at all, and only in the first copy of a
// repeated 02:00 hour.
//
// go-cron's own Next gets the two first rules wrong, and Next here does not use it
// directly: on the spring-forward day it fires "30 2 * * *" at 03:30 instead of 03:00
// (and fires "30 2,3 * * *" only once, at 03:30), and on the fall-back day it fires
// "30 2 * * *" twice, at 02:30 CEST and again at 02:30 CET. Schedule therefore uses
// go-cron only to find matching wall-clock times (evaluated in UTC, which has no
// transitions) and maps each of them to instants itself.
package schedule

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	cron "github.com/netresearch/go-cron"
)

// Schedule is a parsed cron expression in its time zone. It is immutable and safe for
// concurrent use.
type Schedule struct {
	expr string         // the expression, fields separated by single spaces
	loc  *time.Location // the schedule's time zone
	// wall matches wall-clock times: its Location is UTC and the times passed to it are
	// the wall clock of loc written as UTC times (see wallOf).
	wall *cron.SpecSchedule
	// hourStar is set when the hour field starts with "*": the schedule follows absolute
	// time through daylight saving transitions rather than firing once per wall-clock time.
	hourStar bool
}

// maxSearchYears is how far ahead Next looks for an occurrence.
const maxSearchYears = 5

// maxShift bounds the difference between two UTC offsets of one zone (the largest real
// one is Pacific/Apia's 24 hours in 2011) and between a wall-clock time and its instant.
const maxShift = 27 * time.Hour

// Parse parses a 5-field cron expression in the IANA time zone tz ("" means UTC). Errors are
// one user-facing sentence that names the problem, e.g. `"61 * * * *": minute 61 is out of range 0-59`
// (no Go-internal wording, no "failed to parse"). A TZ=/CRON_TZ= prefix inside expr is refused (the
// `timezone` attribute says the zone).
func Parse(expr, tz string) (*Schedule, error) {
	loc := time.UTC
	if tz != "" {
		l, err := time.LoadLocation(tz)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IANA time zone name such as \"UTC\" or \"Europe/Berlin\"", tz)
		}
		loc = l
	}
	fields := strings.Fields(expr)
	norm := strings.Join(fields, " ")
	hourStar, err := check(norm, fields)
	if err != nil {
		return nil, err
	}
	// go-cron takes any field containing an upper-case "H" for a hash expression, which
	// would refuse "THU"; names are case-insensitive, so hand it lower case.
	parsed, err := cron.StandardParser().Parse(strings.ToLower(norm))
	if err != nil {
		// check accepts only what the parser accepts; this is a safety net.
		return nil, fmt.Errorf("%q is not a valid cron expression", norm)
	}
	spec, ok := parsed.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("%q is not a valid cron expression", norm)
	}
	w := *spec
	w.Location = time.UTC
	w.MaxSearchYears = maxSearchYears + 1
	// Standard cron ORs day-of-month and day-of-week when both are restricted; go-cron
	// ANDs them unless DowOrDom is set. With DowOrDom it ORs only when neither field
	// carries its internal wildcard mark, which it sets for "*" and "?" but not for
	// "*/2", so decide here, the Vixie cron way: by the fields' first character.
	w.DowOrDom = false
	if len(fields) == 5 {
		w.DowOrDom = !isStar(fields[2]) && !isStar(fields[4])
	}
	return &Schedule{expr: norm, loc: loc, wall: &w, hourStar: hourStar}, nil
}

// String returns the expression and zone, e.g. "0 9 * * 1-5 (Europe/Berlin)".
func (s *Schedule) String() string {
	return s.expr + " (" + s.loc.String() + ")"
}

// Next returns the first occurrence strictly after t (in any location; returns UTC). Zero time if none within 5 years.
//
// Around daylight saving transitions it follows the rules in the package documentation,
// which differ from go-cron's own Next.
func (s *Schedule) Next(t time.Time) time.Time {
	limit := t.AddDate(maxSearchYears, 0, 0)
	wt := wallOf(t, s.loc)
	// A wall-clock time before t's can still have an instant after t when clocks go
	// back soon after t: look back by as much as the offset drops.
	w := wt.Add(-s.lookback(t))
	wallLimit := wt.Add(limit.Sub(t) + maxShift)
	var best, horizon time.Time
	for {
		w = s.wall.Next(w)
		if w.IsZero() || w.After(wallLimit) || (!best.IsZero() && !w.Before(horizon)) {
			break
		}
		var buf [2]time.Time
		for _, i := range s.fires(w, buf[:0]) {
			if i.After(t) && (best.IsZero() || i.Before(best)) {
				best = i
				horizon = s.horizon(t, best)
			}
		}
	}
	if best.IsZero() || best.After(limit) {
		return time.Time{}
	}
	return best.UTC()
}

// Missed returns the latest occurrence in (last, now] that is no older than window before now, and
// whether there is one. last zero means "never fired": then only occurrences in (now-window, now] count.
// serve uses it at start: a run that fell due while it was down, within the window, is fired once.
//
// Occurrences more than 5 years before now are not considered.
func (s *Schedule) Missed(last, now time.Time, window time.Duration) (time.Time, bool) {
	if window < 0 {
		return time.Time{}, false
	}
	cut := now.Add(-window)
	if floor := now.AddDate(-maxSearchYears, 0, 0); cut.Before(floor) {
		cut = floor
	}
	after := cut // exclusive lower bound
	if !last.IsZero() {
		after = last
		if c := cut.Add(-time.Nanosecond); c.After(after) {
			after = c // cut itself is no older than window
		}
	}
	if !now.After(after) {
		return time.Time{}, false
	}
	// Search backwards from now in doubling steps, so that a dense schedule and a long
	// window do not walk every occurrence of the window.
	for d := time.Minute; ; d *= 2 {
		from := now.Add(-d)
		if !from.After(after) {
			from = after
		}
		var found time.Time
		for x := s.Next(from); !x.IsZero() && !x.After(now); x = s.Next(x) {
			found = x
		}
		if !found.IsZero() {
			return found, true
		}
		if from.Equal(after) {
			return time.Time{}, false
		}
	}
}

// fires appends to buf the instants at which the wall-clock time w fires, in order.
func (s *Schedule) fires(w time.Time, buf []time.Time) []time.Time {
	first, second, n, gapEnd := resolve(w, s.loc)
	switch {
	case n == 0 && !s.hourStar:
		return append(buf, gapEnd)
	case n == 1 || (n == 2 && !s.hourStar):
		return append(buf, first)
	case n == 2:
		return append(buf, first, second)
	}
	return buf
}

// wallOf returns t's wall clock in loc as a UTC time with the same fields.
func wallOf(t time.Time, loc *time.Location) time.Time {
	_, off := t.In(loc).Zone()
	return t.UTC().Add(seconds(off))
}

// resolve returns the instants whose wall clock in loc reads w (given as a UTC time with
// the wall clock's fields): n is 1 normally, 2 when w is repeated because clocks went
// back (first < second), and 0 when w is skipped because clocks went forward, in which
// case gapEnd is the first instant after the gap.
func resolve(w time.Time, loc *time.Location) (first, second time.Time, n int, gapEnd time.Time) {
	eachOffset(w.Add(-maxShift), w.Add(maxShift), loc, func(at time.Time, before, off int) {
		if i := w.Add(-seconds(off)); wallOf(i, loc).Equal(w) {
			switch {
			case n == 0:
				first, n = i, 1
			case n == 1 && i.After(first):
				second, n = i, 2
			}
		}
		// Clocks jump forward at "at" from at+before to at+off: if that skips w, w's
		// make-up instant is at.
		if off > before && gapEnd.IsZero() {
			from, to := at.UTC().Add(seconds(before)), at.UTC().Add(seconds(off))
			if !w.Before(from) && w.Before(to) {
				gapEnd = at
			}
		}
	})
	return first, second, n, gapEnd
}

// lookback returns how far a wall-clock time before t's can lie and still have an
// instant after t: the largest drop of loc's offset after t, or zero.
func (s *Schedule) lookback(t time.Time) time.Duration {
	first, lowest := true, 0
	var off0 int
	eachOffset(t, t.Add(maxShift), s.loc, func(_ time.Time, _, off int) {
		if first {
			first, off0, lowest = false, off, off
		}
		lowest = min(lowest, off)
	})
	return seconds(off0 - lowest)
}

// horizon returns the wall-clock time from which no matching wall-clock time can fire
// before best (an instant after t): best's wall clock under the largest offset that
// loc has between t and best.
func (s *Schedule) horizon(t, best time.Time) time.Time {
	from := best.Add(-maxShift)
	if from.Before(t) {
		from = t
	}
	first, highest := true, 0
	eachOffset(from, best, s.loc, func(_ time.Time, _, off int) {
		if first {
			first, highest = false, off
		}
		highest = max(highest, off)
	})
	return best.UTC().Add(seconds(highest))
}

// eachOffset calls f with loc's offset (in seconds) at a (at = a, before = off), and
// then at each instant "at" in (a, b] where the offset may change, with the offsets
// before and from then on.
func eachOffset(a, b time.Time, loc *time.Location, f func(at time.Time, before, off int)) {
	x := a.In(loc)
	_, off := x.Zone()
	f(a, off, off)
	for {
		_, next := x.ZoneBounds()
		if next.IsZero() {
			return
		}
		if !next.After(x) {
			// Beyond a zone's last listed transition Go derives bounds from the zone's
			// rule, and on December 31 of leap years returns an end that is not after
			// x (it takes years to have 365 days). Those ends are year boundaries, not
			// transitions: step over them.
			next = x.Add(24 * time.Hour)
		}
		if next.After(b) {
			return
		}
		x = next.In(loc)
		before := off
		_, off = x.Zone()
		f(next, before, off)
	}
}

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

// isStar reports whether a field starts with a wildcard, as Vixie cron's *_STAR flags do.
func isStar(field string) bool {
	return strings.HasPrefix(field, "*") || strings.HasPrefix(field, "?")
}

// field describes one of the five fields.
type field struct {
	name     string
	min, max int
	names    []string // names[i] stands for min+i (months) or i (weekdays)
	kind     string   // how to write a value, for errors
}

var fieldInfo = [5]field{
	{name: "minute", min: 0, max: 59, kind: "a number 0-59"},
	{name: "hour", min: 0, max: 23, kind: "a number 0-23"},
	{name: "day-of-month", min: 1, max: 31, kind: "a number 1-31"},
	{name: "month", min: 1, max: 12, kind: "a number 1-12 or a name jan-dec",
		names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
	{name: "day-of-week", min: 0, max: 7, kind: "a number 0-7 or a name sun-sat",
		names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}},
}

// descriptors are the @-names Parse accepts; hourStar tells whether the expression each
// stands for has "*" in its hour field.
var descriptors = map[string]bool{
	"@yearly": false, "@annually": false, "@monthly": false, "@weekly": false,
	"@daily": false, "@midnight": false, "@hourly": true,
}

// check validates an expression (norm, split into fields) with errors that name the
// problem, and reports whether its hour field starts with "*". It accepts a subset of
// what go-cron's standard parser accepts: it also refuses empty list items ("1,,2"),
// signs ("+5"), "*" inside a range ("*-5"), a TZ= prefix, @every, and day and month
// combinations that never occur ("0 0 30 2 *").
func check(norm string, fields []string) (hourStar bool, err error) {
	switch {
	case len(fields) == 0:
		return false, errors.New("the cron expression is empty")
	case len(norm) > cron.MaxSpecLength:
		return false, fmt.Errorf("the cron expression is longer than %d characters", cron.MaxSpecLength)
	case strings.Contains(fields[0], "="):
		prefix, _, _ := strings.Cut(fields[0], "=")
		return false, fmt.Errorf("%q: the time zone goes in the timezone attribute, not in a %s= prefix", norm, prefix)
	case strings.HasPrefix(strings.ToLower(norm), "@every"):
		return false, fmt.Errorf("%q is not supported: a schedule fires at clock times, e.g. \"*/5 * * * *\", not at intervals", norm)
	case strings.HasPrefix(norm, "@"):
		hourStar, ok := descriptors[strings.ToLower(norm)]
		if !ok {
			return false, fmt.Errorf("%q is not a cron descriptor; the descriptors are @yearly, @monthly, @weekly, @daily and @hourly", norm)
		}
		return hourStar, nil
	case len(fields) != 5:
		return false, fmt.Errorf("%q has %d fields, not 5", norm, len(fields))
	}
	var sets [5][]bool
	for i, f := range fields {
		set, err := checkField(f, fieldInfo[i])
		if err != nil {
			return false, fmt.Errorf("%q: %s", norm, err)
		}
		sets[i] = set
	}
	// With day-of-week "*", only day-of-month picks days: some picked day must exist in
	// some picked month (February 29 counts; leap years come within the search horizon).
	if isStar(fields[4]) && !possibleDay(sets[2], sets[3]) {
		return false, fmt.Errorf("%q never fires: none of its months has a day %s", norm, listDays(sets[2]))
	}
	return isStar(fields[1]), nil
}

var monthDays = [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func possibleDay(days, months []bool) bool {
	for m := 1; m <= 12; m++ {
		for d := 1; d <= monthDays[m] && months[m]; d++ {
			if days[d] {
				return true
			}
		}
	}
	return false
}

func listDays(days []bool) string {
	var ds []string
	for d, ok := range days {
		if ok {
			ds = append(ds, strconv.Itoa(d))
		}
	}
	if len(ds) == 1 {
		return ds[0]
	}
	return strings.Join(ds[:len(ds)-1], ", ") + " or " + ds[len(ds)-1]
}

// checkField validates one field the way go-cron's getField/getRange parse it and
// returns the set of values it names (indexed by value).
func checkField(s string, f field) ([]bool, error) {
	set := make([]bool, f.max+1)
	for item := range strings.SplitSeq(s, ",") {
		if item == "" {
			return nil, fmt.Errorf("%s %q has an empty list item", f.name, s)
		}
		if err := checkItem(item, f, set); err != nil {
			return nil, err
		}
	}
	return set, nil
}

func checkItem(item string, f field, set []bool) error {
	rng, stepStr, hasStep := strings.Cut(item, "/")
	if strings.Contains(stepStr, "/") {
		return syntaxError(item, f)
	}
	lo, hi := f.min, f.max
	if rng != "*" && rng != "?" {
		a, b, isRange := strings.Cut(rng, "-")
		if strings.Contains(b, "-") {
			return syntaxError(item, f)
		}
		var err error
		if lo, err = value(a, item, f); err != nil {
			return err
		}
		hi = lo
		if isRange {
			if hi, err = value(b, item, f); err != nil {
				return err
			}
		} else if hasStep {
			hi = f.max // "5/15" means "5-59/15"
		}
	}
	step := 1
	if hasStep {
		n, err := strconv.Atoi(stepStr)
		if err != nil || !digits(stepStr) {
			return fmt.Errorf("%s %q has step %q, which is not a whole number", f.name, item, stepStr)
		}
		if n == 0 {
			return fmt.Errorf("%s %q has step 0, which must be at least 1", f.name, item)
		}
		step = n
	}
	size := hi - lo + 1
	if lo > hi { // wraps around
		size = (f.max - lo + 1) + (hi - f.min + 1)
	}
	if step > 1 && step >= size {
		return fmt.Errorf("%s %q has step %d, which must be smaller than the %d values it steps through", f.name, item, step, size)
	}
	for i := 0; i < size; i += step {
		v := lo + i
		if v > f.max {
			v -= f.max - f.min + 1
		}
		set[v] = true
	}
	if f.name == "day-of-week" && set[7] {
		set[0] = true
	}
	return nil
}

// value parses one value of item: a number in range or, for months and weekdays, a name.
func value(s, item string, f field) (int, error) {
	if i := slices.Index(f.names, strings.ToLower(s)); i >= 0 {
		if f.min == 1 {
			return i + 1, nil
		}
		return i, nil
	}
	if s == "*" || s == "?" {
		return 0, fmt.Errorf("%s %q uses %q inside a range; write %q alone or a range a-b", f.name, item, s, s)
	}
	n, err := strconv.Atoi(s)
	if err != nil || !digits(s) {
		if s == "" {
			return 0, syntaxError(item, f)
		}
		return 0, fmt.Errorf("%s %q is not valid: %q is not %s", f.name, item, s, f.kind)
	}
	if n < f.min || n > f.max {
		return 0, fmt.Errorf("%s %d is out of range %d-%d", f.name, n, f.min, f.max)
	}
	return n, nil
}

func syntaxError(item string, f field) error {
	return fmt.Errorf("%s %q is not a value, a range a-b or a step such as */5", f.name, item)
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
