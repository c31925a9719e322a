// Package syncbuf holds Buffer, a bytes.Buffer that one goroutine may read while others
// write to it: a log destination or a child process's output that a test reads as it comes.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is an io.Writer whose content may be read at any time. The zero value is empty and
// ready to use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
