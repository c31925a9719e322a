// Package plugintest builds plugin binaries (the first-party plugins, the examples and test
// plugins) with the Go toolchain for tests that run them as real subprocesses, and checks
// that none is left running afterwards. Builds are shared by every test of a test binary.
package plugintest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var builds sync.Map // package dir → *build

type build struct {
	once sync.Once
	path string
	err  error
}

// RepoRoot is the module root, found from this file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Build builds the main package in dir (relative to the repository root, or absolute) as
// fuscia-plugin-NAME once per test binary and returns the binary's path. It builds as `make
// build` does, without the symbol table and DWARF (-s -w), so that benchmarks start and hash
// the binaries users run. The binary sits in this test process's build directory (sweep.go:
// removed by a later test binary once this one has exited); copy or link it where a test
// needs it.
func Build(t testing.TB, dir, name string) string {
	t.Helper()
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(RepoRoot(), dir)
	}
	v, _ := builds.LoadOrStore(dir+"\x00"+name, &build{})
	b := v.(*build)
	b.once.Do(func() {
		out, err := newBuildDir()
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(out, "fuscia-plugin-"+name)
		cmd := exec.Command("go", "build", "-ldflags=-s -w", "-o", b.path, ".")
		cmd.Dir = dir
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("build plugin %s from %s: %v\n%s", name, dir, err, msg)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Install copies the binary at bin into dir under file name (for example
// "fuscia-plugin-greeter_v0.1.0") and returns the new path.
func Install(t testing.TB, bin, dir, file string) string {
	t.Helper()
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, file)
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// Running lists the pids of live processes whose executable path starts with prefix (a
// plugin binary or a directory of them). Zombies count: a process nobody reaped is a leak too.
func Running(prefix string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil {
			// A zombie has no exe link; its cmdline is empty too, so look at its stat name.
			stat, serr := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if serr == nil && bytes.Contains(stat, []byte(") Z ")) && strings.Contains(string(stat), "("+trunc15(filepath.Base(prefix))) {
				pids = append(pids, pid)
			}
			continue
		}
		if strings.HasPrefix(strings.TrimSuffix(exe, " (deleted)"), prefix) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// trunc15 is a process name as the kernel keeps it (15 bytes).
func trunc15(s string) string {
	if len(s) > 15 {
		return s[:15]
	}
	return s
}

// NoneLeft fails t when a process started from prefix is still there a moment after the
// test's cleanup (processes get a second to be reaped).
func NoneLeft(t testing.TB, prefix string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		pids := Running(prefix)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("plugin processes left running from %s: %v", prefix, pids)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
