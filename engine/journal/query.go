package journal

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Filter selects runs for List. Zero fields select everything.
type Filter struct {
	Workflow string
	Status   string
	Parent   string // the parent execution id: runs started by its calls
	// CompletedBefore selects finished runs whose FinishedAt is before it.
	CompletedBefore time.Time
	// StartedAfter and StartedBefore select the runs whose StartedAt is at or after
	// StartedAfter and before StartedBefore.
	StartedAfter, StartedBefore time.Time
	// BeforeID selects the runs whose id sorts before it: older ones. A page's last id is
	// where the next page starts.
	BeforeID string
	// Limit caps the number of runs returned (0: no cap).
	Limit int
}

func (f *Filter) match(s *Summary) bool {
	switch {
	case f.Workflow != "" && s.Workflow != f.Workflow,
		f.Status != "" && s.Status != f.Status,
		f.Parent != "" && (s.Parent == nil || *s.Parent != f.Parent),
		!f.CompletedBefore.IsZero() && (s.FinishedAt == nil || !s.FinishedAt.Before(f.CompletedBefore)),
		!f.StartedAfter.IsZero() && s.StartedAt.Before(f.StartedAfter),
		!f.StartedBefore.IsZero() && !s.StartedAt.Before(f.StartedBefore),
		f.BeforeID != "" && s.ID >= f.BeforeID:
		return false
	}
	return true
}

