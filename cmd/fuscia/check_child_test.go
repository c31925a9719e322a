package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/serve"
)

// checkerForTest is a childChecker of the binary TestMain built; Close runs at the test's end.
func checkerForTest(t *testing.T, timeout, idle time.Duration, env ...string) *childChecker {
	t.Helper()
	c := newChildChecker(fusciaBin, append(baseEnv(), env...), timeout, idle)
	t.Cleanup(c.Close)
	return c
}

// currentChild is c's child, nil when none runs.
func currentChild(c *childChecker) *checkProc {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur
}

// childPid is the pid of c's child, 0 when none runs.
func childPid(c *childChecker) int {
	if p := currentChild(c); p != nil {
		return p.cmd.Process.Pid
	}
	return 0
}

func mustCheck(t *testing.T, c *childChecker, file, src string) map[string][sha256.Size]byte {
	t.Helper()
	called, err := c.Check(context.Background(), file, []byte(src))
	if err != nil {
		t.Fatalf("check %s: %v", file, err)
	}
	if called == nil {
		t.Fatalf("check %s: a nil map of called files; want one, empty for none", file)
	}
	return called
}

// checkErr is c.Check's error.
func checkErr(ctx context.Context, c *childChecker, file string, src []byte) error {
	_, err := c.Check(ctx, file, src)
	return err
}

// refusedFor fails unless err is the load error of a refused file with summary.
func refusedFor(t *testing.T, err error, summary string) {
	t.Helper()
	var le *serve.LoadError
	if !errors.As(err, &le) || len(le.Diagnostics) != 1 || le.Diagnostics[0].Summary != summary {
		t.Fatalf("got %v, want a load error %q", err, summary)
	}
}

// TestCheckChildKeptBetweenFiles: one child checks file after file (a start of 1,000 files paid
// a child's start for each: 14 s); a file that ends it (the heap limit) is refused with its
// error and the next file gets a new child; an idle child is let go and reaped.
func TestCheckChildKeptBetweenFiles(t *testing.T) {
	c := checkerForTest(t, time.Minute, 200*time.Millisecond, "FUSCIA_MAX_CHECK_HEAP=128MiB")
	mustCheck(t, c, "a.fsc.hcl", goodWorkflow)
	first := childPid(c)
	// Files with errors are the caller's to report: the child gets through them too.
	for _, src := range []string{goodWorkflow, "workflow {", "\x00\xff"} {
		mustCheck(t, c, "b.fsc.hcl", src)
		if pid := childPid(c); pid != first {
			t.Fatalf("the next file was checked by child %d, not the first one, %d", pid, first)
		}
	}

	refusedFor(t, checkErr(context.Background(), c, "bomb.fsc.hcl", []byte("workflow \"bomb\" {}\n"+bombNode)),
		"Workflow expressions use too much memory")
	if pid := childPid(c); pid != 0 {
		t.Fatalf("child %d still runs after the heap limit ended it", pid)
	}
	mustCheck(t, c, "c.fsc.hcl", goodWorkflow)
	if pid := childPid(c); pid == first || pid == 0 {
		t.Fatalf("the file after the refused one was checked by child %d; want a new one", pid)
	}

	for deadline := time.Now().Add(time.Minute); childPid(c) != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("an idle child was not let go")
		}
	}
	c.procs.Wait() // returns once every child was reaped
}

// TestCheckChildGoneWhileIdle: a child that ended between two files (killed from outside) is
// replaced for the next file, which is checked, not refused.
func TestCheckChildGoneWhileIdle(t *testing.T) {
	c := checkerForTest(t, time.Minute, time.Hour)
	mustCheck(t, c, "a.fsc.hcl", goodWorkflow)
	p := currentChild(c)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	mustCheck(t, c, "b.fsc.hcl", goodWorkflow)
	if pid := childPid(c); pid == p.cmd.Process.Pid || pid == 0 {
		t.Fatalf("the file was checked by child %d; want a new one", pid)
	}
}

// stoppedChild makes c's child stop (SIGSTOP) and returns it: it reads nothing and answers
// nothing until it is killed.
func stoppedChild(t *testing.T, c *childChecker) *checkProc {
	t.Helper()
	mustCheck(t, c, "a.fsc.hcl", goodWorkflow)
	p := currentChild(c)
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// The signal is delivered when the kernel next schedules the child: wait until it has been.
	stat := filepath.Join("/proc", strconv.Itoa(p.cmd.Process.Pid), "stat")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(stat)
		if err != nil {
			t.Fatal(err)
		}
		// "PID (COMM) STATE ...": T is stopped.
		if i := bytes.LastIndexByte(b, ')'); i > 0 && bytes.HasPrefix(b[i+1:], []byte(" T")) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child did not stop: %s", b)
		}
	}
}

