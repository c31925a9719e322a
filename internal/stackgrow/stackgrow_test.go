package stackgrow

import (
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
)

// TestReserveGrowsTheStack: Reserve8K and Reserve16K leave a new goroutine with a stack of 16
// and 32 KiB, though they touch nothing: what grows it is their frame, which a compiler that
// dropped the unused array would drop too. Measured as the stack memory in use while 64
// goroutines that called one sit parked, against 64 that did not.
func TestReserveGrowsTheStack(t *testing.T) {
	const n = 64
	// A collection would shrink the parked goroutines' stacks, which use little of them.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	inUse := func(grow func()) uint64 {
		var ready, hold sync.WaitGroup
		ready.Add(n)
		hold.Add(1)
		var done sync.WaitGroup
		done.Add(n)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before := ms.StackInuse
		for range n {
			go func() {
				defer done.Done()
				grow()
				ready.Done()
				hold.Wait()
			}()
		}
		ready.Wait()
		runtime.ReadMemStats(&ms)
		hold.Done()
		done.Wait()
		if ms.StackInuse < before {
			return 0
		}
		return ms.StackInuse - before
	}
	for _, tc := range []struct {
		name  string
		grow  func()
		stack uint64
	}{
		{"Reserve8K", Reserve8K, 16 << 10},
		{"Reserve16K", Reserve16K, 32 << 10},
	} {
		base := inUse(func() {})
		grown := inUse(tc.grow)
		// Each grown goroutine holds its new stack (its first one was freed): at least three
		// quarters of the promised size each, where plain ones hold far less.
		want := uint64(n) * tc.stack * 3 / 4
		if base >= want {
			t.Fatalf("%d plain goroutines hold %d bytes of stack: the test cannot tell a grown stack from a new one", n, base)
		}
		if grown < want {
			t.Errorf("%s: %d goroutines hold %d bytes of stack (plain ones %d), want at least %d (%d KiB each)",
				tc.name, n, grown, base, want, tc.stack>>10)
		}
	}
}
