package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
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
// Pipes are os.Pipe files handed to the child directly (not io.Writers), so that exec.Cmd
// starts no copying goroutines of its own and Wait returns when the process exits instead of
// when the last holder of the pipe (perhaps a grandchild) lets go.
func runCommand(ctx context.Context, in Input, timeout time.Duration) (execcore.Output, error) {
	what := "command " + in.Command
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		runCtx, cancel = context.WithTimeoutCause(ctx, timeout, errTimedOut)
	}
	defer cancel()

	var files []*os.File // every pipe end the plugin holds; closed on return whatever happens
	defer func() {
		for _, f := range files {
			f.Close() // already closed ends give an error we do not care about
		}
	}()
	pipe := func() (r, w *os.File, err error) {
		if r, w, err = os.Pipe(); err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	stdoutR, stdoutW, err := pipe()
	if err != nil {
		return notRun, fmt.Errorf("%s: stdout pipe: %w", what, err)
	}
	stderrR, stderrW, err := pipe()
	if err != nil {
		return notRun, fmt.Errorf("%s: stderr pipe: %w", what, err)
	}
	pidfd := -1 // set by Start when the kernel gives one; exitWaiter owns it
	cmd := &exec.Cmd{
		Path:   in.Command,
		Args:   append([]string{in.Command}, in.Args...),
		Env:    execcore.EnvList(in.Env),
		Dir:    in.Workdir,
		Stdout: stdoutW,
		Stderr: stderrW,
		// Own process group, so that a timeout can kill everything the command started;
		// SIGKILL when the plugin dies, so a crashed plugin leaves no orphan. (Pdeathsig
		// fires when the thread that forked exits; Go only retires threads whose goroutine
		// locked them, which nothing here does.)
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, PidFD: &pidfd},
	}
	var stdinW *os.File
	if in.Stdin != "" {
		var stdinR *os.File
		if stdinR, stdinW, err = pipe(); err != nil {
			return notRun, fmt.Errorf("%s: stdin pipe: %w", what, err)
		}
		cmd.Stdin = stdinR
	}
	if err := cmd.Start(); err != nil {
		return notRun, startError(what, err)
	}
	exit := newExitWaiter(cmd.Process.Pid, pidfd)
	defer exit.close()
	pgid := cmd.Process.Pid // Setpgid with Pgid 0: the group's id is the leader's pid

	// The child has its copies; ours of the ends it uses must go, or EOF never comes.
	stdoutW.Close()
	stderrW.Close()
	if stdinR, ok := cmd.Stdin.(*os.File); ok {
		stdinR.Close()
	}

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
			// Cannot happen short of a kernel surprise; kill and let Wait tell the story.
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
	waitErr := cmd.Wait()
	waitIO(pumped, pumps, stdoutR, stderrR, stdinW)

	state := cmd.ProcessState
	if state == nil { // Wait failed before it got a status
		return execcore.Collect(-1, stdout, stderr), fmt.Errorf("%s: wait: %w", what, waitErr)
	}
	status, _ := state.Sys().(syscall.WaitStatus)
	out := execcore.Collect(state.ExitCode(), stdout, stderr)
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
