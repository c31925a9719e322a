//go:build unix

package plugintest

import (
	"errors"
	"syscall"
)

// processExists reports whether a process with this PID exists (signal 0 checks without
// sending anything; EPERM means it exists but is not ours).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
