//go:build unix

package engine

import (
	"syscall"
	"time"
)

// selfUsage is this process's CPU time (user and system, every thread) and context switches
// (voluntary and involuntary) so far; a child's, such as a plugin's, are not counted. A
// benchmark reports them per operation: on a machine shared with other work they move far less
// than wall time, which the waiting for a CPU dominates.
func selfUsage() (cpu time.Duration, switches int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), int64(ru.Nvcsw + ru.Nivcsw)
}
