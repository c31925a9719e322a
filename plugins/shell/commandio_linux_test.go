package main

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fuscia/fuscia/plugins/internal/execcore"
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

// Whatever way it learns of the exit — the pidfd in its epoll instance, or a waiter goroutine
// when there is no pidfd or epoll refuses the descriptor — commandIO sees the process exit and
// leaves it unreaped (its pid, the group's id, stays reserved), and exec.Cmd.Wait still gets
// its status.
func TestCommandIOSeesTheExitWithoutReaping(t *testing.T) {
	cases := map[string]struct {
		fd         func(t *testing.T, pidfd int) int
		viaWaiter  bool
		needsPidfd bool
	}{
		"pidfd": {fd: func(t *testing.T, pidfd int) int { return pidfd }, needsPidfd: true},
		"no pidfd": {fd: func(t *testing.T, pidfd int) int {
			if pidfd >= 0 {
				unix.Close(pidfd)
			}
			return -1
		}, viaWaiter: true},
		// A descriptor epoll refuses (a regular file) must not be waited on through it.
		"unpollable descriptor": {fd: func(t *testing.T, pidfd int) int {
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
			return fd
		}, viaWaiter: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pidfd := -1
			cmd, stdin := startCat(t, &pidfd)
			if tc.needsPidfd && pidfd < 0 {
				t.Skip("the kernel gave no pidfd")
			}
			out := [2]*execcore.Capture{execcore.NewCapture(10), execcore.NewCapture(10)}
			cio, err := newCommandIO(-1, -1, -1, "", cmd.Process.Pid, tc.fd(t, pidfd), out)
			if err != nil {
				t.Fatal(err)
			}
			if cio.viaWaiter != tc.viaWaiter {
				t.Fatalf("viaWaiter = %v, want %v", cio.viaWaiter, tc.viaWaiter)
			}
			done := make(chan error, 1)
			go func() { done <- cio.run(func() bool { return cio.exited }) }()
			stdin.Close() // cat exits
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("run: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("run did not return 30 s after the process was told to exit")
			}
			var info unix.Siginfo
			err = unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
			if err != nil || info.Signo != int32(unix.SIGCHLD) {
				t.Fatalf("after the exit was seen the process is not an unreaped zombie: waitid %v, signo %d", err, info.Signo)
			}
			if err := cmd.Wait(); err != nil || cmd.ProcessState.ExitCode() != 0 {
				t.Fatalf("Wait after commandIO: %v, state %v", err, cmd.ProcessState)
			}
			cio.close()
		})
	}
}

// A command's output pipes stay out of Go's poller: only the epoll instance is in it. The
// plugin's ends are non-blocking all the same (a read must never block the task's goroutine).
func TestCommandIOOwnsRawNonBlockingEnds(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if p[1] >= 0 {
			unix.Close(p[1])
		}
	}()
	pidfd := -1
	cmd, stdin := startCat(t, &pidfd)
	defer stdin.Close()
	out := [2]*execcore.Capture{execcore.NewCapture(64), execcore.NewCapture(64)}
	cio, err := newCommandIO(p[0], -1, -1, "", cmd.Process.Pid, pidfd, out)
	if err != nil {
		t.Fatal(err)
	}
	flags, err := unix.FcntlInt(uintptr(p[0]), unix.F_GETFL, 0)
	if err != nil || flags&unix.O_NONBLOCK == 0 {
		t.Fatalf("the plugin's end: flags %#x, %v; want O_NONBLOCK", flags, err)
	}
	if _, err := unix.Write(p[1], []byte("hello")); err != nil {
		t.Fatal(err)
	}
	unix.Close(p[1])
	p[1] = -1
	cio.setDeadline(time.Now().Add(30 * time.Second))
	if err := cio.run(func() bool { return !cio.outputOpen() }); err != nil {
		t.Fatalf("run: %v", err)
	}
	if got := out[0].String(); got != "hello" {
		t.Fatalf("stdout = %q, want hello", got)
	}
	if cio.fds[tagStdout] != -1 {
		t.Fatal("the end of stdout did not close its descriptor")
	}
	stdin.Close()
	cmd.Wait()
	cio.close()
}

