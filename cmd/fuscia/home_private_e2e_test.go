package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
)

// The home, the socket and the owner file are the user's alone (docs/security.md, "Local socket
// and files"): checked through the binary, as another local user would meet them.

// nobodyUID is the other local user these tests act as.
const nobodyUID = 65534

func permOf(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// waitFor polls cond until it holds, failing the test after 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHomePrivateUnderUmask000: with a umask that would leave everything open, apply creates
// the home 0700 (its missing parents too), listens on a 0600 socket, and writes a 0600 owner file
// that names the command without the values of -var and -payload.
func TestHomePrivateUnderUmask000(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	parent := filepath.Join(h.home, "fresh")
	h.home = filepath.Join(parent, "home")
	h.write("slow.fsc.hcl", `workflow "slow" {}
variable "secret" { type = string }
task "nap" {
  uses   = builtin.sleep
  inputs = { duration = "2m" }
}`)
	// sh runs the binary with umask 000: every mode fuscia asks for is what it gets.
	cmd := exec.Command("sh", "-c", `umask 000; exec "$0" "$@"`, fusciaBin,
		"apply", "-var", "secret=hunter2", "-payload", `{"token": "p4yl0ad"}`, "slow.fsc.hcl", "-json")
	cmd.Dir, cmd.Env = h.dir, append(baseEnv(), "FUSCIA_HOME="+h.home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{}) // closed when apply was reaped, with its error in waitErr
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	defer func() {
		_ = cmd.Process.Kill() // an error once it exited
		<-exited
	}()
	sock, ownerFile := filepath.Join(h.home, "fuscia.sock"), filepath.Join(h.home, "fuscia.owner")
	// Wait until apply serves its API: the socket answers only once it is set up (bound inside
	// the private home, then chmodded); an answer to an earlier look would catch the moment
	// between the two, which the 0700 home covers and the modes below do not describe.
	client := socketClient(sock)
	waitFor(t, "apply's socket and owner file", func() bool {
		if _, err := os.Stat(ownerFile); err != nil {
			return false
		}
		resp, err := client.Get("http://fuscia/v1/executions")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return true
	})

	for path, want := range map[string]fs.FileMode{
		parent: 0o700, h.home: 0o700, sock: 0o600, ownerFile: 0o600, filepath.Join(h.home, "state"): 0o700,
	} {
		if got := permOf(t, path); got != want {
			t.Errorf("%s: mode %04o under umask 000, want %04o", path, got, want)
		}
	}
	owner, err := os.ReadFile(ownerFile)
	if err != nil {
		t.Fatal(err)
	}
	line := string(owner)
	if want := fmt.Sprintf("%d fuscia apply slow.fsc.hcl\n", cmd.Process.Pid); line != want {
		t.Errorf("owner file = %q, want %q", line, want)
	}
	for _, secret := range []string{"hunter2", "p4yl0ad", "-var", "-payload"} {
		if strings.Contains(line, secret) {
			t.Errorf("the owner file holds %q: %q", secret, line)
		}
	}

	// The user's own commands still use the socket.
	ids := exList(t, h)
	if len(ids) != 1 {
		t.Fatalf("executions list through the socket: %v", ids)
	}
	wantCode(t, h.run("cancel", ids[0]), 0)
	select {
	case <-exited:
		if ee, ok := waitErr.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("apply after cancel: %v, want exit 1\n%s\n%s", waitErr, stdout.String(), stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("apply did not end within 60s of its run's cancel")
	}
	if got := permOf(t, h.home); got != 0o700 {
		t.Errorf("home mode %04o after apply, want 0700", got)
	}
}

// TestHomeTightened: a home made open by an older fuscia or by hand is made private by the next
// command that owns it.
func TestHomeTightened(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if err := os.Chmod(h.home, 0o755); err != nil {
		t.Fatal(err)
	}
	h.write("w.fsc.hcl", `workflow "w" {}
task "a" {
  uses   = builtin.transform
  inputs = { x = 1 }
}`)
	wantCode(t, h.run("apply", "w.fsc.hcl"), 0)
	if got := permOf(t, h.home); got != 0o700 {
		t.Errorf("home mode %04o after apply, want 0700", got)
	}
}

// needRoot skips the test unless it can act as other users.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("acting as another user needs root: run the tests as root to check the socket against other users")
	}
}

