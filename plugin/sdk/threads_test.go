package sdk

import (
	"runtime"
	"testing"
)

// TestOneThread: one thread unless GOMAXPROCS is set, which wins.
func TestOneThread(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(4)
	t.Setenv("GOMAXPROCS", "")
	OneThread()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("GOMAXPROCS unset: OneThread left %d threads, want 1", got)
	}
	runtime.GOMAXPROCS(4)
	t.Setenv("GOMAXPROCS", "4")
	OneThread()
	if got := runtime.GOMAXPROCS(0); got != 4 {
		t.Errorf("GOMAXPROCS=4 in the environment: OneThread set %d threads, want 4", got)
	}
}
