package plugin

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A plugin's Unix sockets (its own listener, and the broker's listeners on Fuscia's side) live in
// a directory of their own in the temporary directory, socketDirPrefix + random digits, mode
// 0700. The Manager that started the plugin owns it: it holds an exclusive flock on the
// directory for as long as the plugin runs, and removes it when the plugin stops.
//
// A Fuscia process that dies without stopping its plugins (SIGKILL, a crash, the CLI's "exit at
// once" on a second Ctrl-C) cannot remove anything, but the kernel drops its locks. So each
// Manager, before its first plugin start, removes the directories whose lock it can take: their
// owner is gone. A lock says more than a PID in the name would: PIDs are reused, and a temporary
// directory can be shared across PID namespaces. Only directories older than abandonedAge are
// looked at, which covers the moment between another process's MkdirTemp and its flock; and only
// directories that hold nothing but sockets are removed, so that a directory which merely has a
// name like ours loses nothing. The prefix is not discover.FilePrefix ("fuscia-plugin-"), which a
// plugin's own files and folders may well carry.
const (
	socketDirPrefix = "fuscia-sock-"
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
	d.fd = -1
}

// sweepAbandonedSocketDirs removes the socket directories in tmp that no running process holds
// (see socketDirPrefix). It looks only at this user's directories named as MkdirTemp names them,
// never follows a symbolic link, removes only sockets, and ignores errors: what it cannot remove
// is disk space for the next sweep, and another process may be removing the same directory.
func sweepAbandonedSocketDirs(tmp string, now time.Time) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		suffix, ok := strings.CutPrefix(e.Name(), socketDirPrefix)
		if _, err := strconv.ParseUint(suffix, 10, 64); !ok || err != nil || !e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < abandonedAge {
			continue
		}
		removeIfAbandoned(filepath.Join(tmp, e.Name()))
	}
}

// removeIfAbandoned removes the socket directory at path if this user owns it, nobody holds its
// lock, and it holds nothing but sockets.
func removeIfAbandoned(path string) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer syscall.Close(fd)
	// Held (EWOULDBLOCK), or a filesystem without flock, where nothing says whether the owner
	// lives: kept.
	if syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return
	}
	// What is locked is what gets removed: this user's, still linked. The temporary directory is
	// sticky and the socket directory 0700, so nobody else can swap either name meanwhile.
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Uid != uint32(os.Getuid()) || st.Nlink == 0 {
		return
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Type()&fs.ModeSocket == 0 {
			return
		}
	}
	for _, e := range entries {
		_ = os.Remove(filepath.Join(path, e.Name()))
	}
	_ = os.Remove(path)
}
