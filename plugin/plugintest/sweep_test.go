package plugintest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestSweepBuildDirs: the build directories of exited processes go, as do PID-less ones a day
// old; a running process's (this one's) and a fresh PID-less one stay, and so does anything
// not a build directory.
func TestSweepBuildDirs(t *testing.T) {
	tmp := t.TempDir()
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name string, age time.Duration) string {
		p := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Join(p, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-age)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gone := []string{
		mk(fmt.Sprintf("%s%d-123", buildDirPrefix, exited.Process.Pid), 0),
		mk(buildDirPrefix+"987654", 25*time.Hour),
	}
	kept := []string{
		mk(fmt.Sprintf("%s%d-456", buildDirPrefix, os.Getpid()), 48*time.Hour),
		mk(buildDirPrefix+"555", time.Hour),
		mk("other-dir", 48*time.Hour),
	}
	sweepBuildDirs(tmp, time.Now())
	for _, p := range gone {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was not removed (stat: %v)", filepath.Base(p), err)
		}
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
}