func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// getSummary reads the summary of run id in txn.
func (s *Store) getSummary(txn *badger.Txn, id string) (*Summary, error) {
	item, err := txn.Get(runKey(id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, fmt.Errorf("execution %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	var sum Summary
	err = s.value(item, func(v []byte) error { return json.Unmarshal(v, &sum) })
	if err != nil {
		return nil, fmt.Errorf("execution %s: decode summary: %w", id, err)
	}
	return &sum, nil
}

func (s *Store) readSummary(id string) (*Summary, error) {
	var sum *Summary
	err := s.view(func(txn *badger.Txn) (err error) {
		sum, err = s.getSummary(txn, id)
		return err
	})
	return sum, err
}

// lastSeq is the seq of the last key under prefix (0 when there is none): a reverse seek.
func (s *Store) lastSeq(prefix []byte) (uint64, error) {
	var seq uint64
	err := s.view(func(txn *badger.Txn) error {
		seq = lastSeqIn(txn, prefix)
		return nil
	})
	return seq, err
}

// lastSeqIn is lastSeq in txn.
func lastSeqIn(txn *badger.Txn, prefix []byte) uint64 {
	it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: prefix})
	defer it.Close()
	it.Seek(prefixEnd(prefix))
	if it.ValidForPrefix(prefix) {
		return keySeq(it.Item().Key())
	}
	return 0
}

// scanKeys calls fn with each key under prefix, from seek on (backwards when reverse), until
// fn returns false. The key is only valid during the call.
func scanKeys(txn *badger.Txn, prefix, seek []byte, reverse bool, fn func(key []byte) (bool, error)) error {
	it := txn.NewIterator(badger.IteratorOptions{Reverse: reverse, Prefix: prefix})
	defer it.Close()
	for it.Seek(seek); it.ValidForPrefix(prefix); it.Next() {
		more, err := fn(it.Item().Key())
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// Summary returns the summary of run id (ErrNotFound when there is none).
func (s *Store) Summary(id string) (Summary, error) {
	sum, err := s.readSummary(id)
	if err != nil {
		return Summary{}, err
	}
	return *sum, nil
}

// List returns the runs f selects, newest first. It walks the most selective index f allows
// (parent, active status, workflow, status, finish time, in this order; else every run) and
// filters the summaries it reaches by the rest of f. The walk of an index in id order starts
// at f.BeforeID and at f.StartedBefore and stops at f.StartedAfter (starttime.go), so that a
// page costs what it returns, not what lies before it.
func (s *Store) List(f Filter) ([]Summary, error) {
	var out []Summary
	err := s.view(func(txn *badger.Txn) error {
		var err error
		out, err = s.list(txn, f)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list executions: %w", err)
	}
	return out, nil
}

func (s *Store) list(txn *badger.Txn, f Filter) ([]Summary, error) {
	out := []Summary{}
	full := func() bool { return f.Limit > 0 && len(out) >= f.Limit }
	// add adds sum if f selects it and reports whether to go on.
	add := func(sum *Summary) bool {
		if f.match(sum) {
			out = append(out, *sum)
		}
		return !full()
	}
	// take adds the run id if f selects it and reports whether to go on.
	take := func(id string) (bool, error) {
		sum, err := s.getSummary(txn, id)
		if isNotFound(err) {
			return true, nil // an index key without its run: skip it
		}
		if err != nil {
			return false, err
		}
		return add(sum), nil
	}
	r := rangeOf(&f)
	// byIndex walks an index whose keys are prefix + id, newest id first, over r.
	byIndex := func(prefix []byte) error {
		return scanKeys(txn, prefix, r.seek(prefix), true, func(k []byte) (bool, error) {
			id := string(k[len(prefix):])
			switch {
			case r.above(id):
				return true, nil // the cursor's own key
			case r.below(id):
				return false, nil
			}
			return take(id)
		})
	}
	// inRange walks with walk over r, taking the off-time runs outside r in their places.
	inRange := func(walk func() error) error {
		if !f.timed() {
			return walk()
		}
		above, below, err := offTimeIDs(txn, r)
		if err != nil {
			return err
		}
		for _, part := range []func() error{
			func() error { return takeAll(above, take) },
			walk,
			func() error { return takeAll(below, take) },
		} {
			if full() {
				return nil
			}
			if err := part(); err != nil {
				return err
			}
		}
		return nil
	}
	var err error
	switch {
	case f.Parent != "":
		err = inRange(func() error { return byIndex(parentIndexPrefix(f.Parent)) })
	case f.Status != "" && !Finished(f.Status):
		err = inRange(func() error { return byIndex(statusIndexPrefix(f.Status)) })
	case f.Workflow != "":
		err = inRange(func() error { return byIndex(workflowIndexPrefix(f.Workflow)) })
	case f.Status != "":
		err = inRange(func() error { return byIndex(statusIndexPrefix(f.Status)) })
	case !f.CompletedBefore.IsZero():
		err = byFinishTime(txn, f, take)
	default:
		err = inRange(func() error { return s.allRuns(txn, r, add) })
	}
	return out, err
}

// takeAll calls take with each id until it says to stop.
func takeAll(ids []string, take func(string) (bool, error)) error {
	for _, id := range ids {
		more, err := take(id)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// byFinishTime walks the finish-time index up to f.CompletedBefore, then takes the runs newest
// (by id) first.
func byFinishTime(txn *badger.Txn, f Filter, take func(string) (bool, error)) error {
	prefix := []byte(finishedIndex)
	cutoff := finishedNanos(f.CompletedBefore)
	var ids []string
	err := scanKeys(txn, prefix, prefix, false, func(k []byte) (bool, error) {
		rest := k[len(prefix):]
		if len(rest) < 8 {
			return true, nil
		}
		if binary.BigEndian.Uint64(rest) >= cutoff {
			return false, nil
		}
		ids = append(ids, string(rest[8:]))
		return true, nil
	})
	if err != nil {
		return err
	}
	slices.Sort(ids)
	slices.Reverse(ids)
	return takeAll(ids, take)
}

// allRuns walks the summaries of the runs in r, newest first, until add says to stop.
func (s *Store) allRuns(txn *badger.Txn, r idRange, add func(*Summary) bool) error {
	prefix := []byte(runPrefix)
	it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: prefix})
	defer it.Close()
	for it.Seek(r.seek(prefix)); it.ValidForPrefix(prefix); it.Next() {
		id := string(it.Item().Key()[len(prefix):])
		if r.above(id) {
			continue
		}
		if r.below(id) {
			return nil
		}
		var sum Summary
		err := s.value(it.Item(), func(v []byte) error { return json.Unmarshal(v, &sum) })
		if err != nil {
			return fmt.Errorf("decode summary %s: %w", it.Item().Key(), err)
		}
		if !add(&sum) {
			return nil
		}
	}
	return nil
}

// Unfinished returns the runs whose status is running, waiting or interrupted (resumable),
// newest first.
func (s *Store) Unfinished() ([]Summary, error) {
	var out []Summary
	err := s.view(func(txn *badger.Txn) error {
		for _, status := range UnfinishedStatuses() {
			part, err := s.list(txn, Filter{Status: status})
			if err != nil {
				return err
			}
			out = append(out, part...)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list unfinished executions: %w", err)
	}
	slices.SortFunc(out, func(a, b Summary) int { return strings.Compare(b.ID, a.ID) })
	return out, nil
}

// Entries calls fn with the journal entries of run id whose seq is after after, in order,
// stopping at fn's first error (returned as is). ErrNotFound when the run does not exist.
func (s *Store) Entries(id string, after uint64, fn func(Entry) error) error {
	return s.view(func(txn *badger.Txn) error {
		if _, err := s.getSummary(txn, id); err != nil {
			return err
		}
		return s.eachValue(txn, runJournalPrefix(id), after, func(v []byte) error {
			var e Entry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("execution %s: decode entry: %w", id, err)
			}
			return fn(e)
		})
	})
}

// Logs calls fn with the log lines of run id whose seq is after after, in order, stopping at
// fn's first error (returned as is). ErrNotFound when the run does not exist.
func (s *Store) Logs(id string, after uint64, fn func(LogLine) error) error {
	return s.view(func(txn *badger.Txn) error {
		if _, err := s.getSummary(txn, id); err != nil {
			return err
		}
		return s.eachValue(txn, runLogPrefix(id), after, func(v []byte) error {
			var l LogLine
			if err := json.Unmarshal(v, &l); err != nil {
				return fmt.Errorf("execution %s: decode log line: %w", id, err)
			}
			return fn(l)
		})
	})
}

// eachValue calls fn with the value of each key prefix+seq, seq > after, in order.
func (s *Store) eachValue(txn *badger.Txn, prefix []byte, after uint64, fn func([]byte) error) error {
	if after == math.MaxUint64 {
		return nil
	}
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	defer it.Close()
	for it.Seek(seqKey(prefix, after+1)); it.ValidForPrefix(prefix); it.Next() {
		if err := s.value(it.Item(), fn); err != nil {
			return err
		}
	}
	return nil
}

// ResolveID returns the execution id ref names: an exact id, or a prefix of at least 6
// characters that only one execution id starts with (tried as given, then upper-cased, since
// ULIDs are upper-case). ErrNotFound or ErrAmbiguous otherwise; the ambiguous error says how
// many runs match but names none of them: a lookup by prefix is not a way to list ids.
func (s *Store) ResolveID(ref string) (string, error) {
	if checkID(ref) != nil {
		return "", fmt.Errorf("execution %q: %w", ref, ErrNotFound)
	}
	var match string
	matches := 0
	err := s.view(func(txn *badger.Txn) error {
		_, err := txn.Get(runKey(ref))
		if err == nil {
			match, matches = ref, 1
			return nil
		}
		if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		if len(ref) < 6 {
			return nil
		}
		candidates := []string{ref}
		if up := strings.ToUpper(ref); up != ref {
			candidates = append(candidates, up)
		}
		for _, c := range candidates {
			prefix := runKey(c)
			err := scanKeys(txn, prefix, prefix, false, func(k []byte) (bool, error) {
				if matches == 0 {
					match = string(k[len(runPrefix):])
				}
				matches++
				return matches <= maxAmbiguousCount, nil
			})
			if err != nil || matches > 0 {
				return err
			}
		}
		return nil
	})
	switch {
	case err != nil:
		return "", fmt.Errorf("resolve execution %q: %w", ref, err)
	case matches == 0:
		return "", fmt.Errorf("execution %q: %w", ref, ErrNotFound)
	case matches > maxAmbiguousCount:
		return "", fmt.Errorf("execution %q: %w: more than %d executions have ids starting with it; give a longer prefix", ref, ErrAmbiguous, maxAmbiguousCount)
	case matches > 1:
		return "", fmt.Errorf("execution %q: %w: %d executions have ids starting with it; give a longer prefix", ref, ErrAmbiguous, matches)
	}
	return match, nil
}

// maxAmbiguousCount bounds how many matches of an ambiguous prefix ResolveID counts.
const maxAmbiguousCount = 100
