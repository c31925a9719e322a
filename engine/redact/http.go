package redact

import (
	"bytes"
	"mime"
	"net/http"
)

// HTTP wraps an API handler so that its answers are scrubbed of the set's secrets: JSON bodies
// (scrubbed as JSON, so they stay valid), NDJSON streams (line by line, each line written as
// soon as it is complete, so follows still stream) and plain text. Other bodies, and bodies
// sent with a Content-Length or a Content-Encoding (an artifact's bytes, served as they are
// stored), pass untouched; the request's Accept-Encoding is dropped so that no handler
// compresses what must be scrubbed. A nil set returns next itself.
func HTTP(next http.Handler, set *Set) http.Handler {
	if set == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "" {
			r = r.Clone(r.Context())
			r.Header.Del("Accept-Encoding")
		}
		sw := &scrubWriter{w: w, set: set}
		defer sw.finish()
		next.ServeHTTP(sw, r)
	})
}

// How a scrubWriter treats a body, decided at its first write.
const (
	modeUndecided = iota
	modePass      // written as it comes
	modeLines     // NDJSON: scrubbed and written line by line
	modeWhole     // JSON or text: kept until the handler returns, then scrubbed and written
)

// scrubWriter is the ResponseWriter HTTP gives a handler. It is used by one handler goroutine,
// as any ResponseWriter.
type scrubWriter struct {
	w      http.ResponseWriter
	set    *Set
	mode   int
	status int // the status the handler wrote; 0 until it did
	buf    bytes.Buffer
}

func (sw *scrubWriter) Header() http.Header { return sw.w.Header() }

// JSONValues is implemented by the writer HTTP gives a handler, for a handler that writes a JSON
// document too large to keep whole (GET /v1/executions without a limit): called before the
// body's first byte, it makes the writer pass the body through as written and returns the
// function that scrubs one JSON value; the handler scrubs each value it writes with it.
type JSONValues interface {
	JSONValues() func(value []byte) []byte
}

// JSONValues implements the interface of that name. Each call of the function it returns takes
// the set's current scrubber, so a secret added while the body is written is scrubbed from what
// follows. When the writer it writes to is another HTTP's (fuscia serve wraps the owner's
// scrubbed API in its own, for the secrets it read itself), that one passes the body through
// too, and the value is scrubbed by both.
func (sw *scrubWriter) JSONValues() func([]byte) []byte {
	if sw.mode == modeUndecided {
		sw.mode = modePass
	}
	outer := func(v []byte) []byte { return v }
	if o, ok := sw.w.(JSONValues); ok {
		outer = o.JSONValues()
	}
	return func(v []byte) []byte { return outer(sw.set.Scrubber().JSON(v)) }
}

// Unwrap lets http.ResponseController reach the connection (deadlines, flushes).
func (sw *scrubWriter) Unwrap() http.ResponseWriter { return sw.w }

func (sw *scrubWriter) WriteHeader(status int) {
	if status < 200 {
		sw.w.WriteHeader(status) // informational: the final status is still to come
		return
	}
	if sw.status != 0 {
		return
	}
	sw.status = status
	sw.decide()
	if sw.mode != modeWhole {
		sw.w.WriteHeader(status)
	}
}

// decide picks the mode from the headers the handler set.
func (sw *scrubWriter) decide() {
	if sw.mode != modeUndecided {
		return
	}
	h := sw.w.Header()
	media, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	switch {
	case h.Get("Content-Length") != "" || h.Get("Content-Encoding") != "":
		sw.mode = modePass
	case media == "application/x-ndjson":
		sw.mode = modeLines
	case media == "application/json", media == "text/plain", media == "":
		sw.mode = modeWhole
	default:
		sw.mode = modePass
	}
}

func (sw *scrubWriter) Write(p []byte) (int, error) {
	if sw.status == 0 {
		sw.WriteHeader(http.StatusOK)
	}
	switch sw.mode {
	case modeLines:
		sw.buf.Write(p)
		if err := sw.writeLines(); err != nil {
			return 0, err
		}
		return len(p), nil
	case modeWhole:
		return sw.buf.Write(p)
	}
	return sw.w.Write(p)
}

// writeLines writes the complete lines buffered, scrubbed.
func (sw *scrubWriter) writeLines() error {
	b := sw.buf.Bytes()
	end := bytes.LastIndexByte(b, '\n')
	if end < 0 {
		return nil
	}
	sc := sw.set.Scrubber()
	var out []byte
	for _, line := range bytes.SplitAfter(b[:end+1], []byte("\n")) {
		body := bytes.TrimSuffix(line, []byte("\n"))
		if len(body) == 0 {
			out = append(out, line...)
			continue
		}
		out = append(out, sc.JSON(body)...)
		out = append(out, '\n')
	}
	sw.buf.Next(end + 1)
	_, err := sw.w.Write(out)
	return err
}

// Flush writes what is complete and flushes the connection.
func (sw *scrubWriter) Flush() {
	if sw.mode == modeLines {
		_ = sw.writeLines()
	}
	if sw.mode == modeWhole {
		return // written whole when the handler returns
	}
	if f, ok := sw.w.(http.Flusher); ok {
		f.Flush()
	}
}

// finish writes what the handler left: a whole body, or a last line without its newline.
func (sw *scrubWriter) finish() {
	sc := sw.set.Scrubber()
	switch sw.mode {
	case modeWhole:
		b := sw.buf.Bytes()
		media, _, _ := mime.ParseMediaType(sw.w.Header().Get("Content-Type"))
		if media == "application/json" {
			// writeJSON's encoder ends the document with a newline: keep it.
			trimmed := bytes.TrimRight(b, "\n")
			b = append(sc.JSON(trimmed), b[len(trimmed):]...)
		} else {
			b = sc.Bytes(b)
		}
		sw.w.WriteHeader(sw.status)
		_, _ = sw.w.Write(b)
	case modeLines:
		_ = sw.writeLines()
		if sw.buf.Len() > 0 {
			_, _ = sw.w.Write(sc.JSON(sw.buf.Bytes()))
		}
	}
}
