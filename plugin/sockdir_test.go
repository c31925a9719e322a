package plugin

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestSweepRemovesOnlyAbandonedSocketDirs(t *testing.T) {
	tmp := t.TempDir()
	now := time.Now()
	old := now.Add(-2 * abandonedAge)
	mkdir := func(name string, mtime time.Time) string {
		t.Helper()
		dir := filepath.Join(tmp, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "plugin123"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(dir, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	abandoned := mkdir(socketDirPrefix+"abandoned", old)
	held := mkdir(socketDirPrefix+"held", old)
	young := mkdir(socketDirPrefix+"young", now.Add(-abandonedAge/2))
	other := mkdir("someone-else", old)
	target := mkdir("target-of-a-link", old)
	link := filepath.Join(tmp, socketDirPrefix+"link")
	if err := os.Symlink(target, link); err != nil {
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

	if _, err := os.Lstat(abandoned); !os.IsNotExist(err) {
		t.Errorf("an old directory nobody holds was kept (%v)", err)
	}
	for _, kept := range []string{held, young, other, link, filepath.Join(target, "plugin123")} {
		if _, err := os.Lstat(kept); err != nil {
			t.Errorf("%s: %v; want it kept", filepath.Base(kept), err)
		}
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
	d.remove()
	if _, err := os.Stat(d.path); !os.IsNotExist(err) {
		t.Fatalf("after remove: %v", err)
	}
	// Its descriptor is closed: a second close fails.
	if err := syscall.Close(d.fd); err == nil {
		t.Error("remove left the lock's descriptor open")
	}
}
