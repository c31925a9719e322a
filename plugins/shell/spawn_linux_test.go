package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fuscia/fuscia/plugins/internal/execcore"
)

// spawners are the two ways the plugin starts a command; both must give the child the same
// start. (On a build or kernel without the fast one, spawnFast says so and its cases skip.)
var spawners = []struct {
	name  string
	spawn func(spawnSpec) (started, error)
}{
	{"fast", spawnFast},
	{"forkexec", forkExec},
}

// spawnOutput runs path with args through spawn, its stdout on a pipe, and returns what it
// printed and its exit status.
func spawnOutput(t *testing.T, spawn func(spawnSpec) (started, error), path string, args ...string) (string, syscall.WaitStatus) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	// Fd makes the child's end blocking, as runCommand's raw descriptors are.
	st, err := spawn(spawnSpec{path: path, args: args, env: []string{}, fds: [3]int{int(devnull.Fd()), int(w.Fd()), int(os.Stderr.Fd())}})
	w.Close()
	if errors.Is(err, errNoFastSpawn) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if st.pidfd >= 0 {
		unix.Close(st.pidfd)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := reap(st.pid)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), ws
}

// statusLines returns the named lines of a /proc/PID/status text.
func statusLines(status string, names ...string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(status, "\n") {
		k, v, ok := strings.Cut(line, ":")
		for _, n := range names {
			if ok && k == n {
				m[k] = strings.TrimSpace(v)
			}
		}
	}
	return m
}

// The fast spawn skips Go's reset of every handler in the child; the child must still start as
// Go's fork gives it: the process's starting signal mask (not the everything-blocked mask the
// clone ran under), the same ignored signals, no handler, its own process group.
func TestSpawnedChildStartsAsGoForkGivesIt(t *testing.T) {
	names := []string{"SigBlk", "SigIgn", "SigCgt", "NSpgid", "NSpid"}
	got := map[string]map[string]string{}
	for _, s := range spawners {
		out, ws := spawnOutput(t, s.spawn, "/bin/cat", "/proc/self/status")
		if ws.ExitStatus() != 0 {
			t.Fatalf("%s: cat exited %v", s.name, ws)
		}
		got[s.name] = statusLines(out, names...)
		if len(got[s.name]) != len(names) {
			t.Fatalf("%s: /proc/self/status lacks some of %v:\n%s", s.name, names, out)
		}
	}
	fast, slow := got["fast"], got["forkexec"]
	for _, n := range []string{"SigBlk", "SigIgn", "SigCgt"} {
		if fast[n] != slow[n] {
			t.Errorf("%s: fast spawn %s, Go's fork %s", n, fast[n], slow[n])
		}
	}
	if fast["SigBlk"] == "ffffffffffffffff" || fast["SigBlk"] == "fffffffe7fffffff" {
		t.Errorf("the child kept the clone's blocked mask: SigBlk %s", fast["SigBlk"])
	}
	if fast["NSpgid"] != fast["NSpid"] {
		t.Errorf("the child is not the leader of its own group: pid %s, pgid %s", fast["NSpid"], fast["NSpgid"])
	}
}

// The child has its three streams and nothing else of the plugin's: every descriptor the plugin
// opened (the other pipe ends, the pidfd, the poller, gRPC's sockets) is close-on-exec. What the
// plugin itself inherited without close-on-exec, the child inherits too, with either spawn.
func TestSpawnedChildHasOnlyItsStreams(t *testing.T) {
	want := []string{"0", "1", "2", "3"} // ls opens the listed directory itself: 3
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 3 {
			continue
		}
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
			want = append(want, e.Name())
		}
	}
	slices.Sort(want)
	for _, s := range spawners {
		t.Run(s.name, func(t *testing.T) {
			out, _ := spawnOutput(t, s.spawn, "/bin/ls", "/proc/self/fd")
			if got := strings.Fields(out); !slices.Equal(got, want) {
				t.Errorf("the child's descriptors: %v, want %v", got, want)
			}
		})
	}
}

// A program the kernel refuses at exec (past checkProgram: executable, but not a format it
// runs) is a fatal error with the kernel's reason, and the child that tried is reaped.
func TestExecFailureIsReportedAndReaped(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "garbage")
	if err := os.WriteFile(bad, []byte("\x00\x01\x02 not a program\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := run(context.Background(), Input{Command: bad})
	if execcore.KindOf(err) != execcore.Fatal || !strings.Contains(err.Error(), "exec format error") {
		t.Errorf("err = %v, want fatal, exec format error", err)
	}
	for _, s := range spawners {
		_, err := s.spawn(spawnSpec{path: bad, env: []string{}, fds: [3]int{0, 1, 2}})
		if errors.Is(err, errNoFastSpawn) {
			continue
		}
		if !errors.Is(err, syscall.ENOEXEC) {
			t.Errorf("%s: err = %v, want ENOEXEC", s.name, err)
		}
	}
	// The children that tried are reaped: none of this process's is a zombie. (Read from /proc,
	// so that the check reaps nothing itself and ignores live children of other tests.)
	if z := zombieChildren(t); len(z) > 0 {
		t.Errorf("unreaped children after the failures: %v", z)
	}
}

// zombieChildren lists this process's children that have exited and are not reaped.
func zombieChildren(t *testing.T) []string {
	t.Helper()
	var zombies []string
	for _, p := range procs(t) {
		if p.state == "Z" && p.ppid == strconv.Itoa(os.Getpid()) {
			zombies = append(zombies, p.pid)
		}
	}
	return zombies
}

// highFDs moves descriptors 0 to 2 out of the way of the child's dup2s, keeping the files.
func TestHighFDs(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := [3]int{2, 0, int(f.Fd())}
	out, release, err := highFDs(in)
	if err != nil {
		t.Fatal(err)
	}
	if out[2] != in[2] {
		t.Errorf("descriptor %d moved to %d", in[2], out[2])
	}
	for i := range 2 {
		var a, b unix.Stat_t
		if out[i] < 3 || unix.Fstat(in[i], &a) != nil || unix.Fstat(out[i], &b) != nil || a.Dev != b.Dev || a.Ino != b.Ino {
			t.Errorf("descriptor %d became %d, want a duplicate at 3 or above", in[i], out[i])
		}
	}
	release()
	for i := range 2 {
		if _, err := unix.FcntlInt(uintptr(out[i]), unix.F_GETFD, 0); !errors.Is(err, unix.EBADF) {
			t.Errorf("duplicate %d still open after release", out[i])
		}
	}
}

// A command dies with the plugin (SIGKILL from its parent's death, set in the child before
// its exec). The plugin here is this test binary run again as a helper that starts a long
// sleep; the test kills the helper and watches the sleep.
func TestCommandDiesWithThePlugin(t *testing.T) {
	if pidFile := os.Getenv("FUSCIA_SHELL_TEST_PIDFILE"); pidFile != "" {
		run(context.Background(), Input{Command: "/bin/sh", Args: []string{"-c", `echo $$ > "$0"; exec /bin/sleep 100`, pidFile}})
		return // not reached: the test kills this process first
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	helper := exec.Command(os.Args[0], "-test.run=^TestCommandDiesWithThePlugin$")
	helper.Env = append(os.Environ(), "FUSCIA_SHELL_TEST_PIDFILE="+pidFile)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer helper.Wait()
	defer helper.Process.Kill()
	pid := 0
	for deadline := time.Now().Add(10 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			if pid, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
				t.Fatal(err)
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the helper's command never wrote its pid")
		}
	}
	helper.Process.Kill()
	helper.Wait()
	assertGroupGone(t, fmt.Sprintf("%d\n", pid))
}
