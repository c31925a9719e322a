//go:build cgo

package main

/*
#cgo noescape fsc_spawn
#cgo nocallback fsc_spawn
#include "spawn_linux_amd64.h"
*/
import "C"

import (
	"strings"
	"syscall"
	"unsafe"
)

// spawnFast starts spec with fsc_spawn (spawn_linux_amd64.c): clone3 with CLONE_CLEAR_SIGHAND
// instead of Go's fork, which saves the child its 55 signal-handler resets. It returns
// errNoFastSpawn where clone3 with these flags is not to be had.
func spawnFast(spec spawnSpec) (started, error) {
	// One buffer of NUL-terminated strings and their offsets: Go memory without pointers,
	// which C may read for the call's duration.
	n := len(spec.path) + 1 + len(spec.dir) + 1
	for _, s := range spec.args {
		n += len(s) + 1
	}
	for _, s := range spec.env {
		n += len(s) + 1
	}
	if n > 1<<30 { // offsets are C ints; the kernel refuses far less (ARG_MAX) anyway
		return started{pid: -1, pidfd: -1}, syscall.E2BIG
	}
	buf := make([]byte, 0, n)
	offs := make([]C.int, 0, 1+len(spec.args)+len(spec.env))
	add := func(s string) (C.int, error) {
		if strings.IndexByte(s, 0) >= 0 {
			return 0, syscall.EINVAL // as syscall.BytePtrFromString refuses it
		}
		off := C.int(len(buf))
		buf = append(append(buf, s...), 0)
		return off, nil
	}
	for _, list := range [][]string{{spec.path}, spec.args, spec.env} { // argv, then envp
		for _, s := range list {
			off, err := add(s)
			if err != nil {
				return started{pid: -1, pidfd: -1}, err
			}
			offs = append(offs, off)
		}
	}
	dir := C.int(-1)
	if spec.dir != "" {
		off, err := add(spec.dir)
		if err != nil {
			return started{pid: -1, pidfd: -1}, err
		}
		dir = off
	}
	argc := 1 + len(spec.args)
	envOffs := (*C.int)(nil)
	if len(spec.env) > 0 {
		envOffs = &offs[argc]
	}
	fds := [3]C.int{C.int(spec.fds[0]), C.int(spec.fds[1]), C.int(spec.fds[2])}
	var pidfd, cerr C.int

	// As in Go's forkExec: no descriptor is half made (opened, not yet close-on-exec) while
	// the child exists.
	syscall.ForkLock.Lock()
	pid := C.fsc_spawn((*C.char)(unsafe.Pointer(&buf[0])), &offs[0], C.int(argc), envOffs, C.int(len(spec.env)), dir,
		&fds[0], &pidfd, &cerr)
	syscall.ForkLock.Unlock()

	if pid < 0 {
		switch errno := syscall.Errno(cerr); errno {
		case syscall.ENOSYS, syscall.EINVAL, syscall.EPERM:
			// No clone3 or no CLONE_CLEAR_SIGHAND (before Linux 5.5), or a seccomp filter that
			// refuses clone3 (container runtimes answer ENOSYS or EPERM so that callers fall
			// back to clone).
			return started{pid: -1, pidfd: -1}, errNoFastSpawn
		default:
			return started{pid: -1, pidfd: -1}, errno
		}
	}
	if cerr != 0 { // the child failed before its program ran, and exited
		if pidfd >= 0 {
			syscall.Close(int(pidfd))
		}
		reap(int(pid))
		return started{pid: -1, pidfd: -1}, syscall.Errno(cerr)
	}
	return started{pid: int(pid), pidfd: int(pidfd)}, nil
}
