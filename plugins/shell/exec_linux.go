package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fuscia/fuscia/plugins/internal/execcore"
)

// ioGrace bounds how long run waits, once the command's process group is dead, for its output
// pipes to reach EOF. Only a process that left the group (setsid, a double fork into its own
// group) can still hold them; its output after that point is not the task's.
const ioGrace = 2 * time.Second

// errTimedOut is the cause of the run context when the input's timeout elapses, which tells
// it apart from the attempt's own deadline.
var errTimedOut = errors.New("exec timeout elapsed")

// runCommand starts in.Command in its own process group, feeds stdin, captures stdout and
// stderr, and waits for it. When it ends, for whatever reason, every process still in its
// group is killed and the command is reaped before runCommand returns: a task leaves nothing
// running behind it.
//
// Each pipe's end the child uses is a plain blocking descriptor, closed here as soon as the
// child has its copy; the plugin's end is non-blocking, in Go's network poller. The plugin
// reads the output itself (no os/exec copying goroutines), and the wait ends when the process
// exits, not when the last holder of a pipe (perhaps a grandchild) lets go.
func runCommand(ctx context.Context, in Input, timeout time.Duration) (execcore.Output, error) {
	what := "command " + in.Command
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		runCtx, cancel = context.WithTimeoutCause(ctx, timeout, errTimedOut)
	}
	defer cancel()

	var files []*os.File // the plugin's pipe ends; closed on return whatever happens
	var childFDs []int   // the child's ends; closed once it has its copies, or on return
	closeChildFDs := func() {
		for _, fd := range childFDs {
			unix.Close(fd)
		}
		childFDs = nil
	}
	defer func() {
		closeChildFDs()
		for _, f := range files {
			f.Close() // already closed ends give an error we do not care about
		}
	}()
	// pipe returns the plugin's end of a new pipe and the child's; toChild says which way the
	// data flows.
	pipe := func(toChild bool) (*os.File, int, error) {
		var p [2]int // read end, write end
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			return nil, -1, err
		}
		mine, theirs := p[0], p[1]
		if toChild {
			mine, theirs = p[1], p[0]
		}
		childFDs = append(childFDs, theirs)
		if err := unix.SetNonblock(mine, true); err != nil {
			unix.Close(mine)
			return nil, -1, err
		}
		f := os.NewFile(uintptr(mine), "|pipe") // non-blocking, so in the poller
		files = append(files, f)
		return f, theirs, nil
	}
	stdoutR, stdoutFD, err := pipe(false)
	if err != nil {
		return notRun, fmt.Errorf("%s: stdout pipe: %w", what, err)
	}
	stderrR, stderrFD, err := pipe(false)
	if err != nil {
		return notRun, fmt.Errorf("%s: stderr pipe: %w", what, err)
	}
	var stdinW *os.File
	var stdinFD int
	if in.Stdin != "" {
		if stdinW, stdinFD, err = pipe(true); err != nil {
			return notRun, fmt.Errorf("%s: stdin pipe: %w", what, err)
		}
	} else {
		if stdinFD, err = unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			return notRun, fmt.Errorf("%s: stdin: %w", what, err)
		}
		childFDs = append(childFDs, stdinFD)
	}
	cmd, err := spawn(spawnSpec{
		path: in.Command,
		args: in.Args,
		env:  execcore.EnvList(in.Env),
		dir:  in.Workdir,
		fds:  [3]int{stdinFD, stdoutFD, stderrFD},
	})
	if err != nil {
		return notRun, startError(what, err)
	}
	exit := newExitWaiter(cmd.pid, cmd.pidfd)
	defer exit.close()
	pgid := cmd.pid // the leader of a new group: the group's id is its pid

	// The child has its copies; ours of the ends it uses must go, or EOF never comes.
	closeChildFDs()

	stdout, stderr := execcore.NewCapture(execcore.MaxOutput), execcore.NewCapture(execcore.MaxOutput)
	// Each pump ends at EOF / write error, or when waitIO closes its file, and then says so on
	// pumped (buffered: a pump never waits for waitIO).
	pumped, pumps := make(chan struct{}, 3), 0
	pump := func(f func()) {
		pumps++
		go func() { f(); pumped <- struct{}{} }()
	}
	pump(func() { io.Copy(stdout, stdoutR) })
	pump(func() { io.Copy(stderr, stderrR) })
	if stdinW != nil {
		pump(func() {
			// A command may exit without reading all of its input: the EPIPE is not an error.
			io.WriteString(stdinW, in.Stdin)
			stdinW.Close()
		})
	}

	exited := make(chan error, 1) // the leader exited; not reaped yet
	go func() { exited <- exit.wait() }()

	stopped := false
	select {
	case err := <-exited:
		if err != nil {
			// Cannot happen short of a kernel surprise; kill and let reap tell the story.
			killGroup(pgid)
		}
	case <-runCtx.Done():
		stopped = true
		killGroup(pgid)
		<-exited
	}
	// The leader is a zombie: its pid, the group's id, cannot be reused yet, so this kill
	// reaches only what the command left behind in its group.
	killGroup(pgid)
	status, waitErr := reap(cmd.pid)
	waitIO(pumped, pumps, stdoutR, stderrR, stdinW)

	if waitErr != nil { // cannot happen short of a kernel surprise: the process was ours
		return execcore.Collect(-1, stdout, stderr), fmt.Errorf("%s: wait: %w", what, waitErr)
	}
	out := execcore.Collect(status.ExitStatus(), stdout, stderr) // -1 when killed by a signal
	if stopped && !status.Exited() {
		// Killed by us. (A leader that had exited normally when the deadline hit keeps its
		// real result below.)
		if ctx.Err() == nil && errors.Is(context.Cause(runCtx), errTimedOut) {
			return out, execcore.Fatalf("%s timed out after %s; it and its process group were killed", what, timeout)
		}
		return out, fmt.Errorf("%s stopped, its process group killed: %w", what, ctx.Err())
	}
	signal := ""
	if status.Signaled() {
		signal = unix.SignalName(status.Signal())
	}
	return out, execcore.CheckExit(what, out.ExitCode, signal, in.AllowExitCodes, stderr.Tail())
}

