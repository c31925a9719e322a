package main

// serve evaluates a workflow file's expressions in a short-lived child process before it loads
// the file itself: the same binary run as the hidden command `fuscia internal-check`, under the
// heap limit validate and plan have (memory.go). A file in the watched directory is input, and
// one expression can build gigabytes (a list of a thousand `format("%01000000d", 1)`, say): in
// the child that ends the child, with validate's error; in the daemon it ended every workflow it
// served. docs/serve.md, "Checking a file in a child process". This file is both ends: the
// command the child runs and the host.ServeOptions.CheckElsewhere that starts it.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine/planner"
	"github.com/fuscia/fuscia/engine/serve"
	"github.com/fuscia/fuscia/lang"
)

// internalCheckCommand is the child's command. It is not in `fuscia -help`: users never run it;
// docs/reference/cli.md says it exists.
const internalCheckCommand = "internal-check"

// checkChildTimeout bounds one child. A workflow's check takes milliseconds; the language's own
// bounds keep the worst at about a second of a core (lang/funcs, MaxIterations).
const checkChildTimeout = time.Minute

// runInternalCheck evaluates the workflow file -file, whose content is read from stdin, as serve
// will (planner.Rehearse): exit 0 once it has, whether the file is valid or not (serve reports
// its diagnostics itself); the memory guard's exit 1 with its error when it builds too much; 2
// for a bad command line.
func runInternalCheck(_ context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, internalCheckCommand, internalCheckCommand+" -file FILE < CONTENT")
	file := fs.String("file", "", "the workflow file the content on stdin is (`FILE`)")
	rest, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if len(rest) > 0 || *file == "" {
		return c.fail(false, "Invalid "+internalCheckCommand, "fuscia serve runs this command itself with -file and the file's content on stdin.")
	}
	src, err := io.ReadAll(io.LimitReader(os.Stdin, lang.MaxFileSize+1))
	if err != nil {
		return c.operationFailed("Cannot read the workflow file's content", err)
	}
	planner.Rehearse(planner.Request{File: *file, Source: src, Vars: lang.VarInputs{Env: c.environ()}})
	return exitOK
}

// childChecker returns a host.ServeOptions.CheckElsewhere that runs `exe internal-check` on a
// file's content and waits for it: until it exits, timeout passes or ctx ends (the child is then
// killed and reaped). When the child refused the file (or took too long), its error is a
// *serve.LoadError whose diagnostic is the child's error; when the child could not run, another
// error.
func childChecker(exe string, env []string, timeout time.Duration) func(ctx context.Context, file string, src []byte) error {
	return func(ctx context.Context, file string, src []byte) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		// env: the variables and FUSCIA_MAX_CHECK_HEAP serve reads.
		stderr, err := runChild(ctx, exe, []string{internalCheckCommand, "-file=" + file}, bytes.NewReader(src), env)
		switch {
		case err == nil:
			return nil
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return checkRefused(file, "Workflow expressions take too long",
				fmt.Sprintf("Evaluating the expressions of %s did not end within %s, so it is not served. Make them do less.", file, timeout))
		case ctx.Err() != nil:
			return fmt.Errorf("check %s in a child process: stopped: %w", file, ctx.Err())
		}
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) {
			// The child never ran (the binary is gone, say): not the file's fault. The host
			// evaluates in its own process, as it compiles there when its compile child fails.
			return fmt.Errorf("check %s in a child process (%s %s): %w", file, exe, internalCheckCommand, err)
		}
		summary, detail := childError(stderr)
		if summary == "" {
			summary, detail = "Cannot check the workflow file", fmt.Sprintf("Evaluating the expressions of %s in a child process (%s %s) failed: %v.", file, exe, internalCheckCommand, err)
		}
		return checkRefused(file, summary, detail)
	}
}

// checkRefused is the load error of a file the child refused. It has no source range: the
// child does not know which expression it was evaluating when it stopped.
func checkRefused(file, summary, detail string) error {
	return &serve.LoadError{Diagnostics: hcl.Diagnostics{{
		Severity: hcl.DiagError, Summary: summary, Detail: strings.TrimSpace(detail) + " (" + file + ")",
	}}}
}

// childError splits what a fuscia command wrote for an error ("Error: SUMMARY\n\nDETAIL") into
// its summary and detail; "" when stderr holds no such error.
func childError(stderr string) (summary, detail string) {
	i := strings.Index(stderr, "Error: ")
	if i < 0 {
		return "", ""
	}
	summary, detail, _ = strings.Cut(stderr[i+len("Error: "):], "\n")
	return strings.TrimSpace(summary), strings.Join(strings.Fields(detail), " ")
}

// daemonChecker is serve's childChecker: this very binary, with serve's environment. Nil when
// the binary cannot be found or is a Go test binary (which would run its tests as the child):
// then serve evaluates in its own process.
func daemonChecker(env []string) func(ctx context.Context, file string, src []byte) error {
	exe, err := os.Executable()
	if err != nil || strings.HasSuffix(exe, ".test") {
		return nil
	}
	return childChecker(exe, env, checkChildTimeout)
}
