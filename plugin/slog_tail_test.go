package plugin

import (
	"fmt"
	"strings"
	"testing"
)

// TestStderrTailKeepsThePanic: a Go plugin's crash writes "panic: …" and then dozens of
// goroutine frames; the tail quoted in the crash's error keeps the panic's line before the last
// lines, which alone were frames saying nothing of the cause.
func TestStderrTailKeepsThePanic(t *testing.T) {
	var tail stderrTail
	fmt.Fprintln(&tail, "starting")
	fmt.Fprintln(&tail, "panic: runtime error: index out of range [3] with length 3")
	for i := range 40 {
		fmt.Fprintf(&tail, "main.frame%d()\n\t/src/main.go:%d +0x1d\n", i, i)
	}
	got := tail.String()
	if !strings.HasPrefix(got, "panic: runtime error: index out of range [3] with length 3 | … | ") || !strings.HasSuffix(got, "/src/main.go:39 +0x1d") {
		t.Errorf("tail = %q; want the panic's line, then the last lines", got)
	}
	var short stderrTail
	fmt.Fprintln(&short, "panic: boom")
	fmt.Fprintln(&short, "goroutine 1 [running]:")
	if got := short.String(); got != "panic: boom | goroutine 1 [running]:" {
		t.Errorf("tail = %q; the panic's line among the last ones is not repeated", got)
	}
}
