package execcore

import (
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// A reader that hands out its data a few bytes at a time, then fails or ends.
func TestCaptureReadFromKeepsLimitAndReportsErrors(t *testing.T) {
	c := NewCapture(10)
	n, err := c.ReadFrom(iotest.HalfReader(strings.NewReader("hello world, and more")))
	if n != 21 || err != nil {
		t.Fatalf("ReadFrom = %d, %v; want 21, nil (EOF is not an error)", n, err)
	}
	if c.String() != "hello worl" || !c.Truncated() || c.Tail() != "hello world, and more" {
		t.Errorf("got %q truncated=%v tail %q", c.String(), c.Truncated(), c.Tail())
	}

	boom := errors.New("boom")
	c = NewCapture(100)
	n, err = c.ReadFrom(io.MultiReader(strings.NewReader("partial"), iotest.ErrReader(boom)))
	if n != 7 || !errors.Is(err, boom) || c.String() != "partial" {
		t.Errorf("ReadFrom = %d, %v, kept %q; want 7, boom, \"partial\"", n, err, c.String())
	}
}

// io.Copy from a pipe into a Capture must not allocate a 32 KiB buffer per call: the shell
// plugin does it twice per exec (docs/performance.md, issue 20 item 2).
func TestCaptureCopyFromPipeReusesBuffers(t *testing.T) {
	const runs = 100
	copyOnce := func() {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		w.WriteString("x")
		w.Close()
		c := NewCapture(MaxOutput)
		if _, err := io.Copy(c, r); err != nil || c.String() != "x" {
			t.Fatalf("io.Copy: %v, kept %q", err, c.String())
		}
		r.Close()
	}
	copyOnce() // the pool's first buffer
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		copyOnce()
	}
	runtime.ReadMemStats(&after)
	// Without the pool each copy allocates 32 KiB and more. With it, a copy allocates about
	// 1 KiB (the pipe's files, the capture) plus a new buffer whenever the pool lost one: after
	// a collection, or, under the race detector, one Put in four at random (≈ 8 KiB a copy on
	// average). 20 KiB a copy keeps both cases far from the line.
	if got := after.TotalAlloc - before.TotalAlloc; got > runs*20<<10 {
		t.Errorf("%d bytes allocated over %d copies (%d each); want the read buffer reused", got, runs, got/runs)
	}
}
