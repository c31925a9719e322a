package main

import (
	"errors"
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// A started command: the leader of its own process group, which receives SIGKILL when the
// plugin's forking thread dies (Go only retires threads whose goroutine locked them, which
// nothing here does, so in practice: when the plugin dies).
type started struct {
	pid   int
	pidfd int // -1 when the kernel gave none; commandIO takes it
}

// spawnSpec is what the child gets. Its standard streams are raw descriptors the caller owns
// and closes after spawn; they are blocking (a child must not see O_NONBLOCK on its stdout).
type spawnSpec struct {
	path string   // absolute; argv[0] is path too
	args []string // argv[1:]
	env  []string // the whole environment
	dir  string   // "" for the plugin's own
	fds  [3]int   // stdin, stdout, stderr
}

// spawn starts spec. The error, when there is one, is a *fs.PathError with Op "fork/exec" around
// the errno, as os/exec's Start gives, and no process is left behind.
func spawn(spec spawnSpec) (started, error) {
	fds, release, err := highFDs(spec.fds)
	if err != nil {
		return started{pid: -1, pidfd: -1}, &fs.PathError{Op: "fork/exec", Path: spec.path, Err: err}
	}
	defer release()
	spec.fds = fds
	s, err := spawnFast(spec)
	if errors.Is(err, errNoFastSpawn) {
		s, err = forkExec(spec)
	}
	if err != nil {
		return started{pid: -1, pidfd: -1}, &fs.PathError{Op: "fork/exec", Path: spec.path, Err: err}
	}
	return s, nil
}

// errNoFastSpawn says that spawnFast cannot run on this build or kernel; forkExec does the job.
var errNoFastSpawn = errors.New("clone3 with CLONE_CLEAR_SIGHAND is not available")

// forkExec starts spec with Go's own fork and exec, which resets every signal handler the runtime
// installed in the child before its exec (spawn_linux_amd64.c says why that costs).
func forkExec(spec spawnSpec) (started, error) {
	pidfd := -1
	attr := &syscall.ProcAttr{
		Dir:   spec.dir,
		Env:   spec.env,
		Files: []uintptr{uintptr(spec.fds[0]), uintptr(spec.fds[1]), uintptr(spec.fds[2])},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, PidFD: &pidfd},
	}
	pid, err := syscall.ForkExec(spec.path, append([]string{spec.path}, spec.args...), attr)
	if err != nil {
		return started{pid: -1, pidfd: -1}, err
	}
	return started{pid: pid, pidfd: pidfd}, nil
}

// highFDs returns fds with each descriptor below 3 replaced by a close-on-exec duplicate at 3 or
// above, so that the child's dup2 onto 0, 1 and 2 cannot overwrite a descriptor it has yet to
// use (a plugin started with a standard stream closed gets pipes numbered 0 to 2). release
// closes the duplicates.
func highFDs(fds [3]int) (out [3]int, release func(), err error) {
	var dups []int
	release = func() {
		for _, fd := range dups {
			unix.Close(fd)
		}
	}
	for i, fd := range fds {
		if fd >= 3 {
			out[i] = fd
			continue
		}
		dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3)
		if err != nil {
			release()
			return fds, func() {}, err
		}
		dups = append(dups, dup)
		out[i] = dup
	}
	return out, release, nil
}

// reap waits for the exited process pid and returns its status.
func reap(pid int) (syscall.WaitStatus, error) {
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if !errors.Is(err, syscall.EINTR) {
			return ws, err
		}
	}
}
