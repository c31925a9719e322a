package plugintest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Built plugins live in directories named buildDirPrefix + the test process's PID + "-" +
// random, created on a test binary's first Build. Go's testing package has no hook after a
// binary's last test for every package that builds plugins, so each test binary removes, on
// its first Build, the directories of test processes that are no longer running: a `make
// test` leaves at most one directory per package that builds plugins, until the next run.
const buildDirPrefix = "fuscia-plugintest-"

// legacyAge is how old a directory without a PID in its name (made before PIDs were put in
// the names) must be to be removed: no test binary runs that long.
const legacyAge = 24 * time.Hour

var sweepOnce sync.Once

// newBuildDir creates this process's build directory, after removing those of processes that
// have exited.
func newBuildDir() (string, error) {
	sweepOnce.Do(func() { sweepBuildDirs(os.TempDir(), time.Now()) })
	return os.MkdirTemp("", fmt.Sprintf("%s%d-", buildDirPrefix, os.Getpid()))
}

// sweepBuildDirs removes the build directories in tmp whose process has exited, and those
// without a PID older than legacyAge. Errors are ignored: a directory left behind is only
// disk space, and another test binary may be removing the same one.
func sweepBuildDirs(tmp string, now time.Time) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), buildDirPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, withPID := strings.Cut(rest, "-")
		if pid, err := strconv.Atoi(pidText); withPID && err == nil && pid > 0 {
			if processExists(pid) {
				continue
			}
		} else if info, err := e.Info(); err != nil || now.Sub(info.ModTime()) < legacyAge {
			continue
		}
		_ = os.RemoveAll(filepath.Join(tmp, e.Name()))
	}
}
