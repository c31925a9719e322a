package serve

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// listenDeadline bounds every wait of these tests for something the listener does by itself:
// far above the timeouts they configure, so a busy machine does not fail them.
const listenDeadline = 30 * time.Second

func listenTest(t *testing.T, cfg ListenConfig) *Listener {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	l, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func dial(t *testing.T, l *Listener) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// closedWithin reads c until the server closes it, for at most limit; it returns what was
// read, and fails the test if the connection is still open then.
func closedWithin(t *testing.T, c net.Conn, limit time.Duration) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(limit))
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept the connection open for %s; read %q", limit, b)
	}
	return string(b)
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	_, _ = io.WriteString(w, "ok\n")
})

func get(t *testing.T, url string, hdr http.Header) (int, string) {
	t.Helper()
	code, b, err := fetch(url, hdr)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return code, b
}

// fetch GETs url on a new connection; safe in any goroutine.
func fetch(url string, hdr http.Header) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	c := &http.Client{Timeout: listenDeadline, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// A client that sends its header slowly, or never finishes it, is disconnected after the
// read-header timeout.
func TestListenSlowHeader(t *testing.T) {
	l := listenTest(t, ListenConfig{Handler: okHandler, ReadHeaderTimeout: 300 * time.Millisecond, IdleTimeout: time.Hour, ReadTimeout: time.Hour})
	c := dial(t, l)
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got := closedWithin(t, c, 300*time.Millisecond+listenDeadline)
	if strings.Contains(got, "200 OK") {
		t.Errorf("an unfinished header was answered: %q", got)
	}
	t.Logf("closed after %s", time.Since(start).Round(time.Millisecond))
}

// A body that stalls is not waited for beyond the read timeout; the handler's read fails with
// os.ErrDeadlineExceeded and the connection is closed.
func TestListenStalledBody(t *testing.T) {
	readErr := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		readErr <- err
		w.WriteHeader(http.StatusRequestTimeout)
	})
	l := listenTest(t, ListenConfig{Handler: h, ReadTimeout: 300 * time.Millisecond, ReadHeaderTimeout: time.Hour, IdleTimeout: time.Hour})
	c := dial(t, l)
	if _, err := io.WriteString(c, "POST /hooks/in HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\nonly ten.."); err != nil {
		t.Fatal(err)
	}
	closedWithin(t, c, 300*time.Millisecond+listenDeadline)
	select {
	case err := <-readErr:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("the handler's read of a stalled body: %v, want os.ErrDeadlineExceeded", err)
		}
	case <-time.After(listenDeadline):
		t.Fatal("the handler was never called")
	}
}

// The read timeout bounds how long a request takes to arrive, not how long it is answered: a
// handler that has read its body, and one with none, stream for longer with their context
// alive (?wait=true answers, logs -follow).
func TestListenLongAnswers(t *testing.T) {
	const readTimeout = 200 * time.Millisecond
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc := http.NewResponseController(w)
		for i := range 3 {
			select {
			case <-r.Context().Done():
				return // the client would miss a line: the test fails
			case <-time.After(readTimeout): // the answer outlives the read timeout (not a sync)
			}
			fmt.Fprintf(w, "line %d %s\n", i, body)
			_ = rc.Flush()
		}
	})
	l := listenTest(t, ListenConfig{Handler: h, ReadTimeout: readTimeout, ReadHeaderTimeout: readTimeout})
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader("b")
		}
		req, _ := http.NewRequest(method, "http://"+l.Addr().String()+"/v1/executions/x/logs?follow=1", body)
		resp, err := (&http.Client{Timeout: listenDeadline}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if n := strings.Count(string(b), "line "); err != nil || n != 3 {
			t.Errorf("%s streamed for 3 read timeouts: %d lines, %v; want 3 lines:\n%s", method, n, err, b)
		}
	}
}

// Request line and headers are bounded by MaxHeaderBytes: 431 over it (net/http's answer).
func TestListenHeaderLimit(t *testing.T) {
	l := listenTest(t, ListenConfig{Handler: okHandler})
	url := "http://" + l.Addr().String() + "/v1/health"
	if code, b := get(t, url, http.Header{"X-Big": {strings.Repeat("a", 60<<10)}}); code != http.StatusOK {
		t.Errorf("a 60 KiB header: %d %s, want 200", code, b)
	}
	// A client may fail to read the answer while it is still writing (net/http closes after
	// 431): read it on a raw connection that wrote all it had first.
	c := dial(t, l)
	go func() {
		_, _ = io.WriteString(c, "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "+strings.Repeat("a", 300<<10)+"\r\n\r\n")
	}()
	_ = c.SetReadDeadline(time.Now().Add(listenDeadline))
	line, err := bufio.NewReader(c).ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.1 431 ") {
		t.Errorf("a 300 KiB header: %q %v, want 431", line, err)
	}
}

