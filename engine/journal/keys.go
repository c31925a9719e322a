package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Key layout (docs/state.md):
//
//	meta/format                      format version ("1")
//	r/<id>                           Summary JSON
//	j/<id>/<seq: 8-byte big-endian>  Entry JSON
//	l/<id>/<seq: 8-byte big-endian>  LogLine JSON
//	p/<digest>                       plan blob
//	x/w/<workflow>\x00<id>           index: runs by workflow (empty value)
//	x/s/<status>\x00<id>             index: runs by status
//	x/f/<nanos: 8-byte BE><id>       index: finished runs by finish time
//	x/p/<parent id>\x00<id>          index: child runs by parent
//	x/o/<id>                         index: runs whose start is off their id's time (starttime.go)
const (
	formatKey     = "meta/format"
	formatVersion = "1"

	runPrefix      = "r/"
	journalPrefix  = "j/"
	logPrefix      = "l/"
	planPrefix     = "p/"
	workflowIndex  = "x/w/"
	statusIndex    = "x/s/"
	finishedIndex  = "x/f/"
	parentIndex    = "x/p/"
	offTimeIndex   = "x/o/"
	indexSeparator = "\x00"
)

// checkID rejects execution ids that would make keys ambiguous.
func checkID(id string) error {
	if id == "" {
		return errors.New("empty execution id")
	}
	if strings.ContainsAny(id, "/\x00") {
		return fmt.Errorf("execution id %q contains '/' or NUL", id)
	}
	return nil
}

func runKey(id string) []byte { return []byte(runPrefix + id) }

func planKey(digest string) []byte { return []byte(planPrefix + digest) }

// runJournalPrefix is the prefix of every journal key of run id.
func runJournalPrefix(id string) []byte { return []byte(journalPrefix + id + "/") }

// runLogPrefix is the prefix of every log key of run id.
func runLogPrefix(id string) []byte { return []byte(logPrefix + id + "/") }

// seqKey appends seq, big-endian, to prefix.
func seqKey(prefix []byte, seq uint64) []byte {
	k := make([]byte, len(prefix), len(prefix)+8)
	copy(k, prefix)
	return binary.BigEndian.AppendUint64(k, seq)
}

// keySeq decodes the sequence number at the end of a journal or log key.
func keySeq(key []byte) uint64 {
	if len(key) < 8 {
		return 0
	}
	return binary.BigEndian.Uint64(key[len(key)-8:])
}

func workflowIndexPrefix(workflow string) []byte {
	return []byte(workflowIndex + workflow + indexSeparator)
}

func statusIndexPrefix(status string) []byte {
	return []byte(statusIndex + status + indexSeparator)
}

func parentIndexPrefix(parent string) []byte {
	return []byte(parentIndex + parent + indexSeparator)
}

// maxNanoTime is the last instant whose Unix time in nanoseconds fits an int64 (in 2262);
// UnixNano's result is undefined after it.
var maxNanoTime = time.Unix(0, math.MaxInt64)

// finishedNanos is the finish-index sort key of t: its Unix time in nanoseconds, 0 for times
// before 1970 and the largest key for times after maxNanoTime, so that a cutoff far in the
// future (`prune -completed-before 3000-01-01`) is after every run, not an overflowed value
// before all of them.
func finishedNanos(t time.Time) uint64 {
	switch {
	case t.Before(time.Unix(0, 0)):
		return 0
	case t.After(maxNanoTime):
		return math.MaxUint64
	}
	return uint64(t.UnixNano())
}

func finishedIndexKey(t time.Time, id string) []byte {
	k := binary.BigEndian.AppendUint64([]byte(finishedIndex), finishedNanos(t))
	return append(k, id...)
}

// indexKeys lists every index key of a run's summary.
func indexKeys(s *Summary) [][]byte {
	if s == nil {
		return nil
	}
	keys := [][]byte{
		append(workflowIndexPrefix(s.Workflow), s.ID...),
		append(statusIndexPrefix(s.Status), s.ID...),
	}
	if s.FinishedAt != nil {
		keys = append(keys, finishedIndexKey(*s.FinishedAt, s.ID))
	}
	if s.Parent != nil && *s.Parent != "" {
		keys = append(keys, append(parentIndexPrefix(*s.Parent), s.ID...))
	}
	if offTime(s) {
		keys = append(keys, []byte(offTimeIndex+s.ID))
	}
	return keys
}

// prefixEnd is a key after every key that starts with prefix and continues with at most 16
// bytes of 0xff: the seek target of a reverse prefix scan (ids are ASCII, seqs 8 bytes).
func prefixEnd(prefix []byte) []byte {
	k := make([]byte, len(prefix), len(prefix)+16)
	copy(k, prefix)
	for range 16 {
		k = append(k, 0xff)
	}
	return k
}
