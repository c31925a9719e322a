// Package stackgrow grows a goroutine's stack while the goroutine is still shallow.
//
// A goroutine starts with a 2 KiB stack. When a call needs more, the runtime allocates one
// twice the size and copies the old one over, adjusting every frame in it; a path that needs
// 16 KiB grows three times, and late in a deep call each growth copies many frames. Fuscia's
// run loop and webhook handler reach go-cty's attribute lookup, which normalizes the name
// through x/text's norm.Form.String, a frame of kilobytes, at such a depth: 6.4% of serve's
// CPU under webhook load was that copying (docs/performance.md, issue 20 item 4, session 22).
// Reserving the room first thing costs one copy of a frame or two, and nothing at all when
// the stack has the room already (a reused goroutine's).
package stackgrow

// Reserve8K makes sure the calling goroutine's stack has 8 KiB free below the caller's frame,
// growing it if not (a new goroutine's to 16 KiB).
func Reserve8K() { reserve8K(false) }

// Reserve16K makes sure the calling goroutine's stack has 16 KiB free below the caller's
// frame, growing it if not (a new goroutine's to 32 KiB).
func Reserve16K() { reserve16K(false) }

// The reservers' frames hold an array that they never touch (touch is always false): the
// runtime checks a function's whole frame as it enters, so the frame alone grows the stack,
// and an array left untouched costs no zeroing. keepFrame keeps the compiler from dropping
// the arrays, and with them the frames.

//go:noinline
func reserve8K(touch bool) {
	if touch {
		var b [8 << 10]byte
		keepFrame(b[:])
	}
}

//go:noinline
func reserve16K(touch bool) {
	if touch {
		var b [16 << 10]byte
		keepFrame(b[:])
	}
}

//go:noinline
func keepFrame([]byte) {}
