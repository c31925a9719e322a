package badger

import "testing"

// TestVlogThresholdStaticSendsNothing: without a dynamic threshold (VLogPercentile 0) a value-log
// write hands its value sizes to nobody, so it wakes no goroutine; with one, the listener gets
// them.
func TestVlogThresholdStaticSendsNothing(t *testing.T) {
	opt := DefaultOptions("")
	opt.maxValueThreshold = maxValueThreshold
	lt := initVlogThreshold(&opt)
	lt.update([]int64{10, 20})
	if n := len(lt.valueCh); n != 0 {
		t.Fatalf("a static threshold queued %d size updates for the listener, want none", n)
	}
	if got := lt.valueThreshold.Load(); got != opt.ValueThreshold {
		t.Fatalf("threshold %d, want Options.ValueThreshold %d", got, opt.ValueThreshold)
	}

	opt.VLogPercentile = 0.9
	lt = initVlogThreshold(&opt)
	lt.update([]int64{10, 20})
	if n := len(lt.valueCh); n != 1 {
		t.Fatalf("a dynamic threshold queued %d size updates, want 1", n)
	}
}