// openDir is a fresh directory every user may enter (t.TempDir's parent is 0700, which would
// keep the other user from the home whatever its own mode).
func openDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "fsc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// asNobody runs the fuscia binary as uid nobodyUID against h's home. It skips the test where
// this process cannot run a command as another user.
func asNobody(t *testing.T, h *harness, args ...string) result {
	t.Helper()
	needRoot(t)
	// The test binary's directory is private: copy fuscia where that user may run it.
	dir := openDir(t)
	data, err := os.ReadFile(fusciaBin)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "fuscia")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(args, "-home", h.home)...)
	cmd.Dir, cmd.Env = dir, baseEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start a process as uid %d (%v): the check against other users is not run here", nobodyUID, err)
	}
	err = cmd.Wait()
	r := result{args: args, stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("fuscia %s as uid %d: %v", strings.Join(args, " "), nobodyUID, err)
	}
	for _, bad := range []string{"goroutine ", "panic:", "runtime error"} {
		if strings.Contains(r.stdout, bad) || strings.Contains(r.stderr, bad) {
			t.Errorf("output contains %q (a crash or a Go stack):\n%s", bad, r)
		}
	}
	return r
}

// TestSocketRefusesOtherUsers: another local user can neither read nor prune the owner's runs
// through serve's socket: not through the private home, and not even when the home and the
// socket are opened to everyone (as in the instant before a chmod): the socket checks who
// connects.
func TestSocketRefusesOtherUsers(t *testing.T) {
	t.Parallel()
	needRoot(t)
	h := newHarness(t)
	h.home = filepath.Join(openDir(t), "home")
	h.write("flows/w.fsc.hcl", `workflow "w" {}
task "a" {
  uses   = builtin.transform
  inputs = { x = 1 }
}`)
	wantCode(t, h.run("apply", "flows/w.fsc.hcl"), 0)
	wantCode(t, h.run("apply", "flows/w.fsc.hcl"), 0)
	runs := exList(t, h)
	if len(runs) != 2 {
		t.Fatalf("runs before: %v", runs)
	}
	sp := startServe(t, h, nil, "flows")
	sock := filepath.Join(h.home, "fuscia.sock")

	attack := func(how string) {
		t.Helper()
		r := asNobody(t, h, "executions", "prune", "-completed-before", "2999-01-01")
		if r.code == 0 {
			t.Errorf("%s: prune as uid %d succeeded:\n%s", how, nobodyUID, r)
		}
		r = asNobody(t, h, "executions", "list", "-json")
		for _, id := range runs {
			if strings.Contains(r.stdout, id) || strings.Contains(r.stderr, id) {
				t.Errorf("%s: uid %d listed run %s:\n%s", how, nobodyUID, id, r)
			}
		}
		if got := exList(t, h); len(got) != 2 {
			t.Fatalf("%s: runs after uid %d's prune: %v, want both", how, nobodyUID, got)
		}
	}
	// The home is private: the socket cannot be reached.
	attack("through the private home")

	// Open everything, as a umask would have before the chmod: the peer check refuses.
	for path, mode := range map[string]fs.FileMode{h.home: 0o777, sock: 0o666} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	attack("with the home and the socket open to all")
	waitFor(t, "serve logging the refusal", func() bool {
		return strings.Contains(sp.stderr.String(), "refused a connection on the API socket from another user")
	})
	for path, mode := range map[string]fs.FileMode{h.home: 0o700, sock: 0o600} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	sp.stopOK()
}

// socketClient is an HTTP client on the owner's socket.
func socketClient(sock string) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
}

