package serve

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
)

// memoryLimit reads the runtime's soft memory limit without changing it.
func memoryLimit() int64 { return debug.SetMemoryLimit(-1) }

func TestHeapLimitFollowsLiveHeap(t *testing.T) {
	const floor = 64 << 20
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, floor},
		{20 << 20, floor},      // serve under webhook load: the floor bounds the garbage
		{60 << 20, 90 << 20},   // serve's compactions under webhook load: GOGC=50's room
		{100 << 20, 150 << 20}, // a large live heap keeps GOGC=50's pace, not the floor
		{1 << 62, 1<<63 - 1},   // no overflow: no limit
	} {
		if got := heapLimit(floor, c.live); got != c.want {
			t.Errorf("heapLimit(%d, %d) = %d, want %d", int64(floor), c.live, got, c.want)
		}
	}
}

func TestKeepHeapSmallRaisesTheLimitForALargeLiveHeapAndRestoresIt(t *testing.T) {
	before := memoryLimit()
	const floor = 1 << 20
	live := make([]byte, 64<<20) // live while the loop below polls
	for i := range live {
		live[i] = byte(i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); KeepHeapSmall(ctx, floor, false) }()
	eventually(t, "the limit to follow a 64 MiB live heap", func() bool {
		runtime.GC() // the live-heap metric is the last collection's
		return memoryLimit() >= int64(len(live))*3/2
	})
	runtime.KeepAlive(live)
	cancel()
	<-done
	if got := memoryLimit(); got != before {
		t.Fatalf("limit after ctx done = %d, want the one found (%d)", got, before)
	}
}

func TestKeepHeapSmallLeavesAUserChoiceAlone(t *testing.T) {
	before := memoryLimit()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	KeepHeapSmall(ctx, 1<<20, true) // returns at once: GOMEMLIMIT or GOGC set
	if got := memoryLimit(); got != before {
		t.Fatalf("limit = %d after a user-tuned call, want %d untouched", got, before)
	}
}

func TestKeepHeapSmallSetsNoEnvironmentForChildren(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "") // restored after the test; empty as a child would see it unset
	before := memoryLimit()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); KeepHeapSmall(ctx, 1<<20, false) }()
	eventually(t, "the limiter to set a limit", func() bool { return memoryLimit() != before })
	if v := os.Getenv("GOMEMLIMIT"); v != "" {
		t.Errorf("GOMEMLIMIT=%q in the environment while the limiter runs: plugins and the compiler's child would inherit it", v)
	}
	cancel()
	<-done
}
