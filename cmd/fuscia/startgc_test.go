package main

import (
	"runtime/debug"
	"testing"
	"time"
)

// gcPercent reads the current GC percent (debug has no getter).
func gcPercent() int {
	v := debug.SetGCPercent(100)
	debug.SetGCPercent(v)
	return v
}

func TestRelaxGCAtStart(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	env := map[string]string{}
	c := &cli{getenv: func(k string) string { return env[k] }}

	stop := c.relaxGCAtStart()
	if got := gcPercent(); got != startGCPercent {
		t.Errorf("during the start: GC percent %d, want %d", got, startGCPercent)
	}
	stop()
	if got := gcPercent(); got != 100 {
		t.Errorf("after stop: GC percent %d, want 100 back", got)
	}

	// A run longer than the window goes back to the previous percent by itself.
	debug.SetGCPercent(150)
	stop = c.relaxGCAtStart()
	deadline := time.Now().Add(30 * time.Second)
	for gcPercent() != 150 {
		if time.Now().After(deadline) {
			t.Fatalf("GC percent still %d 30 s after the start; want 150 after %v", gcPercent(), startGCWindow)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if got := gcPercent(); got != 150 {
		t.Errorf("stop after the window: GC percent %d, want 150", got)
	}

	// The user's GOGC, and a percent already as high (a one-shot command's), are left alone.
	env["GOGC"] = "50"
	debug.SetGCPercent(50)
	c.relaxGCAtStart()()
	if got := gcPercent(); got != 50 {
		t.Errorf("with GOGC set: GC percent %d, want 50", got)
	}
	delete(env, "GOGC")
	debug.SetGCPercent(800)
	stop = c.relaxGCAtStart()
	if got := gcPercent(); got != 800 {
		t.Errorf("from 800: GC percent %d, want 800 kept", got)
	}
	stop()
}
