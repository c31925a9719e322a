package execcore

import (
	"io"
	"sync"
	"unicode/utf8"
)

// MaxDocument bounds the JSON encoding of an exec task's whole output, the document the
// engine receives: 64 KiB under the engine's default max_node_output (10 MiB), so that an
// output that had to be cut is a success with truncated = true, not a data_limit_exceeded
// failure. stdout and stderr share it (see Collect): a command that prints 12 MB of text, or
// 2 MB of control bytes that JSON writes as \u00XX, keeps as much as fits.
const MaxDocument = 10<<20 - 64<<10

// MaxOutput is how much of each of stdout and stderr is read into memory: as much as the
// document holds, since every byte takes at least one byte of JSON. What is kept of it is
// decided by Collect.
const MaxOutput = MaxDocument - documentOverhead

// documentOverhead bounds the JSON of an Output besides the two strings' contents:
// {"exit_code":-2147483648,"stdout":"","stderr":"","truncated":false} is 66 bytes.
const documentOverhead = 128

// tailSize bounds the end of a stream Capture remembers for error messages, independently of
// the limit, so an exit error can quote the last lines of stderr even when stderr was cut.
const tailSize = 4 << 10

// Output is an exec task's output, the same for shell and ssh.
type Output struct {
	// ExitCode is the command's exit status, or -1 when it did not exit normally (killed by a
	// signal, timed out, cancelled, or the connection was lost).
	ExitCode int `json:"exit_code" jsonschema_description:"Exit status; -1 when the command did not exit normally (signal, timeout, cancellation)."`
	// Stdout and Stderr together, as JSON, take at most MaxDocument bytes (Collect).
	Stdout string `json:"stdout" jsonschema_description:"Standard output, the first part of it when it was cut (see truncated)."`
	Stderr string `json:"stderr" jsonschema_description:"Standard error, the first part of it when it was cut (see truncated)."`
	// Truncated is true when stdout or stderr was cut to fit.
	Truncated bool `json:"truncated" jsonschema_description:"True when stdout or stderr was cut: the whole output, as JSON, is kept under 10 MiB less 64 KiB."`
}

// Capture is an io.Writer that keeps the first limit bytes written to it and discards the rest
// while still accepting it: the producer (a child process's pipe, an SSH channel) is drained to
// the end, so it never blocks on a full pipe and memory stays bounded.
//
// Write may be called from one goroutine while another reads the results; mu makes that safe,
// though callers normally read only after the writer is done.
type Capture struct {
	limit int

	mu    sync.Mutex
	buf   []byte // guarded by mu: the first limit bytes
	total int64  // guarded by mu: every byte written, kept or not
	tail  []byte // guarded by mu: the last tailSize bytes written
}

// NewCapture returns a Capture that keeps at most limit bytes.
func NewCapture(limit int) *Capture {
	return &Capture{limit: limit}
}

// Write keeps what fits under the limit and drops the rest. It never fails, so an io.Copy
// into it always runs to the producer's end.
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.limit - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	c.total += int64(len(p))
	if len(p) >= tailSize {
		c.tail = append(c.tail[:0], p[len(p)-tailSize:]...)
	} else {
		if over := len(c.tail) + len(p) - tailSize; over > 0 {
			c.tail = append(c.tail[:0], c.tail[over:]...)
		}
		c.tail = append(c.tail, p...)
	}
	return len(p), nil
}

// readBufs holds the buffers a command's output is read through (ReadFrom here, the shell
// plugin's own reads through ReadBuffer). A fresh 32 KiB buffer per stream per call (what
// io.Copy allocates otherwise) was nearly all of a shell exec's allocation: a collection every
// few dozen calls in the plugin, and fresh pages, each a fault that costs tens of µs on a VM
// with shadow paging (docs/performance.md, issue 20 item 2).
var readBufs = sync.Pool{New: func() any { return new([32 << 10]byte) }}

// ReadBuffer returns a 32 KiB buffer from the pool ReadFrom uses; give it back with
// ReleaseReadBuffer.
func ReadBuffer() *[32 << 10]byte { return readBufs.Get().(*[32 << 10]byte) }

// ReleaseReadBuffer returns a buffer ReadBuffer gave.
func ReleaseReadBuffer(b *[32 << 10]byte) { readBufs.Put(b) }

// ReadFrom reads r to its end into c through a pooled buffer (io.ReaderFrom, which io.Copy
// uses). It keeps what fits and drops the rest as Write does, and reports r's error but EOF.
func (c *Capture) ReadFrom(r io.Reader) (int64, error) {
	buf := ReadBuffer()
	defer ReleaseReadBuffer(buf)
	var total int64
	for {
		n, err := r.Read(buf[:])
		if n > 0 {
			c.Write(buf[:n])
			total += int64(n)
		}
		switch {
		case err == io.EOF:
			return total, nil
		case err != nil:
			return total, err
		}
	}
}

// Truncated reports whether more than limit bytes were written.
func (c *Capture) Truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total > int64(len(c.buf))
}

// String returns the kept bytes. When the cut fell inside a multi-byte UTF-8 sequence, the
// incomplete sequence is dropped, so the output does not end in a replacement character that
// the command never wrote.
func (c *Capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.buf
	if c.total > int64(len(b)) {
		b = trimPartialRune(b)
	}
	return string(b)
}

// Tail returns the last (up to 4 KiB) bytes written, cut or not.
func (c *Capture) Tail() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.tail)
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b. Invalid bytes that are
// not a cut sequence are left alone: they are the command's.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		if !utf8.RuneStart(b[len(b)-i]) {
			continue
		}
		if r, size := utf8.DecodeRune(b[len(b)-i:]); r == utf8.RuneError && size <= 1 && !utf8.FullRune(b[len(b)-i:]) {
			return b[:len(b)-i]
		}
		break
	}
	return b
}

// Collect builds an Output from the two captures and an exit code, cut so that its JSON
// encoding fits in MaxDocument (see FitStreams).
func Collect(exitCode int, stdout, stderr *Capture) Output {
	out, errs, cut := FitStreams(stdout.String(), stderr.String(), MaxDocument-documentOverhead)
	return Output{
		ExitCode:  exitCode,
		Stdout:    out,
		Stderr:    errs,
		Truncated: cut || stdout.Truncated() || stderr.Truncated(),
	}
}
