package main

// Tests of both ends of serve's compile child (compile_child.go) in this process: the hidden
// command's errors, and childCompiler against small scripts standing in for the binary. The
// real child, started by a real serve, is in compile_child_e2e_test.go.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fuscia/fuscia/hostabi"
)

// runInProcess runs fuscia with args in this process and returns its exit code and output.
func runInProcess(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := &cli{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }, environ: func() []string { return nil }}
	code := c.main(context.Background(), args)
	return code, out.String(), errOut.String()
}

// TestInternalCompileErrors: a job whose wasm file is missing fails with exit 1 and a message
// that names the component and the file, and writes nothing to the cache; a command line
// without the job's flags is refused with exit 2. The command is not in the usage.
func TestInternalCompileErrors(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	missing := filepath.Join(t.TempDir(), "gone", "component.wasm")
	code, stdout, stderr := runInProcess(t, internalCompileCommand, "-name=acme/mailer@1.2.3", "-wasm="+missing,
		"-digest=sha256:"+strings.Repeat("0", 64), "-cache-dir="+cache)
	if code != exitFailed {
		t.Errorf("internal-compile of a missing file: exit %d, want %d\nstdout: %s\nstderr: %s", code, exitFailed, stdout, stderr)
	}
	for _, want := range []string{"Error: Cannot compile acme/mailer@1.2.3", missing} {
		if !strings.Contains(stderr, want) {
			t.Errorf("internal-compile of a missing file: stderr does not contain %q:\n%s", want, stderr)
		}
	}
	if entries, _ := filepath.Glob(filepath.Join(cache, "*.cwasm")); len(entries) > 0 {
		t.Errorf("a failed compile left cache entries: %v", entries)
	}

	code, _, stderr = runInProcess(t, internalCompileCommand, "-name=acme/mailer@1.2.3")
	if code != exitInvalid || !strings.Contains(stderr, "-wasm, -digest and -cache-dir") {
		t.Errorf("internal-compile without -wasm, -digest and -cache-dir: exit %d, want %d with a message naming them:\n%s", code, exitInvalid, stderr)
	}

	if _, usage, _ := runInProcess(t, "-help"); strings.Contains(usage, internalCompileCommand) {
		t.Errorf("fuscia -help lists %s, which users never run:\n%s", internalCompileCommand, usage)
	}
}

// script writes an executable shell script standing in for the fuscia binary.
func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fuscia")
	writeFile(t, path, []byte("#!/bin/sh\n"+body+"\n"), 0o755)
	return path
}

var testJob = hostabi.CompileJob{Name: "acme/mailer@1.2.3", WasmPath: "-odd/component.wasm", Digest: "sha256:abc", CacheDir: "/c", Fuel: true}

// TestChildCompilerArguments: the child gets the job as the hidden command's flags (a value
// that starts with a dash included), and a child that exits 0 is a success.
func TestChildCompilerArguments(t *testing.T) {
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args")
	exe := script(t, `for a in "$@"; do echo "$a"; done > "`+argsFile+`"`)
	if err := childCompiler(context.Background(), exe, time.Minute)(testJob); err != nil {
		t.Fatalf("a child that exits 0: %v", err)
	}
	got, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	want := "internal-compile\n-name=acme/mailer@1.2.3\n-wasm=-odd/component.wasm\n-digest=sha256:abc\n-cache-dir=/c\n-fuel\n"
	if string(got) != want {
		t.Errorf("the child's arguments:\n%s\nwant:\n%s", got, want)
	}
}

// TestChildCompilerFailure: a child that fails is an error that names the component and says
// what the child wrote on stderr, in one line, and no more of it than the buffer keeps.
func TestChildCompilerFailure(t *testing.T) {
	exe := script(t, `echo "Error: Cannot compile acme/mailer@1.2.3" >&2; echo >&2; echo "the reason" >&2; head -c 100000 /dev/zero | tr '\0' x >&2; exit 3`)
	err := childCompiler(context.Background(), exe, time.Minute)(testJob)
	if err == nil {
		t.Fatal("a child that exits 3: no error")
	}
	msg := err.Error()
	for _, want := range []string{"compile acme/mailer@1.2.3 in a child process", "exit status 3", "Error: Cannot compile acme/mailer@1.2.3 the reason"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not contain %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") || len(msg) > 9<<10 {
		t.Errorf("error is %d bytes, with newlines: %v; want one line, at most the 8 KiB kept of stderr", len(msg), strings.Contains(msg, "\n"))
	}
}

// TestChildCompilerStops: a child that does not finish is killed at the timeout, and one whose
// context ends is killed then; both are errors that say so. Either way childCompiler returns
// only after the child was reaped (cmd.Run).
func TestChildCompilerStops(t *testing.T) {
	exe := script(t, "exec sleep 600")
	err := childCompiler(context.Background(), exe, time.Second)(testJob)
	if err == nil || !strings.Contains(err.Error(), "did not finish within 1s and was killed") {
		t.Errorf("a child past its timeout: %v, want it killed", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = childCompiler(ctx, exe, time.Hour)(testJob)
	if err == nil || !strings.Contains(err.Error(), "stopped: context canceled") {
		t.Errorf("a child whose context ended: %v, want it stopped", err)
	}
}

// compileParentEnv makes the test binary a stand-in for serve (testMain): it runs
// childCompiler with the executable the variable names, until it is killed.
const compileParentEnv = "FUSCIA_TEST_COMPILE_PARENT"

func runCompileParent(exe string) int {
	err := childCompiler(context.Background(), exe, time.Hour)(testJob)
	fmt.Fprintln(os.Stderr, "the child ended while its parent lived:", err)
	return 1
}

// TestChildCompilerDiesWithItsParent: a compile child does not outlive the daemon that started
// it, even one SIGKILLed, which runs no code at its end. An orphan went on writing into the
// home of a stopped serve (CI, TestClusterCoordinatorKilled: its temporary home could not be
// removed). The parent here is this test binary run again as a stand-in; the child, a script
// that writes its process ID and sleeps.
func TestChildCompilerDiesWithItsParent(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	exe := script(t, fmt.Sprintf("echo $$ > %[1]s.new && mv %[1]s.new %[1]s && exec sleep 600", pidFile))
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), compileParentEnv+"="+exe)
	var stderr bytes.Buffer
	parent.Stderr = &stderr
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}

	pid, err := waitPIDFile(pidFile, time.Minute)
	if err != nil {
		parent.Process.Kill() //nolint:errcheck
		parent.Wait()         //nolint:errcheck
		t.Fatalf("the child: %v\n%s", err, &stderr)
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	parent.Wait() //nolint:errcheck // killed: the error says so

	mustStop(t, pid, 30*time.Second, "the compile child, its parent killed,")
}

// processState is the state field of /proc/PID/stat: the one after the command's closing
// parenthesis (the command may contain spaces and parentheses itself).
func processState(stat []byte) string {
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) == 0 {
		return ""
	}
	return fields[0]
}

// waitPIDFile waits up to limit for the file at path and returns the process ID it holds. The
// writer renames it into place, so it is never read half-written.
func waitPIDFile(path string, limit time.Duration) (int, error) {
	deadline := time.Now().Add(limit)
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				return 0, fmt.Errorf("pid file %s: %q: %w", path, b, err)
			}
			return pid, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no pid file %s within %s: %w", path, limit, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// mustStop fails the test unless process pid stops running within limit: gone, or a zombie
// its new parent has yet to reap. A process still running then is killed; what names it.
func mustStop(t *testing.T, pid int, limit time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || processState(stat) == "Z" {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s (process %d) still runs after %s", what, pid, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
