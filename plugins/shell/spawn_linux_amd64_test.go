//go:build cgo

package main

import (
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// On Linux 5.5 and later (clone3 with CLONE_CLEAR_SIGHAND) the plugin must take the fast spawn:
// falling back to Go's fork would cost every command 55 system calls and still pass every
// behavioural test.
func TestFastSpawnIsTaken(t *testing.T) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	release := unix.ByteSliceToString(u.Release[:])
	parts := strings.SplitN(release, ".", 3)
	major, _ := strconv.Atoi(parts[0])
	minor := 0
	if len(parts) > 1 {
		minor, _ = strconv.Atoi(parts[1])
	}
	if major < 5 || major == 5 && minor < 5 {
		t.Skipf("kernel %s has no CLONE_CLEAR_SIGHAND", release)
	}
	st, err := spawnFast(spawnSpec{path: "/bin/true", env: []string{}, fds: [3]int{0, 1, 2}})
	if err != nil {
		t.Fatalf("kernel %s: %v", release, err)
	}
	if st.pidfd < 0 {
		t.Errorf("no pidfd from the clone")
	} else {
		unix.Close(st.pidfd)
	}
	if ws, err := reap(st.pid); err != nil || ws.ExitStatus() != 0 {
		t.Errorf("/bin/true through the fast spawn: %v, %v", ws, err)
	}
}
