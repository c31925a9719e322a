package main

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// exitWaiter waits for a started command's leader to exit without reaping it (WNOWAIT), so
// that its pid, the process group's id, stays reserved for the group kill that follows.
//
// With a pidfd (Linux 5.3 and later) the wait parks the goroutine in Go's network poller: a
// pidfd becomes readable when its process exits. No thread sits blocked in waitid for the
// command's lifetime, so the runtime's monitor does not wake every 20 µs to take the thread's
// P back (each wake-up preempted the child on its CPU), and the child's exit is seen by the
// one thread already waiting in the poller for the output pipes' end, instead of waking a
// thread of its own (docs/performance.md, issue 20 item 2). Without a pollable pidfd it falls
// back to a blocking waitid on the pid.
type exitWaiter struct {
	pid int
	fd  *os.File // the pidfd, registered with the poller; nil when not usable
}

// newExitWaiter takes ownership of pidfd (-1 when the kernel gave none).
func newExitWaiter(pid, pidfd int) *exitWaiter {
	w := &exitWaiter{pid: pid}
	if pidfd < 0 {
		return w
	}
	if err := unix.SetNonblock(pidfd, true); err != nil {
		unix.Close(pidfd)
		return w
	}
	f := os.NewFile(uintptr(pidfd), "pidfd")
	// A file the poller does not take has no deadlines; waiting on it would spin.
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		f.Close()
		return w
	}
	w.fd = f
	return w
}

// wait blocks until the leader has exited; it does not reap it.
func (w *exitWaiter) wait() error {
	if w.fd == nil {
		return awaitExit(w.pid)
	}
	rc, err := w.fd.SyscallConn()
	if err != nil {
		return err
	}
	var werr error
	err = rc.Read(func(fd uintptr) bool {
		for {
			var info unix.Siginfo
			werr = unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
			switch {
			case errors.Is(werr, unix.EINTR):
				continue
			case werr != nil:
				return true // reported below
			}
			// With WNOHANG, a process that has not exited leaves info zeroed.
			return info.Signo == int32(unix.SIGCHLD)
		}
	})
	if err != nil {
		return err
	}
	return werr
}

// close releases the pidfd. The process itself is reaped by reap (spawn_linux.go).
func (w *exitWaiter) close() {
	if w.fd != nil {
		w.fd.Close()
	}
}

// awaitExit blocks a thread until the process pid has exited, without reaping it (WNOWAIT).
func awaitExit(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
