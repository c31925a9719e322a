package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/fuscia/fuscia/plugins/internal/execcore"
)

// notRun is the output of a command that never started.
var notRun = execcore.Output{ExitCode: -1}

// run is the exec task: it checks in, runs the program and applies the exit-code policy.
// The output is meaningful even with an error (what the command wrote before failing);
// main.go attaches it to the error as partial output.
func run(ctx context.Context, in Input) (execcore.Output, error) {
	if err := execcore.ProblemsError(checkInput(in, execcore.AllKnown)); err != nil {
		return notRun, err
	}
	timeout, err := execcore.ParseTimeout(in.Timeout)
	if err != nil { // checkInput has reported it already; kept so the error is never dropped
		return notRun, execcore.Invalidf("/timeout", "timeout is invalid: %v", err)
	}
	if err := checkProgram(in.Command); err != nil {
		return notRun, err
	}
	if in.Workdir != "" {
		if err := checkWorkdir(in.Workdir); err != nil {
			return notRun, err
		}
	}
	if err := ctx.Err(); err != nil {
		return notRun, fmt.Errorf("command %s not started: %w", in.Command, err)
	}
	return runCommand(ctx, in, timeout)
}

// checkProgram turns the usual reasons a program cannot start into clear fatal errors before
// fork/exec, whose errors ("fork/exec /x: permission denied") say less.
func checkProgram(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return execcore.Fatalf("command %s not found: no such file", path)
	case err != nil:
		return execcore.Fatalf("command %s cannot be used: %w", path, err)
	case fi.IsDir():
		return execcore.Fatalf("command %s is a directory, not a program", path)
	case fi.Mode().Perm()&0o111 == 0:
		return execcore.Fatalf("command %s is not executable (mode %s)", path, fi.Mode().Perm())
	}
	return nil
}

// checkWorkdir reports a missing or non-directory workdir as a fatal error.
func checkWorkdir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return execcore.Fatalf("workdir %s does not exist", dir)
	case err != nil:
		return execcore.Fatalf("workdir %s cannot be used: %w", dir, err)
	case !fi.IsDir():
		return execcore.Fatalf("workdir %s is not a directory", dir)
	}
	return nil
}