// An instance a command gives back is handed to the next one without the deadline it was left
// with, and no more than maxIdleInstances wait in the pool.
func TestEpollPoolReusesInstances(t *testing.T) {
	var p epollPool
	a, err := p.get()
	if err != nil {
		t.Fatal(err)
	}
	a.f.SetReadDeadline(time.Unix(1, 0)) // as interrupt leaves it
	p.put(a)
	b, err := p.get()
	if err != nil {
		t.Fatal(err)
	}
	if b != a {
		t.Fatal("a fresh instance was made while one was idle")
	}
	if err := b.raw.Read(func(uintptr) bool { return true }); err != nil {
		t.Fatalf("the reused instance kept its deadline: %v", err)
	}
	all := []*epollInstance{b}
	for range maxIdleInstances {
		inst, err := p.get()
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, inst)
	}
	for _, inst := range all {
		p.put(inst)
	}
	if len(p.idle) != maxIdleInstances {
		t.Fatalf("%d idle instances, want %d", len(p.idle), maxIdleInstances)
	}
	extra := all[len(all)-1]
	if err := extra.raw.Control(func(uintptr) {}); err == nil {
		t.Fatal("the instance over the limit was not closed")
	}
	for _, inst := range p.idle {
		inst.f.Close()
	}
}

// A descriptor commandIO is done with leaves its instance even while another copy of it is
// open (as in another command's child between its clone and its exec): the instance goes back
// to the pool, and must not report the old descriptor to the next command.
func TestDoneTakesTheDescriptorOutOfTheInstance(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[1])
	copyFD, err := unix.Dup(p[0]) // keeps the read end's file open after done closes p[0]
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(copyFD)
	pidfd := -1
	cmd, stdin := startCat(t, &pidfd)
	out := [2]*execcore.Capture{execcore.NewCapture(64), execcore.NewCapture(64)}
	cio, err := newCommandIO(p[0], -1, -1, "", cmd.Process.Pid, pidfd, out)
	if err != nil {
		t.Fatal(err)
	}
	ep := cio.inst.fd
	if _, err := unix.Write(p[1], []byte("x")); err != nil { // the read end is ready now
		t.Fatal(err)
	}
	cio.done(tagStdout)
	var events [4]unix.EpollEvent
	n, err := unix.EpollWait(ep, events[:], 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events[:n] {
		if ev.Fd == tagStdout {
			t.Fatal("the instance still reports a descriptor commandIO is done with")
		}
	}
	stdin.Close()
	cmd.Wait()
	cio.close()
}

// A stream with more waiting than one round reads (maxReadsPerRound buffers) is left for the
// next round, so that run gets back to its deadline between rounds however fast a command
// writes.
func TestHandleReadsABoundedAmountPerRound(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[1])
	if _, err := unix.FcntlInt(uintptr(p[1]), unix.F_SETPIPE_SZ, 1<<20); err != nil {
		t.Skipf("cannot grow the pipe: %v", err)
	}
	const pending = 400 << 10
	if _, err := unix.Write(p[1], make([]byte, pending)); err != nil {
		t.Fatal(err)
	}
	pidfd := -1
	cmd, stdin := startCat(t, &pidfd)
	out := [2]*execcore.Capture{execcore.NewCapture(1 << 20), execcore.NewCapture(64)}
	cio, err := newCommandIO(p[0], -1, -1, "", cmd.Process.Pid, pidfd, out)
	if err != nil {
		t.Fatal(err)
	}
	if cio.handle(tagStdout) {
		t.Fatal("the first round read everything waiting")
	}
	if got, want := len(out[0].String()), maxReadsPerRound*len(cio.buf); got != want {
		t.Fatalf("the first round read %d bytes, want %d", got, want)
	}
	if !cio.handle(tagStdout) {
		t.Fatal("the second round stopped early with less than a round's worth waiting")
	}
	if got := len(out[0].String()); got != pending {
		t.Fatalf("read %d bytes in all, want %d", got, pending)
	}
	stdin.Close()
	cmd.Wait()
	cio.close()
}