// socketExecution polls run id through the owner's socket until its status is want.
func socketExecution(t *testing.T, sock, id, want string) journal.Execution {
	t.Helper()
	client := socketClient(sock)
	var ex journal.Execution
	waitFor(t, "run "+id+" "+want, func() bool {
		resp, err := client.Get("http://fuscia/v1/executions/" + id)
		if err != nil {
			t.Fatalf("GET run %s on the socket: %v", id, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET run %s on the socket: %s %s", id, resp.Status, body)
		}
		ex = journal.Execution{}
		if err := json.Unmarshal(body, &ex); err != nil {
			t.Fatalf("run %s: %v\n%s", id, err, body)
		}
		return ex.Status == want
	})
	return ex
}

// TestAmbiguousIDNamesNoRun: an id prefix several runs share is refused without naming them,
// in the API's answer as in the CLI's.
func TestAmbiguousIDNamesNoRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	runs := exSeed(t, h.home) // three runs whose ids start with 01E2E00000
	h.write("flows/w.fsc.hcl", `workflow "w" {}`)
	sp := startServe(t, h, nil, "flows")
	resp, err := socketClient(filepath.Join(h.home, "fuscia.sock")).Get("http://fuscia/v1/executions/01E2E00000")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var answer struct{ Error, Code string }
	if err := json.Unmarshal(body, &answer); err != nil || resp.StatusCode != http.StatusBadRequest || answer.Code != "ambiguous" {
		t.Fatalf("GET an ambiguous prefix: %d %s, want 400 ambiguous", resp.StatusCode, body)
	}
	if !strings.Contains(answer.Error, "3 executions") || !strings.Contains(answer.Error, "longer prefix") {
		t.Errorf("the answer does not say how many match and what to do: %s", body)
	}
	r := h.run("show", "01E2E00000")
	wantCode(t, r, 2)
	for _, id := range []string{runs.old, runs.failed, runs.running} {
		if strings.Contains(string(body), id[:11]) || strings.Contains(r.stdout+r.stderr, id[:11]) {
			t.Errorf("an ambiguous prefix named run %s:\n%s\n%s", id, body, r)
		}
	}
	sp.stopOK()
}

// TestWebhookBodyNotUTF8: a signed webhook body that is not UTF-8 reaches the run byte for byte
// (trigger.payload.body_base64), so that the run sees what was signed.
func TestWebhookBodyNotUTF8(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("flows/hook.fsc.hcl", hookWorkflow)
	h.env = append(h.env, "HOOK_KEY=s3cret")
	sp := startServe(t, h, nil, "flows")
	body := []byte("caf\xe9 \xff\xfe\x00 end")
	code, b := sp.request(http.MethodPost, "/hooks/in", bytes.NewReader(body),
		http.Header{"Content-Type": {"text/plain; charset=iso-8859-1"}, "X-Signature": {hmacHex("s3cret", body)}})
	if code != http.StatusAccepted {
		t.Fatalf("signed body: %d %s, want 202", code, b)
	}
	ex := socketExecution(t, filepath.Join(h.home, "fuscia.sock"), executionID(t, b), "succeeded")
	var out struct {
		Payload struct {
			Body       json.RawMessage `json:"body"`
			BodyBase64 string          `json:"body_base64"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(ex.Outputs, &out); err != nil {
		t.Fatalf("outputs: %v\n%s", err, ex.Outputs)
	}
	got, err := base64.StdEncoding.DecodeString(out.Payload.BodyBase64)
	if err != nil || !bytes.Equal(got, body) {
		t.Errorf("trigger.payload.body_base64 = %q (%q, %v), want the exact bytes %q\n%s", out.Payload.BodyBase64, got, err, body, ex.Outputs)
	}
	if string(out.Payload.Body) != "null" {
		t.Errorf("trigger.payload.body = %s, want null beside body_base64", out.Payload.Body)
	}
	sp.stopOK()
}
