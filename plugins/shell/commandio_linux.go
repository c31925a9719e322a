package main

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fuscia/fuscia/plugins/internal/execcore"
)

// commandIO watches one running command — its stdout and stderr pipes, its stdin pipe when it
// has input, and its exit — through an epoll instance of its own, which Go's network poller
// waits on (an epoll descriptor is readable while something in it is ready). The task's own
// goroutine does all the work: it reads the output, writes the input and notices the exit.
//
// It replaces a goroutine per stream and one for the exit, each in the poller with its own
// descriptor: when a command such as /bin/true ended, the poller woke three goroutines at once,
// each woke the task's goroutine in turn, and the runtime woke an idle thread for each hand-off
// (docs/performance.md, issue 20 item 2, session 12). The descriptors are raw and never enter
// Go's poller themselves, which also saves the fcntl calls os.NewFile spends on each.
//
// The instance is level-triggered: a stream at its end, or a pidfd whose process has exited,
// stays ready, so each is taken out and closed as soon as that is seen.
type commandIO struct {
	inst *epollInstance // from instances; back to it on close

	fds   [4]int // by tag: the plugin's ends of stdout, stderr and stdin, and the exit's fd; -1 when done
	input []byte // what is left to write to stdin
	outs  [2]*execcore.Capture

	exited bool
	// viaWaiter: the exit's fd is an eventfd a goroutine writes once pid has exited (no
	// pidfd). waiterDone is closed when that goroutine has ended; close waits for it before
	// closing the eventfd.
	viaWaiter  bool
	waiterDone chan struct{}
	buf        *[32 << 10]byte // from execcore's pool, back to it on close
}

// The tags of the watched descriptors (each event carries its tag).
const (
	tagStdout = iota
	tagStderr
	tagStdin
	tagExit
)

// newCommandIO takes ownership of the plugin's ends stdout, stderr and stdin (-1: none) and of
// pidfd. Without a pidfd (-1: the kernel gave none), or with one epoll refuses, a goroutine
// waits for pid's exit and signals it. On error everything it was given is closed; the command
// must then be killed and reaped by the caller.
func newCommandIO(stdout, stderr, stdin int, input string, pid, pidfd int, outs [2]*execcore.Capture) (*commandIO, error) {
	c := &commandIO{fds: [4]int{stdout, stderr, stdin, pidfd}, input: []byte(input), outs: outs}
	fail := func(err error) (*commandIO, error) {
		c.close()
		return nil, err
	}
	for _, fd := range c.fds[:tagExit] {
		if fd < 0 {
			continue
		}
		// The child has its own (blocking) ends; a pipe's two ends do not share flags. Pipe
		// ends have no other status flag to keep.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, unix.O_NONBLOCK); err != nil {
			return fail(os.NewSyscallError("fcntl", err))
		}
	}
	inst, err := instances.get()
	if err != nil {
		return fail(err)
	}
	c.inst = inst
	ep := inst.fd
	add := func(tag int) error {
		events := uint32(unix.EPOLLIN)
		if tag == tagStdin {
			events = unix.EPOLLOUT
		}
		return unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, c.fds[tag], &unix.EpollEvent{Events: events, Fd: int32(tag)})
	}
	for tag, fd := range c.fds[:tagExit] {
		if fd >= 0 {
			if err := add(tag); err != nil {
				return fail(os.NewSyscallError("epoll_ctl", err))
			}
		}
	}
	if pidfd >= 0 && add(tagExit) != nil {
		c.done(tagExit) // not a descriptor epoll takes: wait for the exit as without one
	}
	if c.fds[tagExit] < 0 {
		// No pidfd: a goroutine waits for the exit (started below, when nothing can fail any
		// more) and signals it through an eventfd.
		efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err != nil {
			return fail(os.NewSyscallError("eventfd", err))
		}
		c.fds[tagExit] = efd
		c.viaWaiter = true
		if err := add(tagExit); err != nil {
			return fail(os.NewSyscallError("epoll_ctl", err))
		}
	}
	if len(input) == 0 {
		c.done(tagStdin)
	}
	c.buf = execcore.ReadBuffer()
	if c.viaWaiter {
		// Started last: nothing can fail after it, and close waits for it.
		efd := c.fds[tagExit]
		c.waiterDone = make(chan struct{})
		go func() {
			defer close(c.waiterDone)
			// An error (none is expected: the process is ours and unreaped) ends the wait as
			// an exit does; the caller kills the group and reap tells the story.
			awaitExit(pid)
			unix.Write(efd, []byte{1, 0, 0, 0, 0, 0, 0, 0})
		}()
	}
	return c, nil
}

