package journal

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/oklog/ulid/v2"
)

// pageRun is what the oracle of TestListPagesAndStartTimes knows of a run.
type pageRun struct {
	id, workflow, status string
	started              time.Time
}

// seedPageRuns journals n finished runs of workflows a and b whose ids are ULIDs minted 10 s
// apart from base, started a moment after their id's time; some started hours off it (a run
// recorded before a crash and started after, a clock step), and three have ids that are no
// ULIDs.
func seedPageRuns(t testing.TB, s *Store, base time.Time, n int) []pageRun {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var runs []pageRun
	for i := range n {
		minted := base.Add(time.Duration(i) * 10 * time.Second)
		id := ulid.MustNew(ulid.Timestamp(minted), ulid.DefaultEntropy()).String()
		started := minted.Add(time.Duration(rng.IntN(900)) * time.Millisecond)
		switch {
		case i%13 == 3:
			started = minted.Add(startSlack - time.Millisecond)
		case i%17 == 4:
			started = minted.Add(startSlack + time.Millisecond)
		case i%37 == 5:
			started = minted.Add(2 * time.Hour)
		case i%41 == 7:
			started = minted.Add(-3 * time.Hour)
		}
		runs = append(runs, pageRun{id: id, workflow: []string{"a", "b"}[i%2], status: []string{StatusSucceeded, StatusFailed, StatusSucceeded}[i%3], started: started})
	}
	for i, id := range []string{"legacy-1", "legacy-2", "zz-legacy"} {
		runs = append(runs, pageRun{id: id, workflow: "a", status: StatusSucceeded, started: base.Add(time.Duration(i*n/3) * 10 * time.Second)})
	}
	ctx := context.Background()
	for _, r := range runs {
		st := started(r.workflow, "")
		st.Time = r.started
		if err := s.Append(ctx, r.id, false, st, Entry{Type: RunFinished, Status: r.status, Time: r.started.Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.barrier(); err != nil {
		t.Fatal(err)
	}
	return runs
}

// oracle is what List must answer for f, found by looking at every run.
func oracle(runs []pageRun, f Filter) []string {
	out := []string{}
	for _, r := range runs {
		if (f.Workflow == "" || r.workflow == f.Workflow) && (f.Status == "" || r.status == f.Status) &&
			(f.StartedAfter.IsZero() || !r.started.Before(f.StartedAfter)) &&
			(f.StartedBefore.IsZero() || r.started.Before(f.StartedBefore)) &&
			(f.BeforeID == "" || r.id < f.BeforeID) {
			out = append(out, r.id)
		}
	}
	slices.Sort(out)
	slices.Reverse(out)
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out
}

func summaryIDs(sums []Summary) []string {
	out := []string{}
	for _, s := range sums {
		out = append(out, s.ID)
	}
	return out
}

// TestListPagesAndStartTimes: List with a start-time range, a cursor (BeforeID) and a limit,
// alone or with a workflow or status, answers exactly what a look at every run does: the
// walk of an index by id range finds the runs started near their id's time, and the
// off-time index those that are not. Paging with the last id of each page goes through every
// selected run once.
func TestListPagesAndStartTimes(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer closeStore(t, s)
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const n = 400
	runs := seedPageRuns(t, s, base, n)
	span := time.Duration(n) * 10 * time.Second
	rng := rand.New(rand.NewPCG(3, 4))
	at := func() time.Time {
		// From 4 h before the first to 4 h after the last, at any nanosecond.
		return base.Add(-4*time.Hour + time.Duration(rng.Int64N(int64(span+8*time.Hour))))
	}
	var filters []Filter
	for i := range 300 {
		var f Filter
		switch i % 5 {
		case 1:
			f.Workflow = "a"
		case 2:
			f.Status = StatusFailed
		case 3:
			f.Workflow, f.Status = "b", StatusSucceeded
		}
		switch i % 4 {
		case 0:
			f.StartedAfter = at()
		case 1:
			f.StartedBefore = at()
		case 2:
			f.StartedAfter = at()
			f.StartedBefore = f.StartedAfter.Add(time.Duration(rng.Int64N(int64(2 * time.Hour))))
		}
		if i%3 == 0 {
			f.BeforeID = runs[rng.IntN(len(runs))].id
		}
		if i%2 == 0 {
			f.Limit = 1 + rng.IntN(60)
		}
		filters = append(filters, f)
	}
	// Bounds right at a run's start, and at its id's time.
	for _, r := range runs[:60] {
		filters = append(filters, Filter{StartedAfter: r.started}, Filter{StartedBefore: r.started}, Filter{StartedAfter: r.started, StartedBefore: r.started.Add(1)})
		if tm, ok := idTime(r.id); ok {
			filters = append(filters, Filter{StartedAfter: tm, Limit: 5}, Filter{StartedBefore: tm, Limit: 5})
		}
	}
	for _, f := range filters {
		got, err := s.List(f)
		if err != nil {
			t.Fatal(err)
		}
		if want := oracle(runs, f); !slices.Equal(summaryIDs(got), want) {
			t.Fatalf("List(%+v):\n got %d %v\nwant %d %v", f, len(got), summaryIDs(got), len(want), want)
		}
	}

	// Pages of 7, each starting after the last id of the one before.
	for _, f := range []Filter{{}, {Workflow: "b"}, {StartedAfter: base.Add(span / 4), StartedBefore: base.Add(span / 2)}, {Status: StatusFailed, StartedAfter: base.Add(span / 3)}} {
		want := oracle(runs, f)
		var all []string
		f.Limit = 7
		for page := 0; ; page++ {
			got, err := s.List(f)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, summaryIDs(got)...)
			if len(got) < f.Limit {
				break
			}
			f.BeforeID = got[len(got)-1].ID
			if page > len(runs) {
				t.Fatal("paging does not end")
			}
		}
		if !slices.Equal(all, want) {
			t.Errorf("pages of %+v:\n got %v\nwant %v", f, all, want)
		}
	}
}

// TestOffTimeIndex: the off-time index holds exactly the runs started more than startSlack
// from their id's time and those whose id is no ULID, and goes with its run.
func TestOffTimeIndex(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer closeStore(t, s)
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	runs := seedPageRuns(t, s, base, 100)
	var want []string
	for _, r := range runs {
		tm, ok := idTime(r.id)
		if d := r.started.Sub(tm); !ok || d > startSlack || d < -startSlack {
			want = append(want, r.id)
		}
	}
	slices.Sort(want)
	if len(want) < 5 {
		t.Fatalf("the seed has %d off-time runs; want some of each kind", len(want))
	}
	offKeys := func() []string {
		var got []string
		prefix := []byte(offTimeIndex)
		if err := s.view(func(txn *badger.Txn) error {
			return scanKeys(txn, prefix, prefix, false, func(k []byte) (bool, error) {
				got = append(got, string(k[len(prefix):]))
				return true, nil
			})
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := offKeys(); !slices.Equal(got, want) {
		t.Errorf("off-time index %v, want %v", got, want)
	}
	if err := s.Delete(want[0]); err != nil {
		t.Fatal(err)
	}
	if got := offKeys(); slices.Contains(got, want[0]) {
		t.Errorf("the off-time key of a deleted run stays: %v", got)
	}
}

// TestIDTimePrefix: the prefix of a time is the first characters of every ULID minted then,
// and prefixes sort as their times do, clamped at both ends.
func TestIDTimePrefix(t *testing.T) {
	for _, tm := range []time.Time{time.Unix(0, 0), time.Date(2026, 3, 1, 12, 0, 0, 999_999_999, time.UTC), time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)} {
		id := ulid.MustNew(ulid.Timestamp(tm), ulid.DefaultEntropy()).String()
		if p := idTimePrefix(tm); !strings.HasPrefix(id, p) || len(p) != idTimeLen {
			t.Errorf("prefix of %s = %q; the id minted then is %s", tm, p, id)
		}
	}
	if idTimePrefix(time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)) != "0000000000" {
		t.Error("a time before 1970 is not the first prefix")
	}
	if p := idTimePrefix(time.Date(20000, 1, 1, 0, 0, 0, 0, time.UTC)); p != "7ZZZZZZZZZ" {
		t.Errorf("a time past what a ULID holds: %q, want the last prefix", p)
	}
	a, b := idTimePrefix(time.UnixMilli(1000)), idTimePrefix(time.UnixMilli(1001))
	if a >= b {
		t.Errorf("prefixes out of order: %s, %s", a, b)
	}
}
