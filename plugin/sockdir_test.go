package plugin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestSweepRemovesOnlyAbandonedSocketDirs(t *testing.T) {
	tmp := t.TempDir()
	now := time.Now()
	old := now.Add(-2 * abandonedAge)
	// mkdir makes a directory holding a socket (as a dead host leaves it) and, if file is set,
	// a regular file as well.
	mkdir := func(name string, mtime time.Time, file bool) string {
		t.Helper()
		dir := filepath.Join(tmp, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		mksock(t, filepath.Join(dir, "plugin123"))
		if file {
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(dir, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	abandoned := mkdir(socketDirPrefix+"1001", old, false)
	empty := filepath.Join(tmp, socketDirPrefix+"1002") // left by a plugin that removed its socket
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(empty, old, old); err != nil {
		t.Fatal(err)
	}
	held := mkdir(socketDirPrefix+"1003", old, false)
	young := mkdir(socketDirPrefix+"1004", now.Add(-abandonedAge/2), false)
	withFile := mkdir(socketDirPrefix+"1005", old, true)
	notOurName := mkdir(socketDirPrefix+"cache", old, false)
	pluginNamed := mkdir("fuscia-plugin-postgres", old, false) // a plugin's own folder
	target := mkdir("target-of-a-link", old, false)
	link := filepath.Join(tmp, socketDirPrefix+"1006")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := unix.Lutimes(link, []unix.Timeval{unix.NsecToTimeval(old.UnixNano()), unix.NsecToTimeval(old.UnixNano())}); err != nil {
		t.Fatal(err)
	}
	// A live owner's lock, taken as newSocketDir takes it (flock locks belong to the open file,
	// so the sweep's own open of the same directory conflicts with it in this process too).
	fd, err := syscall.Open(held, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}

	sweepAbandonedSocketDirs(tmp, now)

	for _, gone := range []string{abandoned, empty} {
		if _, err := os.Lstat(gone); !os.IsNotExist(err) {
			t.Errorf("%s: an old socket directory nobody holds was kept (%v)", filepath.Base(gone), err)
		}
	}
	for _, kept := range []string{
		filepath.Join(held, "plugin123"), filepath.Join(young, "plugin123"),
		filepath.Join(withFile, "plugin123"), filepath.Join(withFile, "notes.txt"),
		filepath.Join(notOurName, "plugin123"), filepath.Join(pluginNamed, "plugin123"),
		link, filepath.Join(target, "plugin123"),
	} {
		if _, err := os.Lstat(kept); err != nil {
			t.Errorf("%s: %v; want it kept", kept[len(tmp)+1:], err)
		}
	}
}

// mksock leaves a Unix socket file at path, as a process killed while listening does.
func mksock(t *testing.T, path string) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
}

func TestSocketDirIsLockedUntilRemoved(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	d, err := newSocketDir()
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(d.path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o700 {
		t.Errorf("mode %v; want 0700", info.Mode().Perm())
	}
	old := time.Now().Add(-2 * abandonedAge)
	if err := os.Chtimes(d.path, old, old); err != nil {
		t.Fatal(err)
	}
	sweepAbandonedSocketDirs(os.TempDir(), time.Now())
	if _, err := os.Stat(d.path); err != nil {
		t.Fatalf("a directory in use was swept: %v", err)
	}
	fdLink := fmt.Sprintf("/proc/self/fd/%d", d.fd)
	if target, err := os.Readlink(fdLink); err != nil || target != d.path {
		t.Fatalf("the lock's descriptor: %q (%v); want %s", target, err, d.path)
	}
	d.remove()
	if _, err := os.Stat(d.path); !os.IsNotExist(err) {
		t.Fatalf("after remove: %v", err)
	}
	// The descriptor is closed (its number may since have been reused for another file).
	if target, err := os.Readlink(fdLink); err == nil && strings.HasPrefix(target, d.path) {
		t.Errorf("remove left the lock's descriptor open on %s", target)
	}
}