// run handles whatever is ready until stop reports true (checked after each round), or the
// instance's read deadline passes (os.ErrDeadlineExceeded).
//
// A round reads at most maxReadsPerRound buffers from a stream. A round that stops early ends
// the RawConn read, and the next one starts with the deadline checked again: a command that
// writes faster than the plugin reads cannot keep its timeout from firing.
func (c *commandIO) run(stop func() bool) error {
	for !stop() {
		var events [4]unix.EpollEvent
		var err error
		more := false
		rerr := c.inst.raw.Read(func(ep uintptr) bool {
			var n int
			for {
				n, err = unix.EpollWait(int(ep), events[:], 0)
				if err != unix.EINTR {
					break
				}
			}
			if err != nil {
				err = os.NewSyscallError("epoll_wait", err)
				return true
			}
			for _, ev := range events[:n] {
				if !c.handle(int(ev.Fd)) {
					more = true
				}
			}
			return more || stop()
		})
		if rerr != nil {
			return rerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// maxReadsPerRound bounds the reads of one stream in one round of run (256 KiB).
const maxReadsPerRound = 8

// handle serves the ready descriptor with the given tag. It reports false when it stopped
// reading a stream that still has data (maxReadsPerRound).
func (c *commandIO) handle(tag int) bool {
	fd := c.fds[tag]
	if fd < 0 {
		return true // done with it earlier in this round
	}
	switch tag {
	case tagStdout, tagStderr:
		for reads := 0; ; {
			if reads == maxReadsPerRound {
				return false
			}
			n, err := unix.Read(fd, c.buf[:])
			if n > 0 {
				c.outs[tag].Write(c.buf[:n])
				reads++
				continue
			}
			if err == unix.EINTR {
				continue
			}
			if err != unix.EAGAIN { // the end (or an error, which ends it as well)
				c.done(tag)
			}
			return true
		}
	case tagStdin:
		for len(c.input) > 0 {
			n, err := unix.Write(fd, c.input)
			if n > 0 {
				c.input = c.input[n:]
				continue
			}
			if err == unix.EINTR {
				continue
			}
			if err == unix.EAGAIN {
				return true
			}
			// EPIPE: the command exited without reading all of its input. Not an error.
			break
		}
		c.done(tag)
	case tagExit:
		if c.viaWaiter {
			c.exited = true // the eventfd: the waiter's wait has ended
		} else {
			var info unix.Siginfo
			err := unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
			// With WNOHANG, a process that has not exited leaves info zeroed. An error cannot
			// happen short of a kernel surprise; the exit is then taken as seen, and reap
			// tells the story.
			if err == unix.EINTR || (err == nil && info.Signo != int32(unix.SIGCHLD)) {
				return true
			}
			c.exited = true
		}
		c.done(tag)
	}
	return true
}

// done takes the descriptor with the given tag out of the instance and closes it. Closing
// alone would not do: another command's child, between its clone and its exec, holds a copy of
// every descriptor, and epoll forgets a descriptor only when its last copy is closed — until
// then the instance, back in the pool, would report it to the next command.
func (c *commandIO) done(tag int) {
	if fd := c.fds[tag]; fd >= 0 {
		if c.inst != nil {
			unix.EpollCtl(c.inst.fd, unix.EPOLL_CTL_DEL, fd, nil) // ENOENT: never added
		}
		unix.Close(fd)
		c.fds[tag] = -1
	}
}

// outputOpen reports whether stdout or stderr has yet to reach its end.
func (c *commandIO) outputOpen() bool { return c.fds[tagStdout] >= 0 || c.fds[tagStderr] >= 0 }

// interrupt makes a run under way, or the next one, return os.ErrDeadlineExceeded.
func (c *commandIO) interrupt() { c.setDeadline(time.Unix(1, 0)) }

// setDeadline bounds the waits of run; the zero time removes the bound.
func (c *commandIO) setDeadline(t time.Time) { c.inst.f.SetReadDeadline(t) }

// awaitWaiter returns once the fallback's waiter (no pidfd) has seen the exit, so that the
// process is not reaped before the waiter's waitid and its pid reused under it; it returns at
// once when there is no waiter. The command must be dead or dying.
func (c *commandIO) awaitWaiter() {
	if c.waiterDone != nil {
		<-c.waiterDone
	}
}

// close releases every descriptor left. The command must have exited: the fallback's waiter,
// when there is one, is waited for.
func (c *commandIO) close() {
	for tag := range c.fds {
		if tag == tagExit {
			c.awaitWaiter() // it writes to the eventfd
		}
		c.done(tag)
	}
	if c.inst != nil {
		// Every descriptor it watched has been taken out of it.
		instances.put(c.inst)
		c.inst = nil
	}
	if c.buf != nil {
		execcore.ReleaseReadBuffer(c.buf)
		c.buf = nil
	}
}

// awaitExit blocks a thread until the process pid has exited, without reaping it (WNOWAIT), so
// that its pid, the process group's id, stays reserved for the group kill that follows.
func awaitExit(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// An epollInstance is an epoll descriptor registered with Go's poller.
type epollInstance struct {
	f   *os.File
	fd  int
	raw syscall.RawConn
}

// epollPool keeps the instances of commands that have ended, for the next ones: making one
// and registering it with the poller, then undoing both, is seven system calls a command.
// At most maxIdleInstances wait here; the rest are closed.
type epollPool struct {
	mu   sync.Mutex
	idle []*epollInstance
}

const maxIdleInstances = 8

// instances serves every command of this process, as execcore's pool does with read buffers: a
// pool of interchangeable resources, not state any caller can observe.
var instances epollPool

func (p *epollPool) get() (*epollInstance, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		inst := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return inst, nil
	}
	p.mu.Unlock()
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("fcntl", err)
	}
	f := os.NewFile(uintptr(fd), "epoll") // non-blocking, so in the poller
	// A file the poller did not take has no deadlines; waiting on it would fail at once.
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		f.Close()
		return nil, fmt.Errorf("the network poller does not take an epoll instance: %w", err)
	}
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &epollInstance{f: f, fd: fd, raw: raw}, nil
}

// put takes back an instance whose every watched descriptor has been taken out. A readiness
// the poller noted for it earlier costs its next user one empty round at most.
func (p *epollPool) put(inst *epollInstance) {
	inst.f.SetReadDeadline(time.Time{})
	p.mu.Lock()
	if len(p.idle) < maxIdleInstances {
		p.idle = append(p.idle, inst)
		inst = nil
	}
	p.mu.Unlock()
	if inst != nil {
		inst.f.Close()
	}
}
