package memguard

import (
	"runtime"
	"testing"
	"time"
)

// TestWatch: a heap past the limit is reported, with its size; one below it is not, and stop
// returns with the goroutine gone.
func TestWatch(t *testing.T) {
	reported := make(chan uint64, 1)
	stop := Watch(64<<20, time.Millisecond, func(heap uint64) { reported <- heap })
	ballast := make([]byte, 128<<20)
	for i := range ballast {
		ballast[i] = 1 // written, so that nothing can elide it
	}
	heap := <-reported // waits for the event, however long the machine takes to sample
	stop()
	runtime.KeepAlive(ballast)
	if heap < 128<<20 {
		t.Errorf("reported a heap of %d bytes; want at least the 128 MiB allocated", heap)
	}

	called := make(chan struct{}, 1)
	stop = Watch(1<<40, time.Millisecond, func(uint64) { called <- struct{}{} })
	time.Sleep(20 * time.Millisecond) // some samples taken; none may report
	stop()
	select {
	case <-called:
		t.Error("a heap far below the limit was reported")
	default:
	}
}
