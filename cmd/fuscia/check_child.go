package main

// serve evaluates a workflow file's expressions in a child process before it loads the file
// itself: the same binary run as the hidden command `fuscia internal-check`, under the heap
// limit validate and plan have (memory.go). A file in the watched directory is input, and one
// expression can build gigabytes (a list of a thousand `format("%01000000d", 1)`, say): in the
// child that ends the child, with validate's error; in the daemon it ended every workflow it
// served. docs/serve.md, "Checking a file in a child process".
//
// One child checks file after file, for as long as serve hands it files without a pause:
// starting a child costs ~10 ms (the binary's start), checking a file ~0.1 ms, so a start with
// 1,000 files pays one start, not a thousand. A child the heap limit ended refuses the file it
// was checking, and the next file gets a new child. This file is both ends: the command the
// child runs and the checker serve's host.ServeOptions.CheckElsewhere calls.

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine/planner"
	"github.com/fuscia/fuscia/engine/serve"
	"github.com/fuscia/fuscia/lang"
)

// internalCheckCommand is the child's command. It is not in `fuscia -help`: users never run it;
// docs/reference/cli.md says it exists.
const internalCheckCommand = "internal-check"

// checkChildTimeout bounds one file's check. A workflow's check takes milliseconds; the
// language's own bounds keep the worst at about a second of a core (lang/funcs, MaxIterations).
const checkChildTimeout = time.Minute

// checkChildIdle is how long a child waits for serve's next file before it is let go: long
// enough to take a start's files, and a reload's, in one child; short enough that an idle serve
// does not keep a second process (and the heap its last file grew) for nothing.
const checkChildIdle = 2 * time.Second

// checkedLine is what the child writes on stdout when it has checked a file.
const checkedLine = "checked"

// calledWord starts a line the child writes before checkedLine for each file the workflow's
// calls read: `called SHA256HEX QUOTED-PATH` (a zero sum for one it could not read). serve
// loads those contents only.
const calledWord = "called"

// checkHeapCollect: a child whose heap holds more than this after a file collects before the
// next, so that one file's garbage never counts against the next file's heap limit.
const checkHeapCollect = 64 << 20

// The child's input is a sequence of files, each a header line `SIZE QUOTED-PATH\n` (the path
// as strconv.Quote writes it: a file name may hold a newline) followed by SIZE bytes of
// content. For each it writes a calledWord line per called file and checkedLine once it has
// evaluated it.

// runInternalCheck evaluates each workflow file on stdin as serve will (planner.Rehearse) and
// says so on stdout, whether the file is valid or not (serve reports its diagnostics itself),
// until stdin ends: exit 0. The memory guard ends it with exit 1 and its error when a file
// builds too much; 2 for a bad command line or input.
func runInternalCheck(_ context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, internalCheckCommand, internalCheckCommand+" < FILES")
	rest, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		return c.fail(false, "Invalid "+internalCheckCommand, "fuscia serve runs this command itself, with the files to check on stdin.")
	}
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(c.stdout)
	env := c.environ()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	for {
		file, src, err := readCheckFile(in)
		if errors.Is(err, io.EOF) {
			return exitOK
		}
		if err != nil {
			return c.fail(false, "Invalid "+internalCheckCommand+" input", sentenceOf(err))
		}
		parser := lang.NewParser()
		planner.Rehearse(planner.Request{File: file, Source: src, Vars: lang.VarInputs{Env: env}, Parser: parser})
		for path, sum := range parser.CalledSums() {
			fmt.Fprintf(out, "%s %x %s\n", calledWord, sum, strconv.Quote(path))
		}
		if _, err := fmt.Fprintln(out, checkedLine); err != nil || out.Flush() != nil {
			return exitFailed // serve is gone
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() > checkHeapCollect {
			debug.FreeOSMemory()
		}
	}
}

// readCheckFile reads one file of the child's input; io.EOF at the end of the input.
func readCheckFile(in *bufio.Reader) (file string, src []byte, err error) {
	header, err := in.ReadString('\n')
	if err != nil {
		if errors.Is(err, io.EOF) && header == "" {
			return "", nil, io.EOF
		}
		return "", nil, fmt.Errorf("read a file's header: %w", err)
	}
	sizeText, quoted, _ := strings.Cut(strings.TrimSuffix(header, "\n"), " ")
	size, err := strconv.Atoi(sizeText)
	if err != nil || size < 0 || size > lang.MaxFileSize {
		return "", nil, fmt.Errorf("a file's size %q is not a number from 0 to %d", sizeText, lang.MaxFileSize)
	}
	if file, err = strconv.Unquote(quoted); err != nil {
		return "", nil, fmt.Errorf("a file's path %s is not quoted: %w", quoted, err)
	}
	src = make([]byte, size)
	if _, err := io.ReadFull(in, src); err != nil {
		return "", nil, fmt.Errorf("read %s: %w", file, err)
	}
	return file, src, nil
}

