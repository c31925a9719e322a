package main

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// startCat starts /bin/cat on a pipe: it runs until the returned writer is closed.
func startCat(t *testing.T, pidfd *int) (*exec.Cmd, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/cat")
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{PidFD: pidfd}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	t.Cleanup(func() {
		w.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, w
}

// Whatever way it waits, exitWaiter returns once the process has exited and leaves it
// unreaped (its pid, the group's id, stays reserved), and exec.Cmd.Wait still gets its status.
func TestExitWaiterWaitsWithoutReaping(t *testing.T) {
	cases := map[string]func(t *testing.T, cmd *exec.Cmd, pidfd int) *exitWaiter{
		"pidfd in the poller": func(t *testing.T, cmd *exec.Cmd, pidfd int) *exitWaiter {
			if pidfd < 0 {
				t.Skip("the kernel gave no pidfd")
			}
			w := newExitWaiter(cmd.Process.Pid, pidfd)
			if w.fd == nil {
				t.Fatal("a pidfd was given but the waiter fell back to a blocking waitid")
			}
			return w
		},
		"no pidfd": func(t *testing.T, cmd *exec.Cmd, pidfd int) *exitWaiter {
			if pidfd >= 0 {
				unix.Close(pidfd)
			}
			return newExitWaiter(cmd.Process.Pid, -1)
		},
		// A descriptor the poller refuses must not be waited on through it (the wait would
		// fail or spin): the waiter falls back to waitid on the pid.
		"unpollable descriptor": func(t *testing.T, cmd *exec.Cmd, pidfd int) *exitWaiter {
			if pidfd >= 0 {
				unix.Close(pidfd)
			}
			f, err := os.CreateTemp(t.TempDir(), "notapidfd")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fd, err := unix.Dup(int(f.Fd()))
			if err != nil {
				t.Fatal(err)
			}
			w := newExitWaiter(cmd.Process.Pid, fd)
			if w.fd != nil {
				t.Fatal("a regular file was taken as a pollable pidfd")
			}
			return w
		},
	}
	for name, waiter := range cases {
		t.Run(name, func(t *testing.T) {
			pidfd := -1
			cmd, stdin := startCat(t, &pidfd)
			w := waiter(t, cmd, pidfd)
			defer w.close()
			done := make(chan error, 1)
			go func() { done <- w.wait() }()
			stdin.Close() // cat exits
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("wait: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("wait did not return 30 s after the process was told to exit")
			}
			var info unix.Siginfo
			err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
			if err != nil || info.Signo != int32(unix.SIGCHLD) {
				t.Fatalf("after wait the process is not an unreaped zombie: waitid %v, signo %d", err, info.Signo)
			}
			if err := cmd.Wait(); err != nil || cmd.ProcessState.ExitCode() != 0 {
				t.Fatalf("Wait after the waiter: %v, state %v", err, cmd.ProcessState)
			}
		})
	}
}
