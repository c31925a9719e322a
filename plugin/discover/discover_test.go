package discover

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func touch(t *testing.T, dir, name, content string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFind: the newest version that meets the constraint, an earlier directory hiding the same
// name and version in a later one, an unversioned binary only when nothing else matches.
func TestFind(t *testing.T) {
	root := t.TempDir()
	local, home := filepath.Join(root, "plugins"), filepath.Join(root, "home")
	touch(t, local, "fuscia-plugin-shell_v1.2.0", "local")
	touch(t, home, "fuscia-plugin-shell_v1.2.0", "home")
	touch(t, home, "fuscia-plugin-shell_v2.0.0", "two")
	touch(t, home, "fuscia-plugin-greeter", "unversioned")
	touch(t, home, "not-a-plugin", "")
	if err := os.MkdirAll(filepath.Join(home, "fuscia-plugin-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	dirs := []string{local, home, filepath.Join(root, "missing")}

	all, err := Discover(dirs)
	if err != nil || len(all) != 3 {
		t.Fatalf("Discover = %+v, %v; want shell 1.2.0 (local), shell 2.0.0, greeter", all, err)
	}
	b, err := Find(dirs, "shell", "~> 1.0")
	if err != nil || b.Version != "1.2.0" || filepath.Dir(b.Path) != local {
		t.Errorf("Find ~> 1.0 = %+v, %v; want 1.2.0 from ./plugins", b, err)
	}
	if b, err := Find(dirs, "shell", ""); err != nil || b.Version != "2.0.0" {
		t.Errorf("Find newest = %+v, %v; want 2.0.0", b, err)
	}
	if b, err := Find(dirs, "greeter", ">= 9"); err != nil || b.Version != "" {
		t.Errorf("unversioned = %+v, %v; want it to match any constraint", b, err)
	}
	if _, err := Find(dirs, "shell", ">= 3"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Find >= 3: %v; want ErrNotFound", err)
	}
	if _, err := Find(dirs, "shell", "not a constraint"); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("bad constraint: %v", err)
	}
}

func TestDigest(t *testing.T) {
	p := touch(t, t.TempDir(), "fuscia-plugin-x", "hello")
	d, err := Digest(p)
	if err != nil || d != "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" {
		t.Errorf("Digest = %q, %v", d, err)
	}
	if _, err := Digest(p + ".missing"); err == nil {
		t.Error("Digest of a missing file succeeded")
	}
}

// TestDigestRefusesFIFO: a FIFO named like a plugin is refused at once, by the package's Digest
// and the cache's, not waited on in its open (a command listing the directory hung there past
// SIGTERM).
func TestDigestRefusesFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fuscia-plugin-fifo")
	if err := syscall.Mkfifo(p, 0o755); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() {
		_, err := Digest(p)
		done <- err
		_, err = NewDigests().Digest(p)
		done <- err
	}()
	for range 2 {
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("Digest of a FIFO: %v; want not a regular file", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Digest of a FIFO blocked")
		}
	}
}