// At the cap, the connection that waited longest for a request is closed to make room, so a
// new client is answered although slow clients hold every slot and their timeouts are long.
func TestListenCapMakesRoom(t *testing.T) {
	l := listenTest(t, ListenConfig{Handler: okHandler, MaxConnections: 3, ReadHeaderTimeout: time.Hour, IdleTimeout: time.Hour})
	// Two clients that never finish their header, and one idle keep-alive connection.
	var slow []net.Conn
	for range 2 {
		c := dial(t, l)
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"); err != nil {
			t.Fatal(err)
		}
		slow = append(slow, c)
	}
	keep := dial(t, l)
	if _, err := io.WriteString(keep, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = keep.SetReadDeadline(time.Now().Add(listenDeadline))
	if line, err := bufio.NewReader(keep).ReadString('\n'); !strings.Contains(line, "200") {
		t.Fatalf("keep-alive request: %q %v", line, err)
	}
	// Every slot is taken and no timeout frees one within the hour: without making room,
	// these requests would wait that long. Each stays open afterwards (an idle keep-alive
	// connection), so each takes a slot for good and the next must make room again: the
	// slow clients, which waited longest, go first. (Connections closed after their answer
	// would free their slot themselves, and whether the next one needed room would depend
	// on how the accept loop and the close interleave.)
	for i := range 4 {
		c := dial(t, l)
		if _, err := io.WriteString(c, "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(listenDeadline))
		if line, err := bufio.NewReader(c).ReadString('\n'); !strings.Contains(line, "200") {
			t.Fatalf("request %d at the cap: %q %v, want 200", i, line, err)
		}
	}
	// The slow clients were closed to make room (the oldest first).
	for _, c := range slow {
		closedWithin(t, c, listenDeadline)
	}
}

// A request being handled is never cut to make room: at the cap a new connection waits until
// one ends.
func TestListenCapWaits(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			started <- struct{}{}
			<-release
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	l := listenTest(t, ListenConfig{Handler: h, MaxConnections: 1, ReadHeaderTimeout: time.Hour, IdleTimeout: time.Hour})
	var once sync.Once
	unhold := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unhold) // before the listener closes, should the test fail early
	base := "http://" + l.Addr().String()
	var wg sync.WaitGroup
	held := make(chan int, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		code, _, err := fetch(base+"/hold", nil)
		if err != nil {
			t.Errorf("held request: %v", err)
		}
		held <- code
	}()
	select {
	case <-started:
	case <-time.After(listenDeadline):
		t.Fatal("the held request never reached its handler")
	}
	waited := make(chan int, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		code, _, err := fetch(base+"/next", nil)
		if err != nil {
			t.Errorf("the request over the cap: %v", err)
		}
		waited <- code
	}()
	// Well past evictAfter: the held request is not cut, the next one still waits.
	select {
	case code := <-waited:
		t.Fatalf("a request over the cap was answered (%d) while the only slot was busy", code)
	case code := <-held:
		t.Fatalf("the held request ended (%d) before it was released", code)
	case <-time.After(3 * evictAfter):
	}
	unhold()
	wg.Wait()
	if code := <-held; code != http.StatusOK {
		t.Errorf("held request: %d, want 200", code)
	}
	if code := <-waited; code != http.StatusOK {
		t.Errorf("the request that waited: %d, want 200", code)
	}
}

// Unfinished headers are held to HeaderBudget for all connections together: over it, a
// connection holding a big one is closed — not one with an ordinary header, however old.
func TestListenHeaderBudget(t *testing.T) {
	l := listenTest(t, ListenConfig{Handler: okHandler, HeaderBudget: 100 << 10, ReadHeaderTimeout: time.Hour})
	small := dial(t, l)
	if _, err := io.WriteString(small, "GET /small HTTP/1.1\r\nHost: 127.0.0.1\r\n"); err != nil {
		t.Fatal(err)
	}
	part := "GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + strings.Repeat("a", 60<<10) + "\r\n"
	closed := make(chan int, 2)
	for i := range 2 {
		c := dial(t, l)
		if _, err := io.WriteString(c, part); err != nil {
			t.Fatal(err)
		}
		go func() {
			_ = c.SetReadDeadline(time.Now().Add(listenDeadline))
			_, err := io.ReadAll(c)
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				closed <- i
			}
		}()
	}
	select {
	case <-closed:
	case <-time.After(listenDeadline):
		t.Fatal("two unfinished 60 KiB headers are held over a 100 KiB budget")
	}
	// The oldest, with an ordinary header, was not closed: it finishes its request.
	if _, err := io.WriteString(small, "\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = small.SetReadDeadline(time.Now().Add(listenDeadline))
	if line, err := bufio.NewReader(small).ReadString('\n'); !strings.Contains(line, " 200 ") {
		t.Errorf("the connection with an ordinary header: %q %v, want 200", line, err)
	}
}