// childChecker runs `exe internal-check` and hands it files: serve's
// host.ServeOptions.CheckElsewhere is its Check. It keeps one child between files and lets it
// go after idle without one; Close ends it. Check is safe to call from several goroutines
// (they take turns).
type childChecker struct {
	exe     string
	env     []string
	timeout time.Duration // one file's
	idle    time.Duration

	mu     sync.Mutex
	cur    *checkProc  // the child, nil when none runs
	turn   uint64      // the files checked so far
	timer  *time.Timer // lets cur go after idle
	closed bool
	procs  sync.WaitGroup // each child's owner goroutine
}

func newChildChecker(exe string, env []string, timeout, idle time.Duration) *childChecker {
	return &childChecker{exe: exe, env: env, timeout: timeout, idle: idle}
}

// checkProc is one child: its input, its stdout's lines and its end.
type checkProc struct {
	cmd     *exec.Cmd
	stdin   *os.File
	lines   chan string   // stdout's lines; closed when stdout ends
	quit    chan struct{} // closed when no more lines are wanted: the reader discards the rest
	exited  chan struct{} // closed once the child was reaped; waitErr is then set
	stderr  *lockedHead
	waitErr error
}

// Check evaluates file's content src in the child. The files the workflow's calls read there,
// with their sums (not nil), when the child got through it (the file may still have errors:
// the caller's own load reports them); a *serve.LoadError when the child refused the file (the
// heap limit, or the time); another error when no child could check it (the caller evaluates
// the file itself).
func (c *childChecker) Check(ctx context.Context, file string, src []byte) (map[string][sha256.Size]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("check %s in a child process: serve is stopping", file)
	}
	c.turn++
	if c.timer != nil {
		c.timer.Stop()
	}
	err := errChildGone
	var called map[string][sha256.Size]byte
	// A child kept from the last file may have ended since (killed from outside, say): it
	// got none of this file, so a new child checks it.
	for fresh := c.cur == nil; errors.Is(err, errChildGone); fresh = true {
		if c.cur == nil {
			p, serr := c.start()
			if serr != nil {
				return nil, fmt.Errorf("check %s in a child process (%s %s): %w", file, c.exe, internalCheckCommand, serr)
			}
			c.cur = p
		}
		called, err = c.checkIn(ctx, c.cur, file, src)
		if fresh && errors.Is(err, errChildGone) {
			return nil, fmt.Errorf("check %s in a child process (%s %s): %w", file, c.exe, internalCheckCommand, err)
		}
	}
	if c.cur != nil {
		turn := c.turn
		c.timer = time.AfterFunc(c.idle, func() { c.letGo(turn) })
	}
	return called, err
}

// errChildGone: the child had ended before it was handed the file.
var errChildGone = errors.New("the child had ended before it was handed the file")

// checkIn hands file to p and waits for its answer, its end, the timeout or ctx. Unless p
// answered, p is ended and reaped, and no longer c.cur, before it returns.
func (c *childChecker) checkIn(ctx context.Context, p *checkProc, file string, src []byte) (map[string][sha256.Size]byte, error) {
	deadline := time.Now().Add(c.timeout)
	p.stderr.reset()
	// The write is bounded too: a child that stopped reading must not hold serve.
	_ = p.stdin.SetWriteDeadline(deadline)
	header := strconv.Itoa(len(src)) + " " + strconv.Quote(file) + "\n"
	if _, err := p.stdin.Write(append([]byte(header), src...)); err != nil {
		c.end(p)
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, c.tooLong(file)
		case errors.Is(err, syscall.EPIPE):
			// It reads the whole file before it evaluates any of it: this file did not end it.
			return nil, errChildGone
		}
		return nil, fmt.Errorf("check %s in a child process: hand it the file: %w", file, err)
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	called := map[string][sha256.Size]byte{}
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				// Its stdout ended: the child did, or is about to.
				c.end(p)
				if ctx.Err() != nil {
					// A signal to the process group ends the child too: serve is stopping,
					// and the file is not at fault.
					return nil, fmt.Errorf("check %s in a child process: stopped: %w", file, ctx.Err())
				}
				return nil, c.refusal(file, p)
			}
			if line == checkedLine {
				return called, nil
			}
			path, sum, ok := parseCalledLine(line)
			if !ok {
				c.end(p)
				return nil, fmt.Errorf("check %s in a child process: it answered %q, not %q", file, line, checkedLine)
			}
			called[path] = sum
		case <-timer.C:
			c.end(p)
			return nil, c.tooLong(file)
		case <-ctx.Done():
			c.end(p)
			return nil, fmt.Errorf("check %s in a child process: stopped: %w", file, ctx.Err())
		}
	}
}

