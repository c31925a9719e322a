package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/plugins/internal/execcore"
)

func TestArgsArePassedVerbatim(t *testing.T) {
	args := []string{"two words", `"double"`, "'single'", "$HOME", "*", "a;b|c", "`id`", ""}
	out, err := run(context.Background(), Input{Command: "/usr/bin/printf", Args: append([]string{`%s\n`}, args...)})
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(args, "\n") + "\n"; out.Stdout != want {
		t.Errorf("stdout = %q, want %q", out.Stdout, want)
	}
	if out.ExitCode != 0 || out.Truncated {
		t.Errorf("exit_code %d truncated %v", out.ExitCode, out.Truncated)
	}
}

func TestEnvIsExplicitOnly(t *testing.T) {
	t.Setenv("FUSCIA_SHELL_TEST_LEAK", "leaked")
	out, err := run(context.Background(), Input{Command: "/usr/bin/env"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stdout != "" {
		t.Errorf("with no env the child's environment should be empty, got %q", out.Stdout)
	}
	out, err = run(context.Background(), Input{Command: "/usr/bin/env", Env: map[string]string{"B": "two words", "A": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stdout != "A=1\nB=two words\n" {
		t.Errorf("env = %q, want exactly A and B", out.Stdout)
	}
}

func TestStdin(t *testing.T) {
	in := "line one\nline two\n" + strings.Repeat("x", 1<<20) // more than a pipe buffer
	out, err := run(context.Background(), Input{Command: "/bin/cat", Stdin: in})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stdout != in {
		t.Errorf("cat echoed %d bytes, want the %d given", len(out.Stdout), len(in))
	}
	// A command that ignores its input must not hang the task.
	if _, err := run(context.Background(), Input{Command: "/usr/bin/true", Stdin: strings.Repeat("y", 4<<20)}); err != nil {
		t.Errorf("ignored stdin: %v", err)
	}
}

// Commands run at the same time (a for_each with concurrency) each get their own output and
// input, though they share the pool of epoll instances and each one's child briefly holds a copy
// of the others' descriptors.
func TestConcurrentCommandsKeepTheirOwnStreams(t *testing.T) {
	const n = 16
	errs := make(chan error, n)
	for i := range n {
		go func() {
			in := fmt.Sprintf("input %d\n%s", i, strings.Repeat(strconv.Itoa(i%10), 100<<10))
			script := `cat; echo "stderr $0" >&2`
			out, err := run(context.Background(), Input{Command: "/bin/sh", Args: []string{"-c", script, strconv.Itoa(i)}, Stdin: in})
			switch {
			case err != nil:
				errs <- fmt.Errorf("command %d: %v", i, err)
			case out.Stdout != in:
				errs <- fmt.Errorf("command %d: stdout is %d bytes starting %.20q, want its own %d", i, len(out.Stdout), out.Stdout, len(in))
			case out.Stderr != fmt.Sprintf("stderr %d\n", i):
				errs <- fmt.Errorf("command %d: stderr %q", i, out.Stderr)
			default:
				errs <- nil
			}
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestWorkdir(t *testing.T) {
	dir := t.TempDir()
	out, err := run(context.Background(), Input{Command: "/bin/sh", Args: []string{"-c", "pwd"}, Workdir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out.Stdout) != dir {
		t.Errorf("pwd = %q, want %q", out.Stdout, dir)
	}
	_, err = run(context.Background(), Input{Command: "/bin/sh", Workdir: filepath.Join(dir, "missing")})
	if execcore.KindOf(err) != execcore.Fatal || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing workdir: %v", err)
	}
}

// TestOutputIsCapped: what is kept of stdout fits, as JSON, under the engine's node output
// limit (execcore.MaxDocument), whether its bytes cost one byte of JSON or six.
func TestOutputIsCapped(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		truncated    bool
		length       int // of stdout; 0: anything near full
	}{
		{"control bytes", "head -c 20971520 /dev/zero", true, 0},
		{"text", "head -c 20971520 /dev/zero | tr '\\0' a", true, 0},
		{"text that just fits", fmt.Sprintf("head -c %d /dev/zero | tr '\\0' a", execcore.MaxOutput), false, execcore.MaxOutput},
		{"one byte more", fmt.Sprintf("head -c %d /dev/zero | tr '\\0' a", execcore.MaxOutput+1), true, execcore.MaxOutput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := run(context.Background(), Input{Command: "/bin/sh", Args: []string{"-c", tc.script}})
			if err != nil {
				t.Fatal(err)
			}
			doc, _ := json.Marshal(out)
			if out.Truncated != tc.truncated || len(doc) > execcore.MaxDocument || len(doc) < execcore.MaxDocument-256 {
				t.Errorf("stdout %d bytes (%d of JSON) truncated=%v; want %v and JSON just under %d", len(out.Stdout), len(doc), out.Truncated, tc.truncated, execcore.MaxDocument)
			}
			if tc.length != 0 && len(out.Stdout) != tc.length {
				t.Errorf("stdout %d bytes; want %d", len(out.Stdout), tc.length)
			}
		})
	}
}

func TestExitCodes(t *testing.T) {
	script := "echo partial; echo first >&2; echo 'the real reason' >&2; exit 3"
	out, err := run(context.Background(), Input{Command: "/bin/sh", Args: []string{"-c", script}})
	if execcore.KindOf(err) != execcore.Fatal {
		t.Fatalf("exit 3: err = %v, want fatal", err)
	}
	for _, want := range []string{"/bin/sh", "code 3", "the real reason"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if out.ExitCode != 3 || out.Stdout != "partial\n" {
		t.Errorf("partial output = %+v", out)
	}

	out, err = run(context.Background(), Input{Command: "/bin/sh", Args: []string{"-c", script}, AllowExitCodes: []int{1, 3}})
	if err != nil || out.ExitCode != 3 {
		t.Errorf("allowed exit 3: %+v, %v", out, err)
	}

	_, err = run(context.Background(), Input{Command: "/bin/sh", Args: []string{"-c", "kill -TERM $$"}, AllowExitCodes: []int{143}})
	if execcore.KindOf(err) != execcore.Fatal || !strings.Contains(err.Error(), "SIGTERM") {
		t.Errorf("death by signal: %v", err)
	}
}

func TestProgramThatCannotRun(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "nope"): "not found",
		plain:                      "not executable",
		dir:                        "is a directory",
	} {
		_, err := run(context.Background(), Input{Command: path})
		if execcore.KindOf(err) != execcore.Fatal || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want fatal %q", path, err, want)
		}
	}
}

// groupScript prints its pid (the process group's id) and leaves a background sleep and a
// foreground sleep in the group.
const groupScript = "echo $$; /bin/sleep 100 & /bin/sleep 100"

func TestTimeoutKillsTheProcessGroup(t *testing.T) {
	start := time.Now()
	out, err := run(context.Background(), Input{Command: "/bin/sh", Args: []string{"-c", groupScript}, Timeout: "300ms"})
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("took %s", elapsed)
	}
	if execcore.KindOf(err) != execcore.Fatal || !strings.Contains(err.Error(), "timed out after 300ms") {
		t.Errorf("err = %v, want a fatal timeout", err)
	}
	if out.ExitCode != -1 {
		t.Errorf("exit_code = %d, want -1", out.ExitCode)
	}
	assertGroupGone(t, out.Stdout)
}

func TestCancellationKillsTheProcessGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	out, err := run(ctx, Input{Command: "/bin/sh", Args: []string{"-c", groupScript}, Timeout: "1h"})
	if !errors.Is(err, context.Canceled) || execcore.KindOf(err) != execcore.Retryable {
		t.Errorf("err = %v, want context.Canceled, not fatal", err)
	}
	assertGroupGone(t, out.Stdout)
}

// The attempt's deadline wins over a longer input timeout, and is reported as the context's.
func TestAttemptDeadlineWins(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	out, err := run(ctx, Input{Command: "/bin/sh", Args: []string{"-c", groupScript}, Timeout: "1h"})
	if !errors.Is(err, context.DeadlineExceeded) || execcore.KindOf(err) == execcore.Fatal {
		t.Errorf("err = %v, want context.DeadlineExceeded, not fatal", err)
	}
	assertGroupGone(t, out.Stdout)
}

// A command that exits leaving a background process holding its stdout must not hang the task,
// and the leftover is killed.
func TestLeftoversAreKilled(t *testing.T) {
	start := time.Now()
	out, err := run(context.Background(), Input{Command: "/bin/sh", Args: []string{"-c", "echo $$; /bin/sleep 100 &"}})
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > ioGrace {
		t.Errorf("took %s", elapsed)
	}
	assertGroupGone(t, out.Stdout)
}

// assertGroupGone checks through /proc that no live process is left in the process group whose
// id the script printed on its first line. Killed children may linger briefly as zombies until
// init reaps them; they are dead.
func assertGroupGone(t *testing.T, stdout string) {
	t.Helper()
	pgid, err := strconv.Atoi(strings.SplitN(stdout, "\n", 2)[0])
	if err != nil {
		t.Fatalf("no pgid on the first line of %q", stdout)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		live := liveGroupMembers(t, pgid)
		if len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has live processes: %v", pgid, live)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func liveGroupMembers(t *testing.T, pgid int) []string {
	t.Helper()
	var live []string
	for _, p := range procs(t) {
		if p.pgrp == strconv.Itoa(pgid) && p.state != "Z" {
			live = append(live, p.pid+" "+p.comm)
		}
	}
	return live
}

// proc is a process as /proc/PID/stat gives it.
type proc struct{ pid, comm, state, ppid, pgrp string }

// procs returns every process of the system.
func procs(t *testing.T) []proc {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var ps []proc
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // exited while we looked
		}
		// pid (comm) state ppid pgrp ...; comm may contain spaces, so split after the last ')'.
		s := string(b)
		end := strings.LastIndexByte(s, ')')
		fields := strings.Fields(s[end+1:])
		if len(fields) < 3 {
			continue
		}
		ps = append(ps, proc{pid: strings.Fields(s)[0], comm: s[strings.IndexByte(s, '(') : end+1],
			state: fields[0], ppid: fields[1], pgrp: fields[2]})
	}
	return ps
}
