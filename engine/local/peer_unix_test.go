//go:build linux || darwin || freebsd

package local

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fuscia/fuscia/internal/syncbuf"
)

// nobodyUID is the user the tests below act as when they play another local user.
const nobodyUID = 65534

// helperEnv names the mode of TestPeerHelperProcess when this test binary runs as a child.
const helperEnv = "FUSCIA_TEST_PEER_HELPER"

// TestPeerHelperProcess is not a test: it is what the child started by asNobody runs, as
// another user. "connect SOCK" sends an API request on the socket and prints what became of it;
// "prepare DIR" prepares DIR as a home and prints the result.
func TestPeerHelperProcess(t *testing.T) {
	mode, arg, ok := strings.Cut(os.Getenv(helperEnv), " ")
	if !ok {
		return
	}
	fmt.Printf("uid %d\n", os.Geteuid())
	switch mode {
	case "connect":
		c, err := net.DialTimeout("unix", arg, 30*time.Second)
		if err != nil {
			fmt.Printf("dial failed: %v\n", err)
			os.Exit(0)
		}
		fmt.Println("dialed")
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		req, _ := http.NewRequest(http.MethodPost, "http://fuscia/v1/prune", strings.NewReader(`{}`))
		if err := req.Write(c); err != nil {
			fmt.Printf("closed on write: %v\n", err)
			os.Exit(0)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), req)
		if err != nil {
			fmt.Printf("closed: %v\n", err)
			os.Exit(0)
		}
		fmt.Printf("answered %d\n", resp.StatusCode)
	case "prepare":
		if _, err := PrepareHome(arg); err != nil {
			fmt.Printf("refused: %v\n", err)
		} else {
			fmt.Println("prepared")
		}
	}
	os.Exit(0)
}

// asNobody runs this test binary's TestPeerHelperProcess as uid nobodyUID with mode and arg,
// and returns its output. It skips the test where the process cannot change users.
func asNobody(t *testing.T, mode, arg string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("acting as another user needs root: run the tests as root to check the socket against other users")
	}
	// The child must be able to execute the binary: copy it where every user may.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := worldDir(t)
	bin := filepath.Join(dir, "peer-helper.test")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^TestPeerHelperProcess$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), helperEnv+"="+mode+" "+arg)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID}}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start a process as uid %d (%v): the check against other users is not run here", nobodyUID, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the helper as uid %d: %v\n%s", nobodyUID, err, out.String())
	}
	if !strings.Contains(out.String(), fmt.Sprintf("uid %d\n", nobodyUID)) {
		t.Fatalf("the helper did not run as uid %d:\n%s", nobodyUID, out.String())
	}
	return out.String()
}

// worldDir is a fresh directory every user may enter and write to (t.TempDir's parent is 0700).
func worldDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "fsc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPeerListenerRefusesOtherUsers: with the socket itself open to everyone (as in the moment
// before its chmod, or a home loosened by hand), a connection from another user is closed before
// a request is read, and logged; the owner's own connections are served.
func TestPeerListenerRefusesOtherUsers(t *testing.T) {
	sock := filepath.Join(worldDir(t), "fuscia.sock")
	ul, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sock, 0o777); err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	ln := newPeerListener(ul, slog.New(slog.NewTextHandler(&logs, nil)))
	var served atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.WriteHeader(http.StatusOK)
	})}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	defer func() {
		_ = srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	}()

	own := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}, Timeout: 30 * time.Second}
	get := func() {
		t.Helper()
		resp, err := own.Get("http://fuscia/v1/health")
		if err != nil {
			t.Fatalf("the owner's own request: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the owner's own request: %s", resp.Status)
		}
	}
	get()

	out := asNobody(t, "connect", sock)
	if !strings.Contains(out, "dialed\n") || !strings.Contains(out, "closed") || strings.Contains(out, "answered") {
		t.Errorf("another user's request on the socket: want it dialed and closed unanswered, got:\n%s", out)
	}
	if n := served.Load(); n != 1 {
		t.Errorf("%d requests served, want only the owner's 1", n)
	}
	if l := logs.String(); !strings.Contains(l, "refused a connection on the API socket from another user") || !strings.Contains(l, fmt.Sprintf("peer_uid=%d", nobodyUID)) {
		t.Errorf("the refusal was not logged with the peer's uid:\n%s", l)
	}
	// The listener goes on serving the owner after a refusal.
	get()
}

// TestPrepareHomeOfAnotherUser: a home that belongs to someone else is refused, not used.
func TestPrepareHomeOfAnotherUser(t *testing.T) {
	home := filepath.Join(worldDir(t), "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o777); err != nil {
		t.Fatal(err)
	}
	out := asNobody(t, "prepare", home)
	if !strings.Contains(out, "refused: the fuscia home "+home+" belongs to another user (uid 0; you are uid 65534)") {
		t.Errorf("preparing another user's home as uid %d:\n%s", nobodyUID, out)
	}
	if m := modeOf(t, home); m != 0o777 {
		t.Errorf("another user's home changed mode to %04o", m)
	}
}