// TestCheckChildTimeout: a child that does not answer within the timeout refuses the file
// ("take too long", naming the file) and is killed and reaped.
func TestCheckChildTimeout(t *testing.T) {
	c := checkerForTest(t, 300*time.Millisecond, time.Hour)
	p := stoppedChild(t, c)
	err := checkErr(context.Background(), c, "slow.fsc.hcl", []byte(goodWorkflow))
	refusedFor(t, err, "Workflow expressions take too long")
	if le := (*serve.LoadError)(nil); errors.As(err, &le) && !strings.Contains(le.Diagnostics[0].Detail, "slow.fsc.hcl") {
		t.Errorf("the refusal does not name the file: %s", le.Diagnostics[0].Detail)
	}
	<-p.exited
	if childPid(c) != 0 {
		t.Error("the child that timed out is still c's child")
	}
}

// TestCheckChildStopped: a check that ctx ends (serve stopping) is not the file's fault: not a
// load error; the child is killed and reaped.
func TestCheckChildStopped(t *testing.T) {
	c := checkerForTest(t, time.Minute, time.Hour)
	p := stoppedChild(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := checkErr(ctx, c, "b.fsc.hcl", []byte(goodWorkflow))
	var le *serve.LoadError
	if err == nil || errors.As(err, &le) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the context's error and no load error", err)
	}
	<-p.exited
	c.Close()
	if err := checkErr(context.Background(), c, "c.fsc.hcl", []byte(goodWorkflow)); err == nil {
		t.Error("a closed checker checked a file")
	}
}

// TestCheckChildInput: the child's input holds any path (a newline in a name included) and
// content up to the file size limit; it refuses input that is not its format.
func TestCheckChildInput(t *testing.T) {
	c := checkerForTest(t, time.Minute, time.Hour)
	mustCheck(t, c, "odd\nname \"x\".fsc.hcl", goodWorkflow)
	mustCheck(t, c, "empty.fsc.hcl", "")
	for _, in := range []string{"x \"a\"\n", "-1 \"a\"\n", "3 a\nabc", "99999999999 \"a\"\n", "5 \"a\"\nab"} {
		ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
		cmd := exec.CommandContext(ctx, fusciaBin, internalCheckCommand)
		cmd.Env, cmd.Stdin = baseEnv(), strings.NewReader(in)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		cancel()
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != exitInvalid ||
			!strings.Contains(stderr.String(), "Invalid internal-check input") {
			t.Errorf("input %q: %v, want exit %d with the input's error:\n%s", in, err, exitInvalid, stderr.String())
		}
	}
}

// TestCheckChildCalledFiles: the child reports the files a workflow's calls read, with the
// sha256 of what it read (a zero sum for one it could not read), so that serve loads those
// contents only (lang.Parser.Expect), not a file swapped in after the check.
func TestCheckChildCalledFiles(t *testing.T) {
	c := checkerForTest(t, time.Minute, time.Hour)
	dir := t.TempDir()
	sub := filepath.Join(dir, "lib", "sub.fsc.hcl")
	if err := os.MkdirAll(filepath.Dir(sub), 0o755); err != nil {
		t.Fatal(err)
	}
	subSrc := subWorkflow("one")
	if err := os.WriteFile(sub, []byte(subSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	caller := filepath.Join(dir, "flows", "main.fsc.hcl")
	called := mustCheck(t, c, caller, callerWorkflow("main", "../lib/sub.fsc.hcl"))
	if len(called) != 1 || called[sub] != sha256.Sum256([]byte(subSrc)) {
		t.Errorf("called %x; want %s with the sum of its content", called, sub)
	}
	missing := filepath.Join(dir, "lib", "missing.fsc.hcl")
	called = mustCheck(t, c, caller, callerWorkflow("main", "../lib/missing.fsc.hcl"))
	if sum, ok := called[missing]; len(called) != 1 || !ok || sum != [sha256.Size]byte{} {
		t.Errorf("called %x; want %s with a zero sum", called, missing)
	}
	if called := mustCheck(t, c, "plain.fsc.hcl", goodWorkflow); len(called) != 0 {
		t.Errorf("called %x for a workflow without calls; want none", called)
	}
}
