package main

import (
	"context"
	"errors"
	"fmt"
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
// child has its copy. The plugin's ends, and the command's pidfd, are watched by commandIO on
// this goroutine: it reads the output, writes the input, and notices the exit, and the wait
// ends when the process exits, not when the last holder of a pipe (perhaps a grandchild) lets
// go.
func runCommand(ctx context.Context, in Input, timeout time.Duration) (execcore.Output, error) {
	what := "command " + in.Command
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		runCtx, cancel = context.WithTimeoutCause(ctx, timeout, errTimedOut)
	}
	defer cancel()

	var mine []int     // the plugin's ends; commandIO takes them, else closed on return
	var childFDs []int // the child's ends; closed once it has its copies, or on return
	closeAll := func(fds *[]int) {
		for _, fd := range *fds {
			unix.Close(fd)
		}
		*fds = nil
	}
	defer closeAll(&childFDs)
	defer closeAll(&mine)
	// pipe returns the plugin's end of a new pipe and the child's; toChild says which way the
	// data flows.
	pipe := func(toChild bool) (int, int, error) {
		var p [2]int // read end, write end
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			return -1, -1, err
		}
		ours, theirs := p[0], p[1]
		if toChild {
			ours, theirs = p[1], p[0]
		}
		mine = append(mine, ours)
		childFDs = append(childFDs, theirs)
		return ours, theirs, nil
	}
	stdoutR, stdoutFD, err := pipe(false)
	if err != nil {
		return notRun, fmt.Errorf("%s: stdout pipe: %w", what, err)
	}
	stderrR, stderrFD, err := pipe(false)
	if err != nil {
		return notRun, fmt.Errorf("%s: stderr pipe: %w", what, err)
	}
	stdinW, stdinFD := -1, -1
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
	cmd, err := commandGroups.start(func() (started, error) {
		return spawn(spawnSpec{
			path: in.Command,
			args: in.Args,
			env:  execcore.EnvList(in.Env),
			dir:  in.Workdir,
			fds:  [3]int{stdinFD, stdoutFD, stderrFD},
		})
	})
	if err != nil {
		return notRun, startError(what, err)
	}
	pgid := cmd.pid // the leader of a new group: the group's id is its pid
	// The child has its copies; ours of the ends it uses must go, or EOF never comes.
	closeAll(&childFDs)

	stdout, stderr := execcore.NewCapture(execcore.MaxOutput), execcore.NewCapture(execcore.MaxOutput)
	mine = nil // commandIO owns them now, whatever happens
	cio, err := newCommandIO(stdoutR, stderrR, stdinW, in.Stdin, cmd.pid, cmd.pidfd, [2]*execcore.Capture{stdout, stderr})
	if err != nil {
		killGroup(pgid)
		commandGroups.remove(pgid)
		reap(cmd.pid)
		return notRun, fmt.Errorf("%s: watch: %w", what, err)
	}
	defer cio.close()

	// Until the leader exits. Cancellation or the timeout interrupts the wait; the group is
	// then killed and the wait goes on for the exit, which is then certain.
	interrupted := make(chan struct{})
	stopInterrupt := context.AfterFunc(runCtx, func() {
		cio.interrupt()
		close(interrupted)
	})
	stopped := false
	for {
		err := cio.run(func() bool { return cio.exited })
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) || runCtx.Err() == nil || stopped {
			// Cannot happen short of a kernel surprise; kill, and let reap tell the story.
			killGroup(pgid)
			cio.awaitWaiter()
			break
		}
		stopped = true
		killGroup(pgid)
		cio.setDeadline(time.Time{})
	}
	if !stopInterrupt() {
		<-interrupted // it ran, or is running: its deadline must not cut the drain below
	}
	// The leader is a zombie: its pid, the group's id, cannot be reused yet, so this kill
	// reaches only what the command left behind in its group.
	killGroup(pgid)
	commandGroups.remove(pgid)
	status, waitErr := reap(cmd.pid)
	// The input is moot now, and the output ends with the group; only a process that left the
	// group can hold a pipe longer, and not for more than ioGrace.
	cio.done(tagStdin)
	cio.setDeadline(time.Now().Add(ioGrace))
	cio.run(func() bool { return !cio.outputOpen() })

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
