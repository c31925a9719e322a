package journal

import (
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/oklog/ulid/v2"
)

// Listing runs by start time without an index of start times.
//
// Execution ids are ULIDs minted as a run is created, so an id's time (its first 10
// characters, milliseconds since 1970) is within moments of the run's StartedAt, and every
// index whose keys end in the id is already in start-time order. A time range is therefore a
// range of ids, widened by startSlack on both sides and checked exactly against StartedAt.
// The few runs whose StartedAt is further from their id's time than startSlack (a schedule
// or poll run recorded before a crash and started at the next start, a clock step, an id
// that is no ULID) are kept in the off-time index x/o/<id>, which a time range reads whole
// and merges in.

// startSlack is how far a run's StartedAt may be from its id's time and still be found by
// its id's place alone. The engine journals run_started within moments of minting the id
// (before a queued run waits for its turn), so a run is off by more only in the cases above;
// the smaller the slack, the fewer runs outside a range a walk reads.
const startSlack = 2 * time.Second

// idTimeLen is the length of the time part of a ULID.
const idTimeLen = 10

// idTime is the time in id (a ULID), and false for an id that is no ULID.
func idTime(id string) (time.Time, bool) {
	u, err := ulid.ParseStrict(id)
	if err != nil {
		return time.Time{}, false
	}
	return ulid.Time(u.Time()), true
}

// offTime reports whether s belongs in the off-time index: its StartedAt is more than
// startSlack from its id's time, or its id is no ULID.
func offTime(s *Summary) bool {
	t, ok := idTime(s.ID)
	if !ok {
		return true
	}
	d := s.StartedAt.Sub(t)
	return d > startSlack || d < -startSlack
}

// idTimePrefix is the time part of the ULIDs minted at t (clamped to what a ULID holds):
// every id minted at t starts with it, and ids sort as their prefixes do.
func idTimePrefix(t time.Time) string {
	ms := uint64(0)
	if t.After(time.UnixMilli(0)) {
		ms = min(uint64(t.UnixMilli()), ulid.MaxTime())
	}
	var u ulid.ULID
	_ = u.SetTime(ms) // ms is at most MaxTime: no error
	return u.String()[:idTimeLen]
}

// idRange is the range of ids a walk of an id-ordered index covers, newest first: ids below
// upper (or every id when upper is ""), and not below lower.
type idRange struct {
	upper     string // exclusive unless upperIncl
	upperIncl bool
	lower     string
}

// rangeOf is the ids f's cursor and start times allow, widened by startSlack.
func rangeOf(f *Filter) idRange {
	var r idRange
	if f.BeforeID != "" {
		r.upper = f.BeforeID
	}
	if !f.StartedBefore.IsZero() {
		// Every id whose time part is at most this: the prefix followed by anything.
		bound := idTimePrefix(f.StartedBefore.Add(startSlack)) + "\xff"
		if r.upper == "" || bound < r.upper {
			r.upper, r.upperIncl = bound, true
		}
	}
	if !f.StartedAfter.IsZero() {
		r.lower = idTimePrefix(f.StartedAfter.Add(-startSlack))
	}
	return r
}

// below reports whether id sorts below the range: a walk newest first is past it.
func (r idRange) below(id string) bool { return r.lower != "" && id < r.lower }

// above reports whether id sorts above the range.
func (r idRange) above(id string) bool {
	if r.upper == "" {
		return false
	}
	if r.upperIncl {
		return id > r.upper
	}
	return id >= r.upper
}

// seek is the key a reverse walk of an index with prefix starts at: at or after the
// range's newest possible key.
func (r idRange) seek(prefix []byte) []byte {
	if r.upper == "" {
		return prefixEnd(prefix)
	}
	k := make([]byte, 0, len(prefix)+len(r.upper))
	return append(append(k, prefix...), r.upper...)
}

// timed reports whether f selects by start time: the off-time index is then read too.
func (f *Filter) timed() bool {
	return !f.StartedAfter.IsZero() || !f.StartedBefore.IsZero()
}

// offTimeIDs returns the ids of the off-time index outside r, newest first: those above r,
// which a walk newest first takes before the range, and those below it, taken after.
func offTimeIDs(txn *badger.Txn, r idRange) (above, below []string, err error) {
	prefix := []byte(offTimeIndex)
	err = scanKeys(txn, prefix, prefixEnd(prefix), true, func(k []byte) (bool, error) {
		id := string(k[len(prefix):])
		switch {
		case r.above(id):
			above = append(above, id)
		case r.below(id):
			below = append(below, id)
		}
		return true, nil
	})
	return above, below, err
}
