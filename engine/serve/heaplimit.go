package serve

import (
	"context"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// DefaultHeapFloor is the soft memory limit KeepHeapSmall holds the Go runtime to while the live
// heap is small. Under webhook load serve's live heap is 20-40 MiB and, with GOGC's default of
// 100, the heap grew to twice that in garbage between collections: most of serve's anonymous
// memory (docs/performance.md, "Issue 20"). 64 MiB cost no measurable CPU per run there, while
// 48 MiB did (collections too close together for a live heap that peaks near 36 MiB).
const DefaultHeapFloor = 64 << 20

// The room heapLimit leaves above the live heap, as a fraction (heapRoomNum/heapRoomDen) of
// it: half, GOGC=50's pace. Past a few thousand webhook runs Badger's compactions hold 40-60 MiB
// of table builders and memtable arenas live, so the floor no longer applies; with twice the
// live heap (and a quarter more) of room, serve's anonymous memory reached 143-150 MiB, with
// half of it 86-90 MiB, for 5-15% more CPU per run (docs/performance.md, item 4, session 3).
// Most of that live heap is byte slices without pointers, which a collection does not scan.
const (
	heapRoomNum = 1
	heapRoomDen = 2
)

// heapPoll is how often KeepHeapSmall reads the live heap: often enough that a heap which
// outgrows the limit is not collected back-to-back for long.
const heapPoll = 250 * time.Millisecond

// KeepHeapSmall holds the Go runtime's soft memory limit at the larger of floor and what GOGC=50
// would give the live heap (one and a half times it), until ctx is done, then restores the limit
// it found. A plain limit would make a large live heap (a big workflow) collect continuously;
// following the live heap keeps a steady pace there and bounds only the garbage of a small one. It returns at once without doing anything when the user chose the
// collector's pace (GOMEMLIMIT or GOGC set: userTuned).
//
// The limit is the runtime's own (debug.SetMemoryLimit), never GOMEMLIMIT in the environment:
// the processes serve starts (plugins, the component compiler's child) keep the runtime's
// defaults. serve calls it once it serves, so the start's transient allocations (loading and
// planning every workflow) are not collected against a limit sized for the steady state.
func KeepHeapSmall(ctx context.Context, floor int64, userTuned bool) {
	if userTuned || floor <= 0 {
		return
	}
	prev := debug.SetMemoryLimit(floor)
	defer debug.SetMemoryLimit(prev)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	t := time.NewTicker(heapPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		debug.SetMemoryLimit(heapLimit(floor, sample[0].Value.Uint64()))
	}
}

// heapLimit is the soft limit for a live heap of live bytes: floor, or the live heap and half
// of it again once that is more.
func heapLimit(floor int64, live uint64) int64 {
	if live > math.MaxInt64/4 {
		return math.MaxInt64
	}
	return max(floor, int64(live)+int64(live)*heapRoomNum/heapRoomDen)
}
