package main

// serve and worker compile Wasm components in a short-lived child process, the same binary run
// as the hidden command `fuscia internal-compile`: wasmtime's compiler does not give its memory
// back, so a daemon that compiled a component in-process would keep hundreds of megabytes for
// good (docs/performance.md, "Compiling in a child process"). This file is both ends: the
// command the child runs and the hostabi.Options.CompileElsewhere that starts it.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/fuscia/fuscia/hostabi"
)

// internalCompileCommand is the child's command. It is not in `fuscia -help`: users never run
// it; docs/reference/cli.md says it exists.
const internalCompileCommand = "internal-compile"

// compileChildTimeout bounds one child: a JavaScript component of 12 MB compiles in about 10 s
// on two cores. A child past it is killed, and the host compiles in its own process.
const compileChildTimeout = 10 * time.Minute

// internalCommands are the commands fuscia runs itself: main finds them, usage does not list
// them.
func internalCommands() map[string]command {
	return map[string]command{
		internalCompileCommand: {"Compile a Wasm component into the disk cache (serve's child process)", runInternalCompile, false},
		internalCheckCommand:   {"Evaluate a workflow file's expressions under the heap limit (serve's child process)", runInternalCheck, true},
	}
}

// runInternalCompile compiles one component into the cache: exit 0 when the entry is there, 1
// with the reason on stderr otherwise, 2 for a bad command line.
func runInternalCompile(_ context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, internalCompileCommand, internalCompileCommand+" -name NAME -wasm FILE -digest sha256:HEX -cache-dir DIR [-fuel]")
	var job hostabi.CompileJob
	fs.StringVar(&job.Name, "name", "", "the component, as messages name it (`NAME@VERSION`)")
	fs.StringVar(&job.WasmPath, "wasm", "", "its component.wasm (`FILE`)")
	fs.StringVar(&job.Digest, "digest", "", "the digest the manifest records (`sha256:HEX`)")
	fs.StringVar(&job.CacheDir, "cache-dir", "", "the disk cache (`DIR`)")
	fs.BoolVar(&job.Fuel, "fuel", false, "compile with fuel metering, as a host with max_fuel does")
	fs.BoolVar(&job.Preinit, "preinit", false, "build the pre-initialized snapshot of a module that asks for one")
	rest, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if len(rest) > 0 || job.Name == "" || job.WasmPath == "" || job.Digest == "" || job.CacheDir == "" {
		return c.fail(false, "Invalid "+internalCompileCommand, "fuscia serve runs this command itself with -name, -wasm, -digest and -cache-dir, and no arguments.")
	}
	if err := hostabi.CompileToCache(job); err != nil {
		return c.operationFailed("Cannot compile "+job.Name, err)
	}
	return exitOK
}

// compileArgs are the child's arguments for job. Values go in the -flag=value form, which a
// value that starts with a dash cannot break.
func compileArgs(job hostabi.CompileJob) []string {
	args := []string{internalCompileCommand, "-name=" + job.Name, "-wasm=" + job.WasmPath, "-digest=" + job.Digest, "-cache-dir=" + job.CacheDir}
	if job.Fuel {
		args = append(args, "-fuel")
	}
	if job.Preinit {
		args = append(args, "-preinit")
	}
	return args
}

// childCompiler returns a hostabi.Options.CompileElsewhere that runs `exe internal-compile` for
// each job and waits for it: until it exits, timeout passes or ctx ends (the child is then
// killed). The child is reaped before it returns; its error says why the child failed, with
// what it wrote on stderr.
func childCompiler(ctx context.Context, exe string, timeout time.Duration) func(hostabi.CompileJob) error {
	return func(job hostabi.CompileJob) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if job.Cancel != nil {
			// The host no longer wants the entry (a background snapshot, at Close): kill the
			// child now. The goroutine ends with this call at the latest (the deferred cancel).
			go func() {
				select {
				case <-job.Cancel:
					cancel()
				case <-ctx.Done():
				}
			}()
		}
		stderr, err := runChild(ctx, exe, compileArgs(job), nil, nil)
		if err == nil {
			return nil
		}
		what := fmt.Sprintf("compile %s in a child process (%s %s)", job.Name, exe, internalCompileCommand)
		out := strings.Join(strings.Fields(stderr), " ")
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return fmt.Errorf("%s: it did not finish within %s and was killed", what, timeout)
		case ctx.Err() != nil:
			return fmt.Errorf("%s: stopped: %w", what, ctx.Err())
		case out != "":
			return fmt.Errorf("%s: %v: %s", what, err, out)
		}
		return fmt.Errorf("%s: %w", what, err)
	}
}

// runChild runs exe with args until it exits or ctx ends (it is then killed), with stdin (nil:
// the null device) and env (nil: this process's), and returns the first 8 KiB of its stderr.
// The child is reaped before it returns.
func runChild(ctx context.Context, exe string, args []string, stdin io.Reader, env []string) (stderr string, err error) {
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Stdin, cmd.Env = stdin, env
	errOut := &headBuffer{max: 8 << 10}
	cmd.Stderr = errOut // stdout is the null device
	// A grandchild that kept the pipe open cannot hold the wait past the kill.
	cmd.WaitDelay = 5 * time.Second
	// The child dies with this process, SIGKILLed included: nothing may go on writing into a
	// home whose daemon has stopped. The kernel sends the signal when the thread that started
	// the child ends, not the process, so this goroutine keeps its thread until the child is
	// reaped: a thread Go ends (one a locked goroutine left) is never it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	runtime.LockOSThread()
	err = cmd.Run()
	runtime.UnlockOSThread()
	return errOut.String(), err
}

// daemonCompiler is the childCompiler of serve and worker: this very binary, for as long as
// compileChildTimeout. It is bound to no context: the host compiles in its own process when the
// child fails, so a child killed while the daemon goes on would only move its work into the
// daemon. It ends with the daemon's process (childCompiler's parent-death signal), and a
// background snapshot's child earlier, at the Wasm host's Close, through the job's Cancel.
// Nil when the binary cannot be found, or is not fuscia but a Go test binary: then the daemon
// compiles in its own process.
func daemonCompiler() func(hostabi.CompileJob) error {
	exe, err := os.Executable()
	// A test binary that ran serve in its own process would run its tests again as the child.
	if err != nil || strings.HasSuffix(exe, ".test") {
		return nil
	}
	return childCompiler(context.Background(), exe, compileChildTimeout)
}

// headBuffer keeps the first max bytes written to it and drops the rest: a child's error comes
// first, and a child gone wild cannot fill the daemon's memory. It is written only through
// Write (no ReadFrom for io.Copy to take instead), and read after the child was reaped.
type headBuffer struct {
	b   bytes.Buffer
	max int
}

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := h.max - h.b.Len(); room > 0 {
		h.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (h *headBuffer) String() string { return h.b.String() }
