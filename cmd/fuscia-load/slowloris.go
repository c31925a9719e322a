package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// The slowloris phase's client (flood.go): a request whose header never ends.

// slowClient sends a request line and then a header line a second until serve closes the
// connection (the error it returns) or it is closed at the phase's end.
func slowClient(c net.Conn) error {
	if _, err := io.WriteString(c, "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n"); err != nil {
		return err
	}
	buf := make([]byte, 512)
	for i := 0; ; i++ {
		if err := waitClosed(c, buf, time.Second); err != nil {
			return err
		}
		if _, err := fmt.Fprintf(c, "X-Slow-%d: %d\r\n", i, i); err != nil {
			return err
		}
	}
}

// waitClosed reads c for up to d: nil if it is still open then, else the error (EOF when
// serve closed it; anything it answered is read and dropped).
func waitClosed(c net.Conn, buf []byte, d time.Duration) error {
	_ = c.SetReadDeadline(time.Now().Add(d))
	for {
		_, err := c.Read(buf)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
