package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// The big-header phase's client (flood.go), and the check that a 300 KiB header is refused.

// bigHeaderClient sends header (a request line and header lines without the blank line that
// ends them), then waits for serve to close the connection.
func bigHeaderClient(c net.Conn, header []byte) error {
	if _, err := c.Write(header); err != nil {
		return err
	}
	buf := make([]byte, 512)
	for {
		if err := waitClosed(c, buf, 5*time.Second); err != nil {
			return err
		}
	}
}

// bigHeader is a request line and kib KiB of 1 KiB header lines, unfinished.
func bigHeader(kib int) []byte {
	var b strings.Builder
	b.WriteString("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	value := strings.Repeat("h", 1024-len("X-Big-0000: \r\n"))
	for i := range kib {
		fmt.Fprintf(&b, "X-Big-%04d: %s\r\n", i, value)
	}
	return []byte(b.String())
}

// check431 sends n requests with a 300 KiB header, each on a connection of its own, and counts
// the 431 answers.
func check431(addr string, ph *floodPhase, n int) {
	req := "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Huge: " + strings.Repeat("a", 300<<10) + "\r\n\r\n"
	for range n {
		c, err := net.DialTimeout("tcp", addr, 30*time.Second)
		if err != nil {
			ph.other431.Add(1)
			continue
		}
		go func() { _, _ = io.WriteString(c, req) }() // serve may answer before it read it all
		_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		_ = c.Close()
		var ne net.Error
		switch {
		case strings.HasPrefix(line, "HTTP/1.1 431 "):
			ph.refused431.Add(1)
		case line == "" && err != nil && !(errors.As(err, &ne) && ne.Timeout()):
			ph.cut431.Add(1)
		default:
			ph.other431.Add(1)
		}
	}
}