// parseCalledLine reads a calledWord line: `called SHA256HEX QUOTED-PATH`.
func parseCalledLine(line string) (path string, sum [sha256.Size]byte, ok bool) {
	rest, ok := strings.CutPrefix(line, calledWord+" ")
	if !ok {
		return "", sum, false
	}
	hexSum, quoted, ok := strings.Cut(rest, " ")
	if !ok || hex.DecodedLen(len(hexSum)) != sha256.Size {
		return "", sum, false
	}
	if _, err := hex.Decode(sum[:], []byte(hexSum)); err != nil {
		return "", sum, false
	}
	path, err := strconv.Unquote(quoted)
	return path, sum, err == nil
}

// end makes p no longer c's child, kills it if it runs and waits until it was reaped.
func (c *childChecker) end(p *checkProc) {
	if c.cur == p {
		c.cur = nil
	}
	close(p.quit)
	select {
	case <-p.exited:
		return
	case <-time.After(time.Second): // its stdout ended first; its exit follows at once
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// refusal is what a child that ended while it checked file comes to.
func (c *childChecker) refusal(file string, p *checkProc) error {
	if ee := (*exec.ExitError)(nil); !errors.As(p.waitErr, &ee) {
		// Not the file's fault (the binary was removed, say): the caller evaluates it itself,
		// as the host compiles in its own process when its compile child fails.
		return fmt.Errorf("check %s in a child process (%s %s): %v", file, c.exe, internalCheckCommand, p.waitErr)
	}
	summary, detail := childError(p.stderr.String())
	if summary == "" {
		summary, detail = "Cannot check the workflow file", fmt.Sprintf("Evaluating the expressions of %s in a child process (%s %s) failed: %v.", file, c.exe, internalCheckCommand, p.waitErr)
	}
	return checkRefused(file, summary, detail)
}

func (c *childChecker) tooLong(file string) error {
	return checkRefused(file, "Workflow expressions take too long",
		fmt.Sprintf("Evaluating the expressions of %s did not end within %s, so it is not served. Make them do less.", file, c.timeout))
}

// start starts a child. Its owner goroutine waits for it and reaps it; another reads its
// stdout until it ends.
func (c *childChecker) start() (*checkProc, error) {
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, err
	}
	cmd := exec.Command(c.exe, internalCheckCommand)
	// env: the variables and FUSCIA_MAX_CHECK_HEAP serve reads.
	cmd.Stdin, cmd.Stdout, cmd.Env = stdinR, stdoutW, c.env
	p := &checkProc{cmd: cmd, stdin: stdinW, lines: make(chan string), quit: make(chan struct{}),
		exited: make(chan struct{}), stderr: &lockedHead{head: headBuffer{max: 8 << 10}}}
	cmd.Stderr = p.stderr
	cmd.WaitDelay = 5 * time.Second // stderr's copy cannot hold the reaping past a kill
	// The child dies with this process, SIGKILLed included: nothing may go on once its daemon
	// has stopped. The kernel sends the signal when the thread that started the child ends, so
	// the owner goroutine keeps its thread until the child is reaped.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	c.procs.Add(1)
	go func() {
		defer c.procs.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	err = <-started
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		return nil, err
	}
	c.procs.Add(1)
	go func() {
		defer c.procs.Done()
		defer stdoutR.Close()
		defer close(p.lines)
		sc := bufio.NewScanner(stdoutR)
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			case <-p.quit: // nobody listens any more: read on until the end, so it never blocks
			}
		}
		_, _ = io.Copy(io.Discard, stdoutR) // after a line too long for the scanner
	}()
	return p, nil
}

// letGo ends the child, idle since the turn'th file, unless another file was checked since
// (that stopped the timer, but a timer may already have fired and be waiting for the lock).
func (c *childChecker) letGo(turn uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.cur
	if p == nil || c.turn != turn {
		return
	}
	c.cur = nil
	close(p.quit)
	_ = p.stdin.Close() // its input ends: it exits 0, and its owner goroutine reaps it
}

// Close ends the child, if one runs, and returns once every child was reaped. Check refuses
// files after it.
func (c *childChecker) Close() {
	c.mu.Lock()
	c.closed = true
	if c.timer != nil {
		c.timer.Stop()
	}
	if p := c.cur; p != nil {
		c.cur = nil
		close(p.quit)
		_ = p.stdin.Close()
		_ = p.cmd.Process.Kill()
	}
	c.mu.Unlock()
	c.procs.Wait()
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

// lockedHead is a headBuffer that a child's stderr copier writes while the checker resets it
// before each file: what the child writes for the file that ends it comes first.
type lockedHead struct {
	mu   sync.Mutex
	head headBuffer
}

func (l *lockedHead) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.head.Write(p)
}

func (l *lockedHead) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.head.b.Reset()
}

func (l *lockedHead) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.head.String()
}

// daemonChecker is serve's childChecker: this very binary, with serve's environment. Nil when
// the binary cannot be found or is a Go test binary (which would run its tests as the child):
// then serve evaluates in its own process.
func daemonChecker(env []string) *childChecker {
	exe, err := os.Executable()
	if err != nil || strings.HasSuffix(exe, ".test") {
		return nil
	}
	return newChildChecker(exe, env, checkChildTimeout, checkChildIdle)
}
