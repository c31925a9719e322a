package plugin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// A plugin's Unix sockets (its own listener, and the broker's listeners on Fuscia's side) live in
// a directory of their own in the temporary directory, socketDirPrefix + random, mode 0700. The
// Manager that started the plugin owns it: it holds an exclusive flock on the directory for as
// long as the plugin runs, and removes it when the plugin stops.
//
// A Fuscia process that dies without stopping its plugins (SIGKILL, a crash, the CLI's "exit at
// once" on a second Ctrl-C) cannot remove anything, but the kernel drops its locks. So each
// Manager, before its first plugin start, removes the directories whose lock it can take: their
// owner is gone. A lock says more than a PID in the name would: PIDs are reused, and a temporary
// directory can be shared across PID namespaces. Only directories older than abandonedAge are
// looked at, which covers the moment between another process's MkdirTemp and its flock.
const (
	socketDirPrefix = "fuscia-plugin-"
	abandonedAge    = time.Minute
)

// socketDir is one plugin start's directory and the locked descriptor that marks it in use.
type socketDir struct {
	path string
	fd   int // open on path, flocked; close-on-exec, so no plugin inherits it
}

// newSocketDir creates a directory for a plugin's sockets and locks it.
func newSocketDir() (*socketDir, error) {
	path, err := os.MkdirTemp("", socketDirPrefix)
	if err != nil {
		return nil, err
	}
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// Where the filesystem has no flock, the directory goes unlocked, and a sweep, which cannot
	// lock it either, leaves it alone.
	_ = syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
	return &socketDir{path: path, fd: fd}, nil
}

// remove deletes the directory and what is in it, then lets go of its lock.
func (d *socketDir) remove() {
	_ = os.RemoveAll(d.path)
	_ = syscall.Close(d.fd)
}

// sweepAbandonedSocketDirs removes the socket directories in tmp that no running process holds
// (see socketDirPrefix). It looks only at this user's directories, never follows a symbolic link,
// and ignores errors: what it cannot remove is disk space for the next sweep, and another
// process may be removing the same directory.
func sweepAbandonedSocketDirs(tmp string, now time.Time) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	uid := uint32(os.Getuid())
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), socketDirPrefix) || !e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < abandonedAge {
			continue
		}
		if st, ok := info.Sys().(*syscall.Stat_t); !ok || st.Uid != uid {
			continue
		}
		path := filepath.Join(tmp, e.Name())
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		// Held (EWOULDBLOCK), or a filesystem without flock, where nothing says whether the
		// owner lives: kept.
		if syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			_ = os.RemoveAll(path)
		}
		_ = syscall.Close(fd)
	}
}