// killGroup sends SIGKILL to every process in the group. A group that is already gone is fine.
func killGroup(pgid int) {
	// ESRCH (no such group) is the common case after a clean exit. EPERM would mean a member
	// changed its credentials (setuid); there is nothing more to do, and the leader is reaped
	// regardless. So the error is deliberately ignored.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// waitIO waits for the n pumps to report on pumped, at most ioGrace, then closes the plugin's
// pipe ends so that any pump still blocked returns, and waits for the rest.
func waitIO(pumped <-chan struct{}, n int, files ...*os.File) {
	t := time.NewTimer(ioGrace)
	defer t.Stop()
	for ; n > 0; n-- {
		select {
		case <-pumped:
		case <-t.C:
			for _, f := range files {
				if f != nil {
					f.Close()
				}
			}
			for ; n > 0; n-- {
				<-pumped
			}
			return
		}
	}
}

// startError classifies a failed start: what a retry cannot fix is fatal (a program that is
// not an executable, a directory we may not enter); anything else (fork hitting a process
// limit, out of memory) is left retryable.
func startError(what string, err error) error {
	err = fmt.Errorf("%s could not start: %w", what, err)
	for _, errno := range []syscall.Errno{syscall.ENOENT, syscall.EACCES, syscall.EPERM, syscall.ENOEXEC,
		syscall.ENOTDIR, syscall.EISDIR, syscall.ELOOP, syscall.ENAMETOOLONG, syscall.E2BIG} {
		if errors.Is(err, errno) {
			return execcore.AsFatal(err)
		}
	}
	return err
}
